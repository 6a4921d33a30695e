"""Fatbins made by nvcc 13 (fixtures/fatbins, see its README): each loads,
the right PTX entry is chosen and runs (put writes v + arch/10 + tid), the
wrapper works from process memory, executables give their PTX, and a fresh
nvcc build loads where nvcc is installed."""
import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gpudbg.driver import fatbin as FB
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E

S = E.mcSuccess
HERE = Path(__file__).parent / "fixtures" / "fatbins"
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)


def fixture(name: str) -> bytes:
    return (HERE / name).read_bytes()


def run_put(module, v: int = 1000) -> list[int]:
    err, f = mc.mcModuleGetFunction(module, "put")
    assert err == S
    err, d = mc.mcMalloc(16)
    assert mc.mcLaunchKernel(f, 1, 4, [d, v], 0, None) == (S,)
    out = np.zeros(4, np.uint32)
    assert mc.mcMemcpy(out, d, 16, mc.mcMemcpyKind.mcMemcpyDeviceToHost) == (S,)
    return out.tolist()


@pytest.mark.parametrize("name, flags", [("zstd_compute80.fatbin", 0x8011), ("lz4_compute80.fatbin", 0x2011),
                                         ("none_compute80.fatbin", 0x11)])
def test_each_compression_loads_and_runs(real, name, flags):
    data = fixture(name)
    (entry,) = FB.parse_fatbin(data)
    assert (entry.kind, entry.arch, entry.flags, entry.ptx_version) == (FB.EntryKind.PTX, 80, flags, (9, 0))
    err, m = mc.mcModuleLoadFatBinary(data)
    assert err == S, mc.last_error_message()
    assert run_put(m) == [1080, 1081, 1082, 1083]


def test_all_compressions_decode_to_the_same_ptx():
    texts = {FB.parse_fatbin(fixture(n))[0].ptx_text()
             for n in ("zstd_compute80.fatbin", "lz4_compute80.fatbin", "none_compute80.fatbin")}
    assert len(texts) == 1 and ".target sm_80" in texts.pop()


def test_multi_arch_chooses_the_newest_the_device_runs(real):
    data = fixture("multi_arch.fatbin")
    assert FB.holdings(FB.parse_fatbin(data)) == "sm_75 SASS, compute_75 PTX, compute_80 PTX, compute_90 PTX"
    err, m = mc.mcModuleLoadFatBinary(data)
    assert err == S and run_put(m) == [1090, 1091, 1092, 1093]     # compute_90 on the CC 9.0 device
    assert ".target sm_80" in FB.load_ptx(data, (8, 6))               # compute_80 for an 8.6 device
    assert ".target sm_75" in FB.load_ptx(data, (7, 5))


@pytest.mark.parametrize("name, held", [("sass_only.fatbin", "sm_75 SASS, sm_80 SASS"),
                                        ("ptx_compute100.fatbin", "compute_100 PTX")])
def test_nothing_runnable(real, name, held):
    assert mc.mcModuleLoadFatBinary(fixture(name)) == (E.mcErrorNoKernelImageForDevice, None)
    msg = mc.last_error_message()
    assert held in msg and "-gencode arch=compute_90,code=compute_90" in msg


def test_arch_specific_and_debug_entries(real):
    (a,) = FB.parse_fatbin(fixture("ptx_compute90a.fatbin"))
    assert a.target == "compute_90a" and a.runs_on(90) and not a.runs_on(100)
    err, m = mc.mcModuleLoadFatBinary(fixture("ptx_compute90a.fatbin"))
    assert err == S and run_put(m) == [1090, 1091, 1092, 1093]
    (d,) = FB.parse_fatbin(fixture("debug_compute80.fatbin"))
    assert d.debug and d.name == "put.cu" and "-g" in d.options.split()
    assert ".target sm_80, debug" in d.ptx_text()


def test_wrapper_in_process_memory(real):
    """__cudaRegisterFatBinary's argument: a wrapper in the program's data
    pointing at a fatbin there (not engine memory), given by address."""
    blob = ctypes.create_string_buffer(fixture("multi_arch.fatbin") + b"garbage after the fatbin")
    wrapper = ctypes.create_string_buffer(FB.build_wrapper(ctypes.addressof(blob), version=1))
    err, m = mc.mcModuleLoadFatBinary(ctypes.addressof(wrapper))
    assert err == S, mc.last_error_message()
    assert run_put(m) == [1090, 1091, 1092, 1093]
    err, m2 = mc.mcModuleLoadData(ctypes.addressof(blob))          # the fatbin by address
    assert err == S and run_put(m2, 5) == [95, 96, 97, 98]
    bad = ctypes.create_string_buffer(FB.build_wrapper(0x10, version=2))
    assert mc.mcModuleLoadFatBinary(ctypes.addressof(bad)) == (E.mcErrorInvalidValue, None)
    assert "0x10" in mc.last_error_message()


def test_executable_with_one_kernel_unit(real, tmp_path):
    data = fixture("put.exe")
    sections, _ = FB.elf_fatbins(data)
    assert [FB.holdings(c) for c in FB.containers(sections[0])] == ["no entries", "compute_80 PTX", "compute_80 PTX"]
    err, m = mc.mcModuleLoadData(data)                              # main.cu's PTX has no kernels
    assert err == S and run_put(m) == [1080, 1081, 1082, 1083]
    (tmp_path / "put.exe").write_bytes(data)
    err, m = mc.mcModuleLoad(str(tmp_path / "put.exe"))
    assert err == S


def test_executable_with_two_kernel_units(real):
    data = fixture("two_units.exe")
    chosen = FB.elf_ptx(data, (9, 0))
    assert [e.target for e in chosen] == ["compute_75", "compute_80", "compute_80"]
    kernels = [e.ptx_text() for e in chosen]
    assert ".entry put(" in kernels[1] and ".entry other(" in kernels[2] and ".entry" not in kernels[0]
    assert chosen[2].flags & FB.EntryFlags.COMPRESSED_LZ4 and chosen[1].flags & FB.EntryFlags.COMPRESSED_ZSTD
    assert mc.mcModuleLoadData(data) == (E.mcErrorInvalidImage, None)
    assert "2 translation units" in mc.last_error_message()


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed (the committed fixtures cover this)")
def test_fresh_nvcc_build_loads(real, tmp_path):
    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void put(unsigned *p, unsigned v) { p[threadIdx.x] = v * 3 + threadIdx.x; }\n')
    out = tmp_path / "k.fatbin"
    subprocess.run([NVCC, "-fatbin", "-gencode", "arch=compute_75,code=[sm_75,compute_75]",
                    "-gencode", "arch=compute_80,code=compute_80", str(src), "-o", str(out)],
                   check=True, capture_output=True, timeout=120)
    err, m = mc.mcModuleLoadFatBinary(out.read_bytes())
    assert err == S, mc.last_error_message()
    assert run_put(m, 10) == [30, 31, 32, 33]
