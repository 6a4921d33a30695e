"""CUDA arrays and mipmapped arrays: opaque images whose texels live in
device memory (an allocation of kind ARRAY, row-major, x fastest, then y,
z, layer or cube face), described for the texture unit as a
sim.texture.descriptors.Image.

The one idea: an array is a pitched region the program cannot name, so
copies to and from it are the ordinary 2D/3D copies (driver/transfer.py)
with the array's base, pitch and rows per slice filled in: stream ordering,
staging and the synchronization rules come for free, and a copy that does
not fit is refused with the array's size in the message.

Shapes follow cudaMalloc3DArray: (w, 0, 0) is 1D, (w, h, 0) 2D, (w, h, d)
3D; the layered flag makes depth the layer count (h = 0: 1D layered), the
cubemap flag needs w == h and depth 6 (6·layers when also layered). It does
not model sparse or deferred-mapping arrays, or array memory requirements.
"""
from __future__ import annotations

import enum
import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

from gpudbg.driver import transfer as T
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.sim.memory.spaces import AllocationKind
from gpudbg.sim.texture.descriptors import Geometry, Image, Level
from gpudbg.sim.texture.formats import CHANNEL_COUNTS, CUarray_format, dtype_of

INVALID = CUresult.CUDA_ERROR_INVALID_VALUE
HANDLE = CUresult.CUDA_ERROR_INVALID_HANDLE
MAX_DIM = 1 << 16   # the device's texture size limits (cudaDevAttrMaxTexture2DWidth and friends)


class ArrayFlags(enum.IntFlag):
    """CUDA_ARRAY3D_* (cuda.h) = cudaArray* (driver_types.h) flags."""

    LAYERED = 0x01
    SURFACE_LDST = 0x02
    CUBEMAP = 0x04
    TEXTURE_GATHER = 0x08


_KNOWN_FLAGS = int(ArrayFlags.LAYERED | ArrayFlags.SURFACE_LDST | ArrayFlags.CUBEMAP | ArrayFlags.TEXTURE_GATHER)
_ids = itertools.count(1)


@dataclass(eq=False)
class CudaArray:
    """The object behind an mcArray_t / CUarray handle."""

    context: Any
    fmt: CUarray_format
    channels: int
    width: int
    height: int
    depth: int
    flags: int
    image: Image
    allocation: int                  # base of the backing allocation (0 for a mipmap level view)
    parent: "MipmappedArray | None" = None
    level: int = 0
    freed: bool = False
    id: int = field(default_factory=lambda: next(_ids))

    @property
    def element_size(self) -> int:
        return self.image.element_size

    @property
    def address(self) -> int:
        return self.image.base.address

    def describe(self) -> str:
        dims = "x".join(str(v) for v in (self.width, self.height, self.depth) if v)
        what = f"level {self.level} of mipmapped array #{self.parent.id}" if self.parent else f"CUDA array #{self.id}"
        return (f"{what}: {self.image.geometry.value} {dims}, {self.channels} x {self.fmt.name} "
                f"at 0x{self.address:x}")

    def __repr__(self) -> str:
        return f"<{self.describe()}>"


@dataclass(eq=False)
class MipmappedArray:
    """The object behind an mcMipmappedArray_t / CUmipmappedArray handle."""

    context: Any
    levels: list[CudaArray]
    allocation: int
    image: Image
    freed: bool = False
    id: int = field(default_factory=lambda: next(_ids))

    def __repr__(self) -> str:
        return f"<mipmapped array #{self.id}: {len(self.levels)} levels, {self.levels[0].describe()}>"


def _geometry(width: int, height: int, depth: int, flags: int) -> tuple[Geometry, int, int]:
    """(geometry, layers, slices) of a cudaMalloc3DArray shape."""
    layered, cube = bool(flags & ArrayFlags.LAYERED), bool(flags & ArrayFlags.CUBEMAP)
    if cube:
        if width != height or width == 0:
            raise EngineError(INVALID, f"a cubemap array needs width == height > 0, got {width}x{height}")
        if layered:
            if depth == 0 or depth % 6:
                raise EngineError(INVALID, f"a layered cubemap needs a depth of 6 x layers, got {depth}")
            return Geometry.ACUBE, depth // 6, depth
        if depth != 6:
            raise EngineError(INVALID, f"a cubemap array needs depth 6 (its faces), got {depth}")
        return Geometry.CUBE, 0, 6
    if layered:
        if depth == 0:
            raise EngineError(INVALID, "a layered array needs depth >= 1 (the layer count)")
        return (Geometry.A1D if height == 0 else Geometry.A2D), depth, depth
    if depth:
        if height == 0:
            raise EngineError(INVALID, f"a 3D array needs a height, got {width}x0x{depth}")
        return Geometry.D3, 0, 1
    return (Geometry.D1 if height == 0 else Geometry.D2), 0, 1


def _check_shape(fmt: Any, channels: Any, width: Any, height: Any, depth: Any, flags: Any) -> CUarray_format:
    try:
        fmt = CUarray_format(int(fmt))
    except (TypeError, ValueError):
        raise EngineError(INVALID, f"format {fmt!r} is not a supported CUarray_format "
                                   f"({', '.join(f.name for f in CUarray_format)})") from None
    if channels not in CHANNEL_COUNTS:
        raise EngineError(INVALID, f"an array element has 1, 2 or 4 channels, not {channels!r}")
    for name, v in (("width", width), ("height", height), ("depth", depth)):
        if not isinstance(v, int) or v < 0 or v > MAX_DIM:
            raise EngineError(INVALID, f"{name} must be an int in 0..{MAX_DIM}, got {v!r}")
    if width == 0:
        raise EngineError(INVALID, "an array needs width >= 1")
    if not isinstance(flags, int) or flags & ~_KNOWN_FLAGS:
        raise EngineError(INVALID, f"flags 0x{flags:x} include bits that are not cudaArray* flags"
                          if isinstance(flags, int) else f"flags must be an int, got {flags!r}")
    return fmt


def _levels(address: int, esize: int, width: int, height: int, d3: int, slices: int, count: int,
            geometry: Geometry) -> tuple[list[Level], int]:
    """The levels of a (mipmapped) image packed one after another; (levels, bytes)."""
    out, off = [], 0
    w, h, d = width, max(height, 1), max(d3, 1)
    for _ in range(count):
        row = w * esize
        lv = Level(address + off, w, h, d, row, row * h, row * h * d)
        out.append(lv)
        off += -(-(lv.slice_pitch * slices) // 256) * 256
        w = max(1, w // 2)
        if geometry not in (Geometry.D1, Geometry.A1D):
            h = max(1, h // 2)
        if geometry is Geometry.D3:
            d = max(1, d // 2)
    return out, off


def create(ctx: Any, fmt: Any, channels: Any, width: Any, height: Any, depth: Any, flags: Any,
           num_levels: int = 0) -> CudaArray | MipmappedArray:
    """An array (num_levels 0) or a mipmapped array of num_levels levels."""
    fmt = _check_shape(fmt, channels, width, height, depth, flags)
    geometry, layers, slices = _geometry(width, height, depth, flags)
    d3 = depth if geometry is Geometry.D3 else 1
    esize = dtype_of(fmt).itemsize * channels
    count = max(1, num_levels)
    if num_levels:
        top = max(width, height, d3).bit_length()
        if num_levels > top:
            raise EngineError(INVALID, f"numLevels {num_levels} exceeds the {top} levels of a "
                                       f"{width}x{height}x{depth} image")
    _, nbytes = _levels(0, esize, width, height, d3, slices, count, geometry)
    base = ctx.memory.alloc(nbytes, AllocationKind.ARRAY, label=f"CUDA array {width}x{height}x{depth}")
    levels, _ = _levels(base, esize, width, height, d3, slices, count, geometry)
    image = Image(fmt, channels, geometry, tuple(levels), layers)
    views = []
    for i, lv in enumerate(levels):
        h = 0 if geometry in (Geometry.D1, Geometry.A1D) else lv.height
        dd = lv.depth if geometry is Geometry.D3 else depth if layers or geometry is Geometry.CUBE else 0
        views.append(CudaArray(ctx, fmt, channels, lv.width, h, dd, int(flags),
                               Image(fmt, channels, geometry, (lv,), layers), base if not num_levels else 0,
                               level=i))
    if not num_levels:
        _register(ctx, views[0])
        return views[0]
    mip = MipmappedArray(ctx, views, base, image)
    for v in views:
        v.parent = mip
    _register(ctx, mip)
    return mip


_live: dict[int, Any] = {}
_live_lock = threading.Lock()


def _register(ctx: Any, obj: Any) -> None:
    live_arrays()                    # forgets those of destroyed contexts
    with _live_lock:
        _live[obj.id] = obj


def live_arrays(ctx: Any = None) -> list[Any]:
    """The arrays and mipmapped arrays not freed yet (of one context); a
    destroyed context's arrays went with its memory and are forgotten."""
    with _live_lock:
        for key in [k for k, a in _live.items() if a.context.destroyed]:
            _live[key].freed = True
            del _live[key]
        return [a for a in _live.values() if ctx is None or a.context is ctx]


def destroy(ctx: Any, obj: Any, api: str) -> None:
    """Free an array or mipmapped array; a level view, a freed array or
    another object is an invalid handle."""
    if isinstance(obj, CudaArray) and obj.parent is not None:
        raise EngineError(HANDLE, f"{api}: {obj.describe()} belongs to its mipmapped array; free that instead")
    if not isinstance(obj, (CudaArray, MipmappedArray)) or obj.freed:
        raise EngineError(HANDLE, f"{api}: {obj!r} is not a live array")
    if obj.context.destroyed:
        raise EngineError(HANDLE, f"{api}: {obj!r} went with its context (destroyed or reset)")
    ctx.wait_idle_quietly()          # as cudaFree: the device's work before the free completes first
    obj.context.memory.free(obj.allocation, (AllocationKind.ARRAY,), api)
    obj.freed = True
    with _live_lock:
        _live.pop(obj.id, None)


def level_of(mip: Any, level: Any, api: str) -> CudaArray:
    if not isinstance(mip, MipmappedArray) or mip.freed:
        raise EngineError(HANDLE, f"{api}: {mip!r} is not a live mipmapped array")
    if not isinstance(level, int) or not 0 <= level < len(mip.levels):
        raise EngineError(INVALID, f"{api}: level {level!r} is not in 0..{len(mip.levels) - 1}")
    return mip.levels[level]


def live(arr: Any, api: str, role: str = "array") -> CudaArray:
    if not isinstance(arr, CudaArray) or arr.freed or (arr.parent is not None and arr.parent.freed) \
            or arr.context.destroyed:
        raise EngineError(HANDLE, f"{api}: {role} {arr!r} is not a live CUDA array")
    return arr


# ------------------------------------------------------------------ copies
def region(arr: CudaArray, x_bytes: int, y: int, z: int, width_bytes: int, height: int, depth: int,
           role: str) -> tuple[int, T.Layout]:
    """(address of the region start, layout) of a box inside an array,
    refused when it does not fit (a byte offset must be whole elements)."""
    lv = arr.image.base
    es = arr.element_size
    rows = lv.height
    slices_total = lv.depth * arr.image.slices
    for name, v in (("x offset", x_bytes), ("y offset", y), ("z offset", z)):
        if not isinstance(v, int) or v < 0:
            raise EngineError(INVALID, f"{role}: {name} must be a non-negative int, got {v!r}")
    if x_bytes % es or width_bytes % es:
        raise EngineError(INVALID, f"{role}: byte offsets and widths in an array of {es}-byte elements "
                                   f"must be multiples of {es} (x={x_bytes}, width={width_bytes})")
    if x_bytes + width_bytes > lv.row_pitch or y + height > rows or z + max(depth, 1) > slices_total:
        raise EngineError(INVALID, f"{role}: a {width_bytes}-byte x {height} x {max(depth, 1)} region at "
                                   f"(x={x_bytes} bytes, y={y}, z={z}) does not fit in {arr.describe()} "
                                   f"({lv.row_pitch} bytes x {rows} rows x {slices_total} slices)")
    return lv.address + z * lv.depth_pitch + y * lv.row_pitch + x_bytes, T.Layout(lv.row_pitch, lv.depth_pitch)


def copy_2d(ctx: Any, arr: Any, x_bytes: int, y: int, other: Any, pitch: Any, width: Any, height: Any,
            kind: Any, stream: Any, is_async: bool, to_array: bool, api: str) -> None:
    """mcMemcpy2DToArray / mcMemcpy2DFromArray (and the 1D ToArray forms,
    height 1): a pitched copy with the array side filled in."""
    arr = live(arr, api, "dst" if to_array else "src")
    width, height = T._int_arg("width", width), T._int_arg("height", height)
    pitch = T._int_arg("spitch" if to_array else "dpitch", pitch)
    if pitch < width:
        raise EngineError(INVALID, f"{api}: pitch {pitch} is smaller than the width of {width} bytes")
    addr, lay = region(arr, x_bytes, y, 0, width, height, 1, "dst" if to_array else "src")
    r = T.Region(width, height)
    if to_array:
        T.copy(ctx, addr, other, r, lay, T.Layout(pitch, 0), kind, stream, is_async)
    else:
        T.copy(ctx, other, addr, r, T.Layout(pitch, 0), lay, kind, stream, is_async)


def copy_linear(ctx: Any, arr: Any, x_bytes: int, y: int, other: Any, count: Any, kind: Any, stream: Any,
                is_async: bool, to_array: bool, api: str) -> None:
    """mcMemcpyToArray / mcMemcpyFromArray: count bytes from (x, y) on,
    row after row (the array's rows are contiguous)."""
    arr = live(arr, api, "dst" if to_array else "src")
    count = T._int_arg("count", count)
    lv = arr.image.base
    start = y * lv.row_pitch + x_bytes
    if x_bytes % arr.element_size or count % arr.element_size:
        raise EngineError(INVALID, f"{api}: offsets and counts in an array of {arr.element_size}-byte elements "
                                   f"must be multiples of {arr.element_size}")
    if start + count > lv.row_pitch * lv.height * lv.depth * arr.image.slices:
        raise EngineError(INVALID, f"{api}: {count} bytes at (x={x_bytes}, y={y}) run past the end of "
                                   f"{arr.describe()}")
    addr = lv.address + start
    if to_array:
        T.memcpy(ctx, addr, other, count, kind, stream, is_async)
    else:
        T.memcpy(ctx, other, addr, count, kind, stream, is_async)


def side_3d(arr: Any, pos: Any, extent: Any, role: str) -> tuple[int, T.Layout, int]:
    """(address, layout, element size) of the array side of a 3D copy; the
    position's x is in elements, as cudaMemcpy3D specifies for arrays."""
    arr = live(arr, "mcMemcpy3D", f"{role}Array")
    es = arr.element_size
    addr, lay = region(arr, int(pos.x) * es, int(pos.y), int(pos.z), int(extent.width) * es,
                       max(int(extent.height), 1), max(int(extent.depth), 1), role)
    return addr, lay, es
