"""Texture and surface objects: validate a resource and a sampling state,
build the texture unit's immutable record (sim/texture/descriptors.py) and
register it in the GPU's handle table under a fresh 64-bit handle.

The API layers spell the descriptors differently (cudaResourceDesc with
res.array.array, CUDA_RESOURCE_DESC with res.array.hArray and flag words),
so each converts its struct into the neutral Resource and Sampling records
here; the driver owns the checks CUDA makes (a surface needs an array made
with the surface load/store flag, linear filtering needs float results,
32-bit integers cannot be read as normalized float, wrap and mirror need
normalized coordinates) and keeps what was asked for, so the descriptor
getters return it. Destroying an object removes its handle: a kernel that
uses it afterwards faults naming the destroyed handle.
"""
from __future__ import annotations

import enum
import threading
from dataclasses import dataclass
from typing import Any

from gpudbg.driver import arrays
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.sim.texture.descriptors import (
    AddressMode, FilterMode, Geometry, Image, Level, SurfaceState, TextureState, image_table,
)
from gpudbg.sim.texture.formats import CHANNEL_COUNTS, CUarray_format, dtype_of

INVALID = CUresult.CUDA_ERROR_INVALID_VALUE
HANDLE = CUresult.CUDA_ERROR_INVALID_HANDLE


class ResourceType(enum.IntEnum):
    """CUresourcetype = cudaResourceType."""

    ARRAY = 0
    MIPMAPPED_ARRAY = 1
    LINEAR = 2
    PITCH2D = 3


@dataclass(frozen=True)
class Resource:
    """What a texture or surface reads: an array, a mipmapped array, or
    device memory with a format (linear: size bytes; pitch2D: a pitched
    width x height image)."""

    type: ResourceType
    array: Any = None
    ptr: int = 0
    fmt: CUarray_format = CUarray_format.CU_AD_FORMAT_FLOAT
    channels: int = 1
    size: int = 0
    width: int = 0
    height: int = 0
    pitch: int = 0


@dataclass(frozen=True)
class Sampling:
    """cudaTextureDesc's content in neutral form."""

    address_modes: tuple[int, int, int] = (0, 0, 0)
    filter_mode: int = 0
    normalized_float: bool = False
    normalized_coords: bool = False
    srgb: bool = False
    border_color: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    max_anisotropy: int = 0
    mipmap_filter_mode: int = 0
    mipmap_level_bias: float = 0.0
    min_mipmap_level_clamp: float = 0.0
    max_mipmap_level_clamp: float = 0.0


@dataclass
class ObjectRecord:
    handle: int
    context: Any
    kind: str              # "texture" | "surface"
    resource: Resource
    sampling: Sampling | None
    state: TextureState | SurfaceState


_records: dict[int, ObjectRecord] = {}
_lock = threading.Lock()


def _enum(cls: type, value: Any, what: str) -> Any:
    try:
        return cls(int(value))
    except (TypeError, ValueError):
        raise EngineError(INVALID, f"{what} {value!r} is not a {cls.__name__} value") from None


def _image(ctx: Any, res: Resource, surface: bool) -> Image:
    t = _enum(ResourceType, res.type, "resType")
    if t is ResourceType.ARRAY:
        arr = arrays.live(res.array, "resource", "res.array.array")
        if surface and not arr.flags & arrays.ArrayFlags.SURFACE_LDST:
            raise EngineError(INVALID, f"{arr.describe()} was not created with the surface load/store flag "
                                       f"(cudaArraySurfaceLoadStore)")
        return arr.image
    if surface:
        raise EngineError(INVALID, "a surface object needs an array resource (cudaResourceTypeArray)")
    if t is ResourceType.MIPMAPPED_ARRAY:
        mip = res.array
        if not isinstance(mip, arrays.MipmappedArray) or mip.freed:
            raise EngineError(HANDLE, f"res.mipmap.mipmap {mip!r} is not a live mipmapped array")
        return mip.image
    fmt = _enum(CUarray_format, res.fmt, "format")
    if res.channels not in CHANNEL_COUNTS:
        raise EngineError(INVALID, f"a texel has 1, 2 or 4 channels, not {res.channels!r}")
    es = dtype_of(fmt).itemsize * res.channels
    ptr = res.ptr
    if not isinstance(ptr, int) or ptr == 0:
        raise EngineError(INVALID, f"devPtr {ptr!r} is not a device pointer")
    if ptr % ctx.device.model.texture_alignment:
        raise EngineError(INVALID, f"devPtr 0x{ptr:x} is not aligned to the texture alignment of "
                                   f"{ctx.device.model.texture_alignment} bytes")
    info = ctx.engine.resolve_pointer(ptr)
    if info is None:
        raise EngineError(INVALID, f"devPtr 0x{ptr:x} names no allocation")
    if t is ResourceType.LINEAR:
        if res.size <= 0 or res.size % es:
            raise EngineError(INVALID, f"sizeInBytes {res.size} is not a positive multiple of the {es}-byte texel")
        if res.size > info.remaining:
            raise EngineError(INVALID, f"sizeInBytes {res.size} runs past the end of the allocation at 0x{ptr:x}")
        w = res.size // es
        return Image(fmt, res.channels, Geometry.D1, (Level(ptr, w, 1, 1, res.size, res.size, res.size),),
                     pitch_linear=True)
    if res.width <= 0 or res.height <= 0 or res.pitch < res.width * es:
        raise EngineError(INVALID, f"pitch2D {res.width}x{res.height} with pitch {res.pitch} is not a valid "
                                   f"image of {es}-byte texels")
    if res.pitch % ctx.device.model.texture_pitch_alignment:
        raise EngineError(INVALID, f"pitchInBytes {res.pitch} is not a multiple of the texture pitch alignment "
                                   f"of {ctx.device.model.texture_pitch_alignment} bytes")
    if res.pitch * res.height > info.remaining:
        raise EngineError(INVALID, f"a {res.height}-row image of pitch {res.pitch} runs past the end of the "
                                   f"allocation at 0x{ptr:x}")
    span = res.pitch * res.height
    return Image(fmt, res.channels, Geometry.D2, (Level(ptr, res.width, res.height, 1, res.pitch, span, span),),
                 pitch_linear=True)


def _sampling_state(image: Image, s: Sampling) -> TextureState:
    modes = tuple(_enum(AddressMode, m, "addressMode") for m in s.address_modes)
    filt = _enum(FilterMode, s.filter_mode, "filterMode")
    mfilt = _enum(FilterMode, s.mipmap_filter_mode, "mipmapFilterMode")
    dt = dtype_of(image.fmt)
    if s.normalized_float and dt.kind in "ui" and dt.itemsize == 4:
        raise EngineError(INVALID, "32-bit integer texels cannot be read as normalized float "
                                   "(cudaReadModeNormalizedFloat)")
    floats = s.normalized_float or dt.kind == "f"
    if filt is FilterMode.LINEAR and not floats:
        raise EngineError(INVALID, "linear filtering needs float results: a float format or "
                                   "cudaReadModeNormalizedFloat")
    if len(s.border_color) != 4:
        raise EngineError(INVALID, "borderColor has 4 components")
    return TextureState(image, modes, filt, bool(s.normalized_float), bool(s.normalized_coords), bool(s.srgb),
                        tuple(float(c) for c in s.border_color), mfilt, float(s.mipmap_level_bias),
                        float(s.min_mipmap_level_clamp), float(s.max_mipmap_level_clamp), int(s.max_anisotropy))


def create_texture(ctx: Any, res: Resource, sampling: Sampling) -> int:
    image = _image(ctx, res, surface=False)
    state = _sampling_state(image, sampling)
    return _add(ctx, "texture", res, sampling, state)


def create_surface(ctx: Any, res: Resource) -> int:
    return _add(ctx, "surface", res, None, SurfaceState(_image(ctx, res, surface=True)))


def _forget_destroyed_contexts() -> None:
    """Objects die with their context (mcDeviceReset, cuCtxDestroy): their
    handles leave the device's table, so a later kernel faults on them."""
    with _lock:
        dead = [r for r in _records.values() if r.context.destroyed]
        for r in dead:
            del _records[r.handle]
    for r in dead:
        image_table(r.context.gpu).remove(r.handle)


def _add(ctx: Any, kind: str, res: Resource, sampling: Sampling | None, state: Any) -> int:
    _forget_destroyed_contexts()
    handle = image_table(ctx.gpu).add(state)
    with _lock:
        _records[handle] = ObjectRecord(handle, ctx, kind, res, sampling, state)
    return handle


def record(handle: Any, kind: str, api: str) -> ObjectRecord:
    _forget_destroyed_contexts()
    rec = _records.get(handle) if isinstance(handle, int) else None
    if rec is None or rec.kind != kind:
        raise EngineError(INVALID, f"{api}: {handle!r} is not a live {kind} object")
    return rec


def destroy(handle: Any, kind: str, api: str) -> None:
    """Destroy a texture/surface object; 0 is a no-op as in CUDA."""
    if handle == 0:
        return
    rec = record(handle, kind, api)
    with _lock:
        _records.pop(rec.handle, None)
    image_table(rec.context.gpu).remove(rec.handle)


def objects(ctx: Any = None) -> list[ObjectRecord]:
    """The live texture and surface objects (of one context), by handle."""
    _forget_destroyed_contexts()
    with _lock:
        return sorted((r for r in _records.values() if ctx is None or r.context is ctx), key=lambda r: r.handle)
