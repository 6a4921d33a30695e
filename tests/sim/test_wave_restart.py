"""A launch of the same shape restarts the last launch's wave
(executor._wave_for, WaveExecution.restart) instead of building one, and
so does each wave of a long grid after the first (restart_at, for other
blocks of the same count): the restarted wave must hold exactly what a new
one would, whatever the last launch or wave changed (barrier tables made
its own, printf lines, call depth and stack pointers, padding slots,
attributes it added, the blocks it held), and a wave that a debugger, a
tool or a fault may still look at is never restarted."""
from __future__ import annotations

import math

import numpy as np
import pytest

from kernels import OPTIMIZED, Out, Ptr, kernel_ptx, run
from gpudbg.ptx.parser import parse
from gpudbg.sim import executor
from gpudbg.sim.device_model import DeviceModel
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.wave import WaveExecution


# what a wave keeps for itself and a new one lacks: its saved state, and the
# native environment table of its last run, which the next native call
# takes over (engine.wave_environment) instead of building one
NOT_STATE = ("_fresh", "native_env_kept")


def _last_kept(res):
    """The entry (template, blocks, wave) of the wave kept last, or None."""
    return next(reversed(res.kept_waves.values()), None)


def _kept(gpu):
    entry = _last_kept(gpu._launch_resources[1])
    return None if entry is None else entry[2]


def _same(a, b, path: str) -> None:
    """a and b hold the same state (containers compared by content, since
    a restarted wave must not share a mutable one with its last launch's
    run; shared read-only arrays and helper objects compared by type)."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, path
        assert np.array_equal(a, b), path
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert type(b) is dict and a.keys() == b.keys(), path
        for k in a:
            _same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (int, float, str, bytes, bool, type(None), range, set, frozenset)):
        if isinstance(a, (set, frozenset)):
            assert len(a) == len(b), path        # ids of the register arrays: compared through regs
        else:
            assert a == b, path
    else:
        assert type(a) is type(b), path


def _compare_with_new(gpu, k, grid, block, params: bytes, grid_id: int):
    """Restart the kept wave for a launch and build a new one for it: the
    two must hold the same attributes."""
    res = gpu._launch_resources[1]
    template, blocks, X = _last_kept(res)
    restarted = X.restart(params, grid_id, 1000)
    fresh = WaveExecution(gpu, k, grid, block, 0, params, grid_id, blocks, template.plan, 1000, res, template)
    mine = {a: v for a, v in vars(restarted).items() if a not in NOT_STATE}
    new = {a: v for a, v in vars(fresh).items() if a not in NOT_STATE}
    assert mine.keys() == new.keys()
    for name, value in new.items():
        _same(mine[name], value, name)


def test_printf_and_calls_restart_clean():
    # printf keeps lines per wave, calls move depth and sp, 40 threads in 64 slots leave padding
    gpu = SimGPU()
    ptx = kernel_ptx("calls", OPTIMIZED)
    mod = load_module(gpu, parse(ptx))
    first = run(ptx, "printer", (2,), (40,), [35], module=mod)
    X = _kept(gpu)
    assert X is not None and first.printf
    second = run(ptx, "printer", (2,), (40,), [35], module=mod)
    assert _kept(gpu) is X                      # the same wave ran it again
    # the GPU's buffer holds both launches' lines: the second's are its own, once
    assert second.printf == first.printf * 2
    r = run(ptx, "recursion", (1,), (48,), [Out(48, np.uint64), Out(48, np.int32)], module=mod)
    r = run(ptx, "recursion", (1,), (48,), [Out(48, np.uint64), Out(48, np.int32)], module=mod)
    assert r[0].tolist() == [math.factorial(t % 21) for t in range(48)]
    _compare_with_new(gpu, mod.functions["recursion"], (1, 1, 1), (48, 1, 1), bytes(16), 7)


def test_barriers_owned_by_the_last_launch_start_from_zero():
    # 100 threads in 128 slots: the padding never arrives, so the barrier counts are the wave's own
    gpu = SimGPU()
    ptx = kernel_ptx("control", OPTIMIZED)
    mod = load_module(gpu, parse(ptx))
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = rng.integers(-1000, 1000, 300, dtype=np.int32)
        r = run(ptx, "odd_block_sum", (3,), (100,), [x, Out(3, np.int32)], module=mod)
        assert r[1].tolist() == x.reshape(3, 100).sum(axis=1).tolist()
    X = _kept(gpu)
    assert X._bars_own       # its run made the barrier tables its own
    _compare_with_new(gpu, mod.functions["odd_block_sum"], (3, 1, 1), (100, 1, 1), bytes(16), 9)


def test_attributes_a_run_added_are_gone_after_restart():
    gpu = SimGPU()
    ptx = kernel_ptx("control", OPTIMIZED)
    mod = load_module(gpu, parse(ptx))
    run(ptx, "coords", (2,), (32,), [Out(2 * 32 * 10, np.uint32)], module=mod)
    X = _kept(gpu)
    X.leftover = object()
    X.regs[0] = np.zeros(1)          # an instruction may swap a register's array (ops/base.py)
    X.restart(bytes(8), 3, 10)
    assert not hasattr(X, "leftover") and X.regs[0] is X.arrays.regs[0]


def test_a_wave_kept_for_restart_is_freed_without_the_cyclic_collector():
    # a long grid builds a wave per group of blocks; state in a reference
    # cycle lives (with the wave's arrays) until the collector runs: the
    # interpreter's saxpy 2^22 ran 2-5x slower when a wave's saved state
    # (WaveExecution._fresh) held itself
    import gc
    gpu = SimGPU()
    ptx = kernel_ptx("control", OPTIMIZED)
    mod = load_module(gpu, parse(ptx))
    run(ptx, "coords", (2,), (32,), [Out(2 * 32 * 10, np.uint32)], module=mod)
    res = gpu._launch_resources[1]
    X = _last_kept(res)[2]
    X.restart(bytes(8), 3, 10)          # restarted once: its state put back as a new wave's
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        res.kept_waves.clear()
        del X
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, dict) and "kparams" in o]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not left, "a wave's state was freed only by the cyclic collector"


def test_a_faulting_wave_is_not_kept():
    gpu = SimGPU()
    ptx = kernel_ptx("control", OPTIMIZED)
    mod = load_module(gpu, parse(ptx))
    run(ptx, "coords", (2,), (32,), [Out(2 * 32 * 10, np.uint32)], module=mod)
    assert _kept(gpu) is not None
    r = run(ptx, "coords", (2,), (32,), [Ptr(0x10)], module=mod, expect_fault=True)
    assert r.fault is not None
    assert _kept(gpu) is None        # the fault's report holds that wave


def test_a_debugger_port_gets_a_new_wave(monkeypatch):
    gpu = SimGPU()
    ptx = kernel_ptx("control", OPTIMIZED)
    mod = load_module(gpu, parse(ptx))
    run(ptx, "coords", (2,), (32,), [Out(2 * 32 * 10, np.uint32)], module=mod)
    X = _kept(gpu)
    built = []
    original = executor.WaveExecution

    class Counting(original):
        def __init__(self, *a, **kw):
            built.append(self)
            super().__init__(*a, **kw)

    class Port:        # the debugged loop's side of a port: run the wave plainly
        def kernel_ready(self, *a, **kw): pass

        def kernel_finished(self, *a): pass

        def keeps_every_register(self, program): return True

        def run_wave(self, X):
            executor.run_wave(X)

    monkeypatch.setattr(executor, "WaveExecution", Counting)
    monkeypatch.setattr(executor.debug_port, "port_for", lambda g: Port())
    out = run(ptx, "coords", (2,), (32,), [Out(2 * 32 * 10, np.uint32)], module=mod)
    assert len(built) == 1 and built[0] is not X
    assert _kept(gpu) is None       # nor is one a debugger ran kept
    assert out[0].any()


@pytest.mark.parametrize("block", [(32, 1, 1), (40, 1, 1)])
def test_restarting_gives_what_a_new_wave_gives(block):
    gpu = SimGPU()
    ptx = kernel_ptx("control", OPTIMIZED)
    mod = load_module(gpu, parse(ptx))
    n = 2 * block[0]
    run(ptx, "coords", (2,), block[:1], [Out(n * 10, np.uint32)], module=mod)
    _compare_with_new(gpu, mod.functions["coords"], (2, 1, 1), block, bytes(8), 4)


def test_each_wave_of_a_long_grid_restarts_the_last_at_its_own_blocks(monkeypatch):
    # two SMs of two 1024-thread blocks: 4 blocks a wave, so 9 blocks are 3
    # waves (4, 4, 1); the second restarts the first at blocks 4..7, whose
    # blockIdx the kernel writes, and the short third needs a wave of its
    # own, which the next launch restarts too
    monkeypatch.delenv("GPUDBG_DIFFERENTIAL", raising=False)   # (which runs each launch twice)
    gpu = SimGPU(DeviceModel(sm_count=2))
    ptx = kernel_ptx("control", OPTIMIZED)
    mod = load_module(gpu, parse(ptx))
    built = []
    real_init = WaveExecution.__init__

    def counting_init(self, *a, **k):
        built.append(self)
        real_init(self, *a, **k)
    monkeypatch.setattr(WaveExecution, "__init__", counting_init)
    for launch in range(2):
        r = run(ptx, "coords", (9,), (1024,), [Out(9 * 1024 * 10, np.uint32)], module=mod)
        o = r[0].reshape(9, 1024, 10)
        assert (o[:, :, 3] == np.arange(9)[:, None]).all()          # blockIdx.x
        assert (o[:, :, 0] == np.arange(1024)[None, :]).all()       # threadIdx.x
    # the first launch builds a 4-block wave and a 1-block one; the second
    # restarts those (one wave kept per block count): 2 waves built for 6
    # run, where building every wave made 6
    assert len(built) == 2


def test_a_wave_restarted_at_other_blocks_holds_what_a_new_one_would():
    gpu = SimGPU(DeviceModel(sm_count=2))
    ptx = kernel_ptx("control", OPTIMIZED)
    mod = load_module(gpu, parse(ptx))
    x = np.arange(3 * 100, dtype=np.int32)
    r = run(ptx, "odd_block_sum", (3,), (100,), [x, Out(3, np.int32)], module=mod)
    assert r[1].tolist() == x.reshape(3, 100).sum(axis=1).tolist()
    res = gpu._launch_resources[1]
    template, blocks, X = _last_kept(res)
    other = range(blocks.start + 1, blocks.stop + 1)
    restarted = X.restart_at(other, bytes(16), 9, 1000)
    fresh = WaveExecution(gpu, mod.functions["odd_block_sum"], (3, 1, 1), (100, 1, 1), 0, bytes(16), 9, other,
                          template.plan, 1000, res, template)
    mine = {a: v for a, v in vars(restarted).items() if a not in NOT_STATE}
    new = {a: v for a, v in vars(fresh).items() if a not in NOT_STATE}
    assert mine.keys() == new.keys()
    for name, value in new.items():
        _same(mine[name], value, name)
    assert restarted.layout.ctaid[0].tolist() == fresh.layout.ctaid[0].tolist()
    with pytest.raises(ValueError, match="restarted for"):
        X.restart_at(range(len(blocks) + 1), bytes(16), 9, 1000)
