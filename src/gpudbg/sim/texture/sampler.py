"""Texture reads for a set of lanes: mip level selection, addressing,
texel fetches through the global address space, read-mode conversion and
point/linear filtering (arithmetic in filtering.py).

Every fetch gathers all lanes at once; lanes whose texel is outside a
border-mode image read the level's first texel and get the border color
instead, so fault lane numbers always index the instruction's lanes.
Results are (n, 4): float32 when the texture returns floats, int64 holding
the stored integers otherwise; channels the format lacks read (0, 0, 0, 1).
"""
from __future__ import annotations

import numpy as np

from gpudbg.sim.faults import LaneFault
from gpudbg.sim.texture import filtering as flt
from gpudbg.sim.texture.descriptors import FilterMode, Geometry, Image, Level, TextureState
from gpudbg.sim.texture.formats import dtype_of, srgb_to_linear, to_normalized_float

U64 = np.dtype(np.uint64)
SPATIAL_AXES = {Geometry.D1: 1, Geometry.A1D: 1, Geometry.D2: 2, Geometry.A2D: 2, Geometry.D3: 3,
                Geometry.CUBE: 2, Geometry.ACUBE: 2}


def level_sizes(level: Level, axes: int) -> list[int]:
    return [level.width, level.height, level.depth][:axes]


def texel_addresses(image: Image, level: Level, idx: list[np.ndarray], slices: np.ndarray) -> np.ndarray:
    x = idx[0]
    y = idx[1] if len(idx) > 1 else 0
    z = idx[2] if len(idx) > 2 else 0
    off = (np.asarray(slices, np.int64) * level.slice_pitch + np.asarray(z, np.int64) * level.depth_pitch
           + np.asarray(y, np.int64) * level.row_pitch + np.asarray(x, np.int64) * image.element_size)
    return (np.uint64(level.address) + off.astype(U64)).astype(U64)


def fetch_raw(gmem, image: Image, addrs: np.ndarray) -> np.ndarray:
    """(n, channels) stored values at texel addresses (a checked gather)."""
    raw = gmem.load(addrs, dtype_of(image.fmt), image.channels, space_name="texture")
    return np.asarray(raw).reshape(len(addrs), image.channels)


def _convert(tex: TextureState, raw: np.ndarray) -> np.ndarray:
    """Stored channels to what the read returns, widened to 4 channels."""
    n = raw.shape[0]
    if tex.returns_float:
        v = to_normalized_float(raw, tex.image.fmt) if tex.normalized_float else raw.astype(np.float32)
        if tex.srgb and tex.normalized_float and dtype_of(tex.image.fmt).kind == "u":
            k = min(3, v.shape[1])
            v = v.copy()
            v[:, :k] = srgb_to_linear(v[:, :k])
        out = np.zeros((n, 4), dtype=np.float32)
        out[:, 3] = 1.0
    else:
        v = raw.astype(np.int64)
        out = np.zeros((n, 4), dtype=np.int64)
        out[:, 3] = 1
    out[:, :v.shape[1]] = v
    return out


def _border(tex: TextureState, n: int) -> np.ndarray:
    b = np.asarray(tex.border_color, dtype=np.float64)
    if tex.returns_float:
        return np.broadcast_to(b.astype(np.float32), (n, 4))
    return np.broadcast_to(b.astype(np.int64), (n, 4))


def read_texels(gmem, tex: TextureState, level: Level, idx: list[np.ndarray], inside: np.ndarray,
                slices: np.ndarray) -> np.ndarray:
    """The converted (n, 4) values of one texel per lane; border texels
    where `inside` is False."""
    image = tex.image
    addrs = texel_addresses(image, level, idx, slices)
    if not inside.all():
        addrs = np.where(inside, addrs, np.uint64(level.address))
    vals = _convert(tex, fetch_raw(gmem, image, addrs))
    if not inside.all():
        vals = np.where(inside[:, None], vals, _border(tex, len(addrs)))
    return vals


def _modes(tex: TextureState, axes: int):
    return [flt.effective_mode(tex.address_modes[a], tex.normalized_coords) for a in range(axes)]


def sample_level(gmem, tex: TextureState, level: Level, coords: list[np.ndarray], slices: np.ndarray,
                 integer_coords: bool = False, normalized: bool | None = None) -> np.ndarray:
    """(n, 4) filtered values at `coords` (one array per spatial axis) of one level."""
    axes = len(coords)
    sizes = level_sizes(level, axes)
    norm = tex.normalized_coords if normalized is None else normalized
    modes = [flt.effective_mode(tex.address_modes[a], norm) for a in range(axes)]
    n = len(slices)
    if integer_coords:
        u = [np.asarray(c, np.int64) for c in coords]
        ids, ins = zip(*(flt.address(u[a], sizes[a], modes[a]) for a in range(axes)))
        return read_texels(gmem, tex, level, list(ids), np.logical_and.reduce(ins), slices)
    u = [flt.to_texel_space(coords[a], sizes[a], norm) for a in range(axes)]
    if tex.filter_mode is FilterMode.POINT or not tex.returns_float:
        ids, ins = zip(*(flt.address(flt.point_index(u[a]), sizes[a], modes[a]) for a in range(axes)))
        return read_texels(gmem, tex, level, list(ids), np.logical_and.reduce(ins), slices)
    feet = [flt.linear_footprint(u[a]) for a in range(axes)]
    corners: dict[tuple[int, ...], np.ndarray] = {}
    for corner in np.ndindex(*(2,) * axes):
        ids, ins = [], []
        for a, bit in enumerate(corner):
            i, inside = flt.address(feet[a][0] + bit, sizes[a], modes[a])
            ids.append(i)
            ins.append(inside)
        corners[corner] = read_texels(gmem, tex, level, ids, np.logical_and.reduce(ins), slices)
    # blend x first, then y, then z: ((T00·(1-α) + T10·α)·(1-β) + ...)
    for a in range(axes):
        w = feet[a][1]
        merged = {}
        for corner, v in corners.items():
            if corner[a] == 0:
                other = corner[:a] + (1,) + corner[a + 1:]
                merged[corner[:a] + (0,) + corner[a + 1:]] = flt.lerp(v, corners[other], w)
        corners = merged
    out = next(iter(corners.values()))
    assert out.shape == (n, 4)
    return out


def gather(gmem, tex: TextureState, level: Level, coords: list[np.ndarray], slices: np.ndarray,
           component: int) -> np.ndarray:
    """tld4: one component of the four texels of the 2D linear footprint, in
    the order (i0, j1), (i1, j1), (i1, j0), (i0, j0)."""
    sizes = level_sizes(level, 2)
    modes = _modes(tex, 2)
    u = [flt.to_texel_space(coords[a], sizes[a], tex.normalized_coords) for a in range(2)]
    (i0, _), (j0, _) = flt.linear_footprint(u[0]), flt.linear_footprint(u[1])
    out = []
    for di, dj in ((0, 1), (1, 1), (1, 0), (0, 0)):
        (xi, xin), (yi, yin) = flt.address(i0 + di, sizes[0], modes[0]), flt.address(j0 + dj, sizes[1], modes[1])
        out.append(read_texels(gmem, tex, level, [xi, yi], xin & yin, slices)[:, component])
    return np.stack(out, axis=1)


def select_lod(tex: TextureState, lod: np.ndarray) -> np.ndarray:
    """Bias and clamp a level of detail as the descriptor says
    (minMipmapLevelClamp..maxMipmapLevelClamp, within the levels there are)."""
    lod = np.asarray(lod, np.float32) + np.float32(tex.mipmap_level_bias)
    top = len(tex.image.levels) - 1
    hi = min(float(tex.max_mipmap_level_clamp), top)      # CUDA: a zeroed desc samples level 0 only
    lo = max(0.0, float(tex.min_mipmap_level_clamp))
    return np.clip(np.nan_to_num(lod, nan=0.0), lo, max(lo, hi)).astype(np.float32)


def sample(gmem, tex: TextureState, coords: list[np.ndarray], slices: np.ndarray, lod: np.ndarray | None = None,
           integer_coords: bool = False, normalized: bool | None = None) -> np.ndarray:
    """(n, 4): a read at `coords`, from the base level or at level of detail
    `lod` per lane (mip levels blended by the mipmap filter mode)."""
    levels = tex.image.levels
    if lod is None or len(levels) == 1:
        return sample_level(gmem, tex, levels[0], coords, slices, integer_coords, normalized)
    lod = select_lod(tex, lod)
    if integer_coords:
        # tld-style integer reads address the level directly (the lod names it)
        lo_level = np.floor(lod).astype(np.int64)
        return _per_level(gmem, tex, coords, slices, lo_level, integer_coords, normalized)
    if tex.mipmap_filter_mode is FilterMode.POINT or not tex.returns_float:
        return _per_level(gmem, tex, coords, slices, np.floor(lod + np.float32(0.5)).astype(np.int64),
                          False, normalized)
    lo_level = np.floor(lod).astype(np.int64)
    hi_level = np.minimum(lo_level + 1, len(levels) - 1)
    w = flt.quantize_weight(lod - np.floor(lod))
    a = _per_level(gmem, tex, coords, slices, lo_level, False, normalized)
    b = _per_level(gmem, tex, coords, slices, hi_level, False, normalized)
    return flt.lerp(a, b, w)


def _per_level(gmem, tex, coords, slices, which: np.ndarray, integer_coords, normalized) -> np.ndarray:
    which = np.clip(which, 0, len(tex.image.levels) - 1)
    n = len(slices)
    out = None
    for lv in np.unique(which):
        sel = np.flatnonzero(which == lv)
        try:
            part = sample_level(gmem, tex, tex.image.levels[int(lv)], [np.asarray(c)[sel] for c in coords],
                                np.asarray(slices)[sel], integer_coords, normalized)
        except LaneFault as f:          # renumber the level's lanes as the caller's
            f.lane = int(sel[f.lane]) if 0 <= f.lane < len(sel) else f.lane
            if f.lanes is not None:
                f.lanes = sel[np.asarray(f.lanes)]
            raise
        if out is None:
            out = np.zeros((n, 4), dtype=part.dtype)
        out[sel] = part
    assert out is not None
    return out
