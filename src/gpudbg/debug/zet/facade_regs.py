"""Register sets: zetDebugGetRegisterSetProperties, zetDebugGetThreadRegisterSetProperties,
zetDebugReadRegisters, zetDebugWriteRegisters.

A zet thread is a warp and its SIMD channels are the warp's lanes (see
mapping), so a zet register is a vector with one element per lane, as an
Intel GRF register holds one element per channel. The register file is the
cuda-gdb R view of Session.register_map: GRF register n is R<n>, 32 bits per
lane, lane i's value at bytes [4i, 4i+4) (a 64-bit PTX register spans two
consecutive R registers, low half first; narrower ones are zero-extended on
read and truncated on write). Lanes that are not valid in the warp read as 0
and writes to them are dropped: those channels have no thread behind them.

The set types are device-specific (the spec types ``type`` as uint32_t);
their numbers follow Intel's where a counterpart exists:

- GRF  (1): R registers, read/write; count = the running function's R count
  (the device-level query answers the device's per-thread maximum).
- FLAG (3): PTX predicates, read/write, one bit per lane in a 32-bit
  register, as Intel's flag registers hold one bit per channel.
- CE   (4): channel enable = the warp's active-lane mask, read-only.
- PC   (6): the warp's 64-bit code address (where Intel keeps the IP, in the
  control registers), read-only.
"""
from __future__ import annotations

import enum
import struct
from typing import Any

import numpy as np

from gpudbg.debug.zet.enums import zet_debug_regset_flag_t
from gpudbg.debug.zet.facade_core import (
    R,
    ZetError,
    check_handle,
    first_valid_lane,
    single_stopped_thread,
    zet_api,
    zet_debug_session_handle_t,
)
from gpudbg.debug.zet.mapping import WarpSlot
from gpudbg.debug.zet.structs import UINT32_MAX, ze_device_thread_t, zet_debug_regset_properties_t


class zet_debug_regset_type_gpudbg_t(enum.IntEnum):
    """The simulator's register set types (``zet_debug_regset_properties_t.type``)."""

    ZET_DEBUG_REGSET_TYPE_INVALID_GPUDBG = 0
    ZET_DEBUG_REGSET_TYPE_GRF_GPUDBG = 1
    ZET_DEBUG_REGSET_TYPE_FLAG_GPUDBG = 3
    ZET_DEBUG_REGSET_TYPE_CE_GPUDBG = 4
    ZET_DEBUG_REGSET_TYPE_PC_GPUDBG = 6


RT = zet_debug_regset_type_gpudbg_t
RW = zet_debug_regset_flag_t.ZET_DEBUG_REGSET_FLAG_READABLE | zet_debug_regset_flag_t.ZET_DEBUG_REGSET_FLAG_WRITEABLE
RO = zet_debug_regset_flag_t.ZET_DEBUG_REGSET_FLAG_READABLE
REGSET_VERSION = 0


def _props(type_: RT, flags: zet_debug_regset_flag_t, count: int, bits: int) -> zet_debug_regset_properties_t:
    return zet_debug_regset_properties_t(type=int(type_), version=REGSET_VERSION, generalFlags=flags,
                                         count=count, bitSize=bits, byteSize=-(-bits // 8))


def _regsets(lanes: int, grf: int, flags: int) -> list[zet_debug_regset_properties_t]:
    if lanes > 32:
        raise ZetError(R.ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                       f"FLAG and CE registers hold 32 lanes; this device has {lanes}")
    return [_props(RT.ZET_DEBUG_REGSET_TYPE_GRF_GPUDBG, RW, grf, 32 * lanes),
            _props(RT.ZET_DEBUG_REGSET_TYPE_FLAG_GPUDBG, RW, flags, 32),
            _props(RT.ZET_DEBUG_REGSET_TYPE_CE_GPUDBG, RO, 1, 32),
            _props(RT.ZET_DEBUG_REGSET_TYPE_PC_GPUDBG, RO, 1, 64)]


def _count_out(pCount: Any, sets: list[zet_debug_regset_properties_t]) -> tuple:
    if isinstance(pCount, bool) or not isinstance(pCount, int) or not 0 <= pCount <= UINT32_MAX:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT, f"*pCount must be a uint32_t, got {pCount!r}")
    if pCount == 0:
        return (len(sets), [])
    n = min(pCount, len(sets))
    return (n, sets[:n])


def _device_props(hDevice: Any) -> Any:
    """DeviceProperties of ordinal ``hDevice``: from the zet session attached to it if
    any, else from an unattached Session over the process's simulated devices."""
    from gpudbg.debug.zet.facade_events import _attached, _registry_lock

    if hDevice is None:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "hDevice is null")
    if isinstance(hDevice, bool) or not isinstance(hDevice, int) or hDevice < 0:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
                       f"hDevice must be a device ordinal (int >= 0), got {hDevice!r}")
    with _registry_lock:
        h = _attached.get(hDevice)
    if h is not None:
        return h.session.device(hDevice)
    from gpudbg.debug.session import Session
    from gpudbg.driver.engine import get_engine
    from gpudbg.sim.debug_backend import SimBackend

    # A Session over the simulator backend that is never attached: a pure query of the devices.
    get_engine().ensure_init()
    devices = Session(SimBackend(lambda: get_engine().devices)).devices()
    if hDevice >= len(devices):
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
                       f"hDevice {hDevice} does not exist: the process has {len(devices)} device(s)")
    return devices[hDevice]


@zet_api("zetDebugGetRegisterSetProperties")
def zetDebugGetRegisterSetProperties(hDevice: int, pCount: int = 0, pRegisterSetProperties: Any = None) -> tuple:
    """The device's register sets; GRF and FLAG counts are the per-thread maximum.
    ``pCount`` 0 asks for the number; otherwise at most that many sets come back."""
    props = _device_props(hDevice)
    return _count_out(pCount, _regsets(props.num_lanes, props.num_registers, props.num_predicates))


def _thread_regs(h: zet_debug_session_handle_t, slot: WarpSlot) -> tuple[int, list, list]:
    """(first valid lane, R-view map, register sets) of a stopped warp's running function."""
    ln = first_valid_lane(h.session, h.device, slot)
    rmap = list(h.session.register_map(h.device, slot.sm, slot.warp, ln))
    grf = max((int(first) + int(words) for _, _, kind, first, words in rmap if kind == "R"), default=0)
    flags = max((int(first) + 1 for _, _, kind, first, _ in rmap if kind == "P"), default=0)
    return ln, rmap, _regsets(h.mapping.lanes, grf, flags)


@zet_api("zetDebugGetThreadRegisterSetProperties")
def zetDebugGetThreadRegisterSetProperties(hDebug: zet_debug_session_handle_t, thread: ze_device_thread_t,
                                           pCount: int = 0, pRegisterSetProperties: Any = None) -> tuple:
    """The register sets of one stopped thread, counted from the function it is running."""
    h = check_handle(hDebug)
    slot = single_stopped_thread(h, thread, "zetDebugGetThreadRegisterSetProperties")
    return _count_out(pCount, _thread_regs(h, slot)[2])


def _regset(sets: list, type_: Any, start: Any, count: Any) -> zet_debug_regset_properties_t:
    for name, value in (("type", type_), ("start", start), ("count", count)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= UINT32_MAX:
            raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT, f"{name} must be a uint32_t, got {value!r}")
    found = next((p for p in sets if p.type == type_), None)
    if found is None:
        known = ", ".join(f"{RT(p.type).name}={p.type}" for p in sets)
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT, f"register set type {type_} does not exist ({known})")
    if start >= found.count or start + count > found.count:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
                       f"{RT(found.type).name} has {found.count} registers: start {start} must be below it "
                       f"and start+count {start + count} at most it")
    return found


def _valid_lanes(h: zet_debug_session_handle_t, slot: WarpSlot) -> list[int]:
    mask = int(h.session.warp(h.device, slot.sm, slot.warp).valid_mask)
    return [ln for ln in range(h.mapping.lanes) if mask >> ln & 1]


@zet_api("zetDebugReadRegisters")
def zetDebugReadRegisters(hDebug: zet_debug_session_handle_t, thread: ze_device_thread_t, type: int,
                          start: int, count: int, pRegisterValues: Any = None) -> tuple:
    """``count`` registers of set ``type`` from ``start``, each ``byteSize`` bytes (layout in
    the module docstring). Returns the bytes; a writable ``pRegisterValues`` is filled too."""
    h = check_handle(hDebug)
    slot = single_stopped_thread(h, thread, "zetDebugReadRegisters")
    _, _, sets = _thread_regs(h, slot)
    rs = _regset(sets, type, start, count)
    s, dev, lanes = h.session, h.device, h.mapping.lanes
    valid = _valid_lanes(h, slot)
    out = bytearray()
    if rs.type == RT.ZET_DEBUG_REGSET_TYPE_GRF_GPUDBG:
        for n in range(start, start + count):
            vals = [0] * lanes
            for ln in valid:
                vals[ln] = int(s.read_register_r(dev, slot.sm, slot.warp, ln, n)) & 0xFFFFFFFF
            out += struct.pack(f"<{lanes}I", *vals)
    elif rs.type == RT.ZET_DEBUG_REGSET_TYPE_FLAG_GPUDBG:
        for n in range(start, start + count):
            bits = sum(1 << ln for ln in valid if int(s.read_predicate(dev, slot.sm, slot.warp, ln, n)))
            out += struct.pack("<I", bits)
    elif rs.type == RT.ZET_DEBUG_REGSET_TYPE_CE_GPUDBG:
        out += struct.pack("<I", int(s.warp(dev, slot.sm, slot.warp).active_mask)) * count
    else:
        out += struct.pack("<Q", int(s.warp(dev, slot.sm, slot.warp).pc)) * count
    data = bytes(out)
    if pRegisterValues is not None:
        try:
            view = memoryview(pRegisterValues).cast("B")
        except TypeError:
            raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT, "pRegisterValues must be a writable bytes-like "
                           f"object, got {pRegisterValues.__class__.__name__}") from None
        if view.readonly or len(view) < len(data):
            raise ZetError(R.ZE_RESULT_ERROR_INVALID_SIZE,
                           f"pRegisterValues must be writable and hold {len(data)} bytes, has {len(view)}")
        view[:len(data)] = data
    return (data,)


@zet_api("zetDebugWriteRegisters")
def zetDebugWriteRegisters(hDebug: zet_debug_session_handle_t, thread: ze_device_thread_t, type: int,
                           start: int, count: int, pRegisterValues: Any) -> tuple:
    """Write ``count`` registers of set ``type`` from ``start``; CE and PC are read-only."""
    h = check_handle(hDebug)
    slot = single_stopped_thread(h, thread, "zetDebugWriteRegisters")
    _, rmap, sets = _thread_regs(h, slot)
    rs = _regset(sets, type, start, count)
    if not rs.generalFlags & zet_debug_regset_flag_t.ZET_DEBUG_REGSET_FLAG_WRITEABLE:
        raise ZetError(R.ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, f"{RT(rs.type).name} is read-only")
    if pRegisterValues is None:
        if count:
            raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_POINTER, "pRegisterValues is null")
        return ()
    try:
        data = bytes(memoryview(pRegisterValues).cast("B"))
    except TypeError:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT, "pRegisterValues must be a bytes-like object, "
                       f"got {pRegisterValues.__class__.__name__}") from None
    if len(data) < count * rs.byteSize:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_SIZE,
                       f"{count} {RT(rs.type).name} registers need {count * rs.byteSize} bytes, got {len(data)}")
    valid, lanes = _valid_lanes(h, slot), h.mapping.lanes
    for i, n in enumerate(range(start, start + count)):
        chunk = data[i * rs.byteSize:(i + 1) * rs.byteSize]
        if rs.type == RT.ZET_DEBUG_REGSET_TYPE_GRF_GPUDBG:
            vals = struct.unpack(f"<{lanes}I", chunk)
            for ln in valid:
                _write_r(h, slot, ln, rmap, n, vals[ln])
        else:
            bits = struct.unpack("<I", chunk)[0]
            entry = next((e for e in rmap if e[2] == "P" and int(e[3]) == n), None)
            if entry is None:
                raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT, f"no predicate P{n} in the running function")
            for ln in valid:
                h.session.write_register(h.device, slot.sm, slot.warp, ln, entry[0], np.bool_(bits >> ln & 1))
    return ()


def _write_r(h: zet_debug_session_handle_t, slot: WarpSlot, ln: int, rmap: list, n: int, value: int) -> None:
    """Set R<n> of one lane: through the PTX register that R<n> is (part of)."""
    entry = next((e for e in rmap if e[2] == "R" and int(e[3]) <= n < int(e[3]) + int(e[4])), None)
    if entry is None:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT, f"R{n} is not a register of the running function")
    name, dtype, _, first, words = entry
    dt = np.dtype(dtype)
    s, dev = h.session, h.device
    if int(words) == 1:
        raw = np.array([value & ((1 << (8 * dt.itemsize)) - 1)], dtype=f"<u{dt.itemsize}")
    else:
        halves = [int(s.read_register_r(dev, slot.sm, slot.warp, ln, int(first) + k)) & 0xFFFFFFFF
                  for k in range(int(words))]
        halves[n - int(first)] = value
        raw = np.array(halves, dtype="<u4")
    s.write_register(dev, slot.sm, slot.warp, ln, name, raw.view(dt.newbyteorder("<"))[0])
