"""The concurrent device (issue 14, finding 4): the SM pool's placement and
waiting, engines beside the front end, and the per-kernel machinery that
must hold with several grids in flight (kernel watch, hang detection,
racecheck's per-launch state)."""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from gpudbg.driver import commands as C
from gpudbg.driver.channel import Channel
from gpudbg.sim.device_model import DeviceModel, occupancy
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.memory.spaces import AllocationKind
from gpudbg.sim.sm_pool import BlockShape, SMPool

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "driver"))
from gpudbg_fakes import launch_command, make_kernel  # noqa: E402


# ---------------------------------------------------------------- the SM pool
def shape(model, threads=256, regs=32, shared=0):
    per_sm = max(1, occupancy(model, threads, regs, shared))
    return BlockShape.of(model, threads, regs, shared, per_sm), per_sm


@pytest.mark.parametrize("threads,regs,shared", [(256, 32, 0), (1024, 64, 0), (32, 255, 0), (128, 16, 40_000),
                                                 (96, 0, 0), (64, 200, 100_000)])
def test_a_lone_grid_gets_its_occupancy_on_every_sm(threads, regs, shared):
    model = DeviceModel()
    pool = SMPool(model)
    s, per_sm = shape(model, threads, regs, shared)
    full = model.sm_count * per_sm
    p = pool.try_acquire("g", s, full + 5)          # more than fit: capped at a full wave
    assert p.count == full
    assert pool.try_acquire("h", s, 1) is None     # nothing left of that shape
    pool.release(p)
    p = pool.try_acquire("g", s, full)
    assert p.default and p.count == full           # empty pool: the layout's own placement
    pool.release(p)
    assert pool.resident_blocks == 0 and pool.resident_grids == 0


def test_a_second_grid_gets_distinct_warp_slots_within_the_limits():
    model = DeviceModel()
    pool = SMPool(model)
    big, per_sm = shape(model, 512, 32)             # 16 warps a block, 4 blocks per SM
    small, _ = shape(model, 64, 32)
    first = pool.try_acquire("a", big, model.sm_count * per_sm - 3)   # leaves 3 SMs with room for one
    second = pool.try_acquire("b", small, 1000)
    assert first.default and not second.default
    assert pool.peak_grids == 2
    # written down once a second grid came: both placements as arrays
    used = {}
    for p in (first, second):
        for sm, warps in zip(p.block_sm.tolist(), p.block_warps.tolist()):
            for w in warps:
                assert (sm, w) not in used, "two blocks in one warp slot"
                used[(sm, w)] = p.owner
    per_sm_warps = np.bincount([sm for sm, _ in used], minlength=model.sm_count)
    assert per_sm_warps.max() <= model.warp_slots_per_sm
    assert second.count == 3 * (16 // 2)           # the 3 free block-sized holes, 2-warp blocks
    pool.release(first)
    pool.release(second)
    assert pool.resident_blocks == 0 and pool.free_warps.all() and not pool.used.any()


def test_a_grid_that_finds_no_room_waits_until_one_is_released():
    model = DeviceModel(sm_count=2)
    pool = SMPool(model)
    s, per_sm = shape(model, 1024, 32)
    hog = pool.try_acquire("hog", s, 2 * per_sm)
    got = []
    t = threading.Thread(target=lambda: got.append(pool.acquire("late", s, 1)))
    t.start()
    t.join(0.2)
    assert t.is_alive() and pool.waits == 1
    pool.release(hog)
    t.join(5)
    assert got and got[0].count == 1
    pool.release(got[0])


def test_a_waiting_grid_gives_up_when_told():
    model = DeviceModel(sm_count=1)
    pool = SMPool(model)
    s, per_sm = shape(model, 1024, 32)
    hog = pool.try_acquire("hog", s, per_sm)

    class Stop(Exception):
        pass

    calls = []

    def abort():
        calls.append(1)
        if len(calls) > 2:
            raise Stop()
    with pytest.raises(Stop):
        pool.acquire("late", s, 1, abort)
    pool.release(hog)


# ---------------------------------------------------------------- engines beside the front end
class Blocking:
    """A fake executor whose kernels wait for `release` (or a flag)."""

    def __init__(self):
        self.release = threading.Event()
        self.running = 0
        self.peak = 0
        self.lock = threading.Lock()

    def __call__(self, gpu, function, grid, block, shared, params, grid_id):
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            assert self.release.wait(10), "never released"
        finally:
            with self.lock:
                self.running -= 1


@pytest.fixture
def gpu():
    ex = Blocking()
    g = SimGPU(executor=ex)
    g.ex = ex
    yield g
    ex.release.set()
    g.shutdown()


def launch(gpu, name="k", grid_id=1):
    return launch_command(gpu, make_kernel(name), grid_id)


def test_copies_memsets_and_quick_commands_run_while_a_kernel_runs(gpu):
    busy, other = Channel(gpu, 1), Channel(gpu, 1)
    buf = gpu.memory.alloc(64, AllocationKind.DEVICE)
    fk = busy.push([launch(gpu)])
    fo = other.push([C.make(C.Opcode.MEMSET, dst=buf.base, value=7, element_size=1, count=16),
                     C.make(C.Opcode.COPY, src=buf.base, dst=buf.base + 16, size=16),
                     C.make(C.Opcode.MEMSET_2D, dst=buf.base + 32, pitch=8, value=3, element_size=1,
                            width=4, height=2),
                     C.make(C.Opcode.WRITE_VALUE, address=buf.base + 48, value=99, width=4, flags=0)])
    assert other.semaphore.wait(fo, timeout=5)      # done while the kernel still runs
    assert not busy.semaphore.wait(fk, timeout=0.01)
    d = buf.data
    assert (d[:32] == 7).all() and list(d[32:44]) == [3, 3, 3, 3, 0, 0, 0, 0, 3, 3, 3, 3]
    assert int(d[48:52].view(np.uint32)[0]) == 99
    gpu.ex.release.set()
    busy.wait(fk)


def test_a_channels_commands_stay_in_order_behind_its_kernel(gpu):
    ch = Channel(gpu, 1)
    buf = gpu.memory.alloc(8, AllocationKind.DEVICE)
    f = ch.push([launch(gpu), C.make(C.Opcode.MEMSET, dst=buf.base, value=5, element_size=1, count=8)])
    time.sleep(0.05)
    assert (buf.data == 0).all()           # the memset waits for the kernel before it
    gpu.ex.release.set()
    ch.wait(f)
    assert (buf.data == 5).all()


def test_kernels_of_many_channels_are_in_flight_together(gpu):
    chans = [Channel(gpu, 1) for _ in range(5)]
    fences = [ch.push([launch(gpu, f"k{i}", i)]) for i, ch in enumerate(chans)]
    with gpu.cv:
        assert gpu.cv.wait_for(lambda: len(gpu.frontend.executing) == 5, 5)
        assert gpu.frontend.blocked_heads() is None            # busy engines are progress
        token = gpu.frontend.progress_token()
    # a job is "executing" once dispatched; its thread enters the executor a moment later
    deadline = time.monotonic() + 5
    while gpu.ex.peak < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gpu.ex.peak == 5
    gpu.ex.release.set()
    for ch, f in zip(chans, fences):
        ch.wait(f)
    with gpu.cv:
        assert gpu.frontend.progress_token() != token and not gpu.frontend.executing


def test_status_registers_show_every_executing_channel(gpu):
    from gpudbg.sim import registers as R
    chans = [Channel(gpu, 1), Channel(gpu, 1)]
    for i, ch in enumerate(chans):
        ch.push([launch(gpu, f"k{i}", i)])
    with gpu.cv:
        assert gpu.cv.wait_for(lambda: len(gpu.frontend.executing) == 2, 5)
        assert all(R.channel_status(gpu, ch) & R.ChannelStatus.EXECUTING for ch in chans)
        assert R.rbbm_status(gpu) & R.RbbmStatus.SM_BUSY
    gpu.ex.release.set()


def test_the_hang_watchdog_waits_while_any_engine_runs(gpu, monkeypatch):
    """A channel blocked for good is a hang only once nothing executes: a
    kernel running on another channel is progress, however long."""
    from gpudbg.driver.status import CUresult
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "0.3")
    busy, stuck = Channel(gpu, 1), Channel(gpu, 1)
    sem = gpu.memory.alloc(8, AllocationKind.SEMAPHORE)
    busy.push([launch(gpu)])
    f = stuck.push([C.make(C.Opcode.SEM_ACQUIRE, address=sem.base, value=1)])
    threading.Timer(1.0, gpu.ex.release.set).start()
    t0 = time.monotonic()
    stuck.wait(f)                      # the watchdog breaks the hang, after the kernel ended
    assert time.monotonic() - t0 >= 1.0
    assert stuck.error.status is CUresult.CUDA_ERROR_LAUNCH_TIMEOUT
    assert "every channel is blocked" in stuck.error.message


def test_a_fault_aborts_the_contexts_other_running_kernels():
    from gpudbg.sim.engines import current_job
    from gpudbg.sim.faults import KernelFault
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "driver"))
    from gpudbg_fakes import report
    started = threading.Event()
    seen = []

    def executor(gpu, function, grid, block, shared, params, grid_id):
        if function.name == "boom":
            assert started.wait(5)
            raise KernelFault(report())
        started.set()
        job = current_job()
        deadline = time.monotonic() + 5
        while job.abort is None and time.monotonic() < deadline:
            time.sleep(0.001)
        seen.append(job.abort)
    g = SimGPU(executor=executor)
    try:
        a, b, other = Channel(g, 3), Channel(g, 3), Channel(g, 4)
        fa = a.push([launch(g, "spin", 1)])
        fb = b.push([launch(g, "boom", 2)])
        b.wait(fb), a.wait(fa)         # the fault retires both channels at once
        with g.cv:                     # the spinning kernel stops soon after
            assert g.cv.wait_for(lambda: not g.frontend.executing, 5)
        assert seen and "its context failed" in seen[0]
        assert a.error is b.error and a.error is not None
        assert other.error is None
    finally:
        g.shutdown()


# ---------------------------------------------------------------- the debugger sees every resident grid
DEBUG_SRC = r'''
extern "C" __global__ void consumer(volatile unsigned *flag, unsigned *out, volatile unsigned *started) {
    if (threadIdx.x == 0) { *started = 1; __threadfence_system(); }
    while (*flag == 0) { }
    out[threadIdx.x] = *flag + threadIdx.x;
}

extern "C" __global__ void producer(unsigned *flag, unsigned value) {
    unsigned v = value * 2;
    atomicExch(flag, v);
}
'''


def test_the_debugger_stops_lists_and_resumes_every_resident_grid():
    """A breakpoint in a producer kernel stops the device while a consumer
    kernel of another stream spins: both grids are listed, the warps of
    both are visible (distinct SMs/warp slots) and stopped, stepping works
    on the producer, and resume lets both finish."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")
    from gpudbg import compile_ptx
    from gpudbg.debug.backend import StopReason
    from gpudbg.debug.events import EventKind
    from gpudbg.debug.session import Session
    from gpudbg.driver.engine import reset_engine
    from gpudbg.runtime import mc
    from gpudbg.runtime.errors import mcError_t as E
    S = E.mcSuccess
    ptx = compile_ptx(DEBUG_SRC, name="dbg_cross.cu")
    reset_engine()
    session = Session.attach()
    result: dict = {}
    try:
        bp = session.break_at_kernel("producer")

        def host():
            err, m = mc.mcModuleLoadData(ptx)
            cons, prod = mc.mcModuleGetFunction(m, "consumer")[1], mc.mcModuleGetFunction(m, "producer")[1]
            a, b = mc.mcStreamCreateWithFlags(1)[1], mc.mcStreamCreateWithFlags(1)[1]
            flag, out = mc.mcMalloc(4)[1], mc.mcMalloc(4 * 64)[1]
            mc.mcMemset(flag, 0, 4)
            mc.mcStreamSynchronize(0)
            started = mc.mcMallocHost(4)[1]
            view = mc.host_view(started, 4, np.uint32)
            view[0] = 0
            assert mc.mcLaunchKernel(cons, 1, 64, [flag, out, started], 0, a) == (S,)
            while view[0] == 0:
                time.sleep(0.001)
            assert mc.mcLaunchKernel(prod, 1, 32, [flag, 21], 0, b) == (S,)
            result["sync"] = (mc.mcStreamSynchronize(a), mc.mcStreamSynchronize(b))
            host_out = np.zeros(64, np.uint32)
            mc.mcMemcpy(host_out, out, 4 * 64, mc.mcMemcpyKind.mcMemcpyDeviceToHost)
            result["out"] = host_out
        t = threading.Thread(target=host, daemon=True)
        t.start()
        ev = session.wait_for({EventKind.STOPPED}, timeout=60)
        assert ev is not None and ev.reason is StopReason.BREAKPOINT and ev.breakpoints == (bp.id,)
        assert ev.grid.kernel == "producer"                       # the stopping grid first
        grids = session.grids(0)
        assert sorted(g.kernel for g in grids) == ["consumer", "producer"] and grids[0].kernel == "producer"
        warps = session.warps(0)
        by_grid = {g.grid_id: g.kernel for g in grids}
        names = sorted({by_grid[w.grid_id] for w in warps})
        assert names == ["consumer", "producer"]
        coords = [(w.sm, w.wp) for w in warps]
        assert len(coords) == len(set(coords)) == 2 + 1          # 2 consumer warps, 1 producer warp
        cons_warps = [w for w in warps if by_grid[w.grid_id] == "consumer"]
        time.sleep(0.05)
        pcs = [session.warp(0, w.sm, w.wp).pc for w in cons_warps]
        time.sleep(0.05)
        assert [session.warp(0, w.sm, w.wp).pc for w in cons_warps] == pcs   # the consumer is stopped too
        prod = next(w for w in warps if by_grid[w.grid_id] == "producer")
        before = prod.pc
        session.single_step_warp(0, prod.sm, prod.wp, 1)        # stepping the producer's warp
        assert session.warp(0, prod.sm, prod.wp).pc != before
        assert t.is_alive()
        session.resume(0)
        t.join(60)
        assert not t.is_alive()
        assert result["sync"] == ((S,), (S,))
        assert (result["out"] == 42 + np.arange(64)).all()
    finally:
        session.detach()
        reset_engine()


CLI_HOST = r'''
import time
import numpy as np
from gpudbg import compile_ptx
from gpudbg.runtime import mc

SRC = r"""{src}"""
err, m = mc.mcModuleLoadData(compile_ptx(SRC, name="cli_cross.cu"))
cons, prod = mc.mcModuleGetFunction(m, "consumer")[1], mc.mcModuleGetFunction(m, "producer")[1]
a, b = mc.mcStreamCreateWithFlags(1)[1], mc.mcStreamCreateWithFlags(1)[1]
flag, out = mc.mcMalloc(4)[1], mc.mcMalloc(4 * 64)[1]
mc.mcMemset(flag, 0, 4)
mc.mcStreamSynchronize(0)
started = mc.mcMallocHost(4)[1]
view = mc.host_view(started, 4, np.uint32)
view[0] = 0
mc.mcLaunchKernel(cons, 1, 64, [flag, out, started], 0, a)
while view[0] == 0:
    time.sleep(0.001)
mc.mcLaunchKernel(prod, 1, 32, [flag, 21], 0, b)
print("sync", mc.mcStreamSynchronize(a), mc.mcStreamSynchronize(b))
'''


def test_info_cuda_kernels_lists_both_resident_grids(tmp_path, capsys):
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")
    import gpudbg
    from gpudbg.cli.main import main
    prog = tmp_path / "cross_host.py"
    prog.write_text(CLI_HOST.replace("{src}", DEBUG_SRC))
    try:
        status = main(["debug", "--batch", "-ex", "break producer", "-ex", "run", "-ex", "info cuda kernels",
                       "-ex", "continue", str(prog)])
        out, err = capsys.readouterr()
    finally:
        gpudbg.Device(0).reset()
    assert status == 0, out + err
    table = out[out.index("Kernel"):]
    rows = [line for line in table.splitlines()[1:3]]
    assert any("producer(" in r for r in rows) and any("consumer(" in r for r in rows), out
    assert any(r.startswith("*") and "producer(" in r for r in rows), out     # focus: the stopped grid
    assert "sync (<mcError_t.mcSuccess: 0>,) (<mcError_t.mcSuccess: 0>,)" in out, out


def test_launch_descriptors_read_while_the_host_allocates():
    """The front end reads a launch's descriptor and parameters while host
    threads allocate and free driver memory (the next launches' descriptors):
    the allocation table changes under the GPU's lock, so the read takes it
    too (without it, about one run in two of this loop failed a LAUNCH with
    a spurious illegal address, an IndexError or a 0-byte descriptor)."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")
    import gpudbg
    from gpudbg.driver.engine import reset_engine
    reset_engine()
    old = sys.getswitchinterval()
    sys.setswitchinterval(2e-5)         # many thread switches: the unlocked window is hit
    try:
        m = gpudbg.compile('extern "C" __global__ void k(int *a) { a[threadIdx.x] += 1; }', name="desc.cu")
        a = gpudbg.zeros(32, np.int32)
        for _ in range(1500):
            m.k[1, 32](a)
        gpudbg.Device().synchronize()
        assert (a.to_host() == 1500).all()
    finally:
        sys.setswitchinterval(old)
        reset_engine()


# ---------------------------------------------------------------- float warnings
def test_a_wave_on_a_gpu_thread_runs_with_float_warnings_off(monkeypatch):
    # a GPU thread runs with numpy's float warnings off (engines.py), so the
    # launch sets no errstate of its own there; the instructions' numpy work
    # (inf, NaN, 0/0 are ordinary kernel values) must still warn nothing
    import gpudbg
    from gpudbg.sim import executor
    seen = []
    original = executor.run_wave

    def spy(X, *a, **kw):
        seen.append(np.geterr())
        return original(X, *a, **kw)
    monkeypatch.setattr(executor, "run_wave", spy)
    ptx = (".version 7.0\n.target sm_80\n.address_size 64\n"
           ".visible .entry nop()\n{\n ret;\n}\n")
    k = gpudbg.Module.from_ptx(ptx, "nop.ptx").nop
    k[1, 32]()
    gpudbg.synchronize()
    assert seen and all(set(e.values()) == {"ignore"} for e in seen), seen
