"""The variable-length getDeviceInfo buffer of seed 000 (batched device info).

Wire shape, as the header's comments lay it out (all little-endian, packed):

    CUDBGDeviceInfo                      responseType, deviceAttributeFlags
    device attributes                    one per set flag bit, lowest bit first
    for each SM in SM_ACTIVE_MASK & SM_UPDATE_MASK, ascending:
        CUDBGSMInfo + SM attributes
        for each warp in warpValidMask & WARP_UPDATE_MASK, ascending:
            CUDBGWarpInfo + warp attributes
            for each lane in validLanes & LANE_UPDATE_MASK, ascending:
                CUDBGLaneInfo
                [uint32_t laneAttributeFlags + lane attributes]   iff the warp
                                                 has CUDBG_WARP_ATTRIBUTE_LANE_ATTRIBUTES

Records carry no index: position follows from the masks ("only valid &
updated SMs/warps/lanes are included"), so the tree types here keep the
index beside each record and ``pack`` checks it against the masks. An absent
update mask means "all updated", which is what a FULL response omits; an
UPDATE response carries the masks so only changed units appear.

The reader is driven by CUDBGDeviceInfoSizes, not by our struct sizes: the
``*InfoSize`` values step over fields a newer producer appends and the
attribute size tables skip attributes this module does not know (kept as
raw bytes under their bit number). Decisions the header leaves open: SM
bitmasks are ceil(numSMs / 8) bytes, bit i of byte i // 8 (little-endian,
the same bits as uint64_t words); per-lane attribute flags are a uint32_t.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from gpudbg.debug.cudbg.enums import (
    CUDBGDeviceInfoAttribute_t,
    CUDBGDeviceInfoQueryType_t,
    CUDBGException_t,
    CUDBGSMInfoAttribute_t,
    CUDBGWarpInfoAttribute_t,
    attribute_mask,
    attributes_in,
)
from gpudbg.debug.cudbg.layouts import (
    DEVICE_INFO,
    DIM3,
    LANE_INFO,
    N_ATTR_SLOTS,
    SM_INFO,
    U32,
    U64,
    WARP_INFO,
    CUDBGDeviceInfo,
    CUDBGDeviceInfoSizes,
    CUDBGLaneInfo,
    CUDBGSMInfo,
    CUDBGWarpInfo,
    E,
    LayoutError,
)

DA = CUDBGDeviceInfoAttribute_t
SA = CUDBGSMInfoAttribute_t
WA = CUDBGWarpInfoAttribute_t
LANE_FLAGS_SIZE = 4

# Value type of each warp attribute; LANE_ATTRIBUTES is a pure flag (no field).
WARP_ATTRIBUTE_TYPES: dict[CUDBGWarpInfoAttribute_t, Any] = {
    WA.CUDBG_WARP_ATTRIBUTE_LANE_UPDATE_MASK: U32,
    WA.CUDBG_WARP_ATTRIBUTE_LANE_ATTRIBUTES: None,
    WA.CUDBG_WARP_ATTRIBUTE_EXCEPTION: E(CUDBGException_t),
    WA.CUDBG_WARP_ATTRIBUTE_ERRORPC: U64,
    WA.CUDBG_WARP_ATTRIBUTE_CLUSTERIDX: DIM3,
    WA.CUDBG_WARP_ATTRIBUTE_CLUSTERDIM: DIM3,
    WA.CUDBG_WARP_ATTRIBUTE_CLUSTER_EXCEPTION_TARGET_BLOCK_IDX: DIM3,
    WA.CUDBG_WARP_ATTRIBUTE_IN_SYSCALL_LANES: U32,
}
SM_ATTRIBUTE_TYPES: dict[CUDBGSMInfoAttribute_t, Any] = {SA.CUDBG_SM_ATTRIBUTE_WARP_UPDATE_MASK: U64}


def sm_mask_bytes(num_sms: int) -> int:
    """Size of a device-level SM bitmask: numSMs bits rounded up to whole bytes."""
    if not 0 < num_sms <= 0xFFFF:
        raise ValueError(f"number of SMs must be positive, got {num_sms}")
    return (num_sms + 7) // 8


def _type_size(ftype: Any) -> int:
    return 0 if ftype is None else struct.calcsize("<" + ftype.fmt)


def device_info_sizes(num_sms: int, warps_per_sm: int, lanes_per_warp: int) -> CUDBGDeviceInfoSizes:
    """What getDeviceInfoSizes reports for a device of this shape.

    ``requiredBufferSize`` is the largest FULL response: every SM, warp and
    lane present with every attribute and lane attribute flags."""
    if not 0 < warps_per_sm <= 64 or not 0 < lanes_per_warp <= 32:
        raise ValueError(f"warps per SM must be 1..64 and lanes per warp 1..32, "
                         f"got {warps_per_sm} and {lanes_per_warp}")
    dev_attr = [0] * N_ATTR_SLOTS
    for attr in DA:
        if attr is not DA.CUDBG_DEVICE_ATTRIBUTE_COUNT:
            dev_attr[attr] = sm_mask_bytes(num_sms)
    sm_attr = [0] * N_ATTR_SLOTS
    for attr, ftype in SM_ATTRIBUTE_TYPES.items():
        sm_attr[attr] = _type_size(ftype)
    warp_attr = [0] * N_ATTR_SLOTS
    for attr, ftype in WARP_ATTRIBUTE_TYPES.items():
        warp_attr[attr] = _type_size(ftype)
    lane_max = LANE_INFO.size + LANE_FLAGS_SIZE
    warp_max = WARP_INFO.size + sum(warp_attr) + lanes_per_warp * lane_max
    sm_max = SM_INFO.size + sum(sm_attr) + warps_per_sm * warp_max
    required = DEVICE_INFO.size + sum(dev_attr) + num_sms * sm_max
    return CUDBGDeviceInfoSizes(
        requiredBufferSize=required,
        deviceInfoSize=DEVICE_INFO.size, deviceInfoAttributeSizes=tuple(dev_attr),
        smInfoSize=SM_INFO.size, smInfoAttributeSizes=tuple(sm_attr),
        warpInfoSize=WARP_INFO.size, warpInfoAttributeSizes=tuple(warp_attr),
        laneInfoSize=LANE_INFO.size, laneInfoAttributeSizes=(0,) * N_ATTR_SLOTS)


# ---------------------------------------------------------------------- the tree

@dataclass(slots=True)
class LaneRecord:
    """One lane; ``laneAttributeFlags`` is None when its warp has no lane attributes."""

    lane: int
    info: CUDBGLaneInfo
    laneAttributeFlags: int | None = None
    attributes: dict[int, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class WarpRecord:
    """One warp; ``attributes`` maps each flagged attribute to its value (None for LANE_ATTRIBUTES)."""

    warp: int
    info: CUDBGWarpInfo
    attributes: dict[int, Any] = field(default_factory=dict)
    lanes: tuple[LaneRecord, ...] = ()


@dataclass(frozen=True)
class SMRecord:
    sm: int
    info: CUDBGSMInfo
    attributes: dict[int, Any] = field(default_factory=dict)
    warps: tuple[WarpRecord, ...] = ()


@dataclass(frozen=True)
class DeviceInfoResponse:
    """A whole getDeviceInfo answer; device attribute values are SM bitmasks as ints."""

    info: CUDBGDeviceInfo
    attributes: dict[int, Any]
    sms: tuple[SMRecord, ...] = ()


def _members(mask: int, limit: int) -> list[int]:
    return [i for i in range(limit) if mask >> i & 1]


def _check_flags(where: str, flags: int, attributes: dict[int, Any]) -> None:
    if attribute_mask(attributes) != flags:
        raise LayoutError(f"{where}: attribute flags 0x{flags:x} do not match the attributes given "
                          f"{sorted(int(a) for a in attributes)}")


def _check_indices(where: str, got: list[int], expected: list[int]) -> None:
    if got != expected:
        raise LayoutError(f"{where}: records for {got} but the masks select {expected}")


def _pack_value(where: str, ftype: Any, value: Any) -> bytes:
    if ftype is None:
        if value is not None:
            raise LayoutError(f"{where}: this attribute has no field, its value must be None")
        return b""
    return struct.pack("<" + ftype.fmt, *ftype.flatten(value, where))


def _pack_attributes(where: str, attributes: dict[int, Any], types: dict[Any, Any]) -> bytes:
    out = bytearray()
    for attr in sorted(attributes, key=int):
        value = attributes[attr]
        if attr in types:
            out += _pack_value(f"{where}[{attr!r}]", types[attr], value)
        elif isinstance(value, bytes):
            out += value  # an attribute this module does not know, carried verbatim
        else:
            raise LayoutError(f"{where}: unknown attribute {int(attr)} needs a raw bytes value")
    return bytes(out)


def pack_device_info(response: DeviceInfoResponse, num_sms: int) -> bytes:
    """The getDeviceInfo buffer for ``response`` on a device with ``num_sms`` SMs."""
    mask_bytes = sm_mask_bytes(num_sms)
    info, attrs = response.info, response.attributes
    _check_flags("CUDBGDeviceInfo", info.deviceAttributeFlags, attrs)
    if DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK not in attrs:
        raise LayoutError("CUDBGDeviceInfo: CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK is always returned")
    out = bytearray(DEVICE_INFO.pack(info))
    for attr in sorted(attrs, key=int):
        value = attrs[attr]
        if attr in DA._value2member_map_ and attr != DA.CUDBG_DEVICE_ATTRIBUTE_COUNT:
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << num_sms:
                raise LayoutError(f"device attribute {DA(attr).name}: {value!r} is not a mask of {num_sms} SMs")
            out += value.to_bytes(mask_bytes, "little")
        elif isinstance(value, bytes):
            out += value
        else:
            raise LayoutError(f"unknown device attribute {int(attr)} needs a raw bytes value")
    active = attrs[DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK]
    updated = attrs.get(DA.CUDBG_DEVICE_ATTRIBUTE_SM_UPDATE_MASK, (1 << num_sms) - 1)
    _check_indices("SMs", [s.sm for s in response.sms], _members(active & updated, num_sms))
    for sm in response.sms:
        out += _pack_sm(sm)
    return bytes(out)


def _pack_sm(sm: SMRecord) -> bytes:
    where = f"SM {sm.sm}"
    _check_flags(where, sm.info.smAttributeFlags, sm.attributes)
    out = bytearray(SM_INFO.pack(sm.info))
    out += _pack_attributes(where, sm.attributes, SM_ATTRIBUTE_TYPES)
    updated = sm.attributes.get(SA.CUDBG_SM_ATTRIBUTE_WARP_UPDATE_MASK, (1 << 64) - 1)
    _check_indices(f"{where} warps", [w.warp for w in sm.warps], _members(sm.info.warpValidMask & updated, 64))
    for warp in sm.warps:
        out += _pack_warp(f"{where} warp {warp.warp}", warp)
    return bytes(out)


def _pack_warp(where: str, warp: WarpRecord) -> bytes:
    _check_flags(where, warp.info.warpAttributeFlags, warp.attributes)
    out = bytearray(WARP_INFO.pack(warp.info))
    out += _pack_attributes(where, warp.attributes, WARP_ATTRIBUTE_TYPES)
    updated = warp.attributes.get(WA.CUDBG_WARP_ATTRIBUTE_LANE_UPDATE_MASK, (1 << 32) - 1)
    _check_indices(f"{where} lanes", [ln.lane for ln in warp.lanes], _members(warp.info.validLanes & updated, 32))
    with_flags = WA.CUDBG_WARP_ATTRIBUTE_LANE_ATTRIBUTES in warp.attributes
    if not with_flags and LANE_INFO.size == 8 and all(ln.laneAttributeFlags is None and not ln.attributes
                                                      for ln in warp.lanes):
        # the common case, a bare virtualPC per lane: one struct call for the warp
        try:
            out += struct.pack(f"<{len(warp.lanes)}Q", *(ln.info.virtualPC for ln in warp.lanes))
            return bytes(out)
        except struct.error:
            pass   # a value out of range: let the per-lane packer name it
    for lane in warp.lanes:
        out += LANE_INFO.pack(lane.info)
        if with_flags != (lane.laneAttributeFlags is not None):
            raise LayoutError(f"{where} lane {lane.lane}: laneAttributeFlags must be "
                              f"{'present' if with_flags else 'None'} (warp LANE_ATTRIBUTES flag)")
        if lane.laneAttributeFlags is not None:
            _check_flags(f"{where} lane {lane.lane}", lane.laneAttributeFlags, lane.attributes)
            out += U32.flatten(lane.laneAttributeFlags, f"{where} lane {lane.lane}")[0].to_bytes(4, "little")
            out += _pack_attributes(f"{where} lane {lane.lane}", lane.attributes, {})
        elif lane.attributes:
            raise LayoutError(f"{where} lane {lane.lane}: attributes without laneAttributeFlags")
    return bytes(out)


# ---------------------------------------------------------------------- unpacking

class _Reader:
    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self.data = bytes(data)
        self.pos = 0

    def take(self, size: int, what: str) -> bytes:
        if self.pos + size > len(self.data):
            raise LayoutError(f"device info buffer ends at {len(self.data)} bytes inside {what} "
                              f"(needs {size} bytes at offset {self.pos})")
        chunk = self.data[self.pos:self.pos + size]
        self.pos += size
        return chunk

    def record(self, layout: Any, wire_size: int, what: str) -> Any:
        """A struct that a newer producer may have grown: read ``wire_size``, decode ours."""
        if wire_size < layout.size:
            raise LayoutError(f"{what}: reported size {wire_size} is smaller than {layout.cname} ({layout.size})")
        return layout.unpack(self.take(wire_size, what))


def _unpack_attributes(reader: _Reader, flags: int, sizes: tuple[int, ...], types: dict[Any, Any],
                       enum_cls: Any, what: str) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for bit in attributes_in(flags):
        size = sizes[bit]
        raw = reader.take(size, f"{what} attribute {bit}")
        if bit in enum_cls._value2member_map_ and enum_cls(bit) in types:
            ftype = types[enum_cls(bit)]
            if size != _type_size(ftype):
                raise LayoutError(f"{what}: attribute {enum_cls(bit).name} reported as {size} bytes, "
                                  f"expected {_type_size(ftype)}")
            out[enum_cls(bit)] = None if ftype is None else ftype.build(iter(struct.unpack("<" + ftype.fmt, raw)), what)
        else:
            out[bit] = raw
    return out


def unpack_device_info(data: bytes | bytearray | memoryview, num_sms: int,
                       sizes: CUDBGDeviceInfoSizes | None = None) -> DeviceInfoResponse:
    """Decode a getDeviceInfo buffer of exactly its ``dataLength`` bytes."""
    if sizes is None:
        sizes = device_info_sizes(num_sms, 64, 32)
    reader = _Reader(data)
    info = reader.record(DEVICE_INFO, sizes.deviceInfoSize, "CUDBGDeviceInfo")
    attrs: dict[int, Any] = {}
    for bit in attributes_in(info.deviceAttributeFlags):
        raw = reader.take(sizes.deviceInfoAttributeSizes[bit], f"device attribute {bit}")
        known = bit in DA._value2member_map_ and bit != DA.CUDBG_DEVICE_ATTRIBUTE_COUNT
        attrs[DA(bit) if known else bit] = int.from_bytes(raw, "little") if known else raw
    if DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK not in attrs:
        raise LayoutError("CUDBGDeviceInfo: the SM active mask is missing")
    active = attrs[DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK]
    updated = attrs.get(DA.CUDBG_DEVICE_ATTRIBUTE_SM_UPDATE_MASK, (1 << num_sms) - 1)
    if active >> num_sms:
        raise LayoutError(f"SM active mask 0x{active:x} names SMs beyond the device's {num_sms}")
    sms = []
    for sm in _members(active & updated, num_sms):
        sms.append(_unpack_sm(reader, sm, sizes))
    if reader.pos != len(reader.data):
        raise LayoutError(f"device info buffer has {len(reader.data) - reader.pos} trailing bytes "
                          f"after the last record (offset {reader.pos})")
    return DeviceInfoResponse(info, attrs, tuple(sms))


def _unpack_sm(reader: _Reader, sm: int, sizes: CUDBGDeviceInfoSizes) -> SMRecord:
    what = f"SM {sm}"
    info = reader.record(SM_INFO, sizes.smInfoSize, what)
    attrs = _unpack_attributes(reader, info.smAttributeFlags, sizes.smInfoAttributeSizes,
                               SM_ATTRIBUTE_TYPES, SA, what)
    updated = attrs.get(SA.CUDBG_SM_ATTRIBUTE_WARP_UPDATE_MASK, (1 << 64) - 1)
    warps = tuple(_unpack_warp(reader, f"{what} warp {wp}", wp, sizes)
                  for wp in _members(info.warpValidMask & updated, 64))
    return SMRecord(sm, info, attrs, warps)


def _unpack_warp(reader: _Reader, what: str, wp: int, sizes: CUDBGDeviceInfoSizes) -> WarpRecord:
    info = reader.record(WARP_INFO, sizes.warpInfoSize, what)
    attrs = _unpack_attributes(reader, info.warpAttributeFlags, sizes.warpInfoAttributeSizes,
                               WARP_ATTRIBUTE_TYPES, WA, what)
    updated = attrs.get(WA.CUDBG_WARP_ATTRIBUTE_LANE_UPDATE_MASK, (1 << 32) - 1)
    with_flags = WA.CUDBG_WARP_ATTRIBUTE_LANE_ATTRIBUTES in attrs
    lanes = []
    for ln in _members(info.validLanes & updated, 32):
        lane_info = reader.record(LANE_INFO, sizes.laneInfoSize, f"{what} lane {ln}")
        if not with_flags:
            lanes.append(LaneRecord(ln, lane_info))
            continue
        flags = int.from_bytes(reader.take(LANE_FLAGS_SIZE, f"{what} lane {ln} flags"), "little")
        lane_attrs = _unpack_attributes(reader, flags, sizes.laneInfoAttributeSizes, {},
                                        _NoLaneAttributes, f"{what} lane {ln}")
        lanes.append(LaneRecord(ln, lane_info, flags, lane_attrs))
    return WarpRecord(wp, info, attrs, tuple(lanes))


class _NoLaneAttributes:
    """CUDBGLaneInfoAttribute_t defines no attribute yet (only COUNT = 0)."""

    _value2member_map_: dict[int, Any] = {}


def response_type(data: bytes | bytearray | memoryview) -> CUDBGDeviceInfoQueryType_t:
    """FULL or UPDATE, read from the first field without decoding the rest."""
    return DEVICE_INFO.unpack(data).responseType

