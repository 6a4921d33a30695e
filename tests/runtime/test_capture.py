"""Seed 002 §2.3 stream capture (begin/end, modes, info, dependencies) and the
graph extensions that launch what was captured."""
import threading

import numpy as np

from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from stream_helpers import S, fake_kernels, legacy_mode, store, stored  # noqa: F401

M = mc.mcStreamCaptureMode
ST = mc.mcStreamCaptureStatus
GLOBAL, THREAD_LOCAL, RELAXED = (int(M.mcStreamCaptureModeGlobal), int(M.mcStreamCaptureModeThreadLocal),
                                 int(M.mcStreamCaptureModeRelaxed))


def _stream(flags=0):
    err, s = mc.mcStreamCreateWithFlags(flags)
    assert err == S
    return s


def _read(d, n=4):
    out = np.zeros(n, np.uint32)
    assert mc.mcMemcpy(out, d, 4 * n, mc.mcMemcpyKind.mcMemcpyDeviceToHost) == (S,)
    return out


def test_capture_records_instead_of_running_and_the_graph_replays(legacy_mode):
    ex, k = legacy_mode, fake_kernels()
    s = _stream()
    _, d = mc.mcMalloc(64)
    mc.mcMemset(d, 0, 64)
    assert mc.mcStreamBeginCapture(s, GLOBAL) == (S,)
    assert mc.mcStreamIsCapturing(s) == (S, ST.mcStreamCaptureStatusActive)
    assert mc.mcMemsetD32Async(d + 16, 9, 4, s) == (S,)
    store(k, d, 7, s)
    assert mc.mcMemcpyAsync(d + 32, d + 16, 16, mc.mcMemcpyKind.mcMemcpyDeviceToDevice, s) == (S,)
    assert mc.mcStreamWriteValue32(s, d + 4, 5, 0) == (S,)
    err, graph = mc.mcStreamEndCapture(s)
    assert err == S and mc.mcStreamIsCapturing(s) == (S, ST.mcStreamCaptureStatusNone)
    assert mc.mcDeviceSynchronize() == (S,)
    assert stored(ex) == [] and list(_read(d, 16)) == [0] * 16      # nothing ran during capture
    err, nodes, n = mc.mcGraphGetNodes(graph)
    assert err == S and n == 4 and [x.kind.value for x in nodes] == ["memset", "kernel", "memcpy",
                                                                      "stream memory operation"]
    assert [x.dependencies for x in nodes[1:]] == [(nodes[0],), (nodes[1],), (nodes[2],)]
    err, exe = mc.mcGraphInstantiate(graph, 0)
    assert err == S
    for launch in range(2):
        assert mc.mcGraphLaunch(exe, s) == (S,)
        assert mc.mcStreamSynchronize(s) == (S,)
        assert list(_read(d, 12)) == [7, 5, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9]
        mc.mcMemset(d, 0, 64)
    assert stored(ex) == [7, 7]
    assert mc.mcGraphDestroy(graph) == (S,)
    assert mc.mcGraphLaunch(exe, 0) == (S,)                 # the exec outlives its graph
    assert mc.mcGraphExecDestroy(exe) == (S,)
    assert mc.mcDeviceSynchronize() == (S,) and stored(ex) == [7, 7, 7]


def test_graph_function_errors(legacy_mode):
    s = _stream()
    mc.mcStreamBeginCapture(s, GLOBAL)
    _, g = mc.mcStreamEndCapture(s)
    assert mc.mcGraphInstantiate(g, 1) == (E.mcErrorInvalidValue, None)
    assert mc.mcGraphInstantiate("g") == (E.mcErrorInvalidValue, None)
    assert mc.mcGraphGetNodes(None) == (E.mcErrorInvalidValue, None, None)
    assert mc.mcGraphGetNodes(g) == (S, (), 0)
    _, exe = mc.mcGraphInstantiate(g)
    assert mc.mcGraphLaunch(exe, "s") == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcGraphExecDestroy(exe) == (S,)
    assert mc.mcGraphExecDestroy(exe) == (E.mcErrorInvalidValue,)
    assert mc.mcGraphLaunch(exe, s) == (E.mcErrorInvalidValue,)
    assert mc.mcGraphDestroy(g) == (S,)
    assert mc.mcGraphDestroy(g) == (E.mcErrorInvalidValue,)


def test_begin_and_end_errors(legacy_mode):
    s = _stream()
    assert mc.mcStreamBeginCapture(0, GLOBAL) == (E.mcErrorStreamCaptureUnsupported,)
    assert mc.mcStreamBeginCapture(s, 7) == (E.mcErrorInvalidValue,)
    assert mc.mcStreamEndCapture(s) == (E.mcErrorIllegalState, None)
    assert mc.mcStreamBeginCapture(s, GLOBAL) == (S,)
    assert mc.mcStreamBeginCapture(s, GLOBAL) == (E.mcErrorIllegalState,)
    assert mc.mcStreamBeginCapture("s", GLOBAL) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcStreamEndCapture(s)[0] == S
    assert mc.mcStreamIsCapturing("s") == (E.mcErrorInvalidResourceHandle, None)


def test_legacy_stream_use_during_a_blocking_capture_is_implicit(legacy_mode):
    s, nb = _stream(), _stream(1)
    _, d = mc.mcMalloc(16)
    mc.mcStreamBeginCapture(s, GLOBAL)
    assert mc.mcStreamIsCapturing(0) == (E.mcErrorStreamCaptureImplicit, None)
    assert mc.mcStreamGetCaptureInfo(0)[0] == E.mcErrorStreamCaptureImplicit
    assert mc.mcMemsetAsync(d, 1, 16, 0) == (E.mcErrorStreamCaptureImplicit,)
    assert mc.mcStreamIsCapturing(s) == (S, ST.mcStreamCaptureStatusInvalidated)
    assert mc.mcMemsetAsync(d, 1, 16, s) == (E.mcErrorStreamCaptureInvalidated,)
    assert mc.mcStreamEndCapture(s) == (E.mcErrorStreamCaptureInvalidated, None)
    mc.mcStreamBeginCapture(nb, GLOBAL)                   # a non-blocking capture leaves it usable
    assert mc.mcMemsetAsync(d, 1, 16, 0) == (S,)
    assert mc.mcStreamEndCapture(nb)[0] == S


def test_syncing_a_capturing_stream_is_unsupported(legacy_mode):
    s = _stream()
    mc.mcStreamBeginCapture(s, RELAXED)
    assert mc.mcStreamSynchronize(s) == (E.mcErrorStreamCaptureUnsupported,)
    assert mc.mcStreamQuery(s) == (E.mcErrorStreamCaptureUnsupported,)
    assert mc.mcStreamEndCapture(s) == (E.mcErrorStreamCaptureInvalidated, None)


def test_capture_info_and_dependency_updates(legacy_mode):
    s = _stream()
    _, d = mc.mcMalloc(16)
    assert mc.mcStreamGetCaptureInfo(s) == (S, ST.mcStreamCaptureStatusNone, 0, None, (), 0)
    assert mc.mcStreamUpdateCaptureDependencies(s, [], 0, 0) == (E.mcErrorIllegalState,)
    mc.mcStreamBeginCapture(s, GLOBAL)
    mc.mcMemsetAsync(d, 1, 4, s)
    mc.mcMemsetAsync(d + 4, 2, 4, s)
    err, status, cid, graph, deps, n = mc.mcStreamGetCaptureInfo(s)
    assert err == S and status == ST.mcStreamCaptureStatusActive and cid > 0 and n == 1
    first, second = mc.mcGraphGetNodes(graph)[1]
    assert deps == (second,)
    assert mc.mcStreamUpdateCaptureDependencies(s, [first], 1, 1) == (S,)       # set
    assert mc.mcStreamGetCaptureInfo(s)[4] == (first,)
    assert mc.mcStreamUpdateCaptureDependencies(s, [second], 1, 0) == (S,)      # add
    assert mc.mcStreamGetCaptureInfo(s)[4] == (first, second)
    mc.mcMemsetAsync(d + 8, 3, 4, s)
    assert mc.mcGraphGetNodes(graph)[1][2].dependencies == (first, second)
    assert mc.mcStreamUpdateCaptureDependencies(s, [first], 1, 2) == (E.mcErrorInvalidValue,)
    assert mc.mcStreamUpdateCaptureDependencies(s, [first], 2, 0) == (E.mcErrorInvalidValue,)
    assert mc.mcStreamUpdateCaptureDependencies(s, ["node"], 1, 0) == (E.mcErrorInvalidValue,)
    _, g = mc.mcStreamEndCapture(s)
    assert g is graph and mc.mcGetLastError()[0] == E.mcErrorInvalidValue


def test_fork_and_join_through_events(legacy_mode):
    ex, k = legacy_mode, fake_kernels()
    s1, s2 = _stream(), _stream()
    _, d = mc.mcMalloc(16)
    fork, join = mc.mcEventCreate()[1], mc.mcEventCreate()[1]
    mc.mcStreamBeginCapture(s1, GLOBAL)
    store(k, d, 1, s1)
    assert mc.mcEventRecord(fork, s1) == (S,)
    assert mc.mcEventQuery(fork) == (E.mcErrorStreamCaptureUnsupported,)
    assert mc.mcStreamWaitEvent(s2, fork, 0) == (S,)
    assert mc.mcStreamIsCapturing(s2) == (S, ST.mcStreamCaptureStatusActive)
    store(k, d + 4, 2, s2)
    assert mc.mcStreamEndCapture(s2) == (E.mcErrorStreamCaptureUnmatched, None)
    assert mc.mcLaunchKernel(k["store"], 1, 1, [d, 3], 0, s1) == (E.mcErrorStreamCaptureInvalidated,)
    assert mc.mcStreamEndCapture(s1) == (E.mcErrorStreamCaptureInvalidated, None)
    assert mc.mcStreamIsCapturing(s2) == (S, ST.mcStreamCaptureStatusNone)
    mc.mcStreamBeginCapture(s1, GLOBAL)
    store(k, d, 1, s1)
    mc.mcEventRecord(fork, s1)
    mc.mcStreamWaitEvent(s2, fork, 0)
    store(k, d + 4, 2, s2)
    mc.mcEventRecord(join, s2)
    mc.mcStreamWaitEvent(s1, join, 0)
    store(k, d + 8, 3, s1)
    err, g = mc.mcStreamEndCapture(s1)
    assert err == S and mc.mcStreamIsCapturing(s2) == (S, ST.mcStreamCaptureStatusNone)
    a, b, c = mc.mcGraphGetNodes(g)[1]
    assert b.dependencies == (a,) and c.dependencies == (a, b)
    _, exe = mc.mcGraphInstantiate(g)
    mc.mcGraphLaunch(exe, s1)
    assert mc.mcStreamSynchronize(s1) == (S,) and stored(ex) == [1, 2, 3]


def test_a_fork_that_is_not_joined_back(legacy_mode):
    s1, s2 = _stream(), _stream()
    _, d = mc.mcMalloc(16)
    _, e = mc.mcEventCreate()
    mc.mcStreamBeginCapture(s1, GLOBAL)
    mc.mcEventRecord(e, s1)
    mc.mcStreamWaitEvent(s2, e, 0)
    mc.mcMemsetAsync(d, 1, 4, s2)
    assert mc.mcStreamEndCapture(s1) == (E.mcErrorStreamCaptureUnjoined, None)
    assert mc.mcStreamIsCapturing(s2) == (S, ST.mcStreamCaptureStatusNone)


def test_waiting_on_an_event_from_outside_the_capture(legacy_mode):
    s, other = _stream(), _stream(1)
    _, outside = mc.mcEventCreate()
    mc.mcEventRecord(outside, other)
    mc.mcStreamBeginCapture(s, GLOBAL)
    assert mc.mcStreamWaitEvent(s, outside, 1) == (S,)                    # external wait node
    assert mc.mcEventRecordWithFlags(outside, s, 1) == (S,)               # external record node
    assert mc.mcStreamWaitEvent(s, outside, 0) == (S,)                    # recorded inside now: a join
    err, g = mc.mcStreamEndCapture(s)
    assert err == S and [n.kind.value for n in mc.mcGraphGetNodes(g)[1]] == ["event wait", "event record"]
    _, e2 = mc.mcEventCreate()
    mc.mcEventRecord(e2, other)
    mc.mcStreamBeginCapture(s, GLOBAL)
    assert mc.mcStreamWaitEvent(s, e2, 0) == (E.mcErrorStreamCaptureIsolation,)
    assert mc.mcStreamEndCapture(s) == (E.mcErrorStreamCaptureInvalidated, None)


def test_captured_host_functions_run_at_every_launch(legacy_mode):
    s = _stream()
    seen = []
    mc.mcStreamBeginCapture(s, GLOBAL)
    assert mc.mcLaunchHostFunc(s, seen.append, "hi") == (S,)
    assert mc.mcStreamAddCallback(s, lambda *a: None, None, 0) == (E.mcErrorStreamCaptureUnsupported,)
    _, g = mc.mcStreamEndCapture(s)
    assert g is None and seen == []
    mc.mcStreamBeginCapture(s, GLOBAL)
    mc.mcLaunchHostFunc(s, seen.append, "hi")
    _, g = mc.mcStreamEndCapture(s)
    _, exe = mc.mcGraphInstantiate(g)
    mc.mcGraphLaunch(exe, s)
    mc.mcGraphLaunch(exe, s)
    assert mc.mcStreamSynchronize(s) == (S,) and seen == ["hi", "hi"]


def test_pageable_copies_cannot_be_captured(legacy_mode):
    s = _stream()
    _, d = mc.mcMalloc(16)
    mc.mcStreamBeginCapture(s, GLOBAL)
    host = np.zeros(4, np.uint32)
    assert mc.mcMemcpyAsync(d, host, 16, mc.mcMemcpyKind.mcMemcpyHostToDevice, s) == \
        (E.mcErrorStreamCaptureUnsupported,)
    mc.mcStreamEndCapture(s)


def test_capture_modes_and_unsafe_calls(legacy_mode):
    s = _stream()
    assert mc.mcThreadExchangeStreamCaptureMode(RELAXED) == (S, M.mcStreamCaptureModeGlobal)
    assert mc.mcThreadExchangeStreamCaptureMode(GLOBAL) == (S, M.mcStreamCaptureModeRelaxed)
    assert mc.mcThreadExchangeStreamCaptureMode(5) == (E.mcErrorInvalidValue, None)
    mc.mcStreamBeginCapture(s, GLOBAL)
    results = {}

    def other(mode):
        mc.mcThreadExchangeStreamCaptureMode(mode)
        results[mode] = mc.mcDeviceSynchronize()[0]
    for mode in (RELAXED, THREAD_LOCAL, GLOBAL):          # GLOBAL last: it invalidates the capture
        t = threading.Thread(target=other, args=(mode,))
        t.start()
        t.join()
    assert results == {RELAXED: S, THREAD_LOCAL: S, GLOBAL: E.mcErrorStreamCaptureUnsupported}
    assert mc.mcStreamIsCapturing(s) == (S, ST.mcStreamCaptureStatusInvalidated)
    mc.mcStreamEndCapture(s)
    mc.mcStreamBeginCapture(s, RELAXED)                   # a relaxed capture prohibits nothing
    assert mc.mcDeviceSynchronize() == (S,)
    assert mc.mcStreamEndCapture(s)[0] == S
    mc.mcStreamBeginCapture(s, THREAD_LOCAL)
    assert mc.mcThreadExchangeStreamCaptureMode(RELAXED)[0] == S
    assert mc.mcEventSynchronize(mc.mcEventCreate()[1]) == (S,)
    mc.mcThreadExchangeStreamCaptureMode(GLOBAL)
    assert mc.mcEventSynchronize(mc.mcEventCreate()[1]) == (E.mcErrorStreamCaptureUnsupported,)
    mc.mcStreamEndCapture(s)


def test_ending_from_another_thread(legacy_mode):
    s = _stream()
    out = []
    mc.mcStreamBeginCapture(s, GLOBAL)
    t = threading.Thread(target=lambda: out.append(mc.mcStreamEndCapture(s)[0]))
    t.start()
    t.join()
    assert out == [E.mcErrorStreamCaptureWrongThread]
    assert mc.mcStreamEndCapture(s)[0] == S
    mc.mcStreamBeginCapture(s, RELAXED)
    t = threading.Thread(target=lambda: out.append(mc.mcStreamEndCapture(s)[0]))
    t.start()
    t.join()
    assert out[1] == S


def test_allocation_is_a_potentially_unsafe_call(legacy_mode):
    s = _stream()
    mc.mcStreamBeginCapture(s, THREAD_LOCAL)
    assert mc.mcMalloc(64) == (E.mcErrorStreamCaptureUnsupported, None)
    assert mc.mcStreamEndCapture(s) == (E.mcErrorStreamCaptureInvalidated, None)
    assert mc.mcMalloc(64)[0] == S
