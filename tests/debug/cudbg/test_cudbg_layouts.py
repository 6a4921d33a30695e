"""Layout tables against the header's packed struct declarations, and round trips."""
import ctypes

import pytest
from cudbg_seed import CField, CuDim3C, ctype_of, parse_packed_structs
from cudbg_strategies import for_layout
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.debug.cudbg import layouts as L
from gpudbg.debug.cudbg.enums import CUDBGAttribute, CUDBGException_t

def test_every_packed_latest_struct_has_a_table():
    seed = parse_packed_structs()
    latest = {name for name in seed if not name[-1].isdigit()}
    assert latest == set(L.PACKED_LAYOUTS), "packed structs of seed 000 without a layout table"


@pytest.mark.parametrize("cname", sorted(L.PACKED_LAYOUTS))
def test_fields_sizes_and_offsets_match_the_header(cname):
    layout = L.PACKED_LAYOUTS[cname]
    fields = parse_packed_structs()[cname]
    assert [f.name for f in fields] == [name for name, _ in layout.fields]
    cstruct = ctype_of(cname, fields)
    assert layout.size == ctypes.sizeof(cstruct)
    for name, offset in layout.offsets().items():
        assert offset == getattr(cstruct, name).offset, f"{cname}.{name}"


def test_sizes_stated_or_implied_by_the_header():
    # CUDBGDeviceInfoSizes: one uint32_t plus four (size, sizes[32]) groups.
    assert L.DEVICE_INFO_SIZES.size == 4 + 4 * (4 + 32 * 4) == 532
    assert L.DEVICE_INFO.size == 8 and L.SM_INFO.size == 20
    assert L.WARP_INFO.size == 44 and L.LANE_INFO.size == 8
    assert L.WARP_INFO.offsets()["warpAttributeFlags"] == 40
    # "Force sizeof(CUDBGException_t)==4": the lane state is 8 + 12 + 4.
    assert L.LANE_STATE.size == 24
    assert L.WARP_STATE.size == 8 + 8 + 12 + 12 + 32 * 24 + 12 + 12 + 4 + 12 + 4


def test_unpacked_attribute_value_pair_uses_natural_alignment():
    cstruct = ctype_of("CUDBGAttributeValuePair", [CField("CUDBGAttribute", "attribute", 1),
                                                    CField("uint64_t", "value", 1)], packed=False)
    assert L.ATTRIBUTE_VALUE_PAIR.size == ctypes.sizeof(cstruct) == 16
    assert L.ATTRIBUTE_VALUE_PAIR.offsets()["value"] == cstruct.value.offset == 8
    pair = L.CUDBGAttributeValuePair(CUDBGAttribute.CUDBG_ATTR_GRID_TID, 77)
    assert L.ATTRIBUTE_VALUE_PAIR.unpack(L.ATTRIBUTE_VALUE_PAIR.pack(pair)) == pair


@pytest.mark.parametrize("cname", sorted(L.PACKED_LAYOUTS))
def test_pack_unpack_round_trip(cname):
    layout = L.PACKED_LAYOUTS[cname]

    @settings(max_examples=15, deadline=None)
    @given(for_layout(layout), st.binary(max_size=8))
    def check(record, prefix):
        data = layout.pack(record)
        assert len(data) == layout.size
        assert layout.unpack(prefix + data, len(prefix)) == record

    check()


def test_pack_agrees_with_ctypes_bytes():
    warp = L.CUDBGWarpInfo(0x1122334455667788, L.CuDim3(1, 2, 3), L.CuDim3(32, 0, 0), 0xFFFFFFFF, 0xF, 0x9)
    cstruct = ctype_of("CUDBGWarpInfo", parse_packed_structs()["CUDBGWarpInfo"])
    c = cstruct(0x1122334455667788, CuDim3C(1, 2, 3), CuDim3C(32, 0, 0), 0xFFFFFFFF, 0xF, 0x9)
    assert L.WARP_INFO.pack(warp) == bytes(c)


def test_bad_values_are_rejected_with_the_field_named():
    with pytest.raises(L.LayoutError, match=r"CUDBGSMInfo.smAttributeFlags: 4294967296 does not fit uint32_t"):
        L.SM_INFO.pack(L.CUDBGSMInfo(0, 0, 1 << 32))
    with pytest.raises(L.LayoutError, match=r"CUDBGWarpInfo.blockIdx: expected a CuDim3"):
        L.WARP_INFO.pack(L.CUDBGWarpInfo(0, (1, 2), L.CuDim3(), 0, 0, 0))
    with pytest.raises(L.LayoutError, match=r"lane: expected 32 elements, got 2"):
        L.WARP_STATE.pack(L.CUDBGWarpState(0, 0, L.CuDim3(), 0, 0, 0, (None, None), L.CuDim3(),
                                           L.CuDim3(), 0, L.CuDim3(), 0))
    with pytest.raises(L.LayoutError, match="is not a CUDBGException"):
        L.LANE_STATE.pack(L.CUDBGLaneState(0, L.CuDim3(), 99))
    with pytest.raises(L.LayoutError, match="expected an integer"):
        L.LANE_INFO.pack(L.CUDBGLaneInfo("0x10"))
    with pytest.raises(L.LayoutError, match="at most 255 bytes"):
        L.CUDA_LOG_MESSAGE.pack(L.CUDBGCudaLogMessage(0, 0, 0, b"x" * 256))
    with pytest.raises(L.LayoutError, match="expected CUDBGLaneInfo"):
        L.LANE_INFO.pack(L.CUDBGSMInfo(0, 0, 0))


def test_short_buffers_and_unknown_enum_values_on_unpack():
    with pytest.raises(L.LayoutError, match="CUDBGLaneState needs 24 bytes at offset 0, buffer has 23"):
        L.LANE_STATE.unpack(bytes(23))
    raw = bytearray(L.LANE_STATE.pack(L.CUDBGLaneState(1, L.CuDim3(), CUDBGException_t.CUDBG_EXCEPTION_NONE)))
    raw[20:24] = (77).to_bytes(4, "little")
    with pytest.raises(L.LayoutError, match="exception: 77 is not a CUDBGException"):
        L.LANE_STATE.unpack(bytes(raw))


def test_table_must_match_its_record():
    with pytest.raises(TypeError, match="differ from CUDBGLaneInfo fields"):
        L.Layout("CUDBGLaneInfo", L.CUDBGLaneInfo, [("pc", L.U64)])
