"""Seed 002 §2.13: virtual memory management (the cuMem* twins), plus the
structs and enums it shares with the stream-ordered allocator (§2.14).

The annotated kinds check the arguments and struct fields (_args.py); each
function validates what the structs mean and makes one call into
gpudbg.driver.vmm, where reservations, handles and mappings live. Shareable
handles are implemented with in-process semantics: an exported POSIX "file
descriptor" is an integer that this process can import again (the same
physical memory); another process cannot, the simulator being one process.
Win32 handle types do not exist on this platform.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Sequence

from gpudbg.driver import vmm as _vmm
from gpudbg.driver.engine import get_engine
from gpudbg.runtime.api._args import DevicePtr, Int, Seq, Size, Struct, UInt64
from gpudbg.runtime.api._base import _api, _ctx, _int
from gpudbg.runtime.errors import McError, mcError_t

INVALID = mcError_t.mcErrorInvalidValue


class mcMemAllocationType(enum.IntEnum):
    mcMemAllocationTypeInvalid = 0
    mcMemAllocationTypePinned = 1


class mcMemLocationType(enum.IntEnum):
    mcMemLocationTypeInvalid = 0
    mcMemLocationTypeDevice = 1


class mcMemAllocationHandleType(enum.IntFlag):
    mcMemHandleTypeNone = 0x0
    mcMemHandleTypePosixFileDescriptor = 0x1
    mcMemHandleTypeWin32 = 0x2
    mcMemHandleTypeWin32Kmt = 0x4


class mcMemAccessFlags(enum.IntEnum):
    mcMemAccessFlagsProtNone = 0
    mcMemAccessFlagsProtRead = 1
    mcMemAccessFlagsProtReadWrite = 3


class mcMemAllocationGranularity_flags(enum.IntEnum):
    mcMemAllocationGranularityMinimum = 0
    mcMemAllocationGranularityRecommended = 1


@dataclass
class mcMemLocation:
    type: int = mcMemLocationType.mcMemLocationTypeDevice
    id: int = 0


@dataclass
class mcMemAllocationProp:
    type: int = mcMemAllocationType.mcMemAllocationTypePinned
    requestedHandleTypes: int = mcMemAllocationHandleType.mcMemHandleTypeNone
    location: mcMemLocation = field(default_factory=mcMemLocation)
    win32HandleMetaData: int = 0
    allocFlags: int = 0


@dataclass
class mcMemAccessDesc:
    location: mcMemLocation = field(default_factory=mcMemLocation)
    flags: int = mcMemAccessFlags.mcMemAccessFlagsProtReadWrite


AllocationProp = Struct(mcMemAllocationProp)
Location = Struct(mcMemLocation)
AccessDescs = Seq("an mcMemAccessDesc or a sequence of them", single=mcMemAccessDesc)


def _state() -> Any:
    return _vmm.state(get_engine())


def _location(loc: Any, what: str = "location") -> Any:
    """The engine Device a device location names."""
    if not isinstance(loc, mcMemLocation):
        raise McError(INVALID, f"{what} must be an mcMemLocation, not {type(loc).__name__}")
    if loc.type != mcMemLocationType.mcMemLocationTypeDevice:
        raise McError(INVALID, f"{what}.type must be mcMemLocationTypeDevice, got {loc.type!r}")
    return get_engine().device(loc.id)


def _prop(prop: Any) -> Any:
    if not isinstance(prop, mcMemAllocationProp):
        raise McError(INVALID, f"prop must be an mcMemAllocationProp, not {type(prop).__name__}")
    if prop.type != mcMemAllocationType.mcMemAllocationTypePinned:
        raise McError(INVALID, f"prop.type must be mcMemAllocationTypePinned, got {prop.type!r}")
    _int("prop.requestedHandleTypes", prop.requestedHandleTypes)
    return _location(prop.location, "prop.location")


def _flags0(flags: Any) -> None:
    if _int("flags", flags) != 0:
        raise McError(INVALID, f"flags are reserved and must be 0, got {flags!r}")


def access_descs(desc: Any, count: Any) -> list[tuple[int, int]]:
    """Validated (device ordinal, flags) pairs of an mcMemAccessDesc array."""
    if isinstance(desc, mcMemAccessDesc):
        desc = [desc]
    if not isinstance(desc, Sequence) or not all(isinstance(d, mcMemAccessDesc) for d in desc):
        raise McError(INVALID, "desc must be a sequence of mcMemAccessDesc")
    n = _int("count", count, 1)
    if n > len(desc):
        raise McError(INVALID, f"count {n} exceeds the {len(desc)} descriptors given")
    out = []
    for d in desc[:n]:
        dev = _location(d.location, "desc.location")
        if d.flags not in tuple(mcMemAccessFlags):
            raise McError(INVALID, f"desc.flags {d.flags!r} is not an mcMemAccessFlags value")
        out.append((dev.ordinal, int(d.flags)))
    return out


# ------------------------------------------------------------------ 2.13 VMM
@_api(1)
def mcMemAddressReserve(size: Size, alignment: Size = 0, addr: DevicePtr = 0, flags: Int = 0) -> int:
    """Seed 002 §2.13.3.2: VA without backing; addr is a placement hint (as CUDA,
    another address is chosen when it is taken)."""
    ctx = _ctx()
    _flags0(flags)
    return _state().reserve(ctx, _int("size", size, 1), _int("alignment", alignment),
                            _int("addr", addr))


@_api(0)
def mcMemAddressFree(ptr: DevicePtr, size: Size) -> None:
    """Seed 002 §2.13.3.1: the whole reservation, with no mappings left."""
    _ctx()
    _state().address_free(_int("ptr", ptr, 1), _int("size", size, 1))


@_api(1)
def mcMemCreate(size: Size, prop: AllocationProp, flags: Int = 0) -> int:
    """Seed 002 §2.13.3.3: physical memory on prop.location's device; an int handle."""
    ctx = _ctx()
    dev = _prop(prop)
    _flags0(flags)
    return _state().create(ctx, _int("size", size, 1), dev, int(prop.requestedHandleTypes))


@_api(0)
def mcMemRelease(handle: UInt64) -> None:
    """Seed 002 §2.13.3.10: memory still mapped stays alive until unmapped."""
    _ctx()
    _state().release(handle)


@_api(0)
def mcMemMap(ptr: DevicePtr, size: Size, offset: Size, handle: UInt64, flags: Int = 0) -> None:
    """Seed 002 §2.13.3.9: map [offset, offset+size) of handle at ptr, which
    must lie in a reservation. The seed says offset "currently must be 0";
    like later CUDA versions, any granularity multiple is accepted. The new
    mapping has no access until mcMemSetAccess."""
    ctx = _ctx()
    _flags0(flags)
    _state().map(ctx, _int("ptr", ptr, 1), _int("size", size, 1), _int("offset", offset), handle)


@_api(0)
def mcMemUnmap(ptr: DevicePtr, size: Size) -> None:
    """Seed 002 §2.13.3.13: whole mappings only; waits for work queued before."""
    ctx = _ctx()
    _state().unmap(ctx, _int("ptr", ptr, 1), _int("size", size, 1))


@_api(0)
def mcMemSetAccess(ptr: DevicePtr, size: Size, desc: AccessDescs, count: Int) -> None:
    """Seed 002 §2.13.3.12: access flags per device location for whole mappings."""
    _ctx()
    _state().set_access(_int("ptr", ptr, 1), _int("size", size, 1), access_descs(desc, count))


@_api(1)
def mcMemGetAccess(location: Location, ptr: DevicePtr) -> int:
    """Seed 002 §2.13.3.5: the flags set for location at the mapped ptr."""
    _ctx()
    dev = _location(location)
    return mcMemAccessFlags(_state().get_access(dev.ordinal, _int("ptr", ptr, 1)))


@_api(1)
def mcMemGetAllocationGranularity(prop: AllocationProp, option: Int) -> int:
    """Seed 002 §2.13.3.6: 2 MiB, minimum and recommended alike."""
    _ctx()
    _prop(prop)
    if isinstance(option, bool) or option not in tuple(mcMemAllocationGranularity_flags):
        raise McError(INVALID, f"{option!r} is not an mcMemAllocationGranularity_flags value")
    return _vmm.GRANULARITY


@_api(1)
def mcMemGetAllocationPropertiesFromHandle(handle: UInt64) -> mcMemAllocationProp:
    """Seed 002 §2.13.3.7."""
    _ctx()
    p = _state().handle(handle).physical
    return mcMemAllocationProp(mcMemAllocationType.mcMemAllocationTypePinned,
                               mcMemAllocationHandleType(p.handle_types),
                               mcMemLocation(mcMemLocationType.mcMemLocationTypeDevice, p.ordinal))


@_api(1)
def mcMemRetainAllocationHandle(addr: DevicePtr) -> int:
    """Seed 002 §2.13.3.11: the handle behind a mapped address, with one more
    reference (release it with mcMemRelease)."""
    _ctx()
    return _state().retain(_int("addr", addr, 1))


def _posix_only(handle_type: Any, api: str) -> None:
    t = _int("handleType", handle_type)
    if t in (mcMemAllocationHandleType.mcMemHandleTypeWin32,
             mcMemAllocationHandleType.mcMemHandleTypeWin32Kmt):
        raise McError(mcError_t.mcErrorNotSupported,
                          f"{api}: Win32 handles do not exist on this (POSIX) platform")
    if t != mcMemAllocationHandleType.mcMemHandleTypePosixFileDescriptor:
        raise McError(INVALID, f"{api}: {handle_type!r} is not a shareable handle type")


@_api(1)
def mcMemExportToShareableHandle(handle: UInt64, handleType: Int, flags: Int = 0) -> int:
    """Seed 002 §2.13.3.4: a POSIX file descriptor (an int) for the handle.
    In-process semantics: this process can import it again; sharing with
    another process cannot work on the simulator, which is one process.
    mcErrorNotSupported for Win32 handle types: they do not exist on POSIX."""
    _ctx()
    _flags0(flags)
    _posix_only(handleType, "mcMemExportToShareableHandle")
    return _state().export(handle, int(handleType))


@_api(1)
def mcMemImportFromShareableHandle(shareableHandle: Int, shHandleType: Int) -> int:
    """Seed 002 §2.13.3.8: a new handle on the exported memory (in-process
    only, see mcMemExportToShareableHandle). mcErrorNotSupported for Win32
    handle types: they do not exist on POSIX."""
    _ctx()
    _posix_only(shHandleType, "mcMemImportFromShareableHandle")
    return _state().import_(shareableHandle)


__all__ = ['mcMemAddressReserve', 'mcMemAddressFree', 'mcMemCreate', 'mcMemRelease', 'mcMemMap',
           'mcMemUnmap', 'mcMemSetAccess', 'mcMemGetAccess', 'mcMemGetAllocationGranularity',
           'mcMemGetAllocationPropertiesFromHandle', 'mcMemRetainAllocationHandle',
           'mcMemExportToShareableHandle', 'mcMemImportFromShareableHandle',
           'mcMemAllocationType', 'mcMemLocationType', 'mcMemAllocationHandleType',
           'mcMemAccessFlags', 'mcMemAllocationGranularity_flags', 'mcMemLocation',
           'mcMemAllocationProp', 'mcMemAccessDesc']
