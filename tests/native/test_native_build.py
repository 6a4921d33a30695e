"""Building the drop-in libraries: fast, into any directory, with the
unversioned symlinks; staleness drives library_dir's rebuild; and the
coverage command's output."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from gpudbg.native import build, tables
from native_helpers import fake_env, run


def test_build_into_a_directory(tmp_path: Path) -> None:
    start = time.monotonic()
    out = build.build(tmp_path / "lib")
    assert time.monotonic() - start < 60
    for soname in ("libcuda.so.1", "libcudart.so.13"):
        assert (out / soname).is_file()
    assert os.readlink(out / "libcuda.so") == "libcuda.so.1"
    assert os.readlink(out / "libcudart.so") == "libcudart.so.13"
    assert not build.is_stale(out, sys.executable)
    assert build.is_stale(out, "/some/other/python")
    lib = out / "libcuda.so.1"
    os.utime(lib, (lib.stat().st_atime, build.sources("libcuda.so.1")[0].stat().st_mtime - 10))
    assert build.is_stale(out)


def test_library_dir_is_built(libdir: Path) -> None:
    assert not build.is_stale(libdir, sys.executable)
    assert (libdir / "libcuda.so.1").exists() and (libdir / "libcudart.so.13").exists()


def test_coverage_command() -> None:
    proc = run([sys.executable, "-m", "gpudbg.native.coverage", "--missing"], env=fake_env())
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    import native_fake_driver
    import native_fake_runtime
    n_cuda = len(tables.exports("cuda"))
    n_rt = len(tables.exports("cudart"))
    impl_cuda = sum(1 for e in tables.exports("cuda")
                    if callable(getattr(native_fake_driver, e.name, None)) or e.name in tables.C_IMPLEMENTED["cuda"])
    impl_rt = sum(1 for e in tables.exports("cudart") if callable(getattr(native_fake_runtime, e.name, None)))
    assert f"libcuda.so.1: {impl_cuda}/{n_cuda} exported functions implemented" in lines
    assert f"libcudart.so.13: {impl_rt}/{n_rt} exported functions implemented" in lines
    assert "  cuStreamCreate" in lines and "  cuInit" not in lines
    assert len(lines) == 2 + (n_cuda - impl_cuda) + (n_rt - impl_rt)
