"""Copies and memsets of the driver API: cuMemcpy*, cuMemcpy2D/3D (the
CUDA_MEMCPY2D / CUDA_MEMCPY3D structs), peer copies, cuMemsetD8/16/32 and
their 2D forms, with every `_ptds`/`_ptsz` variant cuda.h declares.

The engine does the copying (driver/transfer.py: staging, commands on the
stream's ring, the synchronization rules; driver/pitched.py for peers);
this layer turns C arguments into the engine's operands. The one idea: a
pointer is either one the engine knows (device, pinned, registered or
managed memory, and anything inside a device's address window, so a stale
device pointer is an error, never a host dereference), or pageable memory
of the program, handed over as a view of those very bytes
(`cabi.host_view`): a device-to-host copy lands in the caller's buffer
before a synchronous call returns, a host-to-device copy snapshots it. The
synchronous forms use the default stream (the per-thread one in `_ptds`),
the Async forms the stream given (0 meaning the per-thread one in `_ptsz`).
A side of memory type CU_MEMORYTYPE_ARRAY is a CUDA array (arrays.py): its
base, row pitch and bounds replace the pitch and pointer (array_side).
"""
from __future__ import annotations

import ctypes
import functools
from typing import Any, Callable

from gpudbg import cabi
from gpudbg.cuda_driver._base import R, current_context, entry, fail, per_thread_variant, stream_of
from gpudbg.cuda_driver.context import context_flags, context_of
from gpudbg.cuda_driver.pointer import sync_memops
from gpudbg.driver import pitched as _pitched
from gpudbg.driver import transfer as T

INVALID = R.CUDA_ERROR_INVALID_VALUE
HOST, DEVICE, ARRAY, UNIFIED = 1, 2, 3, 4          # CUmemorytype
KIND_HTOH, KIND_HTOD, KIND_DTOH, KIND_DTOD, KIND_DEFAULT = 0, 1, 2, 3, 4


class CUDA_MEMCPY2D(ctypes.Structure):
    """cuda.h's CUDA_MEMCPY2D_v2."""

    _fields_ = [("srcXInBytes", ctypes.c_size_t), ("srcY", ctypes.c_size_t),
                ("srcMemoryType", ctypes.c_int), ("srcHost", ctypes.c_void_p),
                ("srcDevice", ctypes.c_uint64), ("srcArray", ctypes.c_void_p), ("srcPitch", ctypes.c_size_t),
                ("dstXInBytes", ctypes.c_size_t), ("dstY", ctypes.c_size_t),
                ("dstMemoryType", ctypes.c_int), ("dstHost", ctypes.c_void_p),
                ("dstDevice", ctypes.c_uint64), ("dstArray", ctypes.c_void_p), ("dstPitch", ctypes.c_size_t),
                ("WidthInBytes", ctypes.c_size_t), ("Height", ctypes.c_size_t)]


class CUDA_MEMCPY3D(ctypes.Structure):
    """cuda.h's CUDA_MEMCPY3D_v2."""

    _fields_ = [("srcXInBytes", ctypes.c_size_t), ("srcY", ctypes.c_size_t), ("srcZ", ctypes.c_size_t),
                ("srcLOD", ctypes.c_size_t), ("srcMemoryType", ctypes.c_int), ("srcHost", ctypes.c_void_p),
                ("srcDevice", ctypes.c_uint64), ("srcArray", ctypes.c_void_p), ("reserved0", ctypes.c_void_p),
                ("srcPitch", ctypes.c_size_t), ("srcHeight", ctypes.c_size_t),
                ("dstXInBytes", ctypes.c_size_t), ("dstY", ctypes.c_size_t), ("dstZ", ctypes.c_size_t),
                ("dstLOD", ctypes.c_size_t), ("dstMemoryType", ctypes.c_int), ("dstHost", ctypes.c_void_p),
                ("dstDevice", ctypes.c_uint64), ("dstArray", ctypes.c_void_p), ("reserved1", ctypes.c_void_p),
                ("dstPitch", ctypes.c_size_t), ("dstHeight", ctypes.c_size_t),
                ("WidthInBytes", ctypes.c_size_t), ("Height", ctypes.c_size_t), ("Depth", ctypes.c_size_t)]


class CUDA_MEMCPY3D_PEER(ctypes.Structure):
    """cuda.h's CUDA_MEMCPY3D_PEER_v1: CUDA_MEMCPY3D's layout with the
    source and destination contexts where CUDA_MEMCPY3D has reserved0/1."""

    _fields_ = [(name if name not in ("reserved0", "reserved1") else
                 {"reserved0": "srcContext", "reserved1": "dstContext"}[name], ctype)
                for name, ctype in CUDA_MEMCPY3D._fields_]


# ------------------------------------------------------------------ operands
def _known(engine: Any, ptr: int) -> bool:
    """Does the engine own this address (an allocation, or inside a
    device's address window)?"""
    if engine.resolve_pointer(ptr) is not None:
        return True
    return any(d.gpu_started and d.gpu.memory.contains_range(ptr) for d in engine.devices)


def operand(ctx: Any, ptr: int, nbytes: int, role: str, host_ok: bool, writable: bool) -> Any:
    """What the engine copies from or to at ptr: the pointer itself, or a
    view of the program's pageable memory (only where host memory may be)."""
    ptr = int(ptr)
    if not ptr:
        raise fail(INVALID, f"{role} is NULL")
    if _known(ctx.engine, ptr) or not host_ok:
        return ptr
    return memoryview(cabi.host_view(ptr, nbytes, role, writable=writable))


CU_CTX_SYNC_MEMOPS = 0x80


def _sync_stream(ctx: Any, per_thread: bool) -> Any:
    return stream_of(ctx, 0, per_thread)


def _finish(ctx: Any, stream: Any, is_async: bool, *pointers: Any) -> None:
    """A synchronous operation on memory marked SYNC_MEMOPS (or in a
    CU_CTX_SYNC_MEMOPS context) returns only once it is done."""
    if is_async:
        return
    if context_flags(ctx) & CU_CTX_SYNC_MEMOPS or any(
            isinstance(p, int) and sync_memops(p) for p in pointers):
        stream.wait()
        ctx.after_wait()


def _copy(dst: Any, src: Any, count: int, kind: int, hStream: int | None, per_thread: bool = False,
          src_host: bool = False, dst_host: bool = False) -> None:
    ctx = current_context()
    count = int(count)
    if count < 0:
        raise fail(INVALID, f"ByteCount must be >= 0, got {count}")
    is_async = hStream is not None
    stream = stream_of(ctx, hStream) if is_async else _sync_stream(ctx, per_thread)
    s = operand(ctx, src, count, "source", src_host, writable=False)
    d = operand(ctx, dst, count, "destination", dst_host, writable=True)
    T.memcpy(ctx, d, s, count, kind, stream, is_async)
    _finish(ctx, stream, is_async, s, d)


def _sync_pair(fn: Callable[..., None], name: str) -> tuple[Callable[..., int], Callable[..., int]]:
    """The export and its `_ptds` variant of a synchronous copy body
    taking a per_thread flag last."""
    @entry
    @functools.wraps(fn)
    def legacy(*args: Any) -> None:
        fn(*args, per_thread=False)

    @entry
    @functools.wraps(fn)
    def ptds(*args: Any) -> None:
        fn(*args, per_thread=True)

    legacy.__name__ = legacy.__qualname__ = name
    ptds.__name__ = ptds.__qualname__ = name + "_ptds"
    return legacy, ptds


# ------------------------------------------------------------------ 1D
def _memcpy(dst: int, src: int, ByteCount: int, per_thread: bool) -> None:
    """Any to any by unified addressing (pageable memory included)."""
    _copy(dst, src, ByteCount, KIND_DEFAULT, None, per_thread, src_host=True, dst_host=True)


def _htod(dstDevice: int, srcHost: int, ByteCount: int, per_thread: bool) -> None:
    _copy(dstDevice, srcHost, ByteCount, KIND_HTOD, None, per_thread, src_host=True)


def _dtoh(dstHost: int, srcDevice: int, ByteCount: int, per_thread: bool) -> None:
    _copy(dstHost, srcDevice, ByteCount, KIND_DTOH, None, per_thread, dst_host=True)


def _dtod(dstDevice: int, srcDevice: int, ByteCount: int, per_thread: bool) -> None:
    _copy(dstDevice, srcDevice, ByteCount, KIND_DTOD, None, per_thread)


cuMemcpy, cuMemcpy_ptds = _sync_pair(_memcpy, "cuMemcpy")
cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds = _sync_pair(_htod, "cuMemcpyHtoD_v2")
cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds = _sync_pair(_dtoh, "cuMemcpyDtoH_v2")
cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds = _sync_pair(_dtod, "cuMemcpyDtoD_v2")


@entry
def cuMemcpyAsync(dst: int, src: int, ByteCount: int, hStream: int) -> None:
    _copy(dst, src, ByteCount, KIND_DEFAULT, hStream, src_host=True, dst_host=True)


@entry
def cuMemcpyHtoDAsync_v2(dstDevice: int, srcHost: int, ByteCount: int, hStream: int) -> None:
    _copy(dstDevice, srcHost, ByteCount, KIND_HTOD, hStream, src_host=True)


@entry
def cuMemcpyDtoHAsync_v2(dstHost: int, srcDevice: int, ByteCount: int, hStream: int) -> None:
    _copy(dstHost, srcDevice, ByteCount, KIND_DTOH, hStream, dst_host=True)


@entry
def cuMemcpyDtoDAsync_v2(dstDevice: int, srcDevice: int, ByteCount: int, hStream: int) -> None:
    _copy(dstDevice, srcDevice, ByteCount, KIND_DTOD, hStream)


cuMemcpyAsync_ptsz = per_thread_variant(cuMemcpyAsync, "cuMemcpyAsync_ptsz", 3)
cuMemcpyHtoDAsync_v2_ptsz = per_thread_variant(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2_ptsz", 3)
cuMemcpyDtoHAsync_v2_ptsz = per_thread_variant(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2_ptsz", 3)
cuMemcpyDtoDAsync_v2_ptsz = per_thread_variant(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync_v2_ptsz", 3)


# ------------------------------------------------------------------ peer
def _peer(dstDevice: int, dstContext: int, srcDevice: int, srcContext: int, ByteCount: int,
          hStream: int | None, per_thread: bool = False) -> None:
    ctx = current_context()
    dst_ctx, src_ctx = context_of(dstContext), context_of(srcContext)
    is_async = hStream is not None
    stream = stream_of(ctx, hStream) if is_async else _sync_stream(ctx, per_thread)
    _pitched.copy_peer(ctx, int(dstDevice), dst_ctx.device.ordinal, int(srcDevice), src_ctx.device.ordinal,
                       int(ByteCount), stream, is_async)


def _peer_sync(dstDevice: int, dstContext: int, srcDevice: int, srcContext: int, ByteCount: int,
               per_thread: bool) -> None:
    """Device memory of one context to another's, after both devices' work."""
    _peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, None, per_thread)


cuMemcpyPeer, cuMemcpyPeer_ptds = _sync_pair(_peer_sync, "cuMemcpyPeer")


@entry
def cuMemcpyPeerAsync(dstDevice: int, dstContext: int, srcDevice: int, srcContext: int, ByteCount: int,
                      hStream: int) -> None:
    _peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream)


cuMemcpyPeerAsync_ptsz = per_thread_variant(cuMemcpyPeerAsync, "cuMemcpyPeerAsync_ptsz", 5)


# ------------------------------------------------------------------ 2D and 3D
def _side(ctx: Any, p: Any, role: str, extent: int, offset: int) -> tuple[Any, int | None]:
    """(operand at the region start, required role) of one side of a
    CUDA_MEMCPY2D/3D; role is 'host', 'device' or None (unified)."""
    mtype = getattr(p, f"{role}MemoryType")
    if mtype == ARRAY:
        raise fail(INVALID, f"{role}: an array side is resolved by array_side")   # callers branch first
    writable = role == "dst"
    name = f"{role}{'Host' if mtype == HOST else 'Device'}"
    if mtype == HOST:
        base = getattr(p, f"{role}Host") or 0
        if not base:
            raise fail(INVALID, f"{name} is NULL")
        return operand(ctx, base + offset, extent, name, True, writable), "host"
    if mtype == DEVICE:
        return operand(ctx, getattr(p, f"{role}Device") + offset if getattr(p, f"{role}Device") else 0,
                       extent, name, False, writable), "device"
    if mtype == UNIFIED:
        base = getattr(p, f"{role}Device")
        return operand(ctx, base + offset if base else 0, extent, name, True, writable), None
    raise fail(INVALID, f"{role}MemoryType={mtype} is not a CUmemorytype")


_KINDS = {("host", "host"): KIND_HTOH, ("host", "device"): KIND_HTOD, ("device", "host"): KIND_DTOH,
          ("device", "device"): KIND_DTOD}


def array_side(p: Any, role: str, width: int, height: int, depth: int) -> tuple[int, T.Layout]:
    """(address of the region start, layout) of a CU_MEMORYTYPE_ARRAY side."""
    from gpudbg.cuda_driver.arrays import array_of
    from gpudbg.driver import arrays as _arrays
    z = getattr(p, f"{role}Z", 0)
    if getattr(p, f"{role}LOD", 0):
        raise fail(INVALID, f"{role}LOD must be 0 (use cuMipmappedArrayGetLevel for a level)")
    return _arrays.region(array_of(getattr(p, f"{role}Array")), getattr(p, f"{role}XInBytes"),
                          getattr(p, f"{role}Y"), z, width, height, depth, role)


def _copy_2d(pCopy: int, hStream: int | None, per_thread: bool = False) -> None:
    ctx = current_context()
    p = cabi.struct_at(pCopy, CUDA_MEMCPY2D, "pCopy")
    width, height = p.WidthInBytes, p.Height
    sides = {}
    for role in ("src", "dst"):
        if getattr(p, f"{role}MemoryType") == ARRAY:
            addr, lay = array_side(p, role, width, height, 1)
            sides[role] = (addr, "device", lay.pitch)
            continue
        pitch = getattr(p, f"{role}Pitch")
        if height > 1 and pitch < width:
            raise fail(INVALID, f"{role}Pitch={pitch} is smaller than WidthInBytes={width}")
        extent = (height - 1) * pitch + width if width and height else 0
        offset = getattr(p, f"{role}Y") * pitch + getattr(p, f"{role}XInBytes")
        sides[role] = _side(ctx, p, role, extent, offset) + (max(pitch, width),)
    (src, srole, spitch), (dst, drole, dpitch) = sides["src"], sides["dst"]
    kind = _KINDS.get((srole, drole), KIND_DEFAULT)
    is_async = hStream is not None
    stream = stream_of(ctx, hStream) if is_async else _sync_stream(ctx, per_thread)
    T.copy_2d(ctx, dst, dpitch, src, spitch, width, height, kind, stream, is_async,
              ctx.device.model.max_pitch)


def _copy_2d_sync(pCopy: int, per_thread: bool) -> None:
    """A CUDA_MEMCPY2D copy (the simulated copy engine has no pitch
    alignment rule, so the Unaligned form is the same copy)."""
    _copy_2d(pCopy, None, per_thread)


cuMemcpy2D_v2, cuMemcpy2D_v2_ptds = _sync_pair(_copy_2d_sync, "cuMemcpy2D_v2")
cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned_v2_ptds = _sync_pair(_copy_2d_sync, "cuMemcpy2DUnaligned_v2")


@entry
def cuMemcpy2DAsync_v2(pCopy: int, hStream: int) -> None:
    _copy_2d(pCopy, hStream)


cuMemcpy2DAsync_v2_ptsz = per_thread_variant(cuMemcpy2DAsync_v2, "cuMemcpy2DAsync_v2_ptsz", 1)


def _copy_3d(pCopy: int, hStream: int | None, per_thread: bool = False, peer: bool = False) -> None:
    ctx = current_context()
    p = cabi.struct_at(pCopy, CUDA_MEMCPY3D_PEER if peer else CUDA_MEMCPY3D, "pCopy")
    region = T.Region(p.WidthInBytes, p.Height, p.Depth)
    operands, layouts, roles = {}, {}, {}
    contexts = {ctx}
    for role in ("src", "dst"):
        if peer:
            contexts.add(context_of(getattr(p, f"{role}Context")))
        elif getattr(p, "reserved0" if role == "src" else "reserved1"):
            raise fail(INVALID, f"{'reserved0' if role == 'src' else 'reserved1'} must be NULL")
        if getattr(p, f"{role}MemoryType") == ARRAY:
            operands[role], layouts[role] = array_side(p, role, region.width, region.height, region.depth)
            roles[role] = "device"
            continue
        if getattr(p, f"{role}LOD"):
            raise fail(INVALID, f"{role}LOD must be 0 (mipmap levels belong to CUDA arrays)")
        pitch, rows = getattr(p, f"{role}Pitch"), getattr(p, f"{role}Height")
        x, y, z = (getattr(p, f"{role}{a}") for a in ("XInBytes", "Y", "Z"))
        if region.nbytes and x + region.width > pitch:
            raise fail(INVALID, f"{role}XInBytes={x} + WidthInBytes={region.width} exceeds {role}Pitch={pitch}")
        if (region.depth > 1 or z) and y + region.height > rows:
            raise fail(INVALID, f"{role}: rows {y}..{y + region.height} do not fit in {role}Height={rows}")
        layout = T.Layout(pitch, pitch * rows)
        offset = z * layout.slice + y * pitch + x
        operands[role], roles[role] = _side(ctx, p, role, layout.extent(region), offset)
        layouts[role] = layout
    kind = _KINDS.get((roles["src"], roles["dst"]), KIND_DEFAULT)
    is_async = hStream is not None
    stream = stream_of(ctx, hStream) if is_async else _sync_stream(ctx, per_thread)
    serialize = peer and not is_async
    if serialize:                  # a synchronous peer copy follows all work of both contexts
        for c in contexts:
            c.wait_idle_quietly()
    T.copy(ctx, operands["dst"], operands["src"], region, layouts["dst"], layouts["src"], kind, stream,
           is_async)
    if serialize:
        stream.wait()
        ctx.after_wait()


def _copy_3d_sync(pCopy: int, per_thread: bool) -> None:
    """A CUDA_MEMCPY3D copy between pitched memories."""
    _copy_3d(pCopy, None, per_thread)


cuMemcpy3D_v2, cuMemcpy3D_v2_ptds = _sync_pair(_copy_3d_sync, "cuMemcpy3D_v2")


@entry
def cuMemcpy3DAsync_v2(pCopy: int, hStream: int) -> None:
    _copy_3d(pCopy, hStream)


cuMemcpy3DAsync_v2_ptsz = per_thread_variant(cuMemcpy3DAsync_v2, "cuMemcpy3DAsync_v2_ptsz", 1)


def _copy_3d_peer_sync(pCopy: int, per_thread: bool) -> None:
    """A CUDA_MEMCPY3D_PEER copy: its contexts are checked, and the copy
    follows all their work and is done on return."""
    _copy_3d(pCopy, None, per_thread, peer=True)


cuMemcpy3DPeer, cuMemcpy3DPeer_ptds = _sync_pair(_copy_3d_peer_sync, "cuMemcpy3DPeer")


@entry
def cuMemcpy3DPeerAsync(pCopy: int, hStream: int) -> None:
    _copy_3d(pCopy, hStream, peer=True)


cuMemcpy3DPeerAsync_ptsz = per_thread_variant(cuMemcpy3DPeerAsync, "cuMemcpy3DPeerAsync_ptsz", 1)


# ------------------------------------------------------------------ memsets
def _memset(dstDevice: int, value: int, width: int, height: int, pitch: int, size: int,
            hStream: int | None, per_thread: bool = False) -> None:
    ctx = current_context()
    if not dstDevice:
        raise fail(INVALID, "dstDevice is NULL")
    is_async = hStream is not None
    stream = stream_of(ctx, hStream) if is_async else _sync_stream(ctx, per_thread)
    T.memset_2d(ctx, int(dstDevice), int(pitch), int(value), size, int(width), int(height), stream, is_async)
    _finish(ctx, stream, is_async, int(dstDevice))


def _make_memsets(size: int, bits: str) -> dict[str, Callable[..., int]]:
    """cuMemsetD<bits>_v2, cuMemsetD2D<bits>_v2 (+_ptds) and their Async
    forms (+_ptsz) for one element size."""
    def d1(dstDevice: int, value: int, N: int, per_thread: bool) -> None:
        _memset(dstDevice, value, N, 1, 0, size, None, per_thread)

    def d2(dstDevice: int, dstPitch: int, value: int, Width: int, Height: int, per_thread: bool) -> None:
        _memset(dstDevice, value, Width, Height, dstPitch, size, None, per_thread)

    def d1_async(dstDevice: int, value: int, N: int, hStream: int) -> None:
        _memset(dstDevice, value, N, 1, 0, size, hStream)

    def d2_async(dstDevice: int, dstPitch: int, value: int, Width: int, Height: int, hStream: int) -> None:
        _memset(dstDevice, value, Width, Height, dstPitch, size, hStream)

    out: dict[str, Callable[..., int]] = {}
    for name, fn in ((f"cuMemsetD{bits}_v2", d1), (f"cuMemsetD2D{bits}_v2", d2)):
        out[name], out[name + "_ptds"] = _sync_pair(fn, name)
    for name, fn, index in ((f"cuMemsetD{bits}Async", d1_async, 3), (f"cuMemsetD2D{bits}Async", d2_async, 5)):
        fn.__name__ = fn.__qualname__ = name
        out[name] = entry(fn)
        out[name + "_ptsz"] = per_thread_variant(out[name], name + "_ptsz", index)
    return out


_MEMSETS = {**_make_memsets(1, "8"), **_make_memsets(2, "16"), **_make_memsets(4, "32")}
globals().update(_MEMSETS)

__all__ = ["cuMemcpy", "cuMemcpy_ptds", "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds", "cuMemcpyDtoH_v2",
           "cuMemcpyDtoH_v2_ptds", "cuMemcpyDtoD_v2", "cuMemcpyDtoD_v2_ptds", "cuMemcpyAsync",
           "cuMemcpyAsync_ptsz", "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyDtoHAsync_v2",
           "cuMemcpyDtoHAsync_v2_ptsz", "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync_v2_ptsz", "cuMemcpyPeer",
           "cuMemcpyPeer_ptds", "cuMemcpyPeerAsync", "cuMemcpyPeerAsync_ptsz", "cuMemcpy2D_v2",
           "cuMemcpy2D_v2_ptds", "cuMemcpy2DUnaligned_v2", "cuMemcpy2DUnaligned_v2_ptds",
           "cuMemcpy2DAsync_v2", "cuMemcpy2DAsync_v2_ptsz", "cuMemcpy3D_v2", "cuMemcpy3D_v2_ptds",
           "cuMemcpy3DAsync_v2", "cuMemcpy3DAsync_v2_ptsz", "cuMemcpy3DPeer", "cuMemcpy3DPeer_ptds",
           "cuMemcpy3DPeerAsync", "cuMemcpy3DPeerAsync_ptsz", *sorted(_MEMSETS)]
