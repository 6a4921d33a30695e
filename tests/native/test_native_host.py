"""A native host program (tests/native/host_program.c, no Python in it)
linked against the drop-in libcuda.so.1 and libcudart.so.13: the embedded
interpreter starts at the first real call, not in nvcc-style static
constructors (whose registrations are replayed), a second pthread calls too,
by-value dim3 and struct returns cross correctly, and calls from an atexit
handler and an ELF destructor answer 4 at exit without crashing."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from native_helpers import HERE, fake_env, run


@pytest.fixture(scope="module")
def host(libdir: Path, cc: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("host") / "host_program"
    build = run([cc, "-O1", "-o", str(exe), str(HERE / "host_program.c"), f"-L{libdir}", f"-Wl,-rpath,{libdir}",
                 "-lcuda", "-lcudart", "-lpthread", "-ldl"])
    assert build.returncode == 0, build.stderr
    return exe


def test_native_host_program(host: Path) -> None:
    proc = run([str(host)], env=fake_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "constructor: handle set, python absent",
        "main: python before first call absent",
        "cuInit 0",
        "cuDriverGetVersion 0 13000",
        "main: python after first call present",
        "cudaGetDeviceCount 0 4",                     # fatbin, function, var, end replayed in order
        "cuStreamCreate 801",
        "cuCtxSynchronize 999",
        "__cudaPushCallConfiguration 6022",
        "__cudaLaunchKernel 0",
        "cudaCreateChannelDesc 8 16 0 0 2",
        "cudaGetErrorString 'fake error 3'",
        "cuGetProcAddress_v2 0 0 same 13000",
        "thread: cuDeviceGetName 0 'gpudbg fake 1 on Dummy-1', cudaGetDeviceCount 0 4",
        "thread_local destructor: cuDriverGetVersion 0 (13000)",   # exit() runs these before atexit
        "atexit: cuDriverGetVersion 4, cudaGetDeviceCount 4",
        "destructor: cuDriverGetVersion 4, cuInit 4",
    ]
    assert proc.stderr.count("RuntimeError: this fake implementation fails on purpose") == 1
    assert "never reached" not in proc.stderr


def test_native_host_without_implementation_modules(host: Path) -> None:
    env = fake_env(GPUDBG_NATIVE_IMPL_CUDA="no_such_driver", GPUDBG_NATIVE_IMPL_CUDART="no_such_runtime")
    proc = run([str(host)], env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "cuInit 801" in lines and "cudaGetDeviceCount 801 -1" in lines
    assert lines[-1] == "destructor: cuDriverGetVersion 4, cuInit 4"


def test_native_host_with_a_python_that_cannot_start(host: Path) -> None:
    proc = run([str(host)], env=fake_env(GPUDBG_LIBPYTHON="/nonexistent/libpython.so"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cuInit 3" in proc.stdout.splitlines()
    assert "cannot load the Python library" in proc.stderr


def test_first_calls_into_both_libraries_at_once(libdir: Path, cc: str, tmp_path: Path) -> None:
    exe = tmp_path / "two_libraries"
    build = run([cc, "-o", str(exe), str(HERE / "two_libraries.c"), f"-L{libdir}", f"-Wl,-rpath,{libdir}",
                 "-lcuda", "-lcudart", "-lpthread"])
    assert build.returncode == 0, build.stderr
    for _ in range(5):
        proc = run([str(exe)], env=fake_env())
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.split() == ["0", "13000", "0", "0"], proc.stderr    # no registrations: count 0


def test_a_real_nvcc_program(libdir: Path, tmp_path: Path) -> None:
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if not nvcc:
        pytest.skip("no nvcc")
    exe = tmp_path / "nvcc_program"
    build = run([nvcc, "-cudart", "shared", "-o", str(exe), str(HERE / "nvcc_program.cu")])
    if build.returncode != 0:
        pytest.skip(f"nvcc cannot build here: {build.stderr[-500:]}")
    env = fake_env(GPUDBG_NATIVE_IMPL_CUDART="native_fake_nvcc_runtime",
                   LD_LIBRARY_PATH=os.pathsep.join(filter(None, [str(libdir), os.environ.get("LD_LIBRARY_PATH")])))
    proc = run([str(exe)], env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "fatbin 0x466243b1",
        "function 0x77 _Z3addPii",
        "end 0x77",
        "count 0 3",
        "malloc 801",
        "launch 0x99 grid (2, 3, 4) block (16, 1, 1) shmem 32 n 16",
        "done",
    ]
