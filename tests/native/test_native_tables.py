"""The generated export tables: what they hold, that the built libraries
export all of it (sonames, version node, nodelete, symlinks), and that the
cuGetProcAddress table reproduces every lookup recorded from cuda-bindings."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

from gpudbg.native import tables
from native_helpers import HERE

DATA = HERE / "data"
LIBS = {"cuda": "libcuda.so.1", "cudart": "libcudart.so.13"}


def recorded_lookups() -> list[tuple[str, int, int, str | None]]:
    out = []
    for line in (DATA / "cuda_bindings_getprocaddress.txt").read_text().splitlines():
        m = re.match(r"cuGetProcAddress\((\w+), (\d+), (\d+)\) -> (\S+)", line)
        assert m, line
        out.append((m[1], int(m[2]), int(m[3]), None if m[4] == "not" else m[4]))
    return out


def dynamic_symbols(path: Path) -> set[str]:
    with path.open("rb") as f:
        elf = ELFFile(f)
        return {s.name for s in elf.get_section_by_name(".dynsym").iter_symbols()
                if s["st_shndx"] != "SHN_UNDEF" and s.name}


def dynamic_tags(path: Path) -> dict[str, object]:
    with path.open("rb") as f:
        elf = ELFFile(f)
        dyn = next(s for s in elf.iter_sections() if isinstance(s, DynamicSection))
        return {t.entry.d_tag: (t.soname if t.entry.d_tag == "DT_SONAME" else t.entry.d_val)
                for t in dyn.iter_tags()}


def test_the_tables_hold_every_abi_name() -> None:
    drv = {e.name: e for e in tables.exports("cuda")}
    rt = {e.name: e for e in tables.exports("cudart")}
    assert len(drv) > 600 and len(rt) > 350
    # versioned, old un-suffixed (__CUDA_API_VERSION_INTERNAL), and per-thread names
    for name in ("cuMemAlloc", "cuMemAlloc_v2", "cuCtxCreate", "cuCtxCreate_v4", "cuMemcpyHtoD_v2_ptds",
                 "cuLaunchKernel_ptsz", "cuStreamGetCaptureInfo_v3_ptsz", "cuGetProcAddress", "cuGetProcAddress_v2"):
        assert name in drv, name
    assert drv["cuMemAlloc"].params == ("CUdeviceptr_v1 *", "unsigned int")
    assert drv["cuMemAlloc_v2"].param_abi == ("p", "u64")
    assert drv["cuGetProcAddress_v2"].params == (
        "const char *", "void **", "int", "cuuint64_t", "CUdriverProcAddressQueryResult *")
    assert drv["cuInit"].ret_abi == "e" and drv["cuIpcOpenMemHandle"].param_abi[1] == "s64a1"
    for name in ("cudaMemcpy_ptds", "cudaLaunchKernel_ptsz", "cudaStreamSynchronize_ptsz", *(
            line for line in (DATA / "nvcc_vecadd.symbols").read_text().split())):
        assert name in rt, name
    assert set(tables.C_IMPLEMENTED["cuda"]) <= set(drv)
    push = rt["__cudaPushCallConfiguration"]
    assert (push.ret, push.ret_abi, push.param_abi[:2]) == ("unsigned", "u32", ("s12a4:II", "s12a4:II"))
    assert rt["__cudaLaunchKernel"].param_abi == ("p", "s12a4:II", "s12a4:II", "p", "u64", "p")
    assert rt["__cudaInitModule"].ret_abi == "i8" and rt["__cudaRegisterFatBinary"].ret_abi == "p"
    assert rt["cudaCreateChannelDesc"].ret_abi == "s20a4"
    assert rt["cudaMemset3D"].param_abi == ("s32a8", "i32", "s24a8")
    text = (tables.TABLES / "libcuda.tsv").read_text()
    assert "NVIDIA" in text.splitlines()[0] or "NVIDIA" in text.splitlines()[1]


def test_procaddress_table_reproduces_the_recorded_lookups() -> None:
    lookups = recorded_lookups()
    assert len(lookups) == 524
    exported = {e.name for e in tables.exports("cuda")}
    for name, version, flags, symbol in lookups:
        got, status = tables.resolve(name, version, flags)
        assert got == symbol, (name, version, flags)
        assert got is None or got in exported
        assert status == 0 if got else status in (1, 2)


def test_procaddress_per_thread_and_version_rules() -> None:
    assert tables.resolve("cuMemcpyHtoD", 13000, 2) == ("cuMemcpyHtoD_v2_ptds", 0)
    assert tables.resolve("cuMemcpyHtoD", 13000, 1) == ("cuMemcpyHtoD_v2", 0)
    assert tables.resolve("cuMemcpyHtoD", 2000, 2) == ("cuMemcpyHtoD", 0)
    assert tables.resolve("cuLaunchKernel", 13000, 2) == ("cuLaunchKernel_ptsz", 0)
    assert tables.resolve("cuStreamGetCaptureInfo", 11030, 2) == ("cuStreamGetCaptureInfo_v2_ptsz", 0)
    assert tables.resolve("cuCtxCreate", 12050, 0) == ("cuCtxCreate_v4", 0)
    assert tables.resolve("cuLogsCurrent", 12000, 0) == (None, 2)
    assert tables.resolve("cuNoSuchFunction", 13000, 0) == (None, 1)


@pytest.mark.parametrize("library", sorted(LIBS))
def test_every_table_name_is_exported(libdir: Path, library: str) -> None:
    path = libdir / LIBS[library]
    names = {e.name for e in tables.exports(library)}
    exported = dynamic_symbols(path)
    assert names - exported == set()
    # the bridge's internals stay hidden (the version node's own name is an ABS symbol)
    assert exported - names <= {"gpudbg_native_missing", "gpudbg_native_start_python", "libcudart.so.13"}
    tags = dynamic_tags(path)
    assert tags["DT_SONAME"] == LIBS[library]
    assert int(tags.get("DT_FLAGS_1", 0)) & 0x8, "linked -z nodelete"
    link = libdir / LIBS[library].rsplit(".so", 1)[0]
    assert (libdir / f"{link.name}.so").resolve() == path.resolve()


def test_no_libpython_is_linked(libdir: Path) -> None:
    for soname in LIBS.values():
        with (libdir / soname).open("rb") as f:
            dyn = next(s for s in ELFFile(f).iter_sections() if isinstance(s, DynamicSection))
            needed = [t.needed for t in dyn.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
        assert not [n for n in needed if "python" in n], needed


@pytest.mark.skipif(not shutil.which("nm"), reason="no nm")
def test_runtime_symbols_carry_the_version_node(libdir: Path) -> None:
    out = subprocess.run(["nm", "-D", "--defined-only", str(libdir / "libcudart.so.13")],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    syms = [line.split()[-1] for line in out.splitlines() if " T " in line]
    assert syms and all(s.endswith("@@libcudart.so.13") for s in syms)
    needed = set((DATA / "nvcc_vecadd.symbols").read_text().split())
    assert needed <= {s.split("@@")[0] for s in syms}


def test_generated_files_match_the_headers() -> None:
    from gpudbg.native import gen_exports
    try:
        inc = gen_exports.find_include()
    except SystemExit:
        pytest.skip("no CUDA headers on this machine")
    if "CUDA_VERSION 13000" not in (inc / "cuda.h").read_text():
        pytest.skip("the committed tables come from CUDA 13.0's headers")
    stale = [p.name for p, text in gen_exports.outputs(inc).items() if p.read_text() != text]
    assert stale == []
