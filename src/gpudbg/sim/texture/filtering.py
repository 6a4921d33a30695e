"""Texture addressing and filtering arithmetic, lane-vectorized and free of
memory access (sampler.py fetches the texels): the part a numpy model of
the hardware must reproduce bit for bit.

Linear filtering follows the CUDA Programming Guide's "Linear Filtering"
appendix: in texel space a coordinate x is shifted by half a texel,
xB = x - 0.5, split into i = floor(xB) and the fraction α = xB - i, and α is
held in 9-bit fixed point with 8 fraction bits, so the weights are k/256
(α rounded to the nearest 1/256; 1.0 is representable). The result is
(1-α)·T[i] + α·T[i+1] per axis, nested x innermost, in float32.

Address modes act on integer texel indices: wrap takes the index modulo the
size, mirror reflects it every size texels, clamp clips it, border marks it
outside (the caller substitutes the border color). Unnormalized coordinates
only support clamp and border (CUDA treats wrap and mirror as clamp there).
"""
from __future__ import annotations

import numpy as np

from gpudbg.sim.texture.descriptors import AddressMode

FRACTION_BITS = 8
ONE = 1 << FRACTION_BITS


def quantize_weight(frac: np.ndarray) -> np.ndarray:
    """α in [0, 1) to the hardware's 9-bit fixed point (k/256, 0 <= k <= 256)."""
    k = np.floor(np.asarray(frac, dtype=np.float64) * ONE + 0.5)
    return (np.clip(k, 0, ONE) / ONE).astype(np.float32)


def to_texel_space(c: np.ndarray, size: int, normalized: bool) -> np.ndarray:
    c = np.asarray(c, dtype=np.float32)
    return c * np.float32(size) if normalized else c


def point_index(u: np.ndarray) -> np.ndarray:
    """The texel a point sample at texel-space u reads."""
    return _floor_int(u)


def linear_footprint(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(i0, α): the first of the two texels a linear sample blends and the
    quantized weight of the second."""
    ub = np.asarray(u, dtype=np.float32) - np.float32(0.5)
    fl = np.floor(ub)
    return _floor_int(ub), quantize_weight(ub - fl)


def _floor_int(u: np.ndarray) -> np.ndarray:
    # NaN reads texel 0; huge values saturate (the hardware clamps the
    # fixed-point coordinate), keeping integer arithmetic in range
    f = np.nan_to_num(np.floor(np.asarray(u, dtype=np.float64)), nan=0.0)
    return np.clip(f, -(1 << 40), 1 << 40).astype(np.int64)


def effective_mode(mode: AddressMode, normalized: bool) -> AddressMode:
    if not normalized and mode in (AddressMode.WRAP, AddressMode.MIRROR):
        return AddressMode.CLAMP
    return AddressMode(mode)


def address(i: np.ndarray, size: int, mode: AddressMode) -> tuple[np.ndarray, np.ndarray]:
    """(index in [0, size), inside): an integer texel index under `mode`;
    `inside` is False only for border mode indices outside the image."""
    i = np.asarray(i, dtype=np.int64)
    if mode is AddressMode.WRAP:
        return np.mod(i, size), np.ones(i.shape, dtype=bool)
    if mode is AddressMode.MIRROR:
        m = np.mod(i, 2 * size)
        return np.where(m >= size, 2 * size - 1 - m, m), np.ones(i.shape, dtype=bool)
    inside = (i >= 0) & (i < size)
    clipped = np.clip(i, 0, size - 1)
    if mode is AddressMode.CLAMP:
        return clipped, np.ones(i.shape, dtype=bool)
    return clipped, inside


def lerp(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(1-w)·a + w·b in float32, w broadcast over the channel axis."""
    w = np.asarray(w, dtype=np.float32)[:, None]
    return ((np.float32(1) - w) * a + w * b).astype(np.float32)


# CUDA Programming Guide, "Cubemap Textures": the face and the (s, t) of a
# direction, by its major axis and that axis' sign.
def cube_face(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(face 0..5, s, t) with s and t normalized to [0, 1]."""
    x, y, z = (np.asarray(v, dtype=np.float32) for v in (x, y, z))
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    xmaj = (ax >= ay) & (ax >= az)
    ymaj = ~xmaj & (ay >= az)
    face = np.where(xmaj, np.where(x >= 0, 0, 1), np.where(ymaj, np.where(y >= 0, 2, 3), np.where(z >= 0, 4, 5)))
    sc = np.select([face == 0, face == 1, face == 2, face == 3, face == 4], [-z, z, x, x, x], -x)
    tc = np.select([face == 0, face == 1, face == 2, face == 3, face == 4], [-y, -y, z, -z, -y], -y)
    ma = np.where(xmaj, ax, np.where(ymaj, ay, az))
    ma = np.where(ma == 0, np.float32(1), ma)
    s = (sc / ma + np.float32(1)) * np.float32(0.5)
    t = (tc / ma + np.float32(1)) * np.float32(0.5)
    return face.astype(np.int64), s.astype(np.float32), t.astype(np.float32)


def lod_from_gradients(ddx: list[np.ndarray], ddy: list[np.ndarray], sizes: list[int]) -> np.ndarray:
    """The level of detail of tex.grad: log2 of the longer screen-space
    derivative measured in base-level texels (isotropic filtering)."""
    lx = np.sqrt(sum((np.asarray(d, np.float32) * np.float32(s)) ** 2 for d, s in zip(ddx, sizes)))
    ly = np.sqrt(sum((np.asarray(d, np.float32) * np.float32(s)) ** 2 for d, s in zip(ddy, sizes)))
    rho = np.maximum(lx, ly)
    with np.errstate(divide="ignore"):
        return np.log2(np.maximum(rho, np.float32(1e-30))).astype(np.float32)
