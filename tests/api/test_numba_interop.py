"""End to end: an unmodified numba-cuda program, run with `gpudbg run` the
way users run one, exchanges arrays with gpudbg through the CUDA Array
Interface (numba kernels on gpudbg DeviceArrays and views, gpudbg wrapping
numba arrays, stream order both ways). numba-cuda runs in the same process
on gpudbg's drop-in libcuda, so both see one simulated device and context."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).parent / "programs" / "numba_cai.py"


def _has_numba_cuda() -> bool:
    if importlib.util.find_spec("numba") is None or importlib.util.find_spec("numba.cuda") is None:
        return False
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        load_nvidia_dynamic_lib("nvvm")
    except Exception:
        return False
    return True


@pytest.mark.skipif(not _has_numba_cuda(), reason="numba-cuda (with NVVM, its compiler) is not installed")
def test_numba_kernels_and_gpudbg_arrays_share_memory_through_the_cai():
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUDBG_")}
    r = subprocess.run([sys.executable, "-m", "gpudbg", "run", str(PROGRAM)], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "numba interop: PASSED" in r.stdout
