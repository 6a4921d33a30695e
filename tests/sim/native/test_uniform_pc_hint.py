"""The whole-wave pc hint (WaveExecution.uniform_pc): whenever the step
loop takes it instead of scanning the wave, the step it hands out is the
one the lowest-pc scan would find: every slot it names is at that pc and
no other slot is (a padded block shape's padding slots at EXITED). Checked
over every kernel of the PTX corpus's smaller modules (barriers, divergent
exits, calls, warp syncs, mbarriers, cluster barriers, CUB block
primitives) under both engines, with a padded block shape too, by a
wrapper around the hint that compares it with the scan."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpudbg.ptx import parse
from gpudbg.ptx.corpus import read_ptx
from gpudbg.sim import executor
from gpudbg.sim.debug_port import LaunchAborted
from gpudbg.sim.faults import KernelFault
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.native import engine as native_engine
from synthetic_args import synthetic_params

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "data" / "ptx_corpus" / "plain"
MAX_INSTRUCTIONS = 700
BUDGET = 200_000


def _small_modules() -> list[Path]:
    out = []
    for p in sorted(CORPUS.glob("*.ptx.xz")):
        m = load_module(SimGPU(), parse(read_ptx(p), p.name))
        if len(next(iter(m.functions.values())).program.code) <= MAX_INSTRUCTIONS:
            out.append(p)
    return out


SMALL = _small_modules()


@pytest.fixture
def checked_hint(monkeypatch):
    """Counts the hints taken; fails on one that the array contradicts."""
    taken = []
    real = executor.whole_wave_at_known_pc

    def checking(X, spin):
        got = real(X, spin)
        if got is not None:
            m, idx = got
            sched = X.sched
            if m >= executor.PARKED or idx is None:
                bad = np.flatnonzero(sched != m)
            else:
                bad = np.flatnonzero((sched == m) != np.isin(np.arange(len(sched)), idx))
            assert not len(bad), (f"{X.function.name}: hint says {'every slot' if idx is None else 'its slots'} "
                                  f"at pc {m}, slot {bad[0]} is at {sched[bad[0]]}")
            if idx is not None and m < executor.PARKED:
                assert np.array_equal(idx, np.flatnonzero(sched == m))    # the scan's answer, in its order
            taken.append(m)
        return got
    monkeypatch.setattr(executor, "whole_wave_at_known_pc", checking)
    return taken


@pytest.mark.parametrize("engine", ["interp", "native"])
@pytest.mark.parametrize("block", [(64, 1, 1), (48, 1, 1)])
def test_the_hint_matches_the_scheduling_pcs_over_the_corpus(checked_hint, monkeypatch, engine, block):
    monkeypatch.setenv(native_engine.ENV_ENGINE, engine)
    for path in SMALL:
        gpu = SimGPU()
        gpu.instruction_budget = BUDGET
        m = load_module(gpu, parse(read_ptx(path), path.name))
        for k in m.functions.values():
            try:
                executor.launch_grid(gpu, k, (2, 1, 1), block, 1024, synthetic_params(gpu, k), 1)
            except (KernelFault, LaunchAborted):
                pass
    # the hint is really taken (starts, barriers, branches; a padded
    # shape's steps over all its real threads)
    assert len(checked_hint) > 100


# a loop from the kernel's first instruction: the native region runs while
# the wave's start pc is still pending, and must find it written first
# (no checked_hint here: its comparison reads the array, which writes it)
LOOP_FIRST = """.version 7.0
.target sm_70
.address_size 64
.visible .entry loop_first(.param .u64 out)
{
    .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<4>;
L:
    add.u32 %r1, %r1, 3;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, 40;
    @%p1 bra L;
    mov.u32 %r3, %tid.x;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
"""


def test_a_region_at_the_kernels_entry_sees_the_start_pc_written():
    from engines_pair import Out, run_both
    ref, got = run_both(LOOP_FIRST, "loop_first", (1,), (256,), [Out(256, np.uint32)])
    assert (got[0] == 120).all()
    assert got.stats.thread_instructions == ref.stats.thread_instructions
