"""End to end: a real nvcc 13 `-cudart shared` program (default arch, so
compressed PTX entries) runs on gpudbg through the drop-in libcudart and
these exports. Skipped without nvcc."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def test_nvcc_program_runs_on_gpudbg(tmp_path: Path) -> None:
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if not nvcc:
        pytest.skip("no nvcc")
    exe = tmp_path / "program"
    build = subprocess.run([nvcc, "-cudart", "shared", "-o", str(exe), str(HERE / "fixtures" / "program.cu")],
                           capture_output=True, text=True, timeout=300)
    if build.returncode != 0:
        pytest.skip(f"nvcc cannot build here: {build.stderr[-500:]}")
    run = subprocess.run([sys.executable, "-m", "gpudbg", "run", str(exe)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "OK bad=0 launches=2 ms_ok=1 config=cudaErrorInvalidConfiguration cc=9.0" in run.stdout, \
        run.stdout + run.stderr
