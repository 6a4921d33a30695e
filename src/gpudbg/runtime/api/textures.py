"""Texture and surface objects in the mc* runtime: mcCreateTextureObject,
mcDestroyTextureObject, mcGetTextureObjectResourceDesc,
mcGetTextureObjectTextureDesc, mcCreateSurfaceObject,
mcDestroySurfaceObject, mcGetSurfaceObjectResourceDesc.

A texture/surface object is a 64-bit integer (mcTextureObject_t is an
unsigned long long, as cudaTextureObject_t), passed to kernels like any
other 64-bit argument. This module only translates the mc* structs into the
driver's neutral Resource/Sampling records and back; every rule CUDA
enforces is the driver's (driver/texture_objects.py). Resource view
descriptors are not supported: a non-None pResViewDesc is refused.
"""
from __future__ import annotations

from typing import Any

from gpudbg.driver import texture_objects as _objects
from gpudbg.driver.texture_objects import Resource, ResourceType, Sampling
from gpudbg.runtime.api._args import Struct, UInt64
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.errors import McError, mcError_t
from gpudbg.runtime.texture_types import (
    FormatError, array_format, channel_desc, mcResourceDesc, mcResourceViewDesc, mcTextureDesc,
)

INVALID = mcError_t.mcErrorInvalidValue
ResDesc = Struct(mcResourceDesc)
TexDesc = Struct(mcTextureDesc)
ViewDesc = Struct(mcResourceViewDesc, optional=True)


def _format(desc: Any, where: str) -> tuple[Any, int]:
    try:
        return array_format(desc)
    except FormatError as e:
        raise McError(INVALID, f"{where}: {e}") from None


def _resource(d: mcResourceDesc) -> Resource:
    try:
        t = ResourceType(d.resType)
    except ValueError:
        raise McError(INVALID, f"pResDesc.resType {d.resType!r} is not an mcResourceType") from None
    if t is ResourceType.ARRAY:
        return Resource(t, array=d.res.array.array)
    if t is ResourceType.MIPMAPPED_ARRAY:
        return Resource(t, array=d.res.mipmap.mipmap)
    if t is ResourceType.LINEAR:
        lin = d.res.linear
        fmt, n = _format(lin.desc, "pResDesc.res.linear.desc")
        return Resource(t, ptr=lin.devPtr, fmt=fmt, channels=n, size=lin.sizeInBytes)
    p = d.res.pitch2D
    fmt, n = _format(p.desc, "pResDesc.res.pitch2D.desc")
    return Resource(t, ptr=p.devPtr, fmt=fmt, channels=n, width=p.width, height=p.height, pitch=p.pitchInBytes)


def _resource_desc(r: Resource) -> mcResourceDesc:
    d = mcResourceDesc(int(r.type))
    if r.type is ResourceType.ARRAY:
        d.res.array.array = r.array
    elif r.type is ResourceType.MIPMAPPED_ARRAY:
        d.res.mipmap.mipmap = r.array
    elif r.type is ResourceType.LINEAR:
        d.res.linear.devPtr, d.res.linear.sizeInBytes = r.ptr, r.size
        d.res.linear.desc = channel_desc(r.fmt, r.channels)
    else:
        p = d.res.pitch2D
        p.devPtr, p.width, p.height, p.pitchInBytes = r.ptr, r.width, r.height, r.pitch
        p.desc = channel_desc(r.fmt, r.channels)
    return d


def _sampling(t: mcTextureDesc) -> Sampling:
    modes = list(t.addressMode)
    border = list(t.borderColor)
    if len(modes) != 3 or len(border) != 4:
        raise McError(INVALID, "pTexDesc: addressMode has 3 entries and borderColor 4")
    return Sampling(tuple(modes), t.filterMode, t.readMode == 1, bool(t.normalizedCoords), bool(t.sRGB),
                    tuple(border), t.maxAnisotropy, t.mipmapFilterMode, t.mipmapLevelBias,
                    t.minMipmapLevelClamp, t.maxMipmapLevelClamp)


def _texture_desc(s: Sampling) -> mcTextureDesc:
    return mcTextureDesc(list(s.address_modes), s.filter_mode, int(s.normalized_float), int(s.srgb),
                         list(s.border_color), int(s.normalized_coords), s.max_anisotropy, s.mipmap_filter_mode,
                         s.mipmap_level_bias, s.min_mipmap_level_clamp, s.max_mipmap_level_clamp)


@_api(1)
def mcCreateTextureObject(pResDesc: ResDesc, pTexDesc: TexDesc, pResViewDesc: ViewDesc = None) -> int:
    """A texture object over an array, a mipmapped array, or linear or pitched device memory."""
    if pResViewDesc is not None:
        raise McError(INVALID, "pResViewDesc: resource views are not supported; pass None")
    return _objects.create_texture(_ctx(), _resource(pResDesc), _sampling(pTexDesc))


@_api(0)
def mcDestroyTextureObject(texObject: UInt64) -> None:
    _objects.destroy(texObject, "texture", "mcDestroyTextureObject")


@_api(1)
def mcGetTextureObjectResourceDesc(texObject: UInt64) -> mcResourceDesc:
    return _resource_desc(_objects.record(texObject, "texture", "mcGetTextureObjectResourceDesc").resource)


@_api(1)
def mcGetTextureObjectTextureDesc(texObject: UInt64) -> mcTextureDesc:
    rec = _objects.record(texObject, "texture", "mcGetTextureObjectTextureDesc")
    assert rec.sampling is not None
    return _texture_desc(rec.sampling)


@_api(1)
def mcCreateSurfaceObject(pResDesc: ResDesc) -> int:
    """A surface object over an array made with mcArraySurfaceLoadStore."""
    return _objects.create_surface(_ctx(), _resource(pResDesc))


@_api(0)
def mcDestroySurfaceObject(surfObject: UInt64) -> None:
    _objects.destroy(surfObject, "surface", "mcDestroySurfaceObject")


@_api(1)
def mcGetSurfaceObjectResourceDesc(surfObject: UInt64) -> mcResourceDesc:
    return _resource_desc(_objects.record(surfObject, "surface", "mcGetSurfaceObjectResourceDesc").resource)


__all__ = ["mcCreateTextureObject", "mcDestroyTextureObject", "mcGetTextureObjectResourceDesc",
           "mcGetTextureObjectTextureDesc", "mcCreateSurfaceObject", "mcDestroySurfaceObject",
           "mcGetSurfaceObjectResourceDesc"]
