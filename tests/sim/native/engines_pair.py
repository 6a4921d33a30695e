"""Run one PTX kernel under both engines and compare everything a user can
see: every buffer bit for bit, the fault report, printf output.

Tests of native lowerings use `run_both` with hand-written PTX (one
instruction form at a time, hypothesis-chosen operands); it fails with the
first differing element, named by argument and index, and asserts that
the native run really executed compiled segments (a lowering that silently
refuses its form would make the comparison vacuous).
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # tests/sim: the kernels helper
from kernels import Out, Ptr, Result, run  # noqa: E402,F401

from gpudbg.sim.native import engine  # noqa: E402


@contextmanager
def engine_choice(name: str):
    old = os.environ.get(engine.ENV_ENGINE)
    os.environ[engine.ENV_ENGINE] = name
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(engine.ENV_ENGINE, None)
        else:
            os.environ[engine.ENV_ENGINE] = old


def native_segments(result: Result) -> int:
    """How many compiled segments the program of a native run had."""
    return int(getattr(result.module.program, "native_segments", 0))


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def assert_same(ref: Result, got: Result) -> None:
    """Buffers bit for bit, fault reports and printf output equal."""
    for i, (x, y) in enumerate(zip(ref.arrays, got.arrays)):
        if x is None:
            continue
        if not np.array_equal(_bits(x), _bits(y)):
            bad = np.flatnonzero(_bits(x).reshape(x.shape[0], -1) != _bits(y).reshape(y.shape[0], -1))
            k = int(bad[0]) // max(1, _bits(x).reshape(x.shape[0], -1).shape[1])
            raise AssertionError(f"argument {i} differs first at element {k}: "
                                 f"interpreter {x[k]!r}, native {y[k]!r}")
    if (ref.fault is None) != (got.fault is None):
        raise AssertionError(f"fault: interpreter {ref.fault}, native {got.fault}")
    if ref.fault is not None:
        assert str(ref.fault) == str(got.fault), (str(ref.fault), str(got.fault))
    assert ref.printf == got.printf


def run_both(ptx: str, kernel: str, grid, block, args, require_native: bool = True,
             **kw) -> tuple[Result, Result]:
    """The kernel run interpreted, then native; asserts they agree."""
    with engine_choice("interp"):
        ref = run(ptx, kernel, grid, block, args, **kw)
    with engine_choice("native"):
        got = run(ptx, kernel, grid, block, args, **kw)
    if require_native:
        assert native_segments(got) > 0, "the native run compiled no segment"
    assert_same(ref, got)
    return ref, got


def if_plans(result: Result) -> list:
    """The segment plans with if bodies of a run's program."""
    from gpudbg.sim.native.segments import plan_segments
    return [p for p in plan_segments(result.module.program, if_convert=True)[0] if p.if_branches]


def same_counts(ref: Result, got: Result) -> None:
    """The interpreter's count of work, steps and cycles."""
    assert got.stats.thread_instructions == ref.stats.thread_instructions
    assert got.stats.steps == ref.stats.steps
    assert got.stats.cycles == ref.stats.cycles
