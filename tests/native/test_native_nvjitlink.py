"""gpudbg's libnvJitLink.so.13: its soname, version node and (deliberately)
empty API; loaded by preload_driver(), it is the nvJitLink cuda-pathfinder
finds, so numba-cuda compiles without LTO and cuda.core's Linker takes the
driver linker (cuLink*) -- also with NVIDIA's nvidia-nvjitlink wheel
installed (that test installs the wheel from PyPI and is skipped without it).
The end-to-end link through our libcuda is skipped until gpudbg.cuda_driver
has cuLink* and cuLibraryLoadData."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpudbg.native import build

SONAME = "libnvJitLink.so.13"
NVJITLINK_API = ("nvJitLinkCreate", "nvJitLinkAddData", "nvJitLinkComplete", "nvJitLinkVersion",
                 "__nvJitLinkCreate_13_0")

# Run in a child: what each client decides with (or without) preload_driver().
PROBE = r"""
import json, sys, warnings
warnings.simplefilter("default")
preload = sys.argv[1] == "preload"
if sys.argv[2:]:            # a wheel installed with --target: as if in site-packages
    import site
    _site = site.getsitepackages
    site.getsitepackages = lambda *a: [*sys.argv[2:], *_site(*a)]
if preload:
    from gpudbg.cli import native
    problem = native.preload_driver()
    assert problem is None, problem
else:
    import ctypes
    from gpudbg.native.build import library_dir
    ctypes.CDLL(str(library_dir() / "libcuda.so.1"), mode=ctypes.RTLD_GLOBAL)
out = {}
from cuda.pathfinder import load_nvidia_dynamic_lib
try:
    dl = load_nvidia_dynamic_lib("nvJitLink")
    out["path"], out["found_via"] = dl.abs_path, dl.found_via
except Exception as e:
    out["path"], out["found_via"] = None, type(e).__name__
from cuda.bindings._internal import nvjitlink as inner
try:
    out["version_symbol"] = inner._inspect_function_pointer("__nvJitLinkVersion")
except RuntimeError as e:
    out["version_symbol"] = type(e).__name__
from numba.cuda.cudadrv.driver import _have_nvjitlink
out["numba_lto"] = _have_nvjitlink()
from cuda.core import Linker, _linker
with warnings.catch_warnings(record=True) as caught:   # keeps the filters preload_driver set
    out["driver_linker"] = _linker._decide_nvjitlink_or_driver()
out["backend"] = Linker.which_backend()
out["warnings"] = [str(w.message) for w in caught]
print(json.dumps(out))
"""


def _probe(mode: str, *extra_paths: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, mode, *extra_paths], capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def _dynamic_symbols(lib: Path) -> list[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True)
    return [line.split()[-1] for line in out.stdout.splitlines() if line.strip()]


def test_soname_version_node_and_no_nvjitlink_function(libdir: Path) -> None:
    lib = libdir / SONAME
    dyn = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
    assert f"Library soname: [{SONAME}]" in dyn
    assert "libpython" not in dyn and "NODELETE" in dyn
    syms = _dynamic_symbols(lib)
    assert "gpudbg_nvjitlink_note@@libnvJitLink.so.13" in syms      # NVIDIA's version node name
    assert not [s for s in syms if s.startswith(("nvJitLink", "__nvJitLink"))], syms
    assert os.readlink(libdir / "libnvJitLink.so") == SONAME


def test_built_with_the_other_libraries(tmp_path: Path) -> None:
    out = build.build(tmp_path / "lib")
    assert (out / SONAME).is_file()
    assert not build.is_stale(out, sys.executable)
    lib = out / SONAME
    os.utime(lib, (lib.stat().st_atime, build.sources(SONAME)[0].stat().st_mtime - 10))
    assert build.is_stale(out)


def test_preloaded_it_is_the_nvjitlink_clients_find(libdir: Path) -> None:
    got = _probe("preload")
    assert Path(got["path"]).resolve() == (libdir / SONAME).resolve()
    assert got["found_via"] == "was-already-loaded-from-elsewhere"
    assert got["version_symbol"] == 0            # "nvJitLink < 12.3": no LTO, no nvJitLink linker
    assert got["numba_lto"] is False
    assert got["driver_linker"] is True and got["backend"] == "driver"
    assert not [w for w in got["warnings"] if "too old" in w], got["warnings"]


@pytest.fixture(scope="module")
def real_nvjitlink(tmp_path_factory: pytest.TempPathFactory) -> str:
    """NVIDIA's nvidia-nvjitlink wheel installed into a --target directory."""
    target = tmp_path_factory.mktemp("nvjitlink-wheel")
    try:
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                               "--target", str(target), "nvidia-nvjitlink>=13,<14"],
                              capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.skip("installing nvidia-nvjitlink timed out")
    if proc.returncode != 0 or not list(target.glob(f"nvidia/*/lib/{SONAME}")):
        pytest.skip(f"nvidia-nvjitlink could not be installed: {proc.stderr[-300:]}")
    return str(target)


def test_wins_over_nvidias_wheel(real_nvjitlink: str, libdir: Path) -> None:
    without = _probe("plain", real_nvjitlink)        # the wheel alone: what gpudbg must prevent
    assert Path(without["path"]).is_relative_to(real_nvjitlink)
    assert without["version_symbol"] != 0 and without["numba_lto"] is True
    assert without["backend"] == "nvJitLink"
    got = _probe("preload", real_nvjitlink)
    assert Path(got["path"]).resolve() == (libdir / SONAME).resolve()
    assert got["version_symbol"] == 0 and got["numba_lto"] is False
    assert got["backend"] == "driver"


LINK = r"""
import sys
from gpudbg.cli import native
assert native.preload_driver() is None
from cuda.core import Device, Linker, LinkerOptions, ObjectCode
from cuda.bindings import driver
dev = Device(0)
dev.set_current()
ptx = open(sys.argv[1]).read()
linker = Linker(ObjectCode.from_ptx(ptx.encode(), name="k.ptx"), options=LinkerOptions(arch="sm_90"))
assert Linker.which_backend() == "driver"
image = linker.link("cubin")
err, lib = driver.cuLibraryLoadData(image.code, None, None, 0, None, None, 0)
assert err == driver.CUresult.CUDA_SUCCESS, err
err, kernel = driver.cuLibraryGetKernel(lib, b"scale")
assert err == driver.CUresult.CUDA_SUCCESS, err
print("LOADED", image.code[:8])
"""

PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry scale(.param .u64 p, .param .f32 a)
{
  .reg .b64 %rd<3>;
  .reg .f32 %f<3>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  ld.param.f32 %f1, [a];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  ld.global.f32 %f2, [%rd1];
  mul.f32 %f2, %f2, %f1;
  st.global.f32 [%rd1], %f2;
  ret;
}
"""


REACH = r"""
import sys
from gpudbg.cli import native
assert native.preload_driver() is None
from cuda.core import Device, Linker, LinkerOptions, ObjectCode
Device(0).set_current()
try:
    linker = Linker(ObjectCode.from_ptx(open(sys.argv[1]).read().encode(), name="k.ptx"),
                    options=LinkerOptions(arch="sm_90"))
    print("LINKED", bytes(linker.link("cubin").code[:7]))
except Exception as e:      # until gpudbg.cuda_driver implements cuLink*
    print("RAISED", type(e).__name__, e)
"""


def test_cuda_core_linker_calls_our_driver_linker(tmp_path: Path) -> None:
    src = tmp_path / "k.ptx"
    src.write_text(PTX)
    env = dict(os.environ, GPUDBG_NATIVE_TRACE="1")
    proc = subprocess.run([sys.executable, "-c", REACH, str(src)], capture_output=True, text=True,
                          timeout=240, env=env)
    assert proc.returncode == 0, proc.stderr
    calls = [line.split()[-1] for line in proc.stderr.splitlines() if line.startswith("[gpudbg.native]")]
    assert "cuLinkCreate_v2" in calls, proc.stdout
    if proc.stdout.startswith("LINKED"):
        assert {"cuLinkAddData_v2", "cuLinkComplete"} <= set(calls)
        assert "\\x7fELF" not in proc.stdout          # our linked PTX, not nvJitLink's SASS ELF


def test_cuda_core_linker_output_loads_in_our_driver(tmp_path: Path) -> None:
    exports = pytest.importorskip("gpudbg.cuda_driver.exports")
    needed = ("cuLinkCreate_v2", "cuLinkAddData_v2", "cuLinkComplete", "cuLinkDestroy", "cuLibraryLoadData",
              "cuLibraryGetKernel")
    missing = [n for n in needed if not hasattr(exports, n)]
    if missing:
        pytest.skip(f"gpudbg.cuda_driver does not implement {', '.join(missing)} yet")
    src = tmp_path / "k.ptx"
    src.write_text(PTX)
    proc = subprocess.run([sys.executable, "-c", LINK, str(src)], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert "LOADED" in proc.stdout
