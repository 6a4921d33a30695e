"""Memory pools of the driver API (cuMemPool*), over the engine's pools.

Pools live in gpudbg.driver.mempool (the same ones mcMemPool* and the
stream-ordered allocator use); this module reads the C structs
(CUmemPoolProps, CUmemLocation, CUmemAccessDesc) laid out as cuda.h has
them and writes attribute values at the width cuda.h gives each attribute
(int for the reuse policies, cuuint64_t for the threshold and counters).
Pool export/import of shareable handles is not here: it answers
CUDA_ERROR_NOT_SUPPORTED through the library.
"""
from __future__ import annotations

import ctypes
from typing import Any

from gpudbg import cabi
from gpudbg.cuda_driver._base import HandleKind, R, current_context, entry, fail, handle_of, object_of
from gpudbg.driver import mempool as _mp
from gpudbg.driver.engine import get_engine
from gpudbg.sim.memory.allocations import MapAccess

CU_MEM_LOCATION_TYPE_DEVICE = 1
CU_MEM_ALLOCATION_TYPE_PINNED = 1
INT_ATTRS = _mp.BOOL_ATTRS          # written as int; the rest as cuuint64_t


class CUmemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class CUmemPoolProps(ctypes.Structure):
    _fields_ = [("allocType", ctypes.c_int), ("handleTypes", ctypes.c_int), ("location", CUmemLocation),
                ("win32SecurityAttributes", ctypes.c_void_p), ("maxSize", ctypes.c_size_t),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 54)]


class CUmemAccessDesc(ctypes.Structure):
    _fields_ = [("location", CUmemLocation), ("flags", ctypes.c_int)]


def _registry() -> _mp.PoolRegistry:
    return _mp.registry(get_engine())


def _pool(handle: int, allow_imported: bool = False) -> Any:
    p = object_of(HandleKind.MEMPOOL, handle)
    if isinstance(p, _mp.ImportedPool) and allow_imported:
        p.source.check()
        return p.source
    if not isinstance(p, _mp.MemPool):
        raise fail(R.CUDA_ERROR_INVALID_VALUE, f"0x{handle:x} is not a pool allocations can come from")
    p.check()
    return p


def _attr(attr: int) -> _mp.PoolAttr:
    try:
        return _mp.PoolAttr(int(attr))
    except ValueError:
        raise fail(R.CUDA_ERROR_INVALID_VALUE, f"{attr} is not a CUmemPool_attribute") from None


def _device_of(location: CUmemLocation, what: str) -> Any:
    if location.type != CU_MEM_LOCATION_TYPE_DEVICE:
        raise fail(R.CUDA_ERROR_INVALID_VALUE, f"{what}.type {location.type} is not CU_MEM_LOCATION_TYPE_DEVICE "
                                               f"(host pools are not simulated)")
    return get_engine().device(int(location.id))


@entry
def cuMemPoolCreate(pool_out: int, props_ptr: int) -> None:
    current_context()
    if not pool_out:
        raise cabi.NullPointer("pool")
    props = cabi.struct_at(props_ptr, CUmemPoolProps, "poolProps")
    if props.allocType != CU_MEM_ALLOCATION_TYPE_PINNED:
        raise fail(R.CUDA_ERROR_INVALID_VALUE, f"allocType {props.allocType} is not CU_MEM_ALLOCATION_TYPE_PINNED")
    if props.win32SecurityAttributes:
        raise fail(R.CUDA_ERROR_INVALID_VALUE, "win32SecurityAttributes must be NULL on Linux")
    device = _device_of(props.location, "poolProps.location")
    pool = _registry().create(device, int(props.handleTypes), int(props.maxSize))
    cabi.store(pool_out, "u64", handle_of(HandleKind.MEMPOOL, pool))


@entry
def cuMemPoolDestroy(pool: int) -> None:
    current_context()
    p = object_of(HandleKind.MEMPOOL, pool)
    if isinstance(p, _mp.ImportedPool):
        return
    _pool(pool).destroy()
    cabi.handles.forget(HandleKind.MEMPOOL, pool)     # later use: CUDA_ERROR_INVALID_HANDLE


@entry
def cuMemPoolGetAttribute(pool: int, attr: int, value: int) -> None:
    which = _attr(attr)
    v = _pool(pool, allow_imported=True).get_attribute(which)
    cabi.store(value, "i32" if which in INT_ATTRS else "u64", v, "value")


@entry
def cuMemPoolSetAttribute(pool: int, attr: int, value: int) -> None:
    which = _attr(attr)
    v = cabi.load(value, "i32" if which in INT_ATTRS else "u64", "value")
    _pool(pool).set_attribute(which, int(v))


@entry
def cuMemPoolTrimTo(pool: int, min_bytes_to_keep: int) -> None:
    _pool(pool).trim_to(int(min_bytes_to_keep), completed_ok=True)


@entry
def cuMemPoolSetAccess(pool: int, descs: int, count: int) -> None:
    p = _pool(pool)
    if count and not descs:
        raise cabi.NullPointer("map")
    entries = [cabi.struct_at(descs + i * ctypes.sizeof(CUmemAccessDesc), CUmemAccessDesc, "map")
               for i in range(int(count))]
    settings = []
    for i, d in enumerate(entries):
        dev = _device_of(d.location, f"map[{i}].location")
        if d.flags not in (0, int(MapAccess.READ_WRITE)):
            raise fail(R.CUDA_ERROR_INVALID_VALUE, f"map[{i}].flags {d.flags}: pools support only "
                                                   f"CU_MEM_ACCESS_FLAGS_PROT_NONE or _READWRITE")
        if dev.ordinal == p.device.ordinal and d.flags != int(MapAccess.READ_WRITE):
            raise fail(R.CUDA_ERROR_INVALID_VALUE, f"the owning device {dev.ordinal} always has read-write access")
        settings.append((dev.ordinal, int(d.flags)))
    for ordinal, flags in settings:
        p.access[ordinal] = flags


@entry
def cuMemPoolGetAccess(flags_out: int, pool: int, location: int) -> None:
    p = _pool(pool, allow_imported=True)
    dev = _device_of(cabi.struct_at(location, CUmemLocation, "location"), "location")
    cabi.store(flags_out, "i32", p.access.get(dev.ordinal, 0), "flags")


__all__ = ["cuMemPoolCreate", "cuMemPoolDestroy", "cuMemPoolGetAttribute", "cuMemPoolSetAttribute",
           "cuMemPoolTrimTo", "cuMemPoolSetAccess", "cuMemPoolGetAccess"]
