"""Every example of the core issue also passes with the per-thread default
stream (GPUDBG_DEFAULT_STREAM=per-thread, seed 002 §1.1.1.2), and the
examples that demonstrate a failure (oob.py's fault, hang.py's GPU hang)
still report it. Each runs in its own process, since the mode is
fixed when the engine initializes; the processes run concurrently."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SIZES = {"saxpy": "5000", "reduction": "20000", "matmul": "24", "histogram": "5000"}
# examples that must fail, with what their report must mention
FAILING = {"oob": ("Illegal Address", "forward_difference"), "hang": ("mcErrorLaunchTimeout", "WAIT_VALUE")}
PROBE = ("import runpy, sys; from gpudbg.driver.engine import get_engine; "
         "ns = runpy.run_path(sys.argv[1], run_name='example'); rc = ns['main'](sys.argv[1:]); "
         "ctx = get_engine().current_context(); "
         "print('per-thread default stream:', ctx.stream(0) is not ctx.legacy); sys.exit(rc)")


def _examples() -> list[Path]:
    return sorted(p for p in EXAMPLES.glob("*.py"))


def test_examples_pass_in_per_thread_mode():
    env = dict(os.environ, GPUDBG_DEFAULT_STREAM="per-thread")
    assert {"oob", *SIZES} <= {p.stem for p in _examples()}
    procs = {}
    for path in _examples():
        args = [sys.executable, "-c", PROBE, str(path)] + ([SIZES[path.stem]] if path.stem in SIZES else [])
        procs[path.stem] = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True)
    results = {name: (p.wait(timeout=300), *p.communicate()) for name, p in procs.items()}
    for name, (rc, out, err) in results.items():
        if name in FAILING:
            assert rc != 0, out
            assert all(word in out + err for word in FAILING[name]), out + err
            continue
        assert rc == 0, f"{name} failed in per-thread mode:\n{out}\n{err}"
        assert "PASSED" in out and "per-thread default stream: True" in out, out
