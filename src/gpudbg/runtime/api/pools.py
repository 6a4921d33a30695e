"""Seed 002 §2.14, the stream-ordered allocator, and the three memory pool
functions of §2.2 (mcDeviceGetDefaultMemPool, mcDeviceGetMemPool,
mcDeviceSetMemPool).

The annotated kinds check the arguments (_args.py); each function makes one call into
gpudbg.driver.mempool, where pools live and where allocation and free
become POOL_ALLOC / POOL_FREE ring commands in stream order. The runtime
(mcMallocAsync) and driver-style (mcMemAllocAsync) twins behave the same:
both allocate from the current pool of the stream's device; they differ
only in the C pointer type. Shareable pool handles have the in-process
semantics of the VMM ones (see runtime.api.vmm).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from gpudbg.driver import mempool as _mp
from gpudbg.driver.engine import get_engine
from gpudbg.runtime.api._args import Device, DevicePtr, Enum, Flags, Int, Size, Struct, mcMemPool_t, mcStream_t
from gpudbg.runtime.api._base import _api, _ctx, _int
from gpudbg.runtime.api.vmm import (
    AccessDescs, _flags0, _location, _posix_only, access_descs, mcMemAccessFlags, mcMemAllocationHandleType,
    mcMemAllocationType, mcMemLocation,
)
from gpudbg.runtime.errors import McError, mcError_t

INVALID = mcError_t.mcErrorInvalidValue


class mcMemPoolAttr(enum.IntEnum):
    """cudaMemPoolAttr numbering."""

    mcMemPoolReuseFollowEventDependencies = 1
    mcMemPoolReuseAllowOpportunistic = 2
    mcMemPoolReuseAllowInternalDependencies = 3
    mcMemPoolAttrReleaseThreshold = 4
    mcMemPoolAttrReservedMemCurrent = 5
    mcMemPoolAttrReservedMemHigh = 6
    mcMemPoolAttrUsedMemCurrent = 7
    mcMemPoolAttrUsedMemHigh = 8


@dataclass
class mcMemPoolProps:
    allocType: int = mcMemAllocationType.mcMemAllocationTypePinned
    handleTypes: int = mcMemAllocationHandleType.mcMemHandleTypeNone
    location: mcMemLocation = field(default_factory=mcMemLocation)
    win32SecurityAttributes: int = 0
    maxSize: int = 0


@dataclass
class mcMemPoolPtrExportData:
    reserved: bytes = bytes(64)


def _reg() -> _mp.PoolRegistry:
    return _mp.registry(get_engine())


def _pool(pool: Any, allow_imported: bool = False) -> Any:
    if isinstance(pool, _mp.MemPool):
        pool.check()
        return pool
    if allow_imported and isinstance(pool, _mp.ImportedPool):
        pool.source.check()
        return pool
    raise McError(INVALID, f"{pool!r} is not a live mcMemPool_t"
                               + ("" if allow_imported else " that allocations can come from"))


def _attr(attr: Any) -> _mp.PoolAttr:
    if isinstance(attr, bool) or attr not in tuple(mcMemPoolAttr):
        raise McError(INVALID, f"{attr!r} is not an mcMemPoolAttr")
    return _mp.PoolAttr(int(attr))


# ------------------------------------------------------------------ 2.2 device pools
@_api(1)
def mcDeviceGetDefaultMemPool(device: Device) -> Any:
    """Seed 002 §2.2.3.4: the pool holding the device's memory by default."""
    _ctx()
    return _reg().default_pool(get_engine().device(device))


@_api(1)
def mcDeviceGetMemPool(device: Device) -> Any:
    """Seed 002 §2.2.3.7: the last pool given to mcDeviceSetMemPool, else the default."""
    _ctx()
    return _reg().current_pool(get_engine().device(device))


@_api(0)
def mcDeviceSetMemPool(dev: Device, pool: mcMemPool_t) -> None:
    """Seed 002 §2.2.3.17: the pool must be local to dev (mcErrorInvalidValue)."""
    _ctx()
    _reg().set_current(get_engine().device(dev), pool)


# ------------------------------------------------------------------ 2.14 allocation
def _stream(stream: Any, api: str) -> Any:
    """Graph allocation nodes are not modelled: a capturing stream refuses
    stream-ordered allocation (and its capture is invalidated), as CUDA does
    for operations a capture cannot record."""
    s = _ctx().stream(stream)
    if getattr(s, "capture", None) is not None:
        s.capture.invalidate(f"{api} during stream capture")
        raise McError(mcError_t.mcErrorStreamCaptureUnsupported,
                          f"{api}: {s!r} is capturing; graph memory nodes are not supported")
    return s


def _alloc(size: Any, pool: Any, stream: Any) -> int:
    ctx = _ctx()
    s = _stream(stream, "stream-ordered allocation")
    size = _int("size", size, 1)
    p = _reg().current_pool(ctx.device) if pool is None else _pool(pool)
    return p.allocate(size, s)


def _free(ptr: Any, stream: Any, api: str) -> None:
    s = _stream(stream, api)
    _reg().free(ptr, s, api)


@_api(1)
def mcMallocAsync(size: Size, hStream: mcStream_t = None) -> int:
    """Seed 002 §2.14.3.2: the pointer now, valid when the stream gets there;
    from the current pool of the stream's device."""
    return _alloc(size, None, hStream)


@_api(0)
def mcFreeAsync(devPtr: DevicePtr, hStream: mcStream_t = None) -> None:
    """Seed 002 §2.14.3.1: freed when the stream gets there; later use in
    stream order is a use-after-free the simulator reports."""
    _free(devPtr, hStream, "mcFreeAsync")


@_api(1)
def mcMallocFromPoolAsync(size: Size, memPool: mcMemPool_t, stream: mcStream_t = None) -> int:
    """Seed 002 §2.14.3.3: like mcMallocAsync, from memPool."""
    return _alloc(size, _pool(memPool), stream)


@_api(1)
def mcMemAllocAsync(bytesize: Size, hStream: mcStream_t = None) -> int:
    """Seed 002 §2.14.3.4: driver-style twin of mcMallocAsync (mcDeviceptr_t)."""
    return _alloc(bytesize, None, hStream)


@_api(1)
def mcMemAllocFromPoolAsync(bytesize: Size, pool: mcMemPool_t, hStream: mcStream_t = None) -> int:
    """Seed 002 §2.14.3.5: driver-style twin of mcMallocFromPoolAsync."""
    return _alloc(bytesize, _pool(pool), hStream)


@_api(0)
def mcMemFreeAsync(dptr: DevicePtr, hStream: mcStream_t = None) -> None:
    """Seed 002 §2.14.3.6: driver-style twin of mcFreeAsync."""
    _free(dptr, hStream, "mcMemFreeAsync")


# ------------------------------------------------------------------ 2.14 pools
@_api(1)
def mcMemPoolCreate(poolProps: Struct(mcMemPoolProps)) -> Any:
    """Seed 002 §2.14.3.7: a pool of the device named by poolProps.location."""
    _ctx()
    if not isinstance(poolProps, mcMemPoolProps):
        raise McError(INVALID, f"poolProps must be an mcMemPoolProps, not {type(poolProps).__name__}")
    if poolProps.allocType != mcMemAllocationType.mcMemAllocationTypePinned:
        raise McError(INVALID, f"allocType must be mcMemAllocationTypePinned, got {poolProps.allocType!r}")
    dev = _location(poolProps.location, "poolProps.location")
    return _reg().create(dev, _int("handleTypes", poolProps.handleTypes),
                         _int("maxSize", poolProps.maxSize))


@_api(0)
def mcMemPoolDestroy(memPool: mcMemPool_t) -> None:
    """Seed 002 §2.14.3.8: returns at once; a default pool cannot be destroyed."""
    _ctx()
    p = _pool(memPool, allow_imported=True)
    if isinstance(p, _mp.ImportedPool):
        return
    p.destroy()


@_api(1)
def mcMemPoolGetAttribute(memPool: mcMemPool_t, attr: Enum(mcMemPoolAttr)) -> int:
    """Seed 002 §2.14.3.12: value of an mcMemPoolAttr (CUDA numbering)."""
    _ctx()
    p = _pool(memPool, allow_imported=True)
    p = p.source if isinstance(p, _mp.ImportedPool) else p
    return p.get_attribute(_attr(attr))


@_api(0)
def mcMemPoolSetAttribute(memPool: mcMemPool_t, attr: Enum(mcMemPoolAttr), value: Size) -> None:
    """Seed 002 §2.14.3.16: the high watermarks accept only 0 (a reset)."""
    _ctx()
    _pool(memPool).set_attribute(_attr(attr), _int("value", value))


@_api(0)
def mcMemPoolTrimTo(memPool: mcMemPool_t, minBytesToKeep: Size) -> None:
    """Seed 002 §2.14.3.17: releases fully free chunks, keeping at least
    minBytesToKeep reserved; a chunk with an outstanding block stays."""
    _ctx()
    p = _pool(memPool)
    p.trim_to(_int("minBytesToKeep", minBytesToKeep), completed_ok=True)


@_api(0)
def mcMemPoolSetAccess(memPool: mcMemPool_t, descList: AccessDescs, count: Int) -> None:
    """Seed 002 §2.14.3.15: the owning device always keeps read-write access;
    other devices' flags are recorded (their GPUs cannot address this one's
    VA window in the simulator)."""
    _ctx()
    p = _pool(memPool)
    descs = access_descs(descList, count)
    for ordinal, flags in descs:
        if ordinal == p.device.ordinal and flags != mcMemAccessFlags.mcMemAccessFlagsProtReadWrite:
            raise McError(INVALID, f"the owning device {ordinal} of {p!r} always has "
                                       f"read-write access")
        if flags == mcMemAccessFlags.mcMemAccessFlagsProtRead:
            raise McError(INVALID, "pools support only mcMemAccessFlagsProtNone or "
                                       "mcMemAccessFlagsProtReadWrite")
    for ordinal, flags in descs:
        p.access[ordinal] = flags


@_api(1)
def mcMemPoolGetAccess(memPool: mcMemPool_t, location: Struct(mcMemLocation)) -> mcMemAccessFlags:
    """Seed 002 §2.14.3.11."""
    _ctx()
    p = _pool(memPool, allow_imported=True)
    p = p.source if isinstance(p, _mp.ImportedPool) else p
    dev = _location(location)
    return mcMemAccessFlags(p.access.get(dev.ordinal, 0))


@_api(1)
def mcMemPoolExportToShareableHandle(memPool: mcMemPool_t, handleType: Int, flags: Flags = 0) -> int:
    """Seed 002 §2.14.3.10: a POSIX fd (an int) for a pool created with that
    handle type. In-process semantics only, as for mcMemExportToShareableHandle;
    mcErrorNotSupported for Win32 handle types, which do not exist on POSIX."""
    _ctx()
    _flags0(flags)
    _posix_only(handleType, "mcMemPoolExportToShareableHandle")
    return _reg().export_pool(_pool(memPool), int(handleType))


@_api(1)
def mcMemPoolImportFromShareableHandle(sharedHandle: Int, handleType: Int, flags: Flags = 0) -> Any:
    """Seed 002 §2.14.3.13: an imported pool (pointers can be imported from it,
    nothing allocated in it). In-process only; mcErrorNotSupported for Win32
    handle types, which do not exist on POSIX."""
    _ctx()
    _flags0(flags)
    _posix_only(handleType, "mcMemPoolImportFromShareableHandle")
    return _reg().import_pool(sharedHandle)


@_api(1)
def mcMemPoolExportPointer(ptr: DevicePtr) -> mcMemPoolPtrExportData:
    """Seed 002 §2.14.3.9: 64 opaque bytes naming a block of a shareable pool."""
    _ctx()
    return mcMemPoolPtrExportData(_reg().export_pointer(ptr))


@_api(1)
def mcMemPoolImportPointer(memPool: mcMemPool_t, exportData: Struct(mcMemPoolPtrExportData)) -> int:
    """Seed 002 §2.14.3.14: in-process the imported pointer is the exported
    address; the importer's mcFreeAsync of it releases the import, the
    exporter's later free releases the memory."""
    _ctx()
    if not isinstance(exportData, mcMemPoolPtrExportData):
        raise McError(INVALID, "exportData must be an mcMemPoolPtrExportData")
    return _reg().import_pointer(memPool, bytes(exportData.reserved))


__all__ = ['mcDeviceGetDefaultMemPool', 'mcDeviceGetMemPool', 'mcDeviceSetMemPool',
           'mcMallocAsync', 'mcFreeAsync', 'mcMallocFromPoolAsync', 'mcMemAllocAsync',
           'mcMemAllocFromPoolAsync', 'mcMemFreeAsync', 'mcMemPoolCreate', 'mcMemPoolDestroy',
           'mcMemPoolGetAttribute', 'mcMemPoolSetAttribute', 'mcMemPoolTrimTo',
           'mcMemPoolSetAccess', 'mcMemPoolGetAccess', 'mcMemPoolExportToShareableHandle',
           'mcMemPoolImportFromShareableHandle', 'mcMemPoolExportPointer', 'mcMemPoolImportPointer',
           'mcMemPoolAttr', 'mcMemPoolProps', 'mcMemPoolPtrExportData']
