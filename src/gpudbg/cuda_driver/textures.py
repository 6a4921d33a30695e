"""Texture and surface objects in the driver API: cuTexObjectCreate,
cuTexObjectDestroy, cuTexObjectGetResourceDesc, cuTexObjectGetTextureDesc,
cuSurfObjectCreate, cuSurfObjectDestroy, cuSurfObjectGetResourceDesc.

The C structs (CUDA_RESOURCE_DESC with its union, CUDA_TEXTURE_DESC) are
read into the engine's neutral Resource/Sampling records
(driver/texture_objects.py), which make every check. One difference from
the runtime API is in the flags word: integer texels are read as
normalized float unless CU_TRSF_READ_AS_INTEGER is set (cuda.h), where the
runtime's readMode defaults to the element type. Resource views are not
supported (a non-NULL pResViewDesc is CUDA_ERROR_INVALID_VALUE).
"""
from __future__ import annotations

import ctypes
from typing import Any

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import R, current_context, entry, fail
from gpudbg.cuda_driver.arrays import ARRAY_KIND, MIPMAP_KIND, array_of, mipmap_of
from gpudbg.cuda_driver.module import need
from gpudbg.driver import texture_objects as _objects
from gpudbg.driver.texture_objects import Resource, ResourceType, Sampling
from gpudbg.sim.texture.formats import dtype_of

CU_TRSF_READ_AS_INTEGER, CU_TRSF_NORMALIZED_COORDINATES, CU_TRSF_SRGB = 0x01, 0x02, 0x10

__all__ = ["cuTexObjectCreate", "cuTexObjectDestroy", "cuTexObjectGetResourceDesc", "cuTexObjectGetTextureDesc",
           "cuSurfObjectCreate", "cuSurfObjectDestroy", "cuSurfObjectGetResourceDesc"]


class _Linear(ctypes.Structure):
    _fields_ = [("devPtr", ctypes.c_uint64), ("format", ctypes.c_int), ("numChannels", ctypes.c_uint),
                ("sizeInBytes", ctypes.c_size_t)]


class _Pitch2D(ctypes.Structure):
    _fields_ = [("devPtr", ctypes.c_uint64), ("format", ctypes.c_int), ("numChannels", ctypes.c_uint),
                ("width", ctypes.c_size_t), ("height", ctypes.c_size_t), ("pitchInBytes", ctypes.c_size_t)]


class _Res(ctypes.Union):
    _fields_ = [("hArray", ctypes.c_uint64), ("hMipmappedArray", ctypes.c_uint64), ("linear", _Linear),
                ("pitch2D", _Pitch2D), ("reserved", ctypes.c_int * 32)]


class CUDA_RESOURCE_DESC(ctypes.Structure):
    """cuda.h's CUDA_RESOURCE_DESC_v1 (res.array.hArray and res.mipmap.hMipmappedArray
    are the union's first member, here hArray / hMipmappedArray)."""

    _fields_ = [("resType", ctypes.c_int), ("res", _Res), ("flags", ctypes.c_uint)]


class CUDA_TEXTURE_DESC(ctypes.Structure):
    """cuda.h's CUDA_TEXTURE_DESC_v1."""

    _fields_ = [("addressMode", ctypes.c_int * 3), ("filterMode", ctypes.c_int), ("flags", ctypes.c_uint),
                ("maxAnisotropy", ctypes.c_uint), ("mipmapFilterMode", ctypes.c_int),
                ("mipmapLevelBias", ctypes.c_float), ("minMipmapLevelClamp", ctypes.c_float),
                ("maxMipmapLevelClamp", ctypes.c_float), ("borderColor", ctypes.c_float * 4),
                ("reserved", ctypes.c_int * 12)]


def _resource(address: int) -> Resource:
    d = cabi.struct_at(need(address, "pResDesc"), CUDA_RESOURCE_DESC, "pResDesc")
    if d.flags:
        raise fail(R.CUDA_ERROR_INVALID_VALUE, f"pResDesc->flags must be 0, got {d.flags}")
    try:
        t = ResourceType(d.resType)
    except ValueError:
        raise fail(R.CUDA_ERROR_INVALID_VALUE, f"pResDesc->resType {d.resType} is not a CUresourcetype") from None
    if t is ResourceType.ARRAY:
        return Resource(t, array=array_of(d.res.hArray))
    if t is ResourceType.MIPMAPPED_ARRAY:
        return Resource(t, array=mipmap_of(d.res.hMipmappedArray))
    if t is ResourceType.LINEAR:
        lin = d.res.linear
        return Resource(t, ptr=lin.devPtr, fmt=lin.format, channels=lin.numChannels, size=lin.sizeInBytes)
    p = d.res.pitch2D
    return Resource(t, ptr=p.devPtr, fmt=p.format, channels=p.numChannels, width=p.width, height=p.height,
                    pitch=p.pitchInBytes)


def _store_resource(address: int, r: Resource) -> None:
    d = CUDA_RESOURCE_DESC()
    d.resType = int(r.type)
    if r.type is ResourceType.ARRAY:
        d.res.hArray = handles.handle(ARRAY_KIND, r.array)
    elif r.type is ResourceType.MIPMAPPED_ARRAY:
        d.res.hMipmappedArray = handles.handle(MIPMAP_KIND, r.array)
    elif r.type is ResourceType.LINEAR:
        d.res.linear = _Linear(r.ptr, int(r.fmt), r.channels, r.size)
    else:
        d.res.pitch2D = _Pitch2D(r.ptr, int(r.fmt), r.channels, r.width, r.height, r.pitch)
    cabi.store_struct(address, d, "pResDesc")


def _fmt_of(res: Resource) -> Any:
    if res.type in (ResourceType.ARRAY, ResourceType.MIPMAPPED_ARRAY):
        return res.array.image.fmt
    return res.fmt


def _sampling(address: int, res: Resource) -> Sampling:
    t = cabi.struct_at(need(address, "pTexDesc"), CUDA_TEXTURE_DESC, "pTexDesc")
    try:
        dt = dtype_of(_fmt_of(res))
        promote = dt.kind in "ui" and dt.itemsize < 4 and not t.flags & CU_TRSF_READ_AS_INTEGER
    except (KeyError, ValueError):
        promote = False                       # a bad format: the engine names it
    return Sampling(tuple(t.addressMode), t.filterMode, promote, bool(t.flags & CU_TRSF_NORMALIZED_COORDINATES),
                    bool(t.flags & CU_TRSF_SRGB), tuple(t.borderColor), t.maxAnisotropy, t.mipmapFilterMode,
                    t.mipmapLevelBias, t.minMipmapLevelClamp, t.maxMipmapLevelClamp)


@entry
def cuTexObjectCreate(pTexObject: int, pResDesc: int, pTexDesc: int, pResViewDesc: int) -> None:
    need(pTexObject, "pTexObject")
    if int(pResViewDesc):
        raise fail(R.CUDA_ERROR_INVALID_VALUE, "pResViewDesc: resource views are not supported; pass NULL")
    res = _resource(pResDesc)
    handle = _objects.create_texture(current_context(), res, _sampling(pTexDesc, res))
    cabi.store(pTexObject, "u64", handle, "pTexObject")


@entry
def cuTexObjectDestroy(texObject: int) -> None:
    _objects.destroy(int(texObject), "texture", "cuTexObjectDestroy")


@entry
def cuTexObjectGetResourceDesc(pResDesc: int, texObject: int) -> None:
    need(pResDesc, "pResDesc")
    _store_resource(pResDesc, _objects.record(int(texObject), "texture", "cuTexObjectGetResourceDesc").resource)


@entry
def cuTexObjectGetTextureDesc(pTexDesc: int, texObject: int) -> None:
    need(pTexDesc, "pTexDesc")
    s = _objects.record(int(texObject), "texture", "cuTexObjectGetTextureDesc").sampling
    assert s is not None
    t = CUDA_TEXTURE_DESC()
    t.addressMode[:] = list(s.address_modes)
    t.filterMode, t.maxAnisotropy, t.mipmapFilterMode = s.filter_mode, s.max_anisotropy, s.mipmap_filter_mode
    t.flags = ((0 if s.normalized_float else CU_TRSF_READ_AS_INTEGER) | (CU_TRSF_NORMALIZED_COORDINATES
               if s.normalized_coords else 0) | (CU_TRSF_SRGB if s.srgb else 0))
    t.mipmapLevelBias, t.minMipmapLevelClamp, t.maxMipmapLevelClamp = (
        s.mipmap_level_bias, s.min_mipmap_level_clamp, s.max_mipmap_level_clamp)
    t.borderColor[:] = list(s.border_color)
    cabi.store_struct(pTexDesc, t, "pTexDesc")


@entry
def cuSurfObjectCreate(pSurfObject: int, pResDesc: int) -> None:
    need(pSurfObject, "pSurfObject")
    cabi.store(pSurfObject, "u64", _objects.create_surface(current_context(), _resource(pResDesc)), "pSurfObject")


@entry
def cuSurfObjectDestroy(surfObject: int) -> None:
    _objects.destroy(int(surfObject), "surface", "cuSurfObjectDestroy")


@entry
def cuSurfObjectGetResourceDesc(pResDesc: int, surfObject: int) -> None:
    need(pResDesc, "pResDesc")
    _store_resource(pResDesc, _objects.record(int(surfObject), "surface", "cuSurfObjectGetResourceDesc").resource)
