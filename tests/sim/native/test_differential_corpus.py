"""The differential test of the native engine (issue 13): the suite's real
programs run under GPUDBG_ENGINE=interp and =native must be
indistinguishable.

- every example program in examples/, run as a user runs it (a fresh
  Python process, default arguments), under each engine: the same stdout,
  stderr and exit status, and the native process really ran compiled code;
- the NVRTC-built kernels of tests/sim/kernels/*.cu that the executor
  tests launch, with those tests' arguments (one launch per kernel; the
  optimized builds, the -lineinfo build of the faulting kernels, and the
  -G builds too with GPUDBG_DIFFERENTIAL=full), compared as
  engines_pair.run_both compares: every buffer bit for bit, the same fault
  report and the same printf output.

The whole suite also runs under the native engine with GPUDBG_ENGINE=native
(README, "Engines"); this file is what CI runs every time.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engines_pair import Out, Ptr, assert_same, engine_choice, native_segments, run
from gpudbg.ptx import parse
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from kernels import DEBUG, LINEINFO, OPTIMIZED, kernel_ptx

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py"))

# runs an example as `python examples/NAME.py` does, then records how many
# native modules the process loaded (compiled or from the disk cache)
RUNNER = """
import atexit, runpy, sys
from gpudbg.sim.native import engine
report, path = sys.argv[1], sys.argv[2]
atexit.register(lambda: open(report, "w").write(str(len(engine._loaded))))
sys.argv = [path]
runpy.run_path(path, run_name="__main__")
"""
COMPILES_NOTHING = {"hang"}    # its only launch waits behind a stream that never runs it


def _run_example(name: str, engine: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess, int]:
    report = tmp_path / f"{name}.{engine}.loaded"
    env = {**os.environ, "GPUDBG_ENGINE": engine}
    out = subprocess.run([sys.executable, "-c", RUNNER, str(report), str(ROOT / "examples" / f"{name}.py")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    return out, int(report.read_text()) if report.exists() else -1


def test_the_examples_are_all_found():
    assert {"saxpy", "reduction", "matmul", "histogram", "oob", "rotate", "hang"} <= set(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_behaves_the_same_under_both_engines(name, tmp_path):
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")
    ref, _ = _run_example(name, "interp", tmp_path)
    got, loaded = _run_example(name, "native", tmp_path)
    assert got.stdout == ref.stdout
    assert got.stderr == ref.stderr
    assert got.returncode == ref.returncode
    if name not in COMPILES_NOTHING:
        assert loaded > 0, f"examples/{name}.py ran no native code under GPUDBG_ENGINE=native"


# ------------------------------------------------------------ fixture kernels
R = np.random.RandomState


def _global_atomics():
    n = 256
    cell = np.zeros(32, np.int32)
    cell[4:8], cell[8:12], cell[12:16], cell[25] = 2**31 - 1, -2**31, -1, n
    ucell = np.zeros(12, np.uint32)
    ucell[4:8] = 3
    return [R(0).randint(-10**6, 10**6, n).astype(np.int32), cell, ucell, Out(3 * n, np.int32)]


# fixture, kernel, grid, block, arguments (made fresh per run), keyword arguments:
# the launches of tests/sim/test_executor_{control,atomics,warp,calls,faults}.py
CASES = [
    ("control", "diverge", (1,), (64,), lambda: [Out(64, np.int32)], {}),
    ("control", "loops", (1,), (64,), lambda: [R(0).randint(0, 120, 64).astype(np.int32), Out(64, np.int32)], {}),
    ("control", "early_return", (3,), (64,), lambda: [Out(200, np.int32, 7), 150], {}),
    ("control", "reduce_tree", (4,), (256,), lambda: [R(1).rand(1024).astype(np.float32), Out(4)], {}),
    ("control", "coords", (2, 3, 2), (4, 3, 5), lambda: [Out(10 * 12 * 60, np.uint32)], {}),
    ("control", "odd_block_sum", (3,), (100,), lambda: [np.arange(300, dtype=np.int32) * 7 - 1000,
                                                         Out(3, np.int32)], {}),
    ("control", "dyn_shared", (2,), (96,), lambda: [np.arange(192, dtype=np.int32) * 3, Out(192, np.int32)],
     {"shared": 96 * 4}),
    ("control", "dyn_shared", (1,), (64,), lambda: [np.arange(64, dtype=np.int32), Out(64, np.int32)],
     {"shared": 32 * 4, "expect_fault": True}),
    ("control", "const_mem", (1,), (16,), lambda: [Out(16)], {}),
    ("control", "saxpy", (4,), (256,), lambda: [1000, 2.0, np.arange(1000, dtype=np.float32),
                                                 np.ones(1000, np.float32)], {}),
    ("control", "matmul", (2, 2), (8, 8), lambda: [R(2).rand(16, 16).astype(np.float32),
                                                   R(3).rand(16, 16).astype(np.float32), Out(256), 16], {}),
    ("control", "sync_count", (1,), (64,), lambda: [(np.arange(64) % 7 == 0).astype(np.int32),
                                                     Out(64, np.int32)], {}),
    ("atomics", "global_atomics", (2,), (128,), _global_atomics, {}),
    ("atomics", "shared_atomics", (2,), (96,), lambda: [R(1).randint(-1000, 1000, 192).astype(np.int32),
                                                         Out(32, np.int32)], {}),
    ("atomics", "float_add", (2,), (64,), lambda: [R(2).rand(128).astype(np.float32), Out(2)], {}),
    ("atomics", "cas_loop", (2,), (48,), lambda: [np.array([1.0], np.float32), np.zeros(2, np.int32)], {}),
    ("atomics", "atomic_unused", (1,), (100,), lambda: [np.zeros(3, np.int32), np.array([0, 5], np.uint64)], {}),
    ("warp", "shuffles", (1,), (64,), lambda: [R(0).randint(-1000, 1000, 64).astype(np.int32),
                                               Out(8 * 64, np.int32)], {}),
    ("warp", "shfl_partial", (1,), (64,), lambda: [R(1).randint(-1000, 1000, 64).astype(np.int32),
                                                   Out(64, np.int32)], {}),
    ("warp", "votes", (1,), (64,), lambda: [R(2).randint(0, 2, 64).astype(np.int32), Out(640, np.uint32)], {}),
    ("warp", "reductions", (1,), (64,), lambda: [R(3).randint(0, 2**32, 64, dtype=np.int64).astype(np.uint32),
                                                 Out(320, np.uint32)], {}),
    ("warp", "warp_sum", (2,), (64,), lambda: [R(4).rand(128).astype(np.float32), Out(4)], {}),
    ("warp", "lanemasks", (1,), (40,), lambda: [Out(200, np.uint32)], {}),
    ("warp", "tail_warp", (1,), (64,), lambda: [R(5).randint(-99, 99, 64).astype(np.int32),
                                                Out(128, np.int32, 7), 50], {}),
    ("calls", "struct_call", (1,), (40,), lambda: [R(0).randint(-1000, 1000, 40).astype(np.int32),
                                                   Out(200, np.int32)], {}),
    ("calls", "recursion", (1,), (48,), lambda: [Out(48, np.uint64), Out(48, np.int32)], {}),
    ("calls", "fnptr", (1,), (64,), lambda: [R(1).randint(0, 9, 64).astype(np.int32), Out(64, np.int32)], {}),
    ("calls", "printer", (2,), (40,), lambda: [35], {}),
    ("calls", "heap", (2,), (40,), lambda: [Out(80, np.int32)], {}),
    ("faults", "oob_read", (2,), (64,), lambda: [np.arange(100, dtype=np.int32), Out(128, np.int32), 0],
     {"expect_fault": True}),
    ("faults", "oob_write", (1,), (64,), lambda: [np.zeros(64, np.int32), 9, 68], {"expect_fault": True}),
    ("faults", "oob_shared", (1,), (64,), lambda: [Out(64, np.int32), 2], {"expect_fault": True}),
    ("faults", "misaligned", (1,), (64,), lambda: [np.zeros(80, np.int32), 13], {"expect_fault": True}),
    ("faults", "bad_generic", (1,), (64,), lambda: [0x10, Out(64, np.int32)], {"expect_fault": True}),
    ("faults", "oob_read", (1,), (32,), lambda: [Ptr(0x10), Out(32, np.int32), 0], {"expect_fault": True}),
    ("faults", "trapper", (2,), (64,), lambda: [Out(128, np.int32)], {"expect_fault": True}),
    ("faults", "asserter", (1,), (64,), lambda: [(np.arange(64) % 12).astype(np.int32)], {"expect_fault": True}),
    ("faults", "overflow", (1,), (4,), lambda: [Out(128, np.int32), 100000], {"expect_fault": True}),
    ("faults", "deadlock", (1,), (64,), lambda: [Out(64, np.int32)], {"expect_fault": True}),
    ("faults", "runaway", (1,), (64,), lambda: [np.ones(1, np.int32), Out(64, np.int32)],
     {"expect_fault": True, "budget": 10**5}),
]
# CI runs the optimized builds (-lineinfo for the faulting kernels); with
# GPUDBG_DIFFERENTIAL=full the -G builds (locals through the stack, every
# value through memory) run too: each build is one more program to compile
# cold, several seconds each on a 2-core machine
FULL = os.environ.get("GPUDBG_DIFFERENTIAL", "").strip().lower() == "full"
BUILDS = {"faults": [LINEINFO]}
DEFAULT_BUILDS = [OPTIMIZED, DEBUG] if FULL else [OPTIMIZED]


def _params():
    for fixture, kernel, grid, block, args, kw in CASES:
        for opts in BUILDS.get(fixture, DEFAULT_BUILDS):
            tag = "G" if opts == DEBUG else "lineinfo" if opts == LINEINFO else "O"
            yield pytest.param(fixture, opts, kernel, grid, block, args, kw,
                               id=f"{fixture}-{kernel}-{tag}-{'x'.join(map(str, grid))}")


# (fixture, options, engine) -> the module loaded on its own SimGPU. Each
# fixture build is loaded (and compiled) once per engine and its kernels
# launched in turn; the interpreter's and the native GPU see the same
# sequence of loads and allocations, so addresses in reports agree.
_modules: dict = {}


def _module(fixture: str, opts: tuple, engine: str):
    key = (fixture, opts, engine)
    m = _modules.get(key)
    if m is None:
        m = _modules[key] = load_module(SimGPU(), parse(kernel_ptx(fixture, opts), "k.ptx"))
    return m


@pytest.mark.parametrize("fixture,opts,kernel,grid,block,args,kw", list(_params()))
def test_a_fixture_kernel_matches_the_interpreter(fixture, opts, kernel, grid, block, args, kw):
    values = args()
    got = {}
    try:
        for engine in ("interp", "native"):
            m = _module(fixture, opts, engine)
            budget = getattr(m.gpu, "instruction_budget", None)   # None: the model's
            m.gpu.printf_buffer.clear()
            try:
                with engine_choice(engine):
                    got[engine] = run(None, kernel, grid, block, values, module=m, **kw)
            finally:
                m.gpu.instruction_budget = budget
    except BaseException:
        for engine in ("interp", "native"):     # the two GPUs may be out of step now: start afresh
            _modules.pop((fixture, opts, engine), None)
        raise
    assert native_segments(got["native"]) > 0, "the native run compiled no segment"
    assert_same(got["interp"], got["native"])
