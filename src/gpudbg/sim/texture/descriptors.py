"""What a texture or surface handle resolves to on the device: the image
(geometry, format, where each mip level lives) and the sampling state, and
the per-GPU table from 64-bit handle values to them.

The driver builds these records when a program creates a texture or surface
object and registers them under a fresh handle; the texture instructions
look the handle up at execution time, so a handle that was never created,
was destroyed, or names a surface where a texture is expected is a precise
fault naming the value. Records are immutable: destroying an object removes
its entry, it never changes one under a running kernel.
"""
from __future__ import annotations

import enum
import itertools
import threading
from dataclasses import dataclass

from gpudbg.sim.texture.formats import CUarray_format, dtype_of


class AddressMode(enum.IntEnum):
    """CUaddress_mode / cudaTextureAddressMode (same numbering)."""

    WRAP = 0
    CLAMP = 1
    MIRROR = 2
    BORDER = 3


class FilterMode(enum.IntEnum):
    """CUfilter_mode / cudaTextureFilterMode."""

    POINT = 0
    LINEAR = 1


class Geometry(enum.Enum):
    """The shape of an image as the PTX geometries name it."""

    D1 = "1d"
    D2 = "2d"
    D3 = "3d"
    A1D = "a1d"
    A2D = "a2d"
    CUBE = "cube"
    ACUBE = "acube"


@dataclass(frozen=True)
class Level:
    """One mip level's storage: texel (x, y, z, slice) lives at
    address + slice*slice_pitch + z*depth_pitch + y*row_pitch + x*element."""

    address: int
    width: int
    height: int
    depth: int
    row_pitch: int
    depth_pitch: int
    slice_pitch: int


@dataclass(frozen=True)
class Image:
    """A CUDA array (or linear/pitched memory viewed as one). `slices` is
    the layer count of layered images, 6 (times the layers) for cubemaps,
    1 otherwise; `levels[0]` is the base level."""

    fmt: CUarray_format
    channels: int
    geometry: Geometry
    levels: tuple[Level, ...]
    layers: int = 0        # 0: not layered
    pitch_linear: bool = False   # linear or pitched memory rather than a CUDA array

    @property
    def element_size(self) -> int:
        return dtype_of(self.fmt).itemsize * self.channels

    @property
    def base(self) -> Level:
        return self.levels[0]

    @property
    def slices(self) -> int:
        """Layers times faces: how many depth stacks the storage holds."""
        faces = 6 if self.geometry in (Geometry.CUBE, Geometry.ACUBE) else 1
        return max(1, self.layers) * faces if self.layers or faces == 6 else 1


@dataclass(frozen=True)
class TextureState:
    """A texture object: the image and how it is sampled (cudaTextureDesc)."""

    image: Image
    address_modes: tuple[AddressMode, AddressMode, AddressMode] = (AddressMode.CLAMP,) * 3
    filter_mode: FilterMode = FilterMode.POINT
    normalized_float: bool = False        # cudaReadModeNormalizedFloat
    normalized_coords: bool = False
    srgb: bool = False
    border_color: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    mipmap_filter_mode: FilterMode = FilterMode.POINT
    mipmap_level_bias: float = 0.0
    min_mipmap_level_clamp: float = 0.0
    max_mipmap_level_clamp: float = 0.0
    max_anisotropy: int = 0

    @property
    def returns_float(self) -> bool:
        """Whether reads give floats (float formats, or integers read as
        normalized float) rather than the stored integers."""
        return self.normalized_float or dtype_of(self.image.fmt).kind == "f"


@dataclass(frozen=True)
class SurfaceState:
    """A surface object: the image's base level, read and written in bytes
    along x (surf2Dwrite's x is a byte offset) and elements along y and z."""

    image: Image


class ImageTable:
    """Handle value -> TextureState | SurfaceState for one GPU. Handles are
    never reused in a process run, so a stale handle never aliases a newer
    object; 0 is never a handle (a zeroed cudaTextureObject_t is invalid)."""

    _next = itertools.count(1)
    _next_lock = threading.Lock()

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[int, TextureState | SurfaceState] = {}
        self.retired: dict[int, str] = {}   # destroyed handle -> what it was (for fault messages)

    def add(self, state: TextureState | SurfaceState) -> int:
        with ImageTable._next_lock:
            handle = next(ImageTable._next)
        with self._lock:
            self._objects[handle] = state
        return handle

    def remove(self, handle: int) -> TextureState | SurfaceState | None:
        with self._lock:
            state = self._objects.pop(handle, None)
            if state is not None:
                self.retired[handle] = "texture" if isinstance(state, TextureState) else "surface"
            return state

    def get(self, handle: int) -> TextureState | SurfaceState | None:
        return self._objects.get(handle)

    def items(self) -> list[tuple[int, TextureState | SurfaceState]]:
        with self._lock:
            return sorted(self._objects.items())

    def explain(self, handle: int, want: str) -> str:
        """Why `handle` is not a live `want` ("texture"/"surface")."""
        got = self._objects.get(handle)
        if got is not None:
            what = "texture" if isinstance(got, TextureState) else "surface"
            return f"handle 0x{handle:x} is a {what} object, not a {want} object"
        if handle in self.retired:
            return f"handle 0x{handle:x} is a destroyed {self.retired[handle]} object"
        return f"handle 0x{handle:x} is not a {want} object"


_tables_lock = threading.Lock()


def image_table(gpu: object) -> ImageTable:
    """The GPU's handle table (made on first use)."""
    table = getattr(gpu, "images", None)
    if table is None:
        with _tables_lock:
            table = getattr(gpu, "images", None)
            if table is None:
                table = ImageTable()
                setattr(gpu, "images", table)
    return table
