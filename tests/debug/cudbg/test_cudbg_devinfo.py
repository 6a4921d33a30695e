"""The batched getDeviceInfo buffer: FULL and UPDATE shapes, round trips, forward compatibility."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.debug.cudbg import devinfo as D
from gpudbg.debug.cudbg import layouts as L
from gpudbg.debug.cudbg.enums import CUDBGDeviceInfoAttribute_t as DA
from gpudbg.debug.cudbg.enums import CUDBGDeviceInfoQueryType_t as QT
from gpudbg.debug.cudbg.enums import CUDBGException_t, attribute_mask
from gpudbg.debug.cudbg.enums import CUDBGSMInfoAttribute_t as SA
from gpudbg.debug.cudbg.enums import CUDBGWarpInfoAttribute_t as WA

u32 = st.integers(0, 0xFFFFFFFF)
u64 = st.integers(0, (1 << 64) - 1)
dim3 = st.builds(L.CuDim3, u32, u32, u32)
WARP_VALUES = {
    WA.CUDBG_WARP_ATTRIBUTE_LANE_UPDATE_MASK: u32,
    WA.CUDBG_WARP_ATTRIBUTE_LANE_ATTRIBUTES: st.none(),
    WA.CUDBG_WARP_ATTRIBUTE_EXCEPTION: st.sampled_from(list(CUDBGException_t)),
    WA.CUDBG_WARP_ATTRIBUTE_ERRORPC: u64,
    WA.CUDBG_WARP_ATTRIBUTE_CLUSTERIDX: dim3,
    WA.CUDBG_WARP_ATTRIBUTE_CLUSTERDIM: dim3,
    WA.CUDBG_WARP_ATTRIBUTE_CLUSTER_EXCEPTION_TARGET_BLOCK_IDX: dim3,
    WA.CUDBG_WARP_ATTRIBUTE_IN_SYSCALL_LANES: u32,
}


def bits(mask):
    return [i for i in range(64) if mask >> i & 1]


@st.composite
def warps(draw, index, update):
    chosen = draw(st.sets(st.sampled_from(sorted(WARP_VALUES))))
    if update:
        chosen.add(WA.CUDBG_WARP_ATTRIBUTE_LANE_UPDATE_MASK)
    attrs = {a: draw(WARP_VALUES[a]) for a in chosen}
    valid = draw(u32)
    info = L.CUDBGWarpInfo(draw(u64), draw(dim3), draw(dim3), valid, draw(u32) & valid, attribute_mask(attrs))
    lane_mask = valid & attrs.get(WA.CUDBG_WARP_ATTRIBUTE_LANE_UPDATE_MASK, 0xFFFFFFFF)
    with_flags = WA.CUDBG_WARP_ATTRIBUTE_LANE_ATTRIBUTES in attrs
    lanes = tuple(D.LaneRecord(ln, L.CUDBGLaneInfo(draw(u64)), 0 if with_flags else None)
                  for ln in bits(lane_mask))
    return D.WarpRecord(index, info, attrs, lanes)


@st.composite
def responses(draw):
    num_sms = draw(st.integers(1, 12))
    update = draw(st.booleans())
    full = (1 << num_sms) - 1
    attrs = {DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK: draw(st.integers(0, full))}
    if update:
        attrs[DA.CUDBG_DEVICE_ATTRIBUTE_SM_UPDATE_MASK] = draw(st.integers(0, full))
    if draw(st.booleans()):
        attrs[DA.CUDBG_DEVICE_ATTRIBUTE_SM_EXCEPTION_MASK] = draw(st.integers(0, full))
    info = L.CUDBGDeviceInfo(QT.CUDBG_RESPONSE_TYPE_UPDATE if update else QT.CUDBG_RESPONSE_TYPE_FULL,
                             attribute_mask(attrs))
    sms = []
    sm_mask = (attrs[DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK]
               & attrs.get(DA.CUDBG_DEVICE_ATTRIBUTE_SM_UPDATE_MASK, full))
    for sm in bits(sm_mask):
        valid = draw(st.integers(0, 0x3F))  # a few warps keep examples small
        sm_attrs = {SA.CUDBG_SM_ATTRIBUTE_WARP_UPDATE_MASK: draw(u64)} if update else {}
        sm_info = L.CUDBGSMInfo(valid, draw(st.integers(0, 0x3F)) & valid, attribute_mask(sm_attrs))
        chosen = valid & sm_attrs.get(SA.CUDBG_SM_ATTRIBUTE_WARP_UPDATE_MASK, (1 << 64) - 1)
        sms.append(D.SMRecord(sm, sm_info, sm_attrs, tuple(draw(warps(w, update)) for w in bits(chosen))))
    return num_sms, D.DeviceInfoResponse(info, attrs, tuple(sms))


def expected_length(num_sms, resp):
    size = L.DEVICE_INFO.size + len(resp.attributes) * D.sm_mask_bytes(num_sms)
    for sm in resp.sms:
        size += L.SM_INFO.size + 8 * len(sm.attributes)
        for w in sm.warps:
            size += L.WARP_INFO.size + sum(D._type_size(D.WARP_ATTRIBUTE_TYPES[a]) for a in w.attributes)
            size += len(w.lanes) * (8 + (4 if WA.CUDBG_WARP_ATTRIBUTE_LANE_ATTRIBUTES in w.attributes else 0))
    return size


@settings(max_examples=40, deadline=None)
@given(responses())
def test_round_trip_and_length(case):
    num_sms, resp = case
    data = D.pack_device_info(resp, num_sms)
    assert len(data) == expected_length(num_sms, resp)
    sizes = D.device_info_sizes(num_sms, 64, 32)
    assert len(data) <= sizes.requiredBufferSize
    assert D.unpack_device_info(data, num_sms, sizes) == resp
    assert D.response_type(data) == resp.info.responseType


def _warp(index, valid=0b11, attrs=None, lane_flags=None):
    attrs = attrs or {}
    lanes = tuple(D.LaneRecord(ln, L.CUDBGLaneInfo(0x1000 + 16 * ln), lane_flags) for ln in bits(
        valid & attrs.get(WA.CUDBG_WARP_ATTRIBUTE_LANE_UPDATE_MASK, 0xFFFFFFFF)))
    return D.WarpRecord(index, L.CUDBGWarpInfo(5, L.CuDim3(index, 0, 0), L.CuDim3(32 * index, 0, 0), valid, valid,
                                              attribute_mask(attrs)), attrs, lanes)


def test_full_then_update_shapes():
    """FULL lists every valid SM/warp/lane; UPDATE lists only the flagged ones."""
    full = D.DeviceInfoResponse(
        L.CUDBGDeviceInfo(QT.CUDBG_RESPONSE_TYPE_FULL, attribute_mask([DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK])),
        {DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK: 0b101},
        (D.SMRecord(0, L.CUDBGSMInfo(0b11, 0, 0), {}, (_warp(0), _warp(1))),
         D.SMRecord(2, L.CUDBGSMInfo(0b1, 0, 0), {}, (_warp(0),))))
    data = D.pack_device_info(full, 3)
    assert len(data) == 8 + 1 + 2 * 20 + 3 * (44 + 2 * 8)  # 2 SMs, 3 warps, 2 lanes each
    update_attrs = {DA.CUDBG_DEVICE_ATTRIBUTE_SM_UPDATE_MASK: 0b001, DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK: 0b101}
    warp_attrs = {WA.CUDBG_WARP_ATTRIBUTE_LANE_UPDATE_MASK: 0b10}
    update = D.DeviceInfoResponse(
        L.CUDBGDeviceInfo(QT.CUDBG_RESPONSE_TYPE_UPDATE, attribute_mask(update_attrs)), update_attrs,
        (D.SMRecord(0, L.CUDBGSMInfo(0b11, 0b10, 1), {SA.CUDBG_SM_ATTRIBUTE_WARP_UPDATE_MASK: 0b10},
                    (_warp(1, attrs=warp_attrs),)),))
    data = D.pack_device_info(update, 3)
    assert len(data) == 8 + 2 * 1 + (20 + 8) + (44 + 4) + 8
    back = D.unpack_device_info(data, 3)
    assert [w.warp for w in back.sms[0].warps] == [1]
    assert [ln.lane for ln in back.sms[0].warps[0].lanes] == [1]
    assert back.sms[0].warps[0].lanes[0].info.virtualPC == 0x1010


def test_reader_follows_reported_sizes_for_appended_fields_and_unknown_attributes():
    """A newer producer appends 4 bytes to CUDBGWarpInfo and defines warp attribute 9 (2 bytes)."""
    attrs = {WA.CUDBG_WARP_ATTRIBUTE_ERRORPC: 0xDEAD}
    warp = _warp(0, valid=0b1, attrs=attrs)
    info = L.CUDBGWarpInfo(**{**warp.info.__dict__, "warpAttributeFlags": attribute_mask([3, 9])})
    wire = (L.DEVICE_INFO.pack(L.CUDBGDeviceInfo(QT.CUDBG_RESPONSE_TYPE_FULL, 0b10)) + b"\x01"
            + L.SM_INFO.pack(L.CUDBGSMInfo(1, 0, 0))
            + L.WARP_INFO.pack(info) + b"NEW!" + (0xDEAD).to_bytes(8, "little") + b"\x07\x00"
            + L.LANE_INFO.pack(L.CUDBGLaneInfo(0x1000)))
    sizes = D.device_info_sizes(1, 64, 32)
    warp_sizes = list(sizes.warpInfoAttributeSizes)
    warp_sizes[9] = 2
    grown = L.CUDBGDeviceInfoSizes(**{**sizes.__dict__, "warpInfoSize": 48,
                                      "warpInfoAttributeSizes": tuple(warp_sizes)})
    back = D.unpack_device_info(wire, 1, grown)
    got = back.sms[0].warps[0]
    assert got.attributes == {WA.CUDBG_WARP_ATTRIBUTE_ERRORPC: 0xDEAD, 9: b"\x07\x00"}
    assert got.lanes[0].info.virtualPC == 0x1000
    with pytest.raises(L.LayoutError, match="trailing bytes"):
        D.unpack_device_info(wire, 1)  # our sizes: the appended bytes are not skipped


def test_sizes_describe_every_attribute():
    sizes = D.device_info_sizes(132, 64, 32)
    assert sizes.deviceInfoAttributeSizes[:4] == (17, 17, 17, 0)
    assert sizes.smInfoAttributeSizes[:2] == (8, 0)
    assert sizes.warpInfoAttributeSizes[:9] == (4, 0, 4, 8, 12, 12, 12, 4, 0)
    assert (sizes.deviceInfoSize, sizes.smInfoSize, sizes.warpInfoSize, sizes.laneInfoSize) == (8, 20, 44, 8)
    assert L.DEVICE_INFO_SIZES.unpack(L.DEVICE_INFO_SIZES.pack(sizes)) == sizes
    with pytest.raises(ValueError, match="number of SMs must be positive"):
        D.device_info_sizes(0, 64, 32)
    with pytest.raises(ValueError, match="warps per SM"):
        D.device_info_sizes(4, 65, 32)


def test_inconsistent_trees_are_rejected():
    active = {DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK: 0b1}
    info = L.CUDBGDeviceInfo(QT.CUDBG_RESPONSE_TYPE_FULL, 0b10)
    with pytest.raises(L.LayoutError, match=r"SMs: records for \[\] but the masks select \[0\]"):
        D.pack_device_info(D.DeviceInfoResponse(info, active, ()), 2)
    with pytest.raises(L.LayoutError, match="attribute flags 0x1 do not match"):
        D.pack_device_info(D.DeviceInfoResponse(L.CUDBGDeviceInfo(QT.CUDBG_RESPONSE_TYPE_FULL, 1), active, ()), 2)
    with pytest.raises(L.LayoutError, match="always returned"):
        D.pack_device_info(D.DeviceInfoResponse(L.CUDBGDeviceInfo(QT.CUDBG_RESPONSE_TYPE_FULL, 0), {}, ()), 2)
    with pytest.raises(L.LayoutError, match="not a mask of 2 SMs"):
        D.pack_device_info(D.DeviceInfoResponse(info, {DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK: 0b100}, ()), 2)
    bad_lane = _warp(0, valid=0b1, attrs={WA.CUDBG_WARP_ATTRIBUTE_LANE_ATTRIBUTES: None})
    sm = D.SMRecord(0, L.CUDBGSMInfo(1, 0, 0), {}, (bad_lane,))
    with pytest.raises(L.LayoutError, match="laneAttributeFlags must be present"):
        D.pack_device_info(D.DeviceInfoResponse(info, active, (sm,)), 2)


def test_truncated_buffer_names_the_record():
    resp = D.DeviceInfoResponse(L.CUDBGDeviceInfo(QT.CUDBG_RESPONSE_TYPE_FULL, 0b10),
                                {DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK: 1},
                                (D.SMRecord(0, L.CUDBGSMInfo(1, 0, 0), {}, (_warp(0),)),))
    data = D.pack_device_info(resp, 1)
    with pytest.raises(L.LayoutError, match="inside SM 0 warp 0 lane 1"):
        D.unpack_device_info(data[:-1], 1)
