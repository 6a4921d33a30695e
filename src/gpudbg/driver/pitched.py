"""Struct-described and cross-device copies: mcMemcpy3D(Parms), the
CUDA_MEMCPY2D form, mcMemset3D, and peer copies, all turned into one
Region/Layout call of transfer.copy or transfer.memset_2d.

The one idea: a struct only says where a region starts (a position inside
a pitched pointer) and how it is laid out (pitch, rows per slice), so
decoding it is offset arithmetic plus the checks CUDA makes (pitch at least
the row, slices that do not overlap); the copy itself, its staging and its
synchronization rules stay in transfer.py. Peer copies add the device
checks and, for the synchronous forms, the serialization with the other
devices' work: the simulator has no cross-device semaphores, so it drains
the work of every context involved first and waits for the copy after.
The structs are read by their fields (CUDA's field names), so each API
layer passes its own records; memory types are CUmemorytype numbers.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gpudbg.driver import transfer as T
from gpudbg.driver.status import Cause, CUresult, EngineError
from gpudbg.driver.types import CUmemorytype
from gpudbg.sim.memory.spaces import AllocationKind

INVALID = CUresult.CUDA_ERROR_INVALID_VALUE
DEVICE_KINDS = frozenset({AllocationKind.DEVICE, AllocationKind.PITCHED, AllocationKind.MANAGED,
                          AllocationKind.MODULE_GLOBAL, AllocationKind.MODULE_CONST})


def _n(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < 0:
        raise EngineError(INVALID, f"{name} must be a non-negative int, got {v!r}")
    return int(v)


def offset_operand(obj: Any, offset: int) -> Any:
    """The operand `offset` bytes further on (pointer arithmetic for ints,
    a sub-view for host buffers)."""
    if offset == 0:
        return obj
    if T._is_pointer(obj):
        return int(obj) + offset if int(obj) else 0
    try:
        mv = memoryview(obj)
    except TypeError:
        return obj                      # classify() reports the bad type
    mv = mv.cast("B") if mv.c_contiguous and mv.nbytes else mv
    return mv[offset:] if offset <= mv.nbytes else mv[mv.nbytes:]


# The fields each struct must have (CUDA's names), by the struct's C name.
FIELDS = {
    "cudaPitchedPtr": ("ptr", "pitch", "xsize", "ysize"),
    "cudaPos": ("x", "y", "z"),
    "cudaExtent": ("width", "height", "depth"),
    "cudaMemcpy3DParms": ("srcArray", "srcPos", "srcPtr", "dstArray", "dstPos", "dstPtr", "extent"),
    "CUDA_MEMCPY2D": ("srcXInBytes", "srcY", "srcMemoryType", "srcHost", "srcDevice", "srcArray", "srcPitch",
                      "dstXInBytes", "dstY", "dstMemoryType", "dstHost", "dstDevice", "dstArray", "dstPitch",
                      "WidthInBytes", "Height"),
}


def _struct(obj: Any, c_name: str, name: str) -> Any:
    missing = [f for f in FIELDS[c_name] if not hasattr(obj, f)]
    if missing:
        raise EngineError(INVALID, f"{name} must be a {c_name} (a {type(obj).__name__} has no "
                                   f"{', '.join(missing)})")
    return obj


def _side(ptr: Any, pos: Any, array: Any, extent: Any, role: str) -> tuple[Any, T.Layout]:
    """A pitched pointer + position as (operand at the region start, layout)."""
    _struct(ptr, "cudaPitchedPtr", f"{role}Ptr")
    _struct(pos, "cudaPos", f"{role}Pos")
    if array is not None:
        raise EngineError(INVALID, f"{role}Array: arrays are not part of this API; use a pitched pointer")
    pitch, ysize = _n(f"{role}Ptr.pitch", ptr.pitch), _n(f"{role}Ptr.ysize", ptr.ysize)
    x, y, z = _n(f"{role}Pos.x", pos.x), _n(f"{role}Pos.y", pos.y), _n(f"{role}Pos.z", pos.z)
    if x + extent.width > pitch:
        raise EngineError(Cause.PITCH,
                          f"{role}: position x={x} + width {extent.width} exceeds the pitch {pitch}")
    if (extent.depth > 1 or z) and y + extent.height > ysize:
        raise EngineError(INVALID, f"{role}: rows {y}..{y + extent.height} do not fit in a slice of "
                                   f"{ysize} rows")
    slice_pitch = pitch * ysize
    return offset_operand(ptr.ptr, z * slice_pitch + y * pitch + x), T.Layout(pitch, slice_pitch)


def _array_sides(p: Any, region: T.Region) -> tuple[Any, T.Layout, Any, T.Layout, T.Region]:
    """A 3D copy with an array on either side: the extent and the array
    positions count elements (cudaMemcpy3D), the pitched side bytes."""
    from gpudbg.driver import arrays
    es = 0
    sides = {}
    for role in ("src", "dst"):
        arr = getattr(p, f"{role}Array")
        if arr is not None:
            addr, lay, es = arrays.side_3d(arr, getattr(p, f"{role}Pos"), p.extent, role)
            sides[role] = (addr, lay)
    bytes_extent = T.Region(region.width * es, region.height, region.depth)
    for role in ("src", "dst"):
        if role not in sides:
            ptr = getattr(p, f"{role}Ptr")
            sides[role] = _side(ptr, getattr(p, f"{role}Pos"), None, bytes_extent, role)
    return (*sides["src"], *sides["dst"], bytes_extent)


def _extent(e: Any) -> T.Region:
    e = _struct(e, "cudaExtent", "extent")
    return T.Region(_n("extent.width", e.width), _n("extent.height", e.height), _n("extent.depth", e.depth))


def copy_3d(ctx: Any, p: Any, stream: Any, is_async: bool, peer: bool = False) -> None:
    """A 3D copy and, with peer=True, a 3D peer copy (parameters that name
    srcDevice and dstDevice are cudaMemcpy3DPeerParms)."""
    _struct(p, "cudaMemcpy3DParms", "pCopy")
    region = _extent(p.extent)
    if p.srcArray is not None or p.dstArray is not None:
        src, slay, dst, dlay, region = _array_sides(p, region)
    else:
        src, slay = _side(p.srcPtr, p.srcPos, p.srcArray, p.extent, "src")
        dst, dlay = _side(p.dstPtr, p.dstPos, p.dstArray, p.extent, "dst")
    if hasattr(p, "srcDevice") and hasattr(p, "dstDevice"):
        contexts = {ctx, _on_device(ctx, src, p.srcDevice, "src"), _on_device(ctx, dst, p.dstDevice, "dst")}
        kind = 3
    else:
        kind = p.kind
        contexts = {ctx}
        if peer:
            T.check_kind(kind)
            contexts |= {_pointer_context(ctx, o) for o in (src, dst)}
    _run(ctx, contexts - {None}, peer and not is_async, stream,
         lambda: T.copy(ctx, dst, src, region, dlay, slay, kind, stream, is_async))


def copy_param_2d(ctx: Any, p: Any, stream: Any, is_async: bool, max_pitch: int) -> None:
    """A CUDA_MEMCPY2D copy (cuMemcpy2D, mcMemcpyParam2D, the unaligned form)."""
    p = _struct(p, "CUDA_MEMCPY2D", "pCopy")
    sides = []
    for role in ("src", "dst"):
        mtype = getattr(p, f"{role}MemoryType")
        try:
            mtype = CUmemorytype(mtype)
        except ValueError:
            raise EngineError(INVALID, f"{role}MemoryType={mtype!r} is not a CUmemorytype") from None
        if mtype is CUmemorytype.CU_MEMORYTYPE_ARRAY or getattr(p, f"{role}Array"):
            from gpudbg.driver import arrays   # an array side: its base, row pitch and bounds
            if getattr(p, f"{role}Array") is None:
                raise EngineError(INVALID, f"{role}MemoryType is an array but {role}Array is NULL")
            arr = arrays.live(getattr(p, f"{role}Array"), "pCopy", f"{role}Array")
            addr, lay = arrays.region(arr, _n(f"{role}XInBytes", getattr(p, f"{role}XInBytes")),
                                      _n(f"{role}Y", getattr(p, f"{role}Y")), 0, _n("WidthInBytes", p.WidthInBytes),
                                      _n("Height", p.Height), 1, role)
            sides.append((CUmemorytype.CU_MEMORYTYPE_DEVICE, addr, lay.pitch))
            continue
        host, device = getattr(p, f"{role}Host"), getattr(p, f"{role}Device")
        if mtype is CUmemorytype.CU_MEMORYTYPE_HOST:
            operand = host
        elif mtype is CUmemorytype.CU_MEMORYTYPE_DEVICE:
            operand = device
        else:
            operand = device if device else host
        pitch = _n(f"{role}Pitch", getattr(p, f"{role}Pitch"))
        off = _n(f"{role}Y", getattr(p, f"{role}Y")) * pitch + _n(f"{role}XInBytes", getattr(p, f"{role}XInBytes"))
        sides.append((mtype, offset_operand(operand, off), pitch))
    (stype, src, spitch), (dtype, dst, dpitch) = sides
    host, dev = CUmemorytype.CU_MEMORYTYPE_HOST, CUmemorytype.CU_MEMORYTYPE_DEVICE
    kinds = {(host, host): 0, (host, dev): 1, (dev, host): 2, (dev, dev): 3}
    kind = kinds.get((stype, dtype), 4)
    T.copy_2d(ctx, dst, dpitch, src, spitch, p.WidthInBytes, p.Height, kind, stream, is_async, max_pitch)


def memset_3d(ctx: Any, ptr: Any, value: Any, extent: Any, stream: Any, is_async: bool) -> None:
    """A 3D memset (mcMemset3D(Async)): bytes of a pitched region."""
    _struct(ptr, "cudaPitchedPtr", "pitchedDevPtr")
    r = _extent(extent)
    pitch, ysize = _n("pitchedDevPtr.pitch", ptr.pitch), _n("pitchedDevPtr.ysize", ptr.ysize)
    if r.width > pitch:
        raise EngineError(INVALID, f"extent.width={r.width} exceeds the pitch {pitch}")
    if r.depth > 1 and r.height > ysize:
        raise EngineError(INVALID, f"extent.height={r.height} exceeds the {ysize} rows of a slice")
    if r.nbytes == 0:
        return
    T.memset_2d(ctx, ptr.ptr, pitch if r.height > 1 or r.depth > 1 else r.width, value, 1, r.width,
                r.height, stream, is_async, depth=r.depth, slice_pitch=pitch * ysize, low_byte=True)


# ------------------------------------------------------------------ peer copies
def _pointer_context(ctx: Any, obj: Any) -> Any:
    if T._is_pointer(obj) and int(obj):
        info = ctx.engine.resolve_pointer(int(obj))
        return info.context if info is not None else None
    return None


def _on_device(ctx: Any, ptr: Any, ordinal: Any, role: str) -> Any:
    """Check that ptr is device memory of device `ordinal`; its context."""
    dev = ctx.engine.device(ordinal)        # CUDA_ERROR_INVALID_DEVICE
    if not T._is_pointer(ptr) or not int(ptr):
        raise EngineError(INVALID, f"{role} must be a device pointer, got {ptr!r}")
    info = ctx.engine.resolve_pointer(int(ptr))
    if info is None or info.kind not in DEVICE_KINDS:
        raise EngineError(INVALID, f"{role}: 0x{int(ptr):x} is not device memory")
    if info.gpu.ordinal != dev.ordinal:
        raise EngineError(INVALID, f"{role}: 0x{int(ptr):x} is memory of device {info.gpu.ordinal}, "
                                   f"not of device {dev.ordinal}")
    return info.context


def _run(ctx: Any, contexts: set, serialize: bool, stream: Any, do: Any) -> None:
    if serialize:
        for c in contexts:
            c.wait_idle_quietly()
    do()
    if serialize:
        stream.wait()
        ctx.after_wait()


def copy_peer(ctx: Any, dst: Any, dst_device: Any, src: Any, src_device: Any, count: Any,
              stream: Any, is_async: bool) -> None:
    """mcMemcpyPeer(Async): device memory of one device to another's."""
    count = _n("sizeBytes", count)
    contexts = {ctx, _on_device(ctx, dst, dst_device, "dst"), _on_device(ctx, src, src_device, "src")}
    _run(ctx, contexts - {None}, not is_async, stream,
         lambda: T.memcpy(ctx, dst, src, count, 3, stream, True))
