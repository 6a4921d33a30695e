"""The fatbin container parser (driver/fatbin.py) against its writer:
round trips with every compression, entry choice (arch, a/f targets,
debug), and damage of every kind giving FatbinError / INVALID_IMAGE only."""
import struct
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.driver import fatbin as FB
from gpudbg.driver import module as M
from gpudbg.driver.status import CUresult, EngineError

F = FB.EntryFlags
BASE = int(F.ADDRESS_64 | F.LINUX)


def ptx(arch: int, tag: str = "") -> str:
    return f".version 8.0\n.target sm_{arch}\n.address_size 64\n// {tag}\n.visible .entry k() {{ ret; }}\n"


def ctx(cc=(9, 0)):
    """What image_to_ptx reads of a context: the device model and the UVA registry."""
    return SimpleNamespace(device=SimpleNamespace(model=SimpleNamespace(compute_capability=cc)),
                           engine=SimpleNamespace(uva=SimpleNamespace(resolve=lambda p: None)))


# ------------------------------------------------------------------ round trip
entry_st = st.tuples(st.sampled_from([FB.EntryKind.PTX, FB.EntryKind.ELF]),
                     st.integers(0, 200), st.binary(min_size=1, max_size=300),
                     st.sampled_from([None, "zstd", "lz4"]), st.booleans(),
                     st.text(max_size=12), st.one_of(st.none(), st.text(max_size=40)))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(entry_st, max_size=4), min_size=1, max_size=3))
def test_round_trip(containers):
    blob = b""
    for c in containers:
        blob += FB.build_container(FB.build_entry(k, a, p, compress=z, name=n, options=o,
                                                  flags=BASE | (F.DEBUG if d else 0))
                                   for k, a, p, z, d, n, o in c)
    got = FB.containers(blob)
    assert len(got) == len(containers)
    for entries, specs in zip(got, containers):
        assert len(entries) == len(specs)
        for e, (k, a, p, z, d, n, o) in zip(entries, specs):
            assert (e.kind, e.arch, e.debug, e.compressed) == (k, a, d, z is not None)
            assert e.name == n.split("\0")[0] and e.options == (o or "").split("\0")[0]
            data = e.data()
            assert data[:len(p)] == p and not data[len(p):].strip(b"\0")
            assert len(e.payload) % 8 == 0


def test_header_fields_match_nvcc_layout():
    raw = ptx(80).encode() + b"\0"
    e = FB.build_entry(1, 80, raw, compress="zstd", ptx_version=(9, 0))
    kind, ver, hsize, size, csize, opt, minor, major, arch, _, _, flags, _, dsize = FB.ENTRY.unpack_from(e)
    assert (kind, ver, hsize, arch, major, minor) == (1, 0x0101, 64, 80, 9, 0)
    assert flags == 0x8011 and dsize == len(raw) and 0 < csize <= size and size % 8 == 0
    assert e[hsize:hsize + 4] == b"\x28\xb5\x2f\xfd"        # a standard zstd frame
    assert FB.ENTRY.unpack_from(FB.build_entry(1, 80, raw, compress="lz4"))[11] == 0x2011


# ------------------------------------------------------------------ choice
def fatbin(*entries) -> bytes:
    return FB.build_container(FB.build_entry(1, a, ptx(a, tag), flags=BASE | fl, compress="zstd")
                              for a, tag, fl in entries)


def test_newest_runnable_ptx_is_chosen():
    data = fatbin((52, "a", 0), (90, "b", 0), (80, "c", 0), (100, "d", 0))
    assert "// b" in FB.load_ptx(data, (9, 0))
    assert "// c" in FB.load_ptx(data, (8, 6))
    assert "// d" in FB.load_ptx(data, (12, 0))


def test_arch_and_family_specific_targets():
    a = fatbin((90, "90a", int(F.ARCH_SPECIFIC)), (80, "80", 0))
    assert "// 90a" in FB.load_ptx(a, (9, 0))
    assert "// 80" in FB.load_ptx(a, (10, 0))          # sm_90a PTX runs on 9.0 only
    f = fatbin((100, "100f", int(F.FAMILY_SPECIFIC)), (80, "80", 0))
    assert "// 100f" in FB.load_ptx(f, (10, 3))
    assert "// 80" in FB.load_ptx(f, (12, 0))          # another family
    assert FB.parse_container(a)[0].target == "compute_90a"


def test_debug_preference():
    data = fatbin((80, "plain", 0), (80, "dbg", int(F.DEBUG)), (75, "old-dbg", int(F.DEBUG)))
    assert "// dbg" in FB.load_ptx(data, (9, 0), debug=True)
    assert "// plain" in FB.load_ptx(data, (9, 0), debug=False)
    only_plain = fatbin((80, "plain", 0))
    assert "// plain" in FB.load_ptx(only_plain, (9, 0), debug=True)   # else the newest


def test_nothing_runnable_names_the_contents_and_the_fix():
    sass = FB.build_container([FB.build_entry(2, 75, b"\x7fELF"), FB.build_entry(2, 80, b"\x7fELF")])
    with pytest.raises(EngineError) as e:
        M.image_to_ptx(ctx(), sass)
    assert e.value.status == CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU
    assert "sm_75 SASS, sm_80 SASS" in e.value.message
    assert "-gencode arch=compute_90,code=compute_90" in e.value.message
    with pytest.raises(EngineError) as e:
        M.image_to_ptx(ctx(), fatbin((100, "", 0)))
    assert e.value.status == CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU and "compute_100 PTX" in e.value.message


def test_only_the_first_container_of_a_fatbin_image_counts():
    data = fatbin((70, "first", 0)) + fatbin((90, "second", 0))
    assert "// first" in M.image_to_ptx(ctx(), data)
    assert [e.arch for e in FB.parse_fatbin(data)] == [70, 90]


# ------------------------------------------------------------------ damage
def entry_bytes(**kw) -> bytearray:
    raw = ptx(80).encode() + b"\0"
    return bytearray(FB.build_container([FB.build_entry(1, 80, raw, **kw)]))


def invalid(data: bytes) -> str:
    with pytest.raises(EngineError) as e:
        M.image_to_ptx(ctx(), bytes(data))
    assert e.value.status == CUresult.CUDA_ERROR_INVALID_IMAGE, e.value.message
    return e.value.message


def test_specific_corruptions():
    good = entry_bytes(compress="zstd")
    assert "needs 16 bytes" in invalid(good[:10])
    assert "only" in invalid(good[:-8])
    bad = bytearray(good)
    struct.pack_into("<Q", bad, 16 + 8, 1 << 40)                      # payload past the end
    assert "entry 0 at offset 16" in invalid(bad) and "runs past" in invalid(bad)
    bad = bytearray(good)
    bad[16 + 64 + 8:16 + 64 + 24] = b"\xff" * 16                      # garbage in the zstd frame
    assert "entry 0 (compute_80 PTX at offset 16): zstd data" in invalid(bad)
    bad = bytearray(good)
    struct.pack_into("<Q", bad, 16 + 56, struct.unpack_from("<Q", good, 16 + 56)[0] - 1)
    assert "the header says" in invalid(bad)                           # size disagrees with the header
    bad = bytearray(good)
    struct.pack_into("<Q", bad, 16 + 56, 1 << 40)                      # no huge allocation
    assert "decompressed size" in invalid(bad)
    lz = entry_bytes(compress="lz4")
    struct.pack_into("<Q", lz, 16 + 56, struct.unpack_from("<Q", lz, 16 + 56)[0] + 100)
    assert "LZ4 data decompresses to" in invalid(lz)
    lz = entry_bytes(compress="lz4")
    lz[16 + 64:16 + 64 + 4] = b"\xff\xff\xff\xff"
    assert "LZ4 data is corrupt" in invalid(lz)
    both = entry_bytes(compress="zstd")
    struct.pack_into("<Q", both, 16 + 40, BASE | F.COMPRESSED_ZSTD | F.COMPRESSED_LZ4)
    assert "both LZ4 and zstd" in invalid(both)
    named = entry_bytes(name="k.cu", options="-g")
    struct.pack_into("<I", named, 16 + 36, 999)
    assert "name" in invalid(named) and "outside" in invalid(named)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_random_damage_is_invalid_image_only(data):
    blob = bytearray(FB.build_container([
        FB.build_entry(1, 75, ptx(75), compress="lz4", name="a.cu", options=" -g "),
        FB.build_entry(2, 80, b"\x7fELF" + bytes(40)),
        FB.build_entry(1, 80, ptx(80), compress="zstd", flags=BASE | F.DEBUG)]))
    lo = data.draw(st.sampled_from([0, 16, 16 + 88]))     # sometimes spare the headers
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(lo, len(blob) - 1))
        blob[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.one_of(st.just(len(blob)), st.integers(0, len(blob))))
    damaged = bytes(blob[:cut])
    if not FB.is_fatbin(damaged):
        damaged = struct.pack("<I", FB.FATBIN_MAGIC) + damaged[4:]
    try:
        text = M.image_to_ptx(ctx(), damaged, fatbin_only=True, debug=data.draw(st.sampled_from([None, True])))
    except EngineError as e:
        assert e.status in (CUresult.CUDA_ERROR_INVALID_IMAGE, CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU), e
        assert e.message
        return
    assert isinstance(text, str)


# ------------------------------------------------------------------ process memory
def test_images_by_address_in_process_memory():
    import ctypes
    text = ctypes.create_string_buffer(ptx(80, "by address").encode())
    assert "// by address" in M.image_to_ptx(ctx(), ctypes.addressof(text))
    fat = ctypes.create_string_buffer(fatbin((80, "fat", 0)) + b"\xff" * 64)
    assert FB.fatbin_at(ctypes.addressof(fat)) == fatbin((80, "fat", 0))
    wrapper = ctypes.create_string_buffer(FB.build_wrapper(ctypes.addressof(fat)))
    assert "// fat" in M.image_to_ptx(ctx(), ctypes.addressof(wrapper), fatbin_only=True)
    with pytest.raises(FB.UnreadableMemory):
        FB.read_process_memory(8, 16)
    not_fat = ctypes.create_string_buffer(FB.build_wrapper(ctypes.addressof(text)))
    with pytest.raises(EngineError) as e:
        M.image_to_ptx(ctx(), ctypes.addressof(not_fat))
    assert e.value.status == CUresult.CUDA_ERROR_INVALID_IMAGE and "does not point at a fatbin" in e.value.message
