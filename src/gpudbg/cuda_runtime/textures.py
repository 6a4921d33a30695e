"""CUDA arrays, texture objects and surface objects in the runtime API's C
ABI: cudaMallocArray, cudaMalloc3DArray, cudaMallocMipmappedArray,
cudaGetMipmappedArrayLevel, cudaFreeArray, cudaFreeMipmappedArray,
cudaArrayGetInfo, cudaGetChannelDesc, cudaCreateChannelDesc, the array
copies (cudaMemcpy2DToArray/FromArray with Async and _ptsz/_ptds forms,
cudaMemcpyToArray/FromArray), cudaCreateTextureObject,
cudaDestroyTextureObject, cudaGetTextureObjectResourceDesc/TextureDesc,
cudaCreateSurfaceObject, cudaDestroySurfaceObject and
cudaGetSurfaceObjectResourceDesc.

Each export unpacks the C structs (driver_types.h / texture_types.h
layouts, below as struct formats) into the mc* structs and calls the mc*
twin (runtime/api/arrays.py, textures.py). A cudaArray_t is a cabi.handles
number of kind CUarray (a cudaMipmappedArray_t of kind CUmipmappedArray),
the driver API's kinds, so the two APIs' handles are interchangeable as in
CUDA; texture and surface objects are the engine's own 64-bit values.
"""
from __future__ import annotations

import struct
from typing import Any

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_runtime._base import E, call, export, fail, memory, need, per_thread, per_thread_sync, stream
from gpudbg.runtime import mc
from gpudbg.runtime.memory_types import mcExtent
from gpudbg.runtime.texture_types import (
    mcChannelFormatDesc, mcResourceDesc, mcResourceType, mcTextureDesc,
)

ARRAY_KIND, MIPMAP_KIND = "CUarray", "CUmipmappedArray"
CHANNEL = struct.Struct("<4iI")                        # struct cudaChannelFormatDesc (20 bytes)
EXTENT = struct.Struct("<3Q")                          # struct cudaExtent
RESOURCE_SIZE = 144                                    # struct cudaResourceDesc: resType, union res (128), flags
TEXTURE = struct.Struct("<3i2ii4fiIi3f2i")             # struct cudaTextureDesc (72 bytes)

__all__ = ["cudaMallocArray", "cudaMalloc3DArray", "cudaMallocMipmappedArray", "cudaGetMipmappedArrayLevel",
           "cudaFreeArray", "cudaFreeMipmappedArray", "cudaArrayGetInfo", "cudaGetChannelDesc",
           "cudaCreateChannelDesc", "cudaMemcpy2DToArray", "cudaMemcpy2DToArrayAsync",
           "cudaMemcpy2DToArrayAsync_ptsz", "cudaMemcpy2DToArray_ptds", "cudaMemcpy2DFromArray",
           "cudaMemcpy2DFromArrayAsync", "cudaMemcpy2DFromArrayAsync_ptsz", "cudaMemcpy2DFromArray_ptds",
           "cudaMemcpyToArray", "cudaMemcpyFromArray", "cudaCreateTextureObject", "cudaDestroyTextureObject",
           "cudaGetTextureObjectResourceDesc", "cudaGetTextureObjectTextureDesc", "cudaCreateSurfaceObject",
           "cudaDestroySurfaceObject", "cudaGetSurfaceObjectResourceDesc"]


# ------------------------------------------------------------------ handles and structs
def array_of(number: int) -> Any:
    if not int(number):
        raise fail(E.mcErrorInvalidResourceHandle, "cudaArray_t is NULL")
    return handles.lookup(ARRAY_KIND, int(number))


def _mipmap_of(number: int) -> Any:
    if not int(number):
        raise fail(E.mcErrorInvalidResourceHandle, "cudaMipmappedArray_t is NULL")
    return handles.lookup(MIPMAP_KIND, int(number))


def _channel(address: int, what: str) -> mcChannelFormatDesc:
    return mcChannelFormatDesc(*CHANNEL.unpack(cabi.read(need(address, what), CHANNEL.size, what)))


def _pack_channel(d: mcChannelFormatDesc) -> bytes:
    return CHANNEL.pack(d.x, d.y, d.z, d.w, int(d.f))


def _extent(value: Any) -> mcExtent:
    return mcExtent(*EXTENT.unpack(bytes(value)))


def _resource(address: int) -> mcResourceDesc:
    raw = cabi.read(need(address, "pResDesc"), RESOURCE_SIZE, "pResDesc")
    d = mcResourceDesc(struct.unpack_from("<i", raw, 0)[0])
    d.flags = struct.unpack_from("<I", raw, 136)[0]
    t = d.resType
    if t == mcResourceType.mcResourceTypeArray:
        d.res.array.array = array_of(struct.unpack_from("<Q", raw, 8)[0])
    elif t == mcResourceType.mcResourceTypeMipmappedArray:
        d.res.mipmap.mipmap = _mipmap_of(struct.unpack_from("<Q", raw, 8)[0])
    elif t == mcResourceType.mcResourceTypeLinear:
        lin = d.res.linear
        lin.devPtr, = struct.unpack_from("<Q", raw, 8)
        lin.desc = mcChannelFormatDesc(*CHANNEL.unpack_from(raw, 16))
        lin.sizeInBytes, = struct.unpack_from("<Q", raw, 40)
    elif t == mcResourceType.mcResourceTypePitch2D:
        p = d.res.pitch2D
        p.devPtr, = struct.unpack_from("<Q", raw, 8)
        p.desc = mcChannelFormatDesc(*CHANNEL.unpack_from(raw, 16))
        p.width, p.height, p.pitchInBytes = struct.unpack_from("<3Q", raw, 40)
    return d


def _pack_resource(d: mcResourceDesc) -> bytes:
    raw = bytearray(RESOURCE_SIZE)
    struct.pack_into("<i", raw, 0, int(d.resType))
    t = d.resType
    if t == mcResourceType.mcResourceTypeArray:
        struct.pack_into("<Q", raw, 8, handles.handle(ARRAY_KIND, d.res.array.array))
    elif t == mcResourceType.mcResourceTypeMipmappedArray:
        struct.pack_into("<Q", raw, 8, handles.handle(MIPMAP_KIND, d.res.mipmap.mipmap))
    elif t == mcResourceType.mcResourceTypeLinear:
        struct.pack_into("<Q", raw, 8, d.res.linear.devPtr)
        raw[16:36] = _pack_channel(d.res.linear.desc)
        struct.pack_into("<Q", raw, 40, d.res.linear.sizeInBytes)
    else:
        p = d.res.pitch2D
        struct.pack_into("<Q", raw, 8, p.devPtr)
        raw[16:36] = _pack_channel(p.desc)
        struct.pack_into("<3Q", raw, 40, p.width, p.height, p.pitchInBytes)
    struct.pack_into("<I", raw, 136, d.flags)
    return bytes(raw)


def _texture(address: int) -> mcTextureDesc:
    v = TEXTURE.unpack(cabi.read(need(address, "pTexDesc"), TEXTURE.size, "pTexDesc"))
    return mcTextureDesc(list(v[0:3]), v[3], v[4], v[5], list(v[6:10]), v[10], v[11], v[12], v[13], v[14], v[15],
                         v[16], v[17])


def _pack_texture(t: mcTextureDesc) -> bytes:
    return TEXTURE.pack(*t.addressMode, t.filterMode, t.readMode, t.sRGB, *t.borderColor, t.normalizedCoords,
                        t.maxAnisotropy, t.mipmapFilterMode, t.mipmapLevelBias, t.minMipmapLevelClamp,
                        t.maxMipmapLevelClamp, t.disableTrilinearOptimization, t.seamlessCubemap)


# ------------------------------------------------------------------ arrays
def cudaCreateChannelDesc(x: int, y: int, z: int, w: int, f: int) -> bytes:
    """Returns the struct by value (no error code), as CUDA's does."""
    return CHANNEL.pack(int(x), int(y), int(z), int(w), int(f) & 0xFFFFFFFF)


@export
def cudaMallocArray(array: int, desc: int, width: int, height: int, flags: int) -> None:
    need(array, "array")
    a = call(mc.mcMallocArray, _channel(desc, "desc"), int(width), int(height), int(flags))
    cabi.store(array, "u64", handles.handle(ARRAY_KIND, a), "array")


@export
def cudaMalloc3DArray(array: int, desc: int, extent: Any, flags: int) -> None:
    need(array, "array")
    a = call(mc.mcMalloc3DArray, _channel(desc, "desc"), _extent(extent), int(flags))
    cabi.store(array, "u64", handles.handle(ARRAY_KIND, a), "array")


@export
def cudaMallocMipmappedArray(mipmappedArray: int, desc: int, extent: Any, numLevels: int, flags: int) -> None:
    need(mipmappedArray, "mipmappedArray")
    m = call(mc.mcMallocMipmappedArray, _channel(desc, "desc"), _extent(extent), int(numLevels), int(flags))
    cabi.store(mipmappedArray, "u64", handles.handle(MIPMAP_KIND, m), "mipmappedArray")


@export
def cudaGetMipmappedArrayLevel(levelArray: int, mipmappedArray: int, level: int) -> None:
    need(levelArray, "levelArray")
    a = call(mc.mcGetMipmappedArrayLevel, _mipmap_of(mipmappedArray), int(level))
    cabi.store(levelArray, "u64", handles.handle(ARRAY_KIND, a), "levelArray")


@export
def cudaFreeArray(array: int) -> None:
    """0 is a no-op; the handle is retired."""
    if not int(array):
        return
    call(mc.mcFreeArray, array_of(array))
    handles.forget(ARRAY_KIND, int(array))


@export
def cudaFreeMipmappedArray(mipmappedArray: int) -> None:
    if not int(mipmappedArray):
        return
    m = _mipmap_of(mipmappedArray)
    call(mc.mcFreeMipmappedArray, m)
    handles.forget(MIPMAP_KIND, int(mipmappedArray))


@export
def cudaArrayGetInfo(desc: int, extent: int, flags: int, array: int) -> None:
    """Any of the three out-pointers may be NULL."""
    d, e, f = call(mc.mcArrayGetInfo, array_of(array))
    if int(desc):
        cabi.write(desc, _pack_channel(d), "desc")
    if int(extent):
        cabi.write(extent, EXTENT.pack(e.width, e.height, e.depth), "extent")
    if int(flags):
        cabi.store(flags, "u32", f, "flags")


@export
def cudaGetChannelDesc(desc: int, array: int) -> None:
    need(desc, "desc")
    d, _, _ = call(mc.mcArrayGetInfo, array_of(array))
    cabi.write(desc, _pack_channel(d), "desc")


# ------------------------------------------------------------------ copies
def _span(pitch: int, width: int, height: int) -> int:
    return 0 if not width or not height else int(pitch) * (int(height) - 1) + int(width)


@export
def cudaMemcpy2DToArrayAsync(dst: int, wOffset: int, hOffset: int, src: int, spitch: int, width: int,
                             height: int, kind: int, stream_: int) -> None:
    call(mc.mcMemcpy2DToArrayAsync, array_of(dst), int(wOffset), int(hOffset),
         memory(src, _span(spitch, width, height), "src", False), int(spitch), int(width), int(height), int(kind),
         stream(stream_))


@export
def cudaMemcpy2DToArray(dst: int, wOffset: int, hOffset: int, src: int, spitch: int, width: int, height: int,
                        kind: int) -> None:
    call(mc.mcMemcpy2DToArray, array_of(dst), int(wOffset), int(hOffset),
         memory(src, _span(spitch, width, height), "src", False), int(spitch), int(width), int(height), int(kind))


@export
def cudaMemcpy2DFromArrayAsync(dst: int, dpitch: int, src: int, wOffset: int, hOffset: int, width: int,
                               height: int, kind: int, stream_: int) -> None:
    call(mc.mcMemcpy2DFromArrayAsync, memory(dst, _span(dpitch, width, height), "dst"), int(dpitch),
         array_of(src), int(wOffset), int(hOffset), int(width), int(height), int(kind), stream(stream_))


@export
def cudaMemcpy2DFromArray(dst: int, dpitch: int, src: int, wOffset: int, hOffset: int, width: int, height: int,
                          kind: int) -> None:
    call(mc.mcMemcpy2DFromArray, memory(dst, _span(dpitch, width, height), "dst"), int(dpitch), array_of(src),
         int(wOffset), int(hOffset), int(width), int(height), int(kind))


cudaMemcpy2DToArrayAsync_ptsz = per_thread(cudaMemcpy2DToArrayAsync, "cudaMemcpy2DToArrayAsync_ptsz", 8)
cudaMemcpy2DToArray_ptds = per_thread_sync(cudaMemcpy2DToArrayAsync, "cudaMemcpy2DToArray_ptds")
cudaMemcpy2DFromArrayAsync_ptsz = per_thread(cudaMemcpy2DFromArrayAsync, "cudaMemcpy2DFromArrayAsync_ptsz", 8)
cudaMemcpy2DFromArray_ptds = per_thread_sync(cudaMemcpy2DFromArrayAsync, "cudaMemcpy2DFromArray_ptds")


@export
def cudaMemcpyToArray(dst: int, wOffset: int, hOffset: int, src: int, count: int, kind: int) -> None:
    call(mc.mcMemcpyToArray, array_of(dst), int(wOffset), int(hOffset), memory(src, int(count), "src", False),
         int(count), int(kind))


@export
def cudaMemcpyFromArray(dst: int, src: int, wOffset: int, hOffset: int, count: int, kind: int) -> None:
    call(mc.mcMemcpyFromArray, memory(dst, int(count), "dst"), array_of(src), int(wOffset), int(hOffset),
         int(count), int(kind))


# ------------------------------------------------------------------ objects
@export
def cudaCreateTextureObject(pTexObject: int, pResDesc: int, pTexDesc: int, pResViewDesc: int) -> None:
    need(pTexObject, "pTexObject")
    if int(pResViewDesc):
        raise fail(E.mcErrorInvalidValue, "pResViewDesc: resource views are not supported; pass NULL")
    handle = call(mc.mcCreateTextureObject, _resource(pResDesc), _texture(pTexDesc), None)
    cabi.store(pTexObject, "u64", handle, "pTexObject")


@export
def cudaDestroyTextureObject(texObject: int) -> None:
    call(mc.mcDestroyTextureObject, int(texObject))


@export
def cudaGetTextureObjectResourceDesc(pResDesc: int, texObject: int) -> None:
    need(pResDesc, "pResDesc")
    cabi.write(pResDesc, _pack_resource(call(mc.mcGetTextureObjectResourceDesc, int(texObject))), "pResDesc")


@export
def cudaGetTextureObjectTextureDesc(pTexDesc: int, texObject: int) -> None:
    need(pTexDesc, "pTexDesc")
    cabi.write(pTexDesc, _pack_texture(call(mc.mcGetTextureObjectTextureDesc, int(texObject))), "pTexDesc")


@export
def cudaCreateSurfaceObject(pSurfObject: int, pResDesc: int) -> None:
    need(pSurfObject, "pSurfObject")
    cabi.store(pSurfObject, "u64", call(mc.mcCreateSurfaceObject, _resource(pResDesc)), "pSurfObject")


@export
def cudaDestroySurfaceObject(surfObject: int) -> None:
    call(mc.mcDestroySurfaceObject, int(surfObject))


@export
def cudaGetSurfaceObjectResourceDesc(pResDesc: int, surfObject: int) -> None:
    need(pResDesc, "pResDesc")
    cabi.write(pResDesc, _pack_resource(call(mc.mcGetSurfaceObjectResourceDesc, int(surfObject))), "pResDesc")
