"""An nvcc-built image-processing program (tests/clients/programs/
texture_blur.cu: cudaMallocArray, cudaCreateChannelDesc<T>,
cudaMemcpy2DToArray/FromArray, cudaCreateTextureObject with linear
filtering and wrapping normalized coordinates, a surface-backed output,
a uchar4 texture read as normalized float) run unmodified under
`gpudbg run`, plain and -G: it checks its results against its own CPU
model of the fixed-point filter and prints PASSED."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).parent / "programs" / "texture_blur.cu"
NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed (CUDA toolkit)")
@pytest.mark.parametrize("debug", [False, True], ids=["plain", "-G"])
def test_texture_program_passes(tmp_path, debug):
    exe = tmp_path / "texture_blur"
    subprocess.run([NVCC, "-cudart", "shared", "-gencode", "arch=compute_80,code=compute_80",
                    *(["-G"] if debug else ["-lineinfo"]), "-o", str(exe), str(PROGRAM)],
                   check=True, capture_output=True, timeout=600)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUDBG_")}
    r = subprocess.run([sys.executable, "-m", "gpudbg", "run", str(exe)], capture_output=True, text=True,
                       timeout=600, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "texture resample 24x16: PASSED (0 mismatches)" in r.stdout
