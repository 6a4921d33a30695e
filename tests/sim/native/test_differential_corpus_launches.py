"""The differential launch mode (GPUDBG_DIFFERENTIAL=1) over real kernels
no test wrote arguments for: every kernel of the checked-in PTX corpus's
smaller modules (tests/data/ptx_corpus/plain: nvcc builds of CUB block
primitives, cooperative groups, libcu++, half/bf16, textures, printf,
warp intrinsics, tensor cores, stencils, this repository's own test
programs), launched with synthetic arguments (synthetic_args.py) under an
instruction budget, interpreted and natively, and every example program
run as a user runs it with the mode on. A difference in memory, registers
at exit, the fault report or printf fails the test with the mode's own
message (kernel, allocation and offset or register and thread, both
values); launches the mode cannot compare are counted with their reason.

The larger CUB modules (device-wide radix sort, histogram, reduce, select,
run-length, over 700 PTX instructions each) take LLVM tens of seconds each
to compile cold; `python tests/sim/native/differential_survey.py` runs
them (and any corpus) the same way.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from gpudbg.ptx import parse
from gpudbg.ptx.corpus import read_ptx
from gpudbg.sim.debug_port import LaunchAborted
from gpudbg.sim.faults import KernelFault
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.native import differential
from synthetic_args import synthetic_params

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "data" / "ptx_corpus" / "plain"
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py"))
MAX_INSTRUCTIONS = 700        # a module's PTX instructions: the ones CI compiles cold in seconds
BUDGET = 300_000              # thread-instructions per launch: runaway loops end soon, the same way twice
GRID, BLOCK, SHARED = (2, 1, 1), (64, 1, 1), 1024


def launch_every_kernel(path: Path, budget: int = BUDGET) -> Counter:
    """Launch each kernel of a corpus module under the mode; the outcome
    counts by mode status. DifferentialMismatch propagates."""
    gpu = SimGPU()
    gpu.instruction_budget = budget
    m = load_module(gpu, parse(read_ptx(path), path.name))
    before = Counter(differential.stats)
    for k in m.functions.values():
        try:
            differential_launch(gpu, k)
        except (KernelFault, LaunchAborted):
            pass
    return Counter({k: v - before.get(k, 0) for k, v in differential.stats.items() if v != before.get(k, 0)})


def differential_launch(gpu, k) -> None:
    from gpudbg.sim.executor import launch_grid
    launch_grid(gpu, k, GRID, BLOCK, SHARED, synthetic_params(gpu, k), 1)


def _small(path: Path) -> bool:
    gpu = SimGPU()
    m = load_module(gpu, parse(read_ptx(path), path.name))
    prog = next(iter(m.functions.values())).program
    return len(prog.code) <= MAX_INSTRUCTIONS


SMALL = [p for p in sorted(CORPUS.glob("*.ptx.xz")) if _small(p)]


def test_the_corpus_has_small_modules_of_every_group():
    groups = {p.name.split("__")[0] for p in SMALL}
    assert {"client", "own", "ptxfix", "sim"} <= groups and len(SMALL) >= 30


@pytest.mark.parametrize("path", SMALL, ids=[p.name.split(".")[0] for p in SMALL])
def test_every_kernel_of_a_corpus_module_matches_under_both_engines(path, monkeypatch):
    monkeypatch.setenv(differential.ENV_DIFFERENTIAL, "1")
    monkeypatch.delenv("GPUDBG_ENGINE", raising=False)
    got = launch_every_kernel(path)
    assert got["mismatch"] == 0
    assert got["compared"] > 0, dict(got)


RUNNER = """
import runpy, sys
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_runs_differentially(name, tmp_path):
    pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")
    log = tmp_path / "diff.jsonl"
    env = {**os.environ, differential.ENV_DIFFERENTIAL: "1", differential.ENV_LOG: str(log)}
    env.pop("GPUDBG_ENGINE", None)
    out = subprocess.run([sys.executable, "-c", RUNNER, str(ROOT / "examples" / f"{name}.py")], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=600)
    lines = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    statuses = Counter(x["status"] for x in lines)
    assert "mismatch" not in statuses, [x for x in lines if x["status"] == "mismatch"]
    assert "differential launch mismatch" not in out.stderr
    if name != "hang":           # its only launch waits behind a stream that never runs it
        assert statuses["compared"] > 0, (statuses, out.stderr[-2000:])
