"""Real clients, unmodified, the way users run them: `gpudbg run` and
`gpudbg check` on numba-cuda, cuda-python and cuda.core scripts and on
nvcc-built C++ programs (-cudart shared, a compute_80 PTX target).

nvcc and NVVM (numba's compiler) come with the CUDA toolkit on the CI
image; a test that needs one skips only where it is absent, and says so."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"
GPUDBG = [sys.executable, "-m", "gpudbg"]
TIMEOUT = 600


def _has_nvvm() -> bool:
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        load_nvidia_dynamic_lib("nvvm")
    except Exception:
        return False
    return True


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed (CUDA toolkit)")
needs_nvvm = pytest.mark.skipif(not _has_nvvm(), reason="NVVM (libnvvm, numba-cuda's compiler) is not installed")


def gpudbg(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUDBG_")}
    return subprocess.run([*GPUDBG, *args], capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def nvcc_programs(tmp_path_factory) -> Path:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed (CUDA toolkit)")
    out = tmp_path_factory.mktemp("nvcc")
    for name in ("vecadd", "reduce", "streams", "symbol", "managed", "graph", "oob", "pending_exit", "racy"):
        subprocess.run(["nvcc", "-cudart", "shared", "-gencode", "arch=compute_80,code=compute_80", "-lineinfo",
                        "-o", str(out / name), str(PROGRAMS / f"{name}.cu")], check=True, timeout=TIMEOUT,
                       capture_output=True)
    return out


@needs_nvcc
@pytest.mark.parametrize("name, passed", [("vecadd", "Test PASSED"), ("reduce", "PASSED"),
                                          ("streams", "two streams: PASSED"), ("symbol", "counter 1000: PASSED"),
                                          ("managed", "managed total 2021 scale[3] 6: PASSED"),
                                          ("graph", "graph replayed: PASSED")])
def test_nvcc_program_prints_its_pass_line(nvcc_programs, name, passed):
    r = gpudbg("run", f"./{name}", cwd=nvcc_programs)
    assert r.returncode == 0, r.stdout + r.stderr
    assert passed in r.stdout


@needs_nvcc
def test_nvcc_out_of_bounds_is_reported_like_compute_sanitizer(nvcc_programs, tmp_path):
    """What compute-sanitizer reported for the same program on a real H200
    (tests/clients/real_gpu/sanitizer_oob_cu.txt): a 4-byte __global__ read
    at oob.cu:7 by thread (127,0,0) of block (1,0,0), just past 1,024 bytes."""
    findings = tmp_path / "f.json"
    r = gpudbg("check", "--json", str(findings), "./oob", cwd=nvcc_programs)
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    assert "Invalid __global__ read of size 4 bytes" in out
    assert "oob.cu:7" in out and "_Z9shiftLeftPKfPfi" in out
    assert "by thread (127,0,0) in block (1,0,0)" in out
    assert "1024-byte allocation" in out
    assert "ERROR SUMMARY: 1 error" in out
    assert "cudaDeviceSynchronize: cudaErrorIllegalAddress" in out   # what the program itself saw
    [finding] = json.loads(findings.read_text())
    assert finding["kind"] == "CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS" and finding["source_line"] == 7
    assert finding["program"] == "./oob"


@needs_nvcc
def test_nvcc_race_and_leak_found_in_the_programs_process(nvcc_programs, tmp_path):
    """The tools run where the simulated GPU is, the native program's own
    process; its findings reach the parent's summary and JSON."""
    findings = tmp_path / "race.json"
    r = gpudbg("check", "--tool", "racecheck", "--json", str(findings), "./racy", cwd=nvcc_programs)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Error: Race reported between Write access" in r.stdout and "racy.cu:11" in r.stdout
    assert "PASSED" in r.stdout
    rows = json.loads(findings.read_text())
    assert rows and {row["tool"] for row in rows} == {"racecheck"}
    r = gpudbg("check", "--leak-check", "full", "./racy", cwd=nvcc_programs)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Leaked 4096 bytes" in r.stdout and "racy" in r.stdout
    assert "ERROR SUMMARY: 1 error" in r.stdout


@needs_nvcc
def test_nvcc_fault_under_run_exits_1_with_the_report(nvcc_programs):
    r = gpudbg("run", "./oob", cwd=nvcc_programs)
    assert r.returncode == 1
    assert "Lane Illegal Address in kernel _Z9shiftLeftPKfPfi" in r.stderr and "oob.cu:7" in r.stderr


@pytest.mark.parametrize("script, passed", [("cuda_python_saxpy.py", "cuda-python saxpy: PASSED"),
                                            ("cuda_core_saxpy.py", "cuda.core saxpy: PASSED")])
def test_cuda_python_programs(script, passed):
    r = gpudbg("run", str(PROGRAMS / script))
    assert r.returncode == 0, r.stdout + r.stderr
    assert passed in r.stdout


@needs_nvvm
def test_numba_kernels_from_numbas_documentation():
    r = gpudbg("run", str(PROGRAMS / "numba_kernels.py"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "numba kernels: PASSED" in r.stdout


@needs_nvvm
def test_numba_out_of_bounds_names_the_py_line():
    r = gpudbg("check", str(PROGRAMS / "numba_oob.py"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Invalid __global__ read of size 4 bytes" in r.stdout
    assert "numba_oob.py:10" in r.stdout
    assert "dst[i] = src[i + 1]" in r.stdout
    assert "ERROR SUMMARY: 1 error" in r.stdout


@needs_nvcc
def test_nvcc_fault_writes_both_dumps(nvcc_programs, tmp_path):
    core, dumps = tmp_path / "oob.nvcudmp", tmp_path / "dumps"
    dumps.mkdir()
    r = gpudbg("check", "--coredump-file", str(core), "--devcoredump", str(dumps), "./oob", cwd=nvcc_programs)
    assert r.returncode == 1, r.stdout + r.stderr
    assert core.stat().st_size > 0 and f"coredump written to {core}" in r.stdout
    assert len(list(dumps.glob("*.devcore"))) == 1


@needs_nvcc
def test_native_exit_with_work_in_flight(nvcc_programs):
    r = gpudbg("run", "./pending_exit", cwd=nvcc_programs)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "leaving with work in flight" in r.stdout and "Traceback" not in r.stderr


def test_cuda_python_exit_with_live_context_and_pending_launch():
    r = gpudbg("run", str(PROGRAMS / "cuda_python_pending_exit.py"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "launched: CUDA_SUCCESS" in r.stdout and "Traceback" not in r.stderr


def test_cuda_python_out_of_bounds():
    r = gpudbg("check", str(PROGRAMS / "cuda_python_oob.py"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS" in r.stdout
    assert "Lane Illegal Address in kernel twice at" in r.stdout and "twice.cu:3" in r.stdout
    assert "by thread (232,0,0) in block (3,0,0)" in r.stdout      # element 1000 = block 3, thread 232
    # elements 1000..1023 of the 4 x 256 launch: every faulting thread counts, as compute-sanitizer's
    assert "24 threads faulted at this instruction, in block (3,0,0)" in r.stdout
    assert "ERROR SUMMARY: 24 errors" in r.stdout
