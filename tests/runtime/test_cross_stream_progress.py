"""Issue 14, finding 4: a kernel spinning on a flag is released by work on
another stream (a copy, a stream memory write, another kernel), as on a GPU
with copy engines and concurrent kernels; stream order and event semantics
are unchanged.

Each consumer first tells the host (through pinned memory) that it is
spinning, and only then does the host enqueue the releasing work, so the
releasing command can only run beside the kernel: with one command at a
time per GPU it would wait behind the kernel forever. GPUDBG_HANG_TIMEOUT
is short, so such a regression fails (the kernel watch stops the consumer
with mcErrorLaunchTimeout) instead of hanging the suite.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

from gpudbg import compile_ptx  # noqa: E402

S = E.mcSuccess
H2D = mc.mcMemcpyKind.mcMemcpyHostToDevice
D2H = mc.mcMemcpyKind.mcMemcpyDeviceToHost

SRC = r'''
__device__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
__device__ unsigned warpid() { unsigned w; asm volatile("mov.u32 %0, %%warpid;" : "=r"(w)); return w; }

// where[0..1]: the consumer's (smid, warpid); started: pinned host word
extern "C" __global__ void consumer(volatile unsigned *flag, unsigned *out, volatile unsigned *started,
                                    unsigned *where) {
    if (threadIdx.x == 0) { where[0] = smid(); where[1] = warpid(); }
    __syncthreads();
    if (threadIdx.x == 0) { *started = 1; __threadfence_system(); }
    while (*flag == 0) { }
    out[threadIdx.x] = *flag + threadIdx.x;
}

extern "C" __global__ void producer(unsigned *flag, unsigned value, unsigned *where) {
    where[2] = smid(); where[3] = warpid();
    atomicExch(flag, value);
}

extern "C" __global__ void add_one(unsigned *x, int n) {
    for (int i = 0; i < n; ++i) { x[threadIdx.x] += 1; }
}

extern "C" __global__ void twice(const unsigned *x, unsigned *y) { y[threadIdx.x] = 2 * x[threadIdx.x]; }
'''

THREADS = 64


@pytest.fixture(scope="module")
def ptx():
    return compile_ptx(SRC, name="cross_stream.cu")


@pytest.fixture
def dev(real, ptx, monkeypatch):
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "20")
    err, m = mc.mcModuleLoadData(ptx)
    assert err == S
    k = {name: mc.mcModuleGetFunction(m, name)[1] for name in ("consumer", "producer", "add_one", "twice")}
    err, a = mc.mcStreamCreateWithFlags(1)
    err2, b = mc.mcStreamCreateWithFlags(1)
    assert err == err2 == S
    return k, a, b


def _malloc(nbytes: int) -> int:
    err, p = mc.mcMalloc(nbytes)
    assert err == S
    assert mc.mcMemset(p, 0, nbytes) == (S,)
    assert mc.mcStreamSynchronize(0) == (S,)    # the streams here are non-blocking: no implicit order
    return p


def _pinned_word() -> tuple[int, np.ndarray]:
    err, p = mc.mcMallocHost(4)
    assert err == S
    view = mc.host_view(p, 4, np.uint32)
    view[0] = 0
    return p, view


def _read(ptr: int, n: int) -> np.ndarray:
    out = np.zeros(n, np.uint32)
    assert mc.mcMemcpy(out, ptr, 4 * n, D2H) == (S,)
    return out


def _start_consumer(k, stream):
    """Launch the consumer on `stream` and wait until it spins."""
    flag, out, where = _malloc(4), _malloc(4 * THREADS), _malloc(16)
    started, view = _pinned_word()
    assert mc.mcLaunchKernel(k["consumer"], 1, THREADS, [flag, out, started, where], 0, stream) == (S,)
    deadline = time.monotonic() + 20
    while view[0] == 0:
        assert time.monotonic() < deadline, "the consumer kernel never started"
        time.sleep(0.001)
    assert mc.mcStreamQuery(stream) == (E.mcErrorNotReady,)     # it spins
    return flag, out, where


def _finished(stream, out, value: int) -> None:
    assert mc.mcStreamSynchronize(stream) == (S,)
    assert (_read(out, THREADS) == value + np.arange(THREADS)).all()


def test_an_async_copy_on_another_stream_releases_a_spinning_kernel(dev):
    k, a, b = dev
    flag, out, _ = _start_consumer(k, a)
    src = np.array([5], np.uint32)
    assert mc.mcMemcpyAsync(flag, src, 4, H2D, b) == (S,)
    assert mc.mcStreamSynchronize(b) == (S,)      # the copy finished while the kernel still ran
    _finished(a, out, 5)


def test_a_stream_write_value_on_another_stream_releases_a_spinning_kernel(dev):
    k, a, b = dev
    flag, out, _ = _start_consumer(k, a)
    assert mc.mcStreamWriteValue32(b, flag, 9, 0) == (S,)
    _finished(a, out, 9)


def test_a_kernel_on_another_stream_releases_a_spinning_kernel_both_resident(dev):
    k, a, b = dev
    gpu = get_engine().current_device().gpu
    flag, out, where = _start_consumer(k, a)
    assert mc.mcLaunchKernel(k["producer"], 1, 1, [flag, 7, where], 0, b) == (S,)
    _finished(a, out, 7)
    assert mc.mcStreamSynchronize(b) == (S,)
    sm_c, warp_c, sm_p, warp_p = _read(where, 4).tolist()
    assert (sm_c, warp_c) != (sm_p, warp_p)        # two grids resident: distinct warp slots
    assert gpu.sm_pool.peak_grids >= 2 and gpu.sm_pool.resident_grids == 0   # the pool's own count


def test_under_the_differential_mode_a_held_back_kernel_is_resident_before_the_work_it_waits_for(
        dev, monkeypatch):
    # GPUDBG_DIFFERENTIAL: the consumer's compared run holds the front end,
    # so the producer waits; the run gives way (HeldBack) and the consumer
    # runs again, uncompared. The producer must start only once that run is
    # resident: with the hold let go before the run (slow to start here),
    # the producer ran first, alone on the GPU, in the consumer's warp slot
    from gpudbg.sim.native import differential
    monkeypatch.setenv(differential.ENV_DIFFERENTIAL, "1")
    monkeypatch.setattr(differential, "HOLD_PATIENCE_S", 0.3)
    inside = differential._inside

    def slow_to_start(launch_grid, gpu, function, args):
        if function.name == "consumer":
            time.sleep(0.5)
        return inside(launch_grid, gpu, function, args)
    monkeypatch.setattr(differential, "_inside", slow_to_start)
    before = differential.stats.copy()
    k, a, b = dev
    flag, out, where = _start_consumer(k, a)
    assert mc.mcLaunchKernel(k["producer"], 1, 1, [flag, 7, where], 0, b) == (S,)
    _finished(a, out, 7)
    assert mc.mcStreamSynchronize(b) == (S,)
    gave_way = [r for r, n in differential.stats.items() if n > before.get(r, 0) and "waited behind" in r]
    assert gave_way, "the consumer's compared run never gave way to the held-back producer"
    sm_c, warp_c, sm_p, warp_p = _read(where, 4).tolist()
    assert (sm_c, warp_c) != (sm_p, warp_p)        # resident together, as without the mode


def test_stream_order_holds_while_streams_overlap(dev):
    k, a, b = dev
    flag, out, _ = _start_consumer(k, a)        # stream a is busy spinning all along
    x, y = _malloc(4 * 32), _malloc(4 * 32)
    host = np.zeros(32, np.uint32)
    for _ in range(3):                          # on b: kernel, kernel, kernel, copy, in order
        assert mc.mcLaunchKernel(k["add_one"], 1, 32, [x, 5], 0, b) == (S,)
    assert mc.mcLaunchKernel(k["twice"], 1, 32, [x, y], 0, b) == (S,)
    assert mc.mcMemcpyAsync(host, y, 4 * 32, D2H, b) == (S,)
    assert mc.mcStreamSynchronize(b) == (S,)
    assert (host == 30).all()
    assert mc.mcStreamQuery(a) == (E.mcErrorNotReady,)
    assert mc.mcStreamWriteValue32(b, flag, 1, 0) == (S,)
    _finished(a, out, 1)


def test_events_order_streams_as_before_under_concurrency(dev):
    k, a, b = dev
    x, y = _malloc(4 * 32), _malloc(4 * 32)
    err, ev = mc.mcEventCreate()
    assert err == S
    assert mc.mcLaunchKernel(k["add_one"], 1, 32, [x, 200], 0, a) == (S,)
    assert mc.mcEventRecord(ev, a) == (S,)
    assert mc.mcStreamWaitEvent(b, ev, 0) == (S,)
    assert mc.mcLaunchKernel(k["twice"], 1, 32, [x, y], 0, b) == (S,)   # must see all 200 adds
    assert mc.mcStreamSynchronize(b) == (S,)
    assert mc.mcEventQuery(ev) == (S,)
    assert (_read(y, 32) == 400).all()
    assert mc.mcDeviceSynchronize() == (S,)


# ---------------------------------------------------------------- per-kernel machinery, several kernels at once
SPIN_SRC = r'''
extern "C" __global__ void spin(volatile unsigned *flag) { while (*flag == 0) { } }
'''


def test_the_kernel_watch_stops_every_running_kernel(dev, ptx, monkeypatch):
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "1")
    k, a, b = dev
    flags = [_malloc(4), _malloc(4)]
    outs = [_malloc(4 * THREADS), _malloc(4 * THREADS)]
    for s, flag, out in zip((a, b), flags, outs):
        started, _view = _pinned_word()
        assert mc.mcLaunchKernel(k["consumer"], 1, THREADS, [flag, out, started, _malloc(16)], 0, s) == (S,)
    t0 = time.monotonic()
    assert mc.mcStreamSynchronize(a) == (E.mcErrorLaunchTimeout,)
    assert mc.mcStreamSynchronize(b) == (E.mcErrorLaunchTimeout,)
    assert time.monotonic() - t0 < 15
    assert get_engine().current_device().gpu.sm_pool.wait_idle(10)


def test_ctrl_c_cancels_every_running_kernel(dev):
    from gpudbg.sim import kernel_watch
    k, a, b = dev
    views = []
    for s in (a, b):
        started, view = _pinned_word()
        views.append(view)
        args = [_malloc(4), _malloc(4 * THREADS), started, _malloc(16)]
        assert mc.mcLaunchKernel(k["consumer"], 1, THREADS, args, 0, s) == (S,)
    deadline = time.monotonic() + 20
    while not all(v[0] for v in views):          # both kernels spin at once
        assert time.monotonic() < deadline
        time.sleep(0.001)
    kernel_watch.cancel("Ctrl-C")
    try:
        assert mc.mcStreamSynchronize(a) == (E.mcErrorLaunchTimeout,)
        assert mc.mcStreamSynchronize(b) == (E.mcErrorLaunchTimeout,)
    finally:
        kernel_watch.clear()
    # the context's fault reported at once; the aborted kernels give their SMs back
    assert get_engine().current_device().gpu.sm_pool.wait_idle(10)


def test_racecheck_keeps_each_concurrent_kernels_state(ptx):
    """racecheck's per-launch state belongs to the kernel's own thread: a
    producer kernel that starts and ends while the consumer spins must not
    take the consumer's state with it (its race after the spin is found)."""
    from gpudbg.driver.engine import reset_engine
    from gpudbg.sanitizer.config import CheckConfig
    from gpudbg.sanitizer.findings import ToolName
    from gpudbg.sanitizer.report import Reporter
    from gpudbg.sanitizer.session import SanitizerSession
    race_src = SRC + r'''
extern "C" __global__ void racy_consumer(volatile unsigned *flag, unsigned *out, volatile unsigned *started) {
    __shared__ unsigned s[64];
    if (threadIdx.x == 0) { *started = 1; __threadfence_system(); }
    while (*flag == 0) { }
    s[threadIdx.x] = threadIdx.x;
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}
'''
    reset_engine()
    texts: list[str] = []
    config = CheckConfig(tool=ToolName("racecheck"))
    reporter = Reporter(config.print_limit, config.show_backtrace, write=texts.append)
    session = SanitizerSession(config, reporter).start()
    try:
        err, m = mc.mcModuleLoadData(compile_ptx(race_src, name="race_cross.cu"))
        assert err == S
        consumer = mc.mcModuleGetFunction(m, "racy_consumer")[1]
        producer = mc.mcModuleGetFunction(m, "producer")[1]
        a, b = mc.mcStreamCreateWithFlags(1)[1], mc.mcStreamCreateWithFlags(1)[1]
        flag, out, where = _malloc(4), _malloc(4 * 64), _malloc(16)
        started, view = _pinned_word()
        assert mc.mcLaunchKernel(consumer, 1, 64, [flag, out, started], 0, a) == (S,)
        deadline = time.monotonic() + 20
        while view[0] == 0:
            assert time.monotonic() < deadline
            time.sleep(0.001)
        assert mc.mcLaunchKernel(producer, 1, 1, [flag, 3, where], 0, b) == (S,)
        assert mc.mcStreamSynchronize(b) == (S,)
        assert mc.mcStreamSynchronize(a) == (S,)
        kinds = [f.kind for f in reporter.findings]
        assert kinds == ["shared_race_raw"], kinds
    finally:
        try:
            session.finish()
        finally:
            reset_engine()


def test_a_host_function_run_before_its_launch_call_returns_still_opens_its_gate(real, monkeypatch):
    """With engines beside the front end, a host function's HOST_NOTIFY can
    run, and the host worker call the function, before mcLaunchHostFunc has
    recorded the push's fence; the worker must still open the gate that
    holds the stream (it once skipped it, and the stream hung)."""
    from gpudbg.driver.stream import Stream
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "3")
    ran = threading.Event()
    real_submit = Stream.submit

    def slow_submit(self, *args, **kwargs):
        fence = real_submit(self, *args, **kwargs)
        ran.wait(5)                  # the worker runs the function before the call returns
        return fence
    monkeypatch.setattr(Stream, "submit", slow_submit)
    err, s = mc.mcStreamCreateWithFlags(1)
    assert err == S
    assert mc.mcLaunchHostFunc(s, lambda data: ran.set(), None) == (S,)
    assert ran.is_set()
    monkeypatch.setattr(Stream, "submit", real_submit)
    assert mc.mcStreamSynchronize(s) == (S,)


def test_a_device_reset_stops_a_spinning_kernel_at_once(dev):
    """A context torn down under a running kernel aborts it (its memory is
    about to go), instead of waiting for the kernel watch's timeout."""
    k, a, _b = dev
    _start_consumer(k, a)
    t0 = time.monotonic()
    assert mc.mcDeviceReset() == (S,)
    assert time.monotonic() - t0 < 10          # GPUDBG_HANG_TIMEOUT is 20 here
    assert get_engine().current_device().gpu.sm_pool.wait_idle(5)


def test_under_the_differential_mode_a_spinning_kernel_gives_way_to_held_back_work(dev, monkeypatch):
    # a compared launch holds the front end; the producer waits behind the
    # hold, so the consumer gives way (HeldBack) and runs once, uncompared
    from gpudbg.sim.native import differential
    monkeypatch.setenv(differential.ENV_DIFFERENTIAL, "1")
    monkeypatch.setattr(differential, "HOLD_PATIENCE_S", 0.2)
    before = dict(differential.stats)
    k, a, b = dev
    flag, out, where = _start_consumer(k, a)
    assert mc.mcLaunchKernel(k["producer"], 1, 1, [flag, 7, where], 0, b) == (S,)
    _finished(a, out, 7)
    assert mc.mcStreamSynchronize(b) == (S,)
    counted = {s: n - before.get(s, 0) for s, n in differential.stats.items() if n != before.get(s, 0)}
    assert [s for s in counted if "waited behind the hold" in s], counted
