"""The whole-wave pc hint (WaveExecution.uniform_pc): whenever the step
loop takes it instead of scanning the wave, every slot's scheduling pc
really is that pc. Checked over every kernel of the PTX corpus's smaller
modules (barriers, divergent exits, calls, warp syncs, mbarriers, cluster
barriers, CUB block primitives) under both engines, with a padded block
shape too, by a wrapper around the hint that compares it with the array."""
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
            bad = np.flatnonzero(X.sched != got[0])
            assert not len(bad), (f"{X.function.name}: hint says every slot is at pc {got[0]}, "
                                  f"slot {bad[0]} is at {X.sched[bad[0]]}")
            taken.append(got[0])
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
    if block[0] % 32 == 0:
        assert len(checked_hint) > 100     # the hint is really taken (whole-wave starts, barriers, branches)
    else:   # padding lanes sit at EXITED from the start: no step is ever the whole wave
        assert not checked_hint
