"""CUDA arrays in the mc* runtime: mcMallocArray, mcMalloc3DArray,
mcMallocMipmappedArray, mcGetMipmappedArrayLevel, mcFreeArray,
mcFreeMipmappedArray, mcArrayGetInfo, mcCreateChannelDesc and the copies
that name an array (mcMemcpy2DToArray, mcMemcpy2DFromArray and their Async
forms, mcMemcpyToArray, mcMemcpyFromArray; mcMemcpy3D takes srcArray /
dstArray in its parms, copies.py).

Seed 002 lists these names among the memory functions without their own
sections; their signatures are the CUDA runtime's (cudaMallocArray(desc,
width, height, flags) ...). Arguments are checked by their annotated kinds
(_args.py); shapes, formats and flags by the driver (driver/arrays.py),
which owns the array objects. Offsets along x are bytes (wOffset), as in
cudaMemcpy2DToArray.
"""
from __future__ import annotations

from typing import Annotated, Any

from gpudbg.driver import arrays as _arrays
from gpudbg.driver.arrays import CudaArray, MipmappedArray
from gpudbg.runtime.api._args import DstMemory, Flags, Int, MemcpyKind, Size, SrcMemory, Struct, mcStream_t
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.api._kinds import HandleKind
from gpudbg.runtime.errors import McError, mcError_t
from gpudbg.runtime.memory_types import mcExtent
from gpudbg.runtime.texture_types import FormatError, array_format, channel_desc, mcChannelFormatDesc

INVALID = mcError_t.mcErrorInvalidValue
mcArray_t = Annotated[Any, HandleKind((CudaArray,), "an array handle (mcArray_t)")]
mcMipmappedArray_t = Annotated[Any, HandleKind((MipmappedArray,), "a mipmapped array handle (mcMipmappedArray_t)")]
ChannelDesc = Struct(mcChannelFormatDesc)
Extent = Struct(mcExtent)


def _format(desc: mcChannelFormatDesc) -> tuple[Any, int]:
    try:
        return array_format(desc)
    except FormatError as e:
        raise McError(INVALID, f"desc: {e}") from None


def _stream(ctx: Any, stream: Any, is_async: bool) -> Any:
    return ctx.stream(stream if is_async else None)


@_api(1)
def mcCreateChannelDesc(x: Int, y: Int, z: Int, w: Int, f: Int) -> mcChannelFormatDesc:
    """cudaCreateChannelDesc: the struct as given (checked where it is used)."""
    return mcChannelFormatDesc(x, y, z, w, f)


@_api(1)
def mcMallocArray(desc: ChannelDesc, width: Size, height: Size = 0, flags: Flags = 0) -> CudaArray:
    """A 1D (height 0) or 2D array; flags mcArraySurfaceLoadStore / TextureGather."""
    fmt, n = _format(desc)
    if flags & (0x1 | 0x4):
        raise McError(INVALID, "mcMallocArray: layered and cubemap arrays are made with mcMalloc3DArray")
    return _arrays.create(_ctx(), fmt, n, width, height, 0, flags)


@_api(1)
def mcMalloc3DArray(desc: ChannelDesc, extent: Extent, flags: Flags = 0) -> CudaArray:
    """extent in elements: (w,0,0) 1D, (w,h,0) 2D, (w,h,d) 3D; mcArrayLayered
    makes depth the layer count, mcArrayCubemap needs w == h and depth 6."""
    fmt, n = _format(desc)
    return _arrays.create(_ctx(), fmt, n, extent.width, extent.height, extent.depth, flags)


@_api(1)
def mcMallocMipmappedArray(desc: ChannelDesc, extent: Extent, numLevels: Size, flags: Flags = 0) -> MipmappedArray:
    """Levels halve every dimension down to 1 (at most 1 + log2 of the largest)."""
    fmt, n = _format(desc)
    if numLevels == 0:
        raise McError(INVALID, "numLevels must be at least 1")
    return _arrays.create(_ctx(), fmt, n, extent.width, extent.height, extent.depth, flags, numLevels)


@_api(1)
def mcGetMipmappedArrayLevel(mipmappedArray: mcMipmappedArray_t, level: Size) -> CudaArray:
    return _arrays.level_of(mipmappedArray, level, "mcGetMipmappedArrayLevel")


@_api(0)
def mcFreeArray(array: Annotated[Any, HandleKind((CudaArray,), "an array handle (mcArray_t)", none=True)]) -> None:
    """Waits for the device, then frees; None (NULL) is a no-op."""
    if array is not None:
        _arrays.destroy(_ctx(), array, "mcFreeArray")


@_api(0)
def mcFreeMipmappedArray(mipmappedArray: Annotated[Any, HandleKind((MipmappedArray,), "a mipmapped array handle "
                                                                    "(mcMipmappedArray_t)", none=True)]) -> None:
    if mipmappedArray is not None:
        _arrays.destroy(_ctx(), mipmappedArray, "mcFreeMipmappedArray")


@_api(3)
def mcArrayGetInfo(array: mcArray_t) -> tuple[mcChannelFormatDesc, mcExtent, int]:
    """(desc, extent, flags) as the array was made."""
    a = _arrays.live(array, "mcArrayGetInfo")
    return channel_desc(a.fmt, a.channels), mcExtent(a.width, a.height, a.depth), a.flags


def _to_array(dst: Any, wOffset: int, hOffset: int, src: Any, spitch: int, width: int, height: int, kind: Any,
              stream: Any, is_async: bool, api: str) -> None:
    ctx = _ctx()
    _arrays.copy_2d(ctx, dst, wOffset, hOffset, src, spitch, width, height, kind, _stream(ctx, stream, is_async),
                    is_async, True, api)


def _from_array(dst: Any, dpitch: int, src: Any, wOffset: int, hOffset: int, width: int, height: int, kind: Any,
                stream: Any, is_async: bool, api: str) -> None:
    ctx = _ctx()
    _arrays.copy_2d(ctx, src, wOffset, hOffset, dst, dpitch, width, height, kind, _stream(ctx, stream, is_async),
                    is_async, False, api)


@_api(0)
def mcMemcpy2DToArray(dst: mcArray_t, wOffset: Size, hOffset: Size, src: SrcMemory, spitch: Size, width: Size,
                      height: Size, kind: MemcpyKind) -> None:
    """width bytes x height rows from a pitched source to (wOffset bytes, hOffset) of the array."""
    _to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, None, False, "mcMemcpy2DToArray")


@_api(0)
def mcMemcpy2DToArrayAsync(dst: mcArray_t, wOffset: Size, hOffset: Size, src: SrcMemory, spitch: Size,
                           width: Size, height: Size, kind: MemcpyKind, stream: mcStream_t = None) -> None:
    _to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, stream, True, "mcMemcpy2DToArrayAsync")


@_api(0)
def mcMemcpy2DFromArray(dst: DstMemory, dpitch: Size, src: mcArray_t, wOffset: Size, hOffset: Size, width: Size,
                        height: Size, kind: MemcpyKind) -> None:
    _from_array(dst, dpitch, src, wOffset, hOffset, width, height, kind, None, False, "mcMemcpy2DFromArray")


@_api(0)
def mcMemcpy2DFromArrayAsync(dst: DstMemory, dpitch: Size, src: mcArray_t, wOffset: Size, hOffset: Size,
                             width: Size, height: Size, kind: MemcpyKind, stream: mcStream_t = None) -> None:
    _from_array(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream, True, "mcMemcpy2DFromArrayAsync")


@_api(0)
def mcMemcpyToArray(dst: mcArray_t, wOffset: Size, hOffset: Size, src: SrcMemory, count: Size,
                    kind: MemcpyKind) -> None:
    """count bytes from (wOffset bytes, hOffset) on, row after row."""
    ctx = _ctx()
    _arrays.copy_linear(ctx, dst, wOffset, hOffset, src, count, kind, _stream(ctx, None, False), False, True,
                        "mcMemcpyToArray")


@_api(0)
def mcMemcpyFromArray(dst: DstMemory, src: mcArray_t, wOffset: Size, hOffset: Size, count: Size,
                      kind: MemcpyKind) -> None:
    ctx = _ctx()
    _arrays.copy_linear(ctx, src, wOffset, hOffset, dst, count, kind, _stream(ctx, None, False), False, False,
                        "mcMemcpyFromArray")


__all__ = ["mcCreateChannelDesc", "mcMallocArray", "mcMalloc3DArray", "mcMallocMipmappedArray",
           "mcGetMipmappedArrayLevel", "mcFreeArray", "mcFreeMipmappedArray", "mcArrayGetInfo",
           "mcMemcpy2DToArray", "mcMemcpy2DToArrayAsync", "mcMemcpy2DFromArray", "mcMemcpy2DFromArrayAsync",
           "mcMemcpyToArray", "mcMemcpyFromArray"]
