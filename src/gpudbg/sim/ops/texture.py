"""Texture instructions in unified mode (64-bit texture object handles):
tex (1d, 2d, 3d, a1d, a2d, cube, acube; base, .level and .grad forms),
tld4 (gather one component of the 2D bilinear footprint), txq, istypep.

A handle is an ordinary 64-bit register value looked up per distinct value
among the executing lanes in the GPU's image table (sim/texture/
descriptors.py); a value that names no live texture object is a precise
fault naming it. The sampling itself lives in sim/texture/sampler.py.

Not supported (rejected at load time with the reason): independent mode
(`.texref`/`.samplerref` globals and the `[tex, sampler, c]` form), the
multisample geometries 2dms/a2dms (no API here creates multisample
arrays), the offset and depth-compare operands and sparse (`d|p`) results.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from gpudbg.ptx import ir
from gpudbg.sim.faults import CUDBGException, LaneFault
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op
from gpudbg.sim.texture import sampler
from gpudbg.sim.texture.filtering import cube_face, lod_from_gradients
from gpudbg.sim.texture.descriptors import AddressMode, Geometry, SurfaceState, TextureState, image_table
from gpudbg.sim.texture.formats import CL_CHANNEL_ORDER, CL_CHANNEL_TYPE

U64 = np.dtype(np.uint64)
GEOMETRIES = {g.value: g for g in Geometry}
GEOMETRY_NAMES = tuple(GEOMETRIES)
MULTISAMPLE = ("2dms", "a2dms")
# PTX coordinate vector layout per geometry: (layer index position or None, spatial positions)
COORDS = {Geometry.D1: (None, (0,)), Geometry.D2: (None, (0, 1)), Geometry.D3: (None, (0, 1, 2)),
          Geometry.A1D: (0, (1,)), Geometry.A2D: (0, (1, 2)), Geometry.CUBE: (None, (0, 1, 2)),
          Geometry.ACUBE: (0, (1, 2, 3))}


def _count(X, idx) -> int:
    return X.n if idx is None else len(idx)


def handle_reader(tc, operand):
    """Reader of the 64-bit object handle of `[h, ...]` or `[h]`."""
    if isinstance(operand, ir.ImageOperand):
        if operand.sampler is not None:
            raise UnsupportedInstruction("independent texture mode ([tex, sampler, c]) is not supported; "
                                         "use texture objects (cudaTextureObject_t)")
        base = operand.handle
    elif isinstance(operand, ir.Address) and operand.offset == 0:
        base = operand.base
    else:
        raise UnsupportedInstruction("expected a texture/surface operand [handle, ...]")
    if isinstance(base, ir.Symbol):
        raise UnsupportedInstruction(f"{base.name}: .texref/.surfref variables (independent mode) are not "
                                     "supported; use texture/surface objects")
    if not isinstance(base, ir.Register):
        raise UnsupportedInstruction("a texture/surface handle must be a 64-bit register")
    return tc.reader_dtype(base, U64)


def lanes_by_handle(X, idx, read, want: type, what: str):
    """[(state, positions)] for the distinct handles of the lanes, or a
    precise fault at the first lane whose handle is not a live `what`."""
    n = _count(X, idx)
    h = np.asarray(read(X, idx), dtype=U64)
    if h.ndim == 0:
        h = np.full(n, h, dtype=U64)
    table = image_table(X.gpu)
    groups = []
    for value in np.unique(h):
        state = table.get(int(value))
        pos = np.flatnonzero(h == value)
        if not isinstance(state, want):
            raise LaneFault(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS,
                            f"Invalid {what} handle: {table.explain(int(value), what)}",
                            int(pos[0]), None, None, None, pos)
        groups.append((state, pos))
    return groups


def relaned(fault: LaneFault, pos: np.ndarray) -> LaneFault:
    """A fault raised for a subset of lanes, renumbered to the instruction's."""
    fault.lane = int(pos[fault.lane]) if 0 <= fault.lane < len(pos) else fault.lane
    if fault.lanes is not None:
        fault.lanes = pos[np.asarray(fault.lanes)]
    return fault


def _geometry(m: Mods) -> Geometry:
    ms = next((g for g in MULTISAMPLE if g in m.left), None)
    if ms is not None:
        raise UnsupportedInstruction(f".{ms} (multisample textures) is not supported")
    g = m.take(*GEOMETRY_NAMES)
    if g is None:
        raise UnsupportedInstruction("missing texture geometry (.1d, .2d, .3d, .a1d, .a2d, .cube, .acube)")
    return GEOMETRIES[g]


def _elements(operand) -> tuple:
    if isinstance(operand, ir.Vector):
        return operand.elements
    return (operand,)


def coord_readers(tc, geometry: Geometry, coords, ctype: str):
    """(layer reader or None, spatial readers) of a coordinate vector."""
    layer_at, spatial = COORDS[geometry]
    elems = _elements(coords)
    need = max(spatial) + 1
    if len(elems) < need:
        raise UnsupportedInstruction(f".{geometry.value} needs {need} coordinates, got {len(elems)}")
    cdt = np.float32 if ctype == "f32" else np.int32
    layer = tc.reader_dtype(elems[layer_at], np.int32) if layer_at is not None else None
    return layer, [tc.reader_dtype(elems[i], cdt) for i in spatial]


def _lanes(v, n, dtype):
    v = np.asarray(v)
    return np.full(n, v, dtype=dtype) if v.ndim == 0 else v.astype(dtype, copy=False)


def result_writers(tc, operand, count: int = 4):
    if isinstance(operand, ir.PredicatePair):
        raise UnsupportedInstruction("sparse texture results (d|p) are not supported")
    elems = _elements(operand)
    if len(elems) != count:
        raise UnsupportedInstruction(f"expected a {count}-element destination vector")
    return [tc.writer(e) for e in elems]


def write_results(X, idx, writers, values: np.ndarray, dtype_name: str) -> None:
    if values.dtype.kind == "f":
        out = values.astype(np.float32) if dtype_name == "f32" else values.view(np.uint32)
    else:
        out = values.astype(np.int64).astype(np.uint32)
        if dtype_name == "s32":
            out = out.view(np.int32)
    for i, w in enumerate(writers):
        w(X, idx, np.ascontiguousarray(out[:, i]))


def _slices(tex: TextureState, geometry: Geometry, layer: np.ndarray | None, face: np.ndarray | None):
    n = len(layer if layer is not None else face)
    layers = max(1, tex.image.layers)
    s = np.zeros(n, dtype=np.int64)
    if layer is not None:
        s = np.clip(layer.astype(np.int64), 0, layers - 1)
    if face is not None:
        s = s * 6 + face
    return s


def _check_geometry(tex: TextureState, geometry: Geometry, pos) -> None:
    """A geometry other than the image's is an illegal instruction (real
    hardware returns garbage; a debugger should say so)."""
    g = tex.image.geometry
    if g is not geometry:
        raise LaneFault(CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION,
                        f"tex.{geometry.value} on a {g.value} texture object", int(pos[0]), None, None, None, pos)


def _sample_group(X, tex, geometry, layer, spatial, lod, integer, gather_comp=None):
    n = len(spatial[0])
    face = None
    coords = spatial
    normalized = None
    if geometry in (Geometry.CUBE, Geometry.ACUBE):
        # a face is always sampled clamped to its edges (no seamless filtering across faces)
        face, s, t = sampler_face(spatial)
        coords, normalized = [s, t], True
        tex = dataclasses.replace(tex, address_modes=(AddressMode.CLAMP,) * 3)
    slices = _slices(tex, geometry, layer, face) if (layer is not None or face is not None) \
        else np.zeros(n, np.int64)
    if gather_comp is not None:
        return sampler.gather(X.gmem, tex, tex.image.levels[0], coords, slices, gather_comp)
    return sampler.sample(X.gmem, tex, coords, slices, lod, integer, normalized)


def sampler_face(spatial):
    return cube_face(*spatial[:3])


@op("tex")
def build_tex(inst, tc) -> Built:
    m = Mods(inst)
    form = m.take("level", "grad", "base")
    geometry = _geometry(m)
    if m.take("v4") is None:
        raise UnsupportedInstruction("tex needs a .v4 destination")
    ts = m.types()
    m.finish()
    if len(ts) != 2 or ts[0].name not in ("f32", "s32", "u32") or ts[1].name not in ("f32", "s32"):
        raise UnsupportedInstruction("tex needs .v4.{f32,s32,u32}.{f32,s32} types")
    dtype_name, ctype = ts[0].name, ts[1].name
    img = inst.operands[1]
    if not isinstance(img, ir.ImageOperand):
        raise UnsupportedInstruction("tex needs a [texture, {coordinates}] operand")
    extra = inst.operands[2:]
    handle = handle_reader(tc, img)
    layer_r, spatial_r = coord_readers(tc, geometry, img.coords, ctype)
    writers = result_writers(tc, inst.operands[0])
    lod_r = grad_r = None
    if form == "level":
        if len(extra) != 1:
            raise UnsupportedInstruction("tex.level takes one level-of-detail operand")
        lod_r = tc.reader_dtype(extra[0], np.float32)
    elif form == "grad":
        if len(extra) != 2:
            raise UnsupportedInstruction("tex.grad takes two gradient vectors")
        axes = len(COORDS[geometry][1])
        grad_r = [[tc.reader_dtype(e, np.float32) for e in _elements(g)[:axes]] for g in extra]
    elif extra:
        raise UnsupportedInstruction("tex offset and depth-compare operands are not supported")
    integer = ctype == "s32"

    def run(X, idx):
        n = _count(X, idx)
        layer = _lanes(layer_r(X, idx), n, np.int32) if layer_r else None
        spatial = [_lanes(r(X, idx), n, np.float32 if not integer else np.int32) for r in spatial_r]
        lod = _lanes(lod_r(X, idx), n, np.float32) if lod_r else None
        grads = [[_lanes(r(X, idx), n, np.float32) for r in g] for g in grad_r] if grad_r else None
        result = None
        for tex, pos in lanes_by_handle(X, idx, handle, TextureState, "texture"):
            _check_geometry(tex, geometry, pos)
            g_lod = lod[pos] if lod is not None else None
            if grads is not None:
                sizes = sampler.level_sizes(tex.image.base, len(grads[0]))
                g_lod = lod_from_gradients([d[pos] for d in grads[0]], [d[pos] for d in grads[1]],
                                           sizes if tex.normalized_coords else [1] * len(sizes))
            try:
                part = _sample_group(X, tex, geometry, None if layer is None else layer[pos],
                                     [s[pos] for s in spatial], g_lod, integer)
            except LaneFault as f:
                raise relaned(f, pos) from None
            if result is None:
                result = np.zeros((n, 4), dtype=part.dtype)
            elif result.dtype != part.dtype:
                result = result.astype(np.float32) if part.dtype.kind == "f" else result
            result[pos] = part
        write_results(X, idx, writers, result, dtype_name)
    return Built(run, info={"access": "read", "space": "texture"})


@op("tld4")
def build_tld4(inst, tc) -> Built:
    m = Mods(inst)
    comp = m.take("r", "g", "b", "a")
    g = m.take("2d", "a2d")             # the gather geometries implemented (not cube/acube)
    other = next((x for x in GEOMETRY_NAMES + MULTISAMPLE if x in m.left), None)
    if g is None:
        raise UnsupportedInstruction(f"tld4.{other} is not supported (2d and a2d are)" if other
                                     else "tld4 needs a geometry (.2d, .a2d)")
    geometry = GEOMETRIES[g]
    m.take("v4")
    ts = m.types()
    m.finish()
    if comp is None:
        raise UnsupportedInstruction("tld4 needs a component (.r, .g, .b, .a)")
    if len(ts) != 2 or ts[1].name != "f32":
        raise UnsupportedInstruction("tld4 needs .v4.{f32,s32,u32}.f32 types")
    dtype_name = ts[0].name
    img = inst.operands[1]
    if not isinstance(img, ir.ImageOperand) or len(inst.operands) != 2:
        raise UnsupportedInstruction("tld4 takes a destination and a [texture, {coordinates}] operand "
                                     "(offset and depth-compare operands are not supported)")
    handle = handle_reader(tc, img)
    layer_r, spatial_r = coord_readers(tc, geometry, img.coords, "f32")
    writers = result_writers(tc, inst.operands[0])
    component = "rgba".index(comp)

    def run(X, idx):
        n = _count(X, idx)
        layer = _lanes(layer_r(X, idx), n, np.int32) if layer_r else None
        spatial = [_lanes(r(X, idx), n, np.float32) for r in spatial_r]
        result = None
        for tex, pos in lanes_by_handle(X, idx, handle, TextureState, "texture"):
            _check_geometry(tex, geometry, pos)
            try:
                part = _sample_group(X, tex, geometry, None if layer is None else layer[pos],
                                     [s[pos] for s in spatial], None, False, component)
            except LaneFault as f:
                raise relaned(f, pos) from None
            if result is None:
                result = np.zeros((n, 4), dtype=part.dtype)
            result[pos] = part
        write_results(X, idx, writers, result, dtype_name)
    return Built(run, info={"access": "read", "space": "texture"})


# ------------------------------------------------------------------ queries
def _texture_query(state, attr: str, level: int) -> int:
    image = state.image
    lv = image.levels[min(max(level, 0), len(image.levels) - 1)]
    if attr == "width":
        return lv.width
    if attr == "height":
        return lv.height
    if attr == "depth":
        return lv.depth
    if attr == "channel_data_type":
        return CL_CHANNEL_TYPE[image.fmt]
    if attr == "channel_order":
        return CL_CHANNEL_ORDER.get(image.channels, 0)
    if attr == "array_size":
        return image.layers
    if attr == "num_mipmap_levels":
        return len(image.levels)
    if attr == "num_samples":
        return 0
    if attr == "memory_layout":
        return int(image.pitch_linear)
    if isinstance(state, TextureState):
        if attr == "normalized_coords":
            return int(state.normalized_coords)
        if attr == "force_unnormalized_coords":
            return 0     # a sampler override of independent mode; a texture object's sampler never forces
        if attr == "filter_mode":
            return int(state.filter_mode)
        if attr.startswith("addr_mode_"):
            return int(state.address_modes[int(attr[-1])])
    raise KeyError(attr)


TXQ_ATTRS = ("width", "height", "depth", "channel_data_type", "channel_order", "normalized_coords",
             "force_unnormalized_coords", "filter_mode", "addr_mode_0", "addr_mode_1", "addr_mode_2",
             "num_mipmap_levels", "num_samples", "array_size")
SUQ_ATTRS = ("width", "height", "depth", "channel_data_type", "channel_order", "array_size", "memory_layout")


def _build_query(inst, tc, m: Mods, level: bool, attr: str | None, attrs, want, what) -> Built:
    m.take("b32")
    m.finish()
    if attr is None:
        raise UnsupportedInstruction(f"{inst.opcode} needs one of " + ", ".join("." + a for a in attrs))
    d = tc.writer(inst.operands[0])
    handle = handle_reader(tc, inst.operands[1])
    lod_r = tc.reader_dtype(inst.operands[2], np.int32) if level and len(inst.operands) > 2 else None

    def run(X, idx):
        n = _count(X, idx)
        out = np.zeros(n, dtype=np.uint32)
        lv = _lanes(lod_r(X, idx), n, np.int32) if lod_r else np.zeros(n, np.int32)
        for state, pos in lanes_by_handle(X, idx, handle, want, what):
            for p in pos:
                out[p] = _texture_query(state, attr, int(lv[p])) & 0xFFFFFFFF
        d(X, idx, out)
    return Built(run)


@op("txq")
def build_txq(inst, tc) -> Built:
    m = Mods(inst)
    level = m.flag("level")
    return _build_query(inst, tc, m, level, m.take(*TXQ_ATTRS), TXQ_ATTRS, TextureState, "texture")


@op("suq")
def build_suq(inst, tc) -> Built:
    m = Mods(inst)
    return _build_query(inst, tc, m, False, m.take(*SUQ_ATTRS), SUQ_ATTRS, SurfaceState, "surface")


@op("istypep")
def build_istypep(inst, tc) -> Built:
    m = Mods(inst)
    kind = m.take("texref", "samplerref", "surfref")
    m.finish()
    if kind is None:
        raise UnsupportedInstruction("istypep needs .texref, .samplerref or .surfref")
    want = {"texref": TextureState, "surfref": SurfaceState, "samplerref": ()}[kind]
    d = tc.writer(inst.operands[0])
    read = tc.reader_dtype(inst.operands[1], U64)

    def run(X, idx):
        h = _lanes(read(X, idx), _count(X, idx), U64)
        table = image_table(X.gpu)
        d(X, idx, np.array([isinstance(table.get(int(v)), want) if want else False for v in h], dtype=bool))
    return Built(run)

