"""Textures for the Pythonic layer: a CUDA array made from a numpy image,
and texture/surface objects over it that a kernel takes as its
cudaTextureObject_t / cudaSurfaceObject_t argument.

    img = gpudbg.CudaArray.from_host(np.float32 image (h, w) or (h, w, c))
    tex = gpudbg.Texture(img, filter="linear", address="wrap", normalized=True)
    kernel[grid, block](tex, out, ...)          # passes the 64-bit handle

The one idea: the element format comes from the numpy dtype (one channel,
or 2/4 channels along a last axis of that size), the settings are words
mapped onto mcTextureDesc fields, and everything else is the mc* calls
(runtime/api/arrays.py, textures.py), so a Pythonic program meets the same
checks and errors as a C-style one. It does not cover linear/pitched
resources or layered/cube arrays (use the mc* functions for those).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gpudbg.api.errors import call
from gpudbg.runtime import mc

_KINDS = {"u": mc.mcChannelFormatKind.mcChannelFormatKindUnsigned,
          "i": mc.mcChannelFormatKind.mcChannelFormatKindSigned,
          "f": mc.mcChannelFormatKind.mcChannelFormatKindFloat}
ADDRESS = {"wrap": 0, "clamp": 1, "mirror": 2, "border": 3}
FILTER = {"point": 0, "linear": 1}
READ = {"element": 0, "normalized": 1}


class CudaArray:
    """A 1D/2D/3D CUDA array (mcArray_t) of a numpy image's format."""

    def __init__(self, shape: tuple[int, ...], dtype: Any, channels: int = 1, surface: bool = False):
        dtype = np.dtype(dtype)
        if dtype.kind not in _KINDS or dtype.itemsize not in (1, 2, 4) or (dtype.kind == "f" and dtype.itemsize == 1):
            raise TypeError(f"a texel channel is an 8/16/32-bit int or a 16/32-bit float, not {dtype}")
        if not 1 <= len(shape) <= 3:
            raise ValueError(f"an array has 1 to 3 dimensions, got shape {shape}")
        bits = [8 * dtype.itemsize if i < channels else 0 for i in range(4)]
        self.dtype, self.channels, self.shape = dtype, channels, tuple(int(s) for s in shape)
        desc = call(mc.mcCreateChannelDesc, *bits, int(_KINDS[dtype.kind]))
        flags = int(mc.mcArrayFlags.mcArraySurfaceLoadStore) if surface else 0
        dims = self.shape[::-1] + (0,) * (3 - len(self.shape))     # (w, h, d), 0 for absent ones
        self.handle = call(mc.mcMalloc3DArray, desc, mc.mcExtent(*dims), flags)

    @classmethod
    def from_host(cls, image: np.ndarray, channels: int | None = None, surface: bool = False) -> "CudaArray":
        """An array holding `image`: shape (w,), (h, w) or (d, h, w), with a
        last axis of 2 or 4 taken as channels when `channels` is None."""
        image = np.ascontiguousarray(image)
        if channels is None:
            channels = image.shape[-1] if image.ndim > 1 and image.shape[-1] in (2, 4) else 1
        shape = image.shape[:-1] if channels > 1 else image.shape
        arr = cls(shape, image.dtype, channels, surface)
        arr.copy_from_host(image)
        return arr

    @property
    def _row_bytes(self) -> int:
        return self.shape[-1] * self.dtype.itemsize * self.channels

    def _parms(self, host: np.ndarray, to_array: bool) -> Any:
        rows = self.shape[-2] if len(self.shape) > 1 else 1
        depth = self.shape[0] if len(self.shape) == 3 else 1
        ptr = mc.mcPitchedPtr(host, self._row_bytes, self._row_bytes, rows)
        extent = mc.mcExtent(self.shape[-1], rows, depth)
        if to_array:
            return mc.mcMemcpy3DParms(srcPtr=ptr, dstArray=self.handle, extent=extent,
                                      kind=mc.mcMemcpyKind.mcMemcpyHostToDevice)
        return mc.mcMemcpy3DParms(srcArray=self.handle, dstPtr=ptr, extent=extent,
                                  kind=mc.mcMemcpyKind.mcMemcpyDeviceToHost)

    def copy_from_host(self, image: np.ndarray) -> None:
        image = np.ascontiguousarray(image, dtype=self.dtype)
        if image.nbytes != self._row_bytes * int(np.prod(self.shape[:-1], dtype=np.int64)):
            raise ValueError(f"image of {image.nbytes} bytes does not fill a {self.shape} x {self.channels} array")
        call(mc.mcMemcpy3D, self._parms(image, True))

    def to_host(self) -> np.ndarray:
        out = np.empty(self.shape + ((self.channels,) if self.channels > 1 else ()), self.dtype)
        call(mc.mcMemcpy3D, self._parms(out, False))
        return out

    def free(self) -> None:
        if self.handle is not None:
            call(mc.mcFreeArray, self.handle)
            self.handle = None

    def __repr__(self) -> str:
        return f"CudaArray({self.shape}, {self.dtype}, channels={self.channels})"


class Texture:
    """A texture object over a CudaArray; a kernel argument (its handle)."""

    def __init__(self, array: CudaArray, filter: str = "point", address: str | tuple[str, ...] = "clamp",
                 normalized: bool = False, read: str = "element", border: tuple[float, ...] = (0, 0, 0, 0),
                 srgb: bool = False):
        modes = (address,) * 3 if isinstance(address, str) else tuple(address) + ("clamp",) * (3 - len(address))
        for word, table, what in [(filter, FILTER, "filter"), (read, READ, "read")] + \
                [(m, ADDRESS, "address") for m in modes]:
            if word not in table:
                raise ValueError(f"{what} must be one of {', '.join(table)}, not {word!r}")
        rd = mc.mcResourceDesc()
        rd.res.array.array = array.handle
        td = mc.mcTextureDesc(addressMode=[ADDRESS[m] for m in modes], filterMode=FILTER[filter],
                              readMode=READ[read], sRGB=int(srgb), borderColor=list(map(float, border)),
                              normalizedCoords=int(normalized))
        self.array = array
        self.handle = call(mc.mcCreateTextureObject, rd, td, None)

    def __index__(self) -> int:
        return self.handle

    def destroy(self) -> None:
        if self.handle:
            call(mc.mcDestroyTextureObject, self.handle)
            self.handle = 0

    def __repr__(self) -> str:
        return f"Texture(0x{self.handle:x} over {self.array!r})"


class Surface:
    """A surface object over a CudaArray made with surface=True."""

    def __init__(self, array: CudaArray):
        rd = mc.mcResourceDesc()
        rd.res.array.array = array.handle
        self.array = array
        self.handle = call(mc.mcCreateSurfaceObject, rd)

    def __index__(self) -> int:
        return self.handle

    def destroy(self) -> None:
        if self.handle:
            call(mc.mcDestroySurfaceObject, self.handle)
            self.handle = 0

    def __repr__(self) -> str:
        return f"Surface(0x{self.handle:x} over {self.array!r})"
