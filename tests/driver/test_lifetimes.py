"""Object lifetimes as CUDA defines them (issue 14, finding 2): destroying a
stream, event, module, pool or graph exec while work still refers to it is
legal; the call returns at once, the handle dies at once, the backing lives
until that work is done, and nothing reads freed driver memory. Plus
cross-device mcStreamWaitEvent (finding 8) and a multi-threaded stress of
the same races."""
from __future__ import annotations

import random
import struct
import threading
import time

import numpy as np

from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.sim.memory.spaces import AllocationKind
from gpudbg_fakes import fake, kernels  # noqa: F401

S = E.mcSuccess
GEQ = int(mc.mcStreamWaitValueFlags.mcStreamWaitValueGeq)
GLOBAL = int(mc.mcStreamCaptureMode.mcStreamCaptureModeGlobal)
MiB2 = 2 << 20


def _flag() -> tuple[int, np.ndarray]:
    """A pinned u32 (and a spare word after it) starting at 0."""
    err, p = mc.mcMallocHost(8)
    assert err == S
    v = mc.host_view(p, 8, np.uint32)
    v[:] = 0
    return p, v


def _stream(flags: int = 0):
    err, s = mc.mcStreamCreateWithFlags(flags)
    assert err == S
    return s


def _held(flags: int = 0):
    """A stream blocked on the GPU until the returned flag is set."""
    s = _stream(flags)
    p, v = _flag()
    assert mc.mcStreamWaitValue32(s, p, 1, GEQ) == (S,)
    return s, v


def _internal(gpu, kind: AllocationKind) -> int:
    return sum(1 for a in gpu.memory.allocations() if a.kind is kind)


def _returns_at_once(fn, *args):
    """fn(*args) from another thread; it must return within a second."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn(*args)), daemon=True)
    t.start()
    t.join(1.0)
    assert not t.is_alive(), f"{fn.__name__} blocked the host"
    return out[0]


# ------------------------------------------------------------------ streams
def test_the_audits_sequence_waits_on_a_destroyed_streams_event(fake):
    """s2 waits on host memory, then on an event of s1; s1 is destroyed
    while s2's wait on its fence is still queued. Synchronizing s2 succeeds."""
    p, flag = _flag()
    s1, s2 = _stream(), _stream()
    _, e = mc.mcEventCreate()
    assert mc.mcStreamWaitValue32(s2, p, 1, GEQ) == (S,)
    assert mc.mcEventRecord(e, s1) == (S,)
    assert mc.mcStreamSynchronize(s1) == (S,)
    assert mc.mcStreamWaitEvent(s2, e, 0) == (S,)
    assert mc.mcStreamDestroy(s1) == (S,)
    flag[0] = 1
    assert mc.mcStreamSynchronize(s2) == (S,)
    assert mc.mcGetLastError() == (S,)
    assert mc.mcDeviceSynchronize() == (S,)


def test_a_destroyed_streams_semaphore_lives_exactly_as_long_as_a_queued_wait(fake):
    gpu = get_engine().current_context().gpu
    before = _internal(gpu, AllocationKind.SEMAPHORE)
    s2, release = _held()
    s1 = _stream()
    _, e = mc.mcEventCreateWithFlags(2)          # no timing slot: only channel semaphores count
    assert mc.mcEventRecord(e, s1) == (S,)
    assert mc.mcStreamWaitEvent(s2, e, 0) == (S,)
    assert mc.mcEventSynchronize(e) == (S,)
    assert mc.mcStreamDestroy(s1) == (S,)
    ctx = get_engine().current_context()
    ctx.reap()                                   # s1's channel closes; its semaphore stays
    assert s1.channel.closed
    assert mc.mcStreamQuery(s1) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcStreamDestroy(s1) == (E.mcErrorInvalidResourceHandle,)
    assert _internal(gpu, AllocationKind.SEMAPHORE) == before + 2
    release[0] = 1
    assert mc.mcStreamSynchronize(s2) == (S,)
    assert mc.mcStreamDestroy(s2) == (S,)
    assert mc.mcEventDestroy(e) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert _internal(gpu, AllocationKind.SEMAPHORE) == before


def test_waiting_on_an_event_of_a_stream_long_gone(fake):
    s1 = _stream()
    _, e = mc.mcEventCreate()
    assert mc.mcEventRecord(e, s1) == (S,)
    assert mc.mcStreamDestroy(s1) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)      # s1's channel and semaphore are released
    s2 = _stream()
    assert mc.mcEventQuery(e) == (S,)
    assert mc.mcStreamWaitEvent(s2, e, 0) == (S,)
    assert mc.mcStreamWaitEvent(0, e, 0) == (S,)
    assert mc.mcEventSynchronize(e) == (S,)
    assert mc.mcStreamSynchronize(s2) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)


def test_destroying_a_busy_stream_returns_at_once_and_its_work_still_runs(fake, kernels):
    s, release = _held()
    p, out = _flag()
    assert mc.mcLaunchKernel(kernels["store"], 1, 1, [p, 42], 0, s) == (S,)
    assert _returns_at_once(mc.mcStreamDestroy, s) == (S,)
    assert mc.mcLaunchKernel(kernels["store"], 1, 1, [p, 1], 0, s) == (E.mcErrorInvalidResourceHandle,)
    release[0] = 1
    assert mc.mcDeviceSynchronize() == (S,)
    assert out[0] == 42


# ------------------------------------------------------------------ events
def test_destroying_an_event_with_its_record_queued(fake):
    s, release = _held()
    _, e = mc.mcEventCreate()
    assert mc.mcEventRecord(e, s) == (S,)
    assert _returns_at_once(mc.mcEventDestroy, e) == (S,)
    assert mc.mcEventQuery(e) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcEventDestroy(e) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcStreamWaitEvent(0, e, 0) == (E.mcErrorInvalidResourceHandle,)
    release[0] = 1
    assert mc.mcDeviceSynchronize() == (S,)


def test_an_event_destroyed_while_a_graph_records_it(fake):
    """The graph's record node still writes the event's timestamp: the slot
    lives until the graph and its exec are gone."""
    gpu = get_engine().current_context().gpu
    before = _internal(gpu, AllocationKind.SEMAPHORE)
    s = _stream()
    _, e = mc.mcEventCreate()
    assert mc.mcStreamBeginCapture(s, GLOBAL) == (S,)
    assert mc.mcEventRecordWithFlags(e, s, 1) == (S,)      # mcEventRecordExternal: a record node
    err, graph = mc.mcStreamEndCapture(s)
    assert err == S
    err, exe = mc.mcGraphInstantiate(graph, 0)
    assert err == S
    assert mc.mcEventDestroy(e) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    for _ in range(2):
        assert mc.mcGraphLaunch(exe, s) == (S,)
        assert mc.mcStreamSynchronize(s) == (S,)
    assert mc.mcGraphDestroy(graph) == (S,)
    assert mc.mcGraphExecDestroy(exe) == (S,)
    assert mc.mcStreamDestroy(s) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert _internal(gpu, AllocationKind.SEMAPHORE) == before


# ------------------------------------------------------------------ modules
def test_unloading_a_module_with_a_launch_queued(fake, kernels):
    ctx = get_engine().current_context()
    f = kernels["store"]
    s, release = _held()
    p, out = _flag()
    try:
        assert mc.mcLaunchKernel(f, 1, 1, [p, 7], 0, s) == (S,)
        assert _returns_at_once(mc.mcModuleUnload, f.module) == (S,)
        assert mc.mcModuleGetFunction(f.module, "store")[0] != S
        assert mc.mcModuleUnload(f.module)[0] != S
        assert mc.mcLaunchKernel(f, 1, 1, [p, 8], 0, s)[0] != S
        assert f.kernel.code_address in ctx.gpu.functions    # still queued: the code stays
    finally:
        release[0] = 1
    assert mc.mcDeviceSynchronize() == (S,)
    assert out[0] == 7
    assert f.kernel.code_address not in ctx.gpu.functions and f.module.loaded.unloaded


# ------------------------------------------------------------------ pools
def test_pool_reuse_waits_on_a_destroyed_streams_free(fake):
    """Internal dependencies only: the reusing stream acquires the freeing
    stream's fence, and that stream is destroyed and its channel closed."""
    A = mc.mcMemPoolAttr
    s1, s2 = _stream(1), _stream(1)
    _, pool = mc.mcMemPoolCreate(mc.mcMemPoolProps(maxSize=MiB2))
    assert mc.mcMemPoolSetAttribute(pool, A.mcMemPoolAttrReleaseThreshold, MiB2) == (S,)
    for attr in (A.mcMemPoolReuseAllowOpportunistic, A.mcMemPoolReuseFollowEventDependencies):
        assert mc.mcMemPoolSetAttribute(pool, attr, 0) == (S,)
    _, a = mc.mcMallocFromPoolAsync(MiB2, pool, s1)
    assert mc.mcFreeAsync(a, s1) == (S,)
    s1.wait()                                    # the GPU passed the free; the host has not observed it
    assert mc.mcStreamDestroy(s1) == (S,)        # idle: its channel closes now
    assert mc.mcMallocFromPoolAsync(MiB2, pool, s2) == (S, a)
    assert mc.mcStreamSynchronize(s2) == (S,)
    assert mc.mcFreeAsync(a, s2) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)


def test_destroying_a_pool_with_work_queued(fake):
    s, release = _held()
    _, free_before, _ = mc.mcMemGetInfo()
    _, pool = mc.mcMemPoolCreate(mc.mcMemPoolProps(maxSize=MiB2))
    _, a = mc.mcMallocFromPoolAsync(4096, pool, s)
    assert mc.mcMemsetAsync(a, 1, 4096, s) == (S,)
    assert mc.mcFreeAsync(a, s) == (S,)
    assert _returns_at_once(mc.mcMemPoolDestroy, pool) == (S,)
    assert mc.mcMallocFromPoolAsync(16, pool, s) == (E.mcErrorInvalidValue, None)
    release[0] = 1
    assert mc.mcDeviceSynchronize() == (S,)
    assert mc.mcMemGetInfo()[1] == free_before


# ------------------------------------------------------------------ graphs
def test_destroying_a_graph_and_its_exec_while_a_launch_runs(fake, kernels):
    gpu = get_engine().current_context().gpu
    s = _stream()
    p, out = _flag()
    assert mc.mcStreamBeginCapture(s, GLOBAL) == (S,)
    assert mc.mcLaunchKernel(kernels["store"], 1, 1, [p, 5], 0, s) == (S,)
    err, graph = mc.mcStreamEndCapture(s)
    _, exe = mc.mcGraphInstantiate(graph, 0)
    launches = _internal(gpu, AllocationKind.LAUNCH)
    held, release = _held()
    _, e = mc.mcEventCreate()
    assert mc.mcEventRecord(e, held) == (S,)
    assert mc.mcStreamWaitEvent(s, e, 0) == (S,)
    assert mc.mcGraphLaunch(exe, s) == (S,)
    assert _returns_at_once(mc.mcGraphExecDestroy, exe) == (S,)
    assert mc.mcGraphDestroy(graph) == (S,)
    assert mc.mcGraphLaunch(exe, s) == (E.mcErrorInvalidValue,)
    get_engine().current_context().reap()
    assert _internal(gpu, AllocationKind.LAUNCH) == launches   # the launch still needs them
    release[0] = 1
    assert mc.mcDeviceSynchronize() == (S,)
    assert out[0] == 5
    assert _internal(gpu, AllocationKind.LAUNCH) == launches - 1


def test_a_device_reset_frees_what_a_live_graph_and_exec_hold(fake, kernels):
    """A program that never destroys its graph: mcDeviceReset still frees the
    launch blocks it holds (the context's driver memory), once."""
    gpu = get_engine().current_context().gpu
    free0 = mc.mcMemGetInfo()[1]
    s = _stream()
    p, _out = _flag()
    assert mc.mcStreamBeginCapture(s, GLOBAL) == (S,)
    assert mc.mcLaunchKernel(kernels["store"], 1, 1, [p, 5], 0, s) == (S,)
    err, graph = mc.mcStreamEndCapture(s)
    _, exe = mc.mcGraphInstantiate(graph, 0)
    assert _internal(gpu, AllocationKind.LAUNCH) == 1
    assert mc.mcDeviceReset() == (S,)
    assert _internal(gpu, AllocationKind.LAUNCH) == 0
    assert mc.mcMemGetInfo()[1] == free0
    assert mc.mcGraphExecDestroy(exe)[0] in (S, E.mcErrorInvalidValue)    # a dead context's handles
    assert mc.mcGraphDestroy(graph)[0] in (S, E.mcErrorInvalidValue)
    assert mc.mcMemGetInfo()[1] == free0


# ------------------------------------------------------------------ devices
def test_a_stream_waits_on_an_event_of_another_device(fake, kernels):
    p, flag = _flag()
    s0, release = _held()
    _, e = mc.mcEventCreate()
    assert mc.mcEventRecord(e, s0) == (S,)
    assert mc.mcSetDevice(1) == (S,)
    try:
        s1 = _stream()
        q, out = _flag()
        assert mc.mcStreamWaitEvent(s1, e, 0) == (S,)
        assert mc.mcStreamWriteValue32(s1, q, 9, 0) == (S,)
        time.sleep(0.05)
        assert mc.mcStreamQuery(s1) == (E.mcErrorNotReady,) and out[0] == 0
        release[0] = 1
        assert mc.mcStreamSynchronize(s1) == (S,)
        assert out[0] == 9
        # an event already complete needs no wait at all
        assert mc.mcStreamWaitEvent(s1, e, 0) == (S,)
        assert mc.mcStreamSynchronize(s1) == (S,)
        assert mc.mcDeviceSynchronize() == (S,)
    finally:
        release[0] = 1
        mc.mcSetDevice(0)
    assert mc.mcDeviceSynchronize() == (S,)


def test_a_cross_device_wait_survives_the_source_stream_and_event(fake):
    s0, release = _held()
    _, e = mc.mcEventCreate()
    assert mc.mcEventRecord(e, s0) == (S,)
    assert mc.mcSetDevice(1) == (S,)
    try:
        s1 = _stream()
        assert mc.mcStreamWaitEvent(s1, e, 0) == (S,)
        assert mc.mcSetDevice(0) == (S,)
        assert mc.mcStreamDestroy(s0) == (S,)
        assert mc.mcEventDestroy(e) == (S,)
        release[0] = 1
        assert mc.mcSetDevice(1) == (S,)
        assert mc.mcStreamSynchronize(s1) == (S,)
        assert mc.mcDeviceSynchronize() == (S,)
    finally:
        release[0] = 1
        mc.mcSetDevice(0)
    assert mc.mcDeviceSynchronize() == (S,)


# ------------------------------------------------------------------ threads
ALLOWED = {S, E.mcErrorInvalidResourceHandle, E.mcErrorNotReady}


def test_a_thread_waiting_for_ring_space_does_not_stop_the_others(fake):
    """One thread fills the ring of a stream that waits on a flag; another
    thread sets the flag with mcStreamWriteValue32 on a second stream. The
    first must not hold the context while it waits for ring space."""
    p, flag = _flag()
    _, d = mc.mcMalloc(64)
    s, s2 = _stream(1), _stream(1)
    assert mc.mcStreamWaitValue32(s, p, 1, GEQ) == (S,)
    flooder = threading.Thread(target=lambda: [mc.mcMemsetAsync(d, i & 0xFF, 64, s) for i in range(400)],
                               daemon=True)
    flooder.start()
    try:
        time.sleep(0.2)
        assert flooder.is_alive()                 # blocked: the ring is full behind the wait
        assert _returns_at_once(mc.mcStreamWriteValue32, s2, p, 1, 0) == (S,)
        flooder.join(10)
        assert not flooder.is_alive()
    finally:
        flag[0] = 1
        flooder.join(10)
    assert mc.mcDeviceSynchronize() == (S,)


def test_threads_creating_using_and_destroying_streams_and_events(fake, kernels):
    """Several host threads, on both devices, create streams and events,
    queue work (some of it held on a flag another thread sets), wait on
    each other's events (across devices too) and destroy everything while
    work is queued. No exception escapes, nothing but 'handle gone' errors,
    no sticky error, no hang, and the driver's semaphores all come back."""
    _, dev = mc.mcMalloc(1 << 12)
    pinned = [_flag()]
    assert mc.mcSetDevice(1) == (S,)
    pinned.append(_flag())
    assert mc.mcSetDevice(0) == (S,)
    gpus = [d.gpu for d in get_engine().devices]
    before = [_internal(g, AllocationKind.SEMAPHORE) for g in gpus]
    shared: list = []
    every: list = []
    lock = threading.Lock()
    problems: list = []
    stop = time.monotonic() + 1.5
    store = kernels["store"]

    def check(what, r):
        err = r[0] if isinstance(r, tuple) else r
        if err not in ALLOWED:
            problems.append((what, err))

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        device = seed % 2
        p, flags = pinned[device]
        try:
            check("device", mc.mcSetDevice(device))
            while time.monotonic() < stop:
                _, s = mc.mcStreamCreateWithFlags(rng.choice((0, 1)))
                _, e = mc.mcEventCreateWithFlags(rng.choice((0, 2)))
                if rng.random() < 0.3:                  # held until another thread bumps the flag
                    check("wait value", mc.mcStreamWaitValue32(s, p, int(flags[0]) + 1, GEQ))
                if device == 0:
                    check("launch", mc.mcLaunchKernel(store, 1, 1, [dev + 64 * seed, seed], 0, s))
                else:
                    check("write", mc.mcStreamWriteValue32(s, p + 4, seed, 0))
                check("record", mc.mcEventRecord(e, s))
                with lock:
                    shared.append(e)
                    every.append(e)
                    others = rng.sample(shared, min(3, len(shared)))
                    if len(shared) > 16:
                        shared.pop(0)
                for o in others:
                    check("wait", mc.mcStreamWaitEvent(s, o, 0))
                    check("record other", mc.mcEventRecord(o, s))   # another device's: refused
                if rng.random() < 0.3:
                    check("query", mc.mcEventQuery(rng.choice(others)))
                if rng.random() < 0.1:
                    flags[0] += 1
                    check("sync", mc.mcStreamSynchronize(s))
                check("destroy stream", mc.mcStreamDestroy(s))
                check("destroy event", mc.mcEventDestroy(rng.choice(others)))
        except BaseException as exc:      # the finding: exceptions escaping the API
            problems.append(("exception", repr(exc)))

    def releaser() -> None:
        while time.monotonic() < stop + 0.2:
            for _p, flags in pinned:
                flags[0] += 1
            time.sleep(0.01)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(4)]
    threads.append(threading.Thread(target=releaser, daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for _p, flags in pinned:
        flags[0] = 1 << 30
    assert not any(t.is_alive() for t in threads), "a host thread hung"
    assert problems == []
    for device in (1, 0):
        assert mc.mcSetDevice(device) == (S,)
        assert mc.mcDeviceSynchronize() == (S,)
        assert mc.mcGetLastError() == (S,)
    for e in every:
        mc.mcSetDevice(e.context.device.ordinal)
        mc.mcEventDestroy(e)
    for device in (1, 0):
        assert mc.mcSetDevice(device) == (S,)
        assert mc.mcDeviceSynchronize() == (S,)
    for g in gpus:
        assert not g.internal_errors
    for d in get_engine().devices:
        assert d.primary is None or d.primary.sticky is None
    assert [_internal(g, AllocationKind.SEMAPHORE) for g in gpus] == before
    calls = [c for c in fake.calls if c[0] == "store"]
    assert calls and all(struct.unpack_from("<QI", c[4])[1] < 4 for c in calls)
