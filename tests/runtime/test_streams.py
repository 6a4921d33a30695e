"""Seed 002 §2.3 stream functions (capture is in test_capture.py) and
§2.4.3.3 mcLaunchHostFunc: one success and one failure each, plus
priorities and host callbacks in stream order."""
import threading

from gpudbg.driver.engine import get_engine
from gpudbg.driver.stream import PRIORITY_GREATEST, PRIORITY_LEAST
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from stream_helpers import (S, Gate, fake_kernels, legacy_mode, ready, still_blocked, store,  # noqa: F401
                            stored, wait_until)

A = mc.mcStreamAttrID


def test_create_and_destroy(legacy_mode):
    err, s = mc.mcStreamCreate()
    assert err == S and mc.mcStreamGetFlags(s) == (S, 0)
    err, nb = mc.mcStreamCreateWithFlags(1)
    assert err == S and mc.mcStreamGetFlags(nb) == (S, 1)
    assert mc.mcStreamCreateWithFlags(2) == (E.mcErrorInvalidValue, None)
    assert mc.mcStreamCreateWithFlags(-1) == (E.mcErrorInvalidValue, None)
    assert mc.mcStreamDestroy(s) == (S,)
    assert mc.mcStreamDestroy(s) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcStreamGetFlags(s) == (E.mcErrorInvalidResourceHandle, None)
    assert mc.mcStreamGetFlags("stream") == (E.mcErrorInvalidResourceHandle, None)


def test_destroy_returns_while_work_is_pending(legacy_mode):
    err, s = mc.mcStreamCreate()
    gate = Gate().hold(s)
    store(fake_kernels(), gate.ptr + 4, 9, s)
    assert mc.mcStreamDestroy(s) == (S,)
    gate.release()
    assert mc.mcDeviceSynchronize() == (S,)
    assert stored(legacy_mode) == [9]


def test_priorities_are_clamped_and_reported(legacy_mode):
    assert (PRIORITY_LEAST, PRIORITY_GREATEST) == (0, -5)
    err, hi = mc.mcStreamCreateWithPriority(0, -100)
    assert err == S and mc.mcStreamGetPriority(hi) == (S, PRIORITY_GREATEST)
    _, lo = mc.mcStreamCreateWithPriority(1, 7)
    assert mc.mcStreamGetPriority(lo) == (S, PRIORITY_LEAST) and mc.mcStreamGetFlags(lo) == (S, 1)
    assert mc.mcStreamGetPriority(0) == (S, 0)
    assert mc.mcStreamCreateWithPriority(0, 1.5) == (E.mcErrorInvalidValue, None)
    assert mc.mcStreamCreateWithPriority(4, -1) == (E.mcErrorInvalidValue, None)
    assert mc.mcStreamGetPriority(object()) == (E.mcErrorInvalidResourceHandle, None)


def test_front_end_serves_the_higher_priority_stream_first(legacy_mode, monkeypatch):
    # kernels of different streams run concurrently; priority decides who
    # gets the compute engine first when they compete for it (one slot here)
    from gpudbg.sim.engines import EngineKind
    compute = get_engine().current_device().gpu.frontend.engines[EngineKind.COMPUTE]
    monkeypatch.setattr(compute, "limit", lambda: 1)
    k = fake_kernels()
    _, lo = mc.mcStreamCreateWithPriority(1, 0)       # created first: round-robin would pick it
    _, hi = mc.mcStreamCreateWithPriority(1, -3)
    gate = Gate()
    for s, value in ((lo, 1), (hi, 2)):
        gate.hold(s)
        store(k, gate.ptr + 4, value, s)
        store(k, gate.ptr + 4, value * 10, s)
    assert still_blocked(lo) and still_blocked(hi)
    gate.release()
    assert wait_until(lambda: ready(lo) and ready(hi))
    assert stored(legacy_mode) == [2, 20, 1, 10]


def test_get_ctx(legacy_mode):
    _, s = mc.mcStreamCreate()
    assert mc.mcStreamGetCtx(s) == (S, get_engine().current_context())
    assert mc.mcStreamGetCtx(0) == (S, get_engine().current_context())
    assert mc.mcStreamGetCtx(12345) == (E.mcErrorInvalidResourceHandle, None)


def test_synchronize_and_query(legacy_mode):
    _, s = mc.mcStreamCreate()
    gate = Gate().hold(s)
    assert mc.mcStreamQuery(s) == (E.mcErrorNotReady,)
    assert mc.mcGetLastError() == (S,)                  # "not ready" is not an error
    gate.release()
    assert mc.mcStreamSynchronize(s) == (S,)
    assert mc.mcStreamQuery(s) == (S,)
    assert mc.mcStreamSynchronize(object()) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcStreamQuery(None) == (S,)


def test_wait_event(legacy_mode):
    _, a = mc.mcStreamCreateWithFlags(1)
    _, b = mc.mcStreamCreateWithFlags(1)
    _, e = mc.mcEventCreate()
    gate = Gate().hold(a)
    assert mc.mcEventRecord(e, a) == (S,)
    assert mc.mcStreamWaitEvent(b, e, 0) == (S,)
    store(fake_kernels(), gate.ptr + 4, 1, b)
    assert still_blocked(b)
    gate.release()
    assert wait_until(lambda: ready(b))
    assert mc.mcStreamWaitEvent(b, e, 2) == (E.mcErrorInvalidValue,)
    assert mc.mcStreamWaitEvent(b, e, 1) == (E.mcErrorInvalidValue,)   # external: capture only
    assert mc.mcStreamWaitEvent(b, "event", 0) == (E.mcErrorInvalidResourceHandle,)


def test_attributes_are_stored_and_reported(legacy_mode):
    _, s = mc.mcStreamCreate()
    _, t = mc.mcStreamCreate()
    err, v = mc.mcStreamGetAttribute(s, A.mcStreamAttributeSynchronizationPolicy)
    assert err == S and v.syncPolicy == mc.mcSynchronizationPolicy.mcSyncPolicyAuto
    window = mc.mcAccessPolicyWindow(base_ptr=0x1000, num_bytes=4096, hitRatio=0.5,
                                     hitProp=mc.mcAccessProperty.mcAccessPropertyPersisting)
    assert mc.mcStreamSetAttribute(s, A.mcStreamAttributeAccessPolicyWindow,
                                   mc.mcStreamAttrValue(accessPolicyWindow=window)) == (S,)
    assert mc.mcStreamSetAttribute(s, A.mcStreamAttributeSynchronizationPolicy,
                                   mc.mcStreamAttrValue(syncPolicy=4)) == (S,)
    assert mc.mcStreamSetAttribute(s, A.mcStreamAttributePriority, mc.mcStreamAttrValue(priority=-2)) == (S,)
    assert mc.mcStreamGetPriority(s) == (S, -2)
    assert mc.mcStreamGetAttribute(s, A.mcStreamAttributeAccessPolicyWindow)[1].accessPolicyWindow == window
    assert mc.mcStreamCopyAttributes(t, s) == (S,)
    assert mc.mcStreamGetAttribute(t, A.mcStreamAttributePriority)[1].priority == -2
    assert mc.mcStreamGetAttribute(t, 3)[1].syncPolicy == mc.mcSynchronizationPolicy.mcSyncPolicyBlockingSync
    assert mc.mcStreamGetAttribute(t, A.mcStreamAttributeAccessPolicyWindow)[1].accessPolicyWindow == window
    assert mc.mcStreamGetAttribute(s, 99) == (E.mcErrorInvalidValue, None)
    assert mc.mcStreamSetAttribute(s, 3, mc.mcStreamAttrValue(syncPolicy=9)) == (E.mcErrorInvalidValue,)
    assert mc.mcStreamSetAttribute(s, 1, {"base_ptr": 0}) == (E.mcErrorInvalidValue,)
    bad = mc.mcStreamAttrValue(accessPolicyWindow=mc.mcAccessPolicyWindow(hitRatio=2.0))
    assert mc.mcStreamSetAttribute(s, 1, bad) == (E.mcErrorInvalidValue,)
    assert mc.mcStreamGetAttribute("s", 8) == (E.mcErrorInvalidResourceHandle, None)
    assert mc.mcStreamCopyAttributes(t, "s") == (E.mcErrorInvalidResourceHandle,)


def test_callbacks_run_in_stream_order_on_a_worker_thread(legacy_mode):
    _, s = mc.mcStreamCreate()
    seen = []
    gate = Gate().hold(s)

    def cb(stream, status, data):
        seen.append(("cb", stream, status, data, threading.current_thread().name))

    assert mc.mcStreamAddCallback(s, cb, "first", 0) == (S,)
    assert mc.mcLaunchHostFunc(s, lambda d: seen.append(("fn", d)), "second") == (S,)
    assert mc.mcStreamAddCallback(s, cb, "third", 0) == (S,)
    assert still_blocked(s) and seen == []
    gate.release()
    assert mc.mcStreamSynchronize(s) == (S,)
    assert [x[0] for x in seen] == ["cb", "fn", "cb"]
    assert seen[0][1:4] == (s, S, "first") and seen[2][3] == "third" and seen[1] == ("fn", "second")
    assert "host-worker" in seen[0][4] and seen[0][4] != threading.current_thread().name


def test_a_callback_blocks_later_work_of_its_stream(legacy_mode):
    k = fake_kernels()
    _, s = mc.mcStreamCreate()
    go = threading.Event()
    _, d = mc.mcMalloc(8)
    assert mc.mcLaunchHostFunc(s, lambda _d: go.wait(5), None) == (S,)
    store(k, d, 4, s)
    assert still_blocked(s) and stored(legacy_mode) == []
    go.set()
    assert mc.mcStreamSynchronize(s) == (S,)
    assert stored(legacy_mode) == [4]


def test_callbacks_get_the_sticky_error_and_host_functions_are_skipped(legacy_mode):
    k = fake_kernels()
    _, s = mc.mcStreamCreate()
    seen = []
    gate = Gate().hold(s)
    assert mc.mcLaunchKernel(k["boom"], 1, 1, [], 0, s) == (S,)
    assert mc.mcStreamAddCallback(s, lambda st, status, d: seen.append(status), None, 0) == (S,)
    assert mc.mcLaunchHostFunc(s, lambda d: seen.append("host fn"), None) == (S,)
    assert mc.mcStreamAddCallback(s, lambda st, status, d: seen.append(status), None, 0) == (S,)
    gate.release()
    assert mc.mcStreamSynchronize(s) == (E.mcErrorIllegalAddress,)
    assert wait_until(lambda: len(seen) == 2)
    assert seen == [E.mcErrorIllegalAddress, E.mcErrorIllegalAddress]


def test_callback_and_host_func_errors(legacy_mode):
    _, s = mc.mcStreamCreate()
    assert mc.mcStreamAddCallback(s, lambda *a: None, None, 1) == (E.mcErrorInvalidValue,)
    assert mc.mcStreamAddCallback(s, None, None, 0) == (E.mcErrorInvalidValue,)
    assert mc.mcStreamAddCallback("s", lambda *a: None, None, 0) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcLaunchHostFunc(s, 42, None) == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchHostFunc(object(), print, None) == (E.mcErrorInvalidResourceHandle,)


def test_an_exception_in_a_callback_does_not_stop_the_worker(legacy_mode, capsys):
    _, s = mc.mcStreamCreate()
    seen = []

    def bad(_d):
        raise RuntimeError("user bug")
    assert mc.mcLaunchHostFunc(s, bad, None) == (S,)
    assert mc.mcLaunchHostFunc(s, seen.append, 1) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    assert seen == [1] and "user bug" in capsys.readouterr().err
