"""Seed 002 §2.12.3.14 and the fatbinary container (driver/fatbin.py):
round trips and damage (hypothesis), entry selection, and the mc loaders."""
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.driver import fatbin as FB
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E

S = E.mcSuccess

PTX = """.version 8.0
.target sm_{arch}
.address_size 64
.visible .entry put(.param .u64 p)
{{
    .reg .b32 %r<2>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, {value};
    st.global.u32 [%rd2], %r1;
    ret;
}}
"""


def ptx(arch: int, value: int) -> str:
    return PTX.format(arch=arch, value=value)


def run_put(module) -> int:
    err, f = mc.mcModuleGetFunction(module, "put")
    assert err == S
    err, d = mc.mcMalloc(4)
    assert mc.mcLaunchKernel(f, 1, 1, [d]) == (S,)
    out = np.zeros(1, np.uint32)
    assert mc.mcMemcpy(out, d, 4, mc.mcMemcpyKind.mcMemcpyDeviceToHost) == (S,)
    return int(out[0])


# ------------------------------------------------------------------ container
entry_st = st.tuples(st.sampled_from([FB.EntryKind.PTX, FB.EntryKind.ELF]),
                     st.integers(min_value=0, max_value=200), st.binary(max_size=200))


@settings(max_examples=60, deadline=None)
@given(st.lists(entry_st, max_size=5))
def test_build_parse_round_trip(entries):
    data = FB.build_fatbin(entries)
    assert FB.fatbin_size(data) == len(data)
    got = FB.parse_fatbin(data)
    assert [(e.kind, e.arch) for e in got] == [(k, a) for k, a, _ in entries]
    for e, (_, _, payload) in zip(got, entries):
        assert e.payload[:len(payload)] == payload and not e.payload[len(payload):].strip(b"\0")
        assert len(e.payload) % 8 == 0 and not e.compressed


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_damage_gives_a_clean_error(data):
    blob = bytearray(FB.build_fatbin([ptx(80, 1), (FB.EntryKind.ELF, 90, b"\x7fELF" + bytes(20))]))
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(blob)))
    damaged = bytes(blob[:cut])
    try:
        entries = FB.parse_fatbin(damaged)
    except FB.FatbinError as e:
        assert "offset" in str(e) or "bytes" in str(e) or "version" in str(e)
        return
    for e in entries:   # what parses is well-formed and selectable without a crash
        assert e.kind in (1, 2)
        try:
            FB.select_ptx(entries, (9, 0)).ptx_text()
        except (FB.NoImageForDevice, FB.FatbinError):
            pass


def test_parse_errors_are_specific():
    good = FB.build_fatbin([ptx(80, 1)])
    with pytest.raises(FB.FatbinError, match="magic"):
        FB.parse_fatbin(b"\0" * 32)
    with pytest.raises(FB.FatbinError, match="version 2"):
        FB.parse_fatbin(good[:4] + struct.pack("<H", 2) + good[6:])
    with pytest.raises(FB.FatbinError, match="only"):
        FB.parse_fatbin(good[:-8])
    bad_kind = bytearray(good)
    bad_kind[16:18] = struct.pack("<H", 7)
    with pytest.raises(FB.FatbinError, match="unknown kind 7"):
        FB.parse_fatbin(bytes(bad_kind))


def test_select_newest_ptx_not_above_the_device():
    entries = FB.parse_fatbin(FB.build_fatbin([ptx(52, 1), ptx(80, 2), ptx(100, 3),
                                               (FB.EntryKind.ELF, 90, b"sass")]))
    assert FB.select_ptx(entries, (9, 0)).arch == 80
    assert "mov.u32 %r1, 2" in FB.select_ptx(entries, (9, 0)).ptx_text()
    with pytest.raises(FB.NoImageForDevice, match="SASS"):
        FB.select_ptx([e for e in entries if e.kind == FB.EntryKind.ELF], (9, 0))
    with pytest.raises(FB.NoImageForDevice, match="above sm_90"):
        FB.select_ptx([entries[2]], (9, 0))


def test_multiple_containers_back_to_back():
    one, two = FB.build_fatbin([ptx(70, 1)]), FB.build_fatbin([ptx(75, 2)])
    assert [e.arch for e in FB.parse_fatbin(one + two + b"\0" * 16)] == [70, 75]


# ------------------------------------------------------------------ loading
def falsely_compressed_fatbin() -> bytes:
    """An uncompressed entry whose flags claim LZ4 (sizes left at 0)."""
    blob = bytearray(FB.build_fatbin([ptx(80, 1)]))
    flags_at = 16 + struct.calcsize("<HHIQIIHHIII")
    blob[flags_at:flags_at + 8] = struct.pack("<Q", int(FB.EntryFlags.COMPRESSED_LZ4 | FB.EntryFlags.ADDRESS_64))
    return bytes(blob)


def test_load_fatbinary_runs_the_chosen_ptx(real):
    err, m = mc.mcModuleLoadFatBinary(FB.build_fatbin([ptx(70, 7), ptx(90, 9), ptx(100, 10)]))
    assert err == S and run_put(m) == 9
    err, m2 = mc.mcModuleLoadData(FB.build_fatbin([ptx(80, 8)]))   # LoadData takes fatbins too
    assert err == S and run_put(m2) == 8


def test_load_fatbinary_errors(real):
    assert mc.mcModuleLoadFatBinary(FB.build_fatbin([(FB.EntryKind.ELF, 90, b"\x7fELF")])) \
        == (E.mcErrorNoKernelImageForDevice, None)
    assert "SASS" in mc.last_error_message()
    assert mc.mcModuleLoadFatBinary(falsely_compressed_fatbin()) == (E.mcErrorInvalidImage, None)
    assert "compressed size 0" in mc.last_error_message()
    err, m = mc.mcModuleLoadFatBinary(FB.build_fatbin([ptx(80, 12)], compress="zstd"))
    assert err == S and run_put(m) == 12
    assert mc.mcModuleLoadFatBinary(ptx(80, 1)) == (E.mcErrorInvalidImage, None)
    assert mc.mcModuleLoadFatBinary(FB.build_fatbin([ptx(80, 1)])[:-8]) == (E.mcErrorInvalidImage, None)
    assert mc.mcModuleLoadFatBinary(3.5) == (E.mcErrorInvalidValue, None)
    bad_ptx = FB.build_fatbin([(FB.EntryKind.PTX, 80, ".version 8.0\n.target sm_80\nbogus")])
    assert mc.mcModuleLoadFatBinary(bad_ptx) == (E.mcErrorInvalidKernelFile, None)


def test_wrapper_struct_points_at_pinned_memory(real):
    blob = FB.build_fatbin([ptx(80, 5)])
    err, host = mc.mcMallocHost(len(blob))
    assert err == S
    assert mc.mcMemcpy(host, np.frombuffer(blob, np.uint8), len(blob), mc.mcMemcpyKind.mcMemcpyHostToHost) == (S,)
    err, m = mc.mcModuleLoadFatBinary(FB.build_wrapper(host))
    assert err == S and run_put(m) == 5
    err, m2 = mc.mcModuleLoadData(host)                  # the image pointer itself
    assert err == S and run_put(m2) == 5
    assert mc.mcModuleLoadFatBinary(FB.build_wrapper(0x1234)) == (E.mcErrorInvalidValue, None)
    assert mc.mcModuleLoadFatBinary(FB.build_wrapper(host, version=9)) == (E.mcErrorInvalidImage, None)


def test_cubin_and_fatbin_files(real, tmp_path):
    cubin = bytearray(64)
    cubin[0:4] = b"\x7fELF"
    cubin[4:7] = bytes([2, 1, 1])                                  # 64-bit, little endian, v1
    struct.pack_into("<HHIQQQIHHHHHH", cubin, 16, 2, FB.EM_CUDA, 1, 0, 0, 0, 0, 64, 0, 0, 64, 0, 0)
    p = tmp_path / "k.cubin"
    p.write_bytes(bytes(cubin))
    assert mc.mcModuleLoad(str(p)) == (E.mcErrorNoKernelImageForDevice, None)
    assert "cubin" in mc.last_error_message()
    f = tmp_path / "k.fatbin"
    f.write_bytes(FB.build_fatbin([ptx(86, 4)]))
    err, m = mc.mcModuleLoad(str(f))
    assert err == S and run_put(m) == 4


def host_object(fatbin: bytes) -> bytes:
    """A minimal x86-64 relocatable ELF whose .nv_fatbin section holds fatbin."""
    shstr = b"\0.nv_fatbin\0.shstrtab\0"
    data_off = 64
    str_off = data_off + len(fatbin)
    sh_off = (str_off + len(shstr) + 7) // 8 * 8
    ehdr = bytearray(64)
    ehdr[0:7] = b"\x7fELF\x02\x01\x01"
    struct.pack_into("<HHIQQQIHHHHHH", ehdr, 16, 1, 62, 1, 0, 0, sh_off, 0, 64, 0, 0, 64, 3, 2)
    sh = bytearray(64 * 3)
    struct.pack_into("<IIQQQQIIQQ", sh, 64, 1, 1, 0, 0, data_off, len(fatbin), 0, 0, 8, 0)
    struct.pack_into("<IIQQQQIIQQ", sh, 128, 12, 3, 0, 0, str_off, len(shstr), 0, 0, 1, 0)
    body = bytes(ehdr) + fatbin + shstr
    return body + b"\0" * (sh_off - len(body)) + bytes(sh)


def test_host_object_with_embedded_fatbin(real, tmp_path):
    obj = host_object(FB.build_fatbin([ptx(80, 6)]))
    err, m = mc.mcModuleLoadData(obj)
    assert err == S and run_put(m) == 6
    err, st = mc.mcLinkCreate(0, None, None)
    assert mc.mcLinkAddData(st, mc.mcJitInputType.mcJitInputObject, obj, len(obj), "k.o") == (S,)
    err, image, _ = mc.mcLinkComplete(st)
    assert err == S and run_put(mc.mcModuleLoadData(image)[1]) == 6
    assert mc.mcModuleLoadData(host_object(b"")) == (E.mcErrorInvalidImage, None)


def test_library_of_objects_links(real):
    obj = host_object(FB.build_fatbin([ptx(80, 11)]))
    hdr = b"k.o/".ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"644".ljust(8) \
        + str(len(obj)).encode().ljust(10) + b"`\n"
    lib = b"!<arch>\n" + hdr + obj + b"\n" * (len(obj) & 1)
    err, st = mc.mcLinkCreate(0, None, None)
    assert mc.mcLinkAddData(st, mc.mcJitInputType.mcJitInputLibrary, lib, len(lib), "libk.a") == (S,)
    err, image, _ = mc.mcLinkComplete(st)
    assert err == S and image.inputs == ("libk.a(k.o)",)
    assert run_put(mc.mcModuleLoadData(image)[1]) == 11
    broken = lib[:8] + lib[8:60] + b"xx" + lib[62:]
    assert mc.mcLinkAddData(st, mc.mcJitInputType.mcJitInputLibrary, broken, len(broken), "bad.a") \
        == (E.mcErrorInvalidImage,)
