"""Surface instructions: suld.b (raw loads), sust.b and sust.p (raw and
formatted stores), sured.b (reductions) on surface objects.

Surface coordinates address bytes along x for the .b forms (surf2Dwrite's
x is a byte offset) and elements for sust.p, rows along y, slices along z,
layers first for the arrayed geometries. Out-of-range accesses follow the
instruction's mode: .trap (the default) is a precise fault naming the
coordinates and the surface's size, .clamp accesses the nearest in-range
location, .zero loads zeros and drops stores. The access itself is a
checked global memory access at the texel's address, so a surface over a
freed array faults like any use-after-free, and the .b forms declare their
accesses to analysis tools (SurfaceProbe), so racecheck sees surface writes
like global ones.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory.spaces import AccessFault, AccessType, Space
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op
from gpudbg.sim.ops.texture import COORDS, GEOMETRIES, _elements, _lanes, handle_reader, lanes_by_handle, relaned
from gpudbg.sim.texture.descriptors import Geometry, SurfaceState
from gpudbg.sim.texture.formats import dtype_of

U64 = np.dtype(np.uint64)
RAW = {"b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64}
RAW_TYPES = tuple(RAW)
SURFACE_GEOMETRIES = (Geometry.D1, Geometry.D2, Geometry.D3, Geometry.A1D, Geometry.A2D)
SURFACE_GEOMETRY_NAMES = tuple(g.value for g in SURFACE_GEOMETRIES)
REDUCTIONS = ("add", "min", "max", "and", "or")


def _count(X, idx) -> int:
    return X.n if idx is None else len(idx)


def _parts(inst, m: Mods):
    geom = m.take(*SURFACE_GEOMETRY_NAMES)
    if geom is None:
        raise UnsupportedInstruction(f"{inst.opcode} needs a geometry (.1d, .2d, .3d, .a1d, .a2d)")
    mode = m.take("trap", "clamp", "zero") or "trap"
    return GEOMETRIES[geom], mode


def _coord_readers(tc, geometry: Geometry, operand):
    if not isinstance(operand, ir.ImageOperand):
        raise UnsupportedInstruction("expected a [surface, {coordinates}] operand")
    layer_at, spatial = COORDS[geometry]
    elems = _elements(operand.coords)
    if len(elems) < max(spatial) + 1:
        raise UnsupportedInstruction(f".{geometry.value} needs {max(spatial) + 1} coordinates")
    layer = tc.reader_dtype(elems[layer_at], np.int32) if layer_at is not None else None
    return handle_reader(tc, operand), layer, [tc.reader_dtype(elems[i], np.int32) for i in spatial]


def surface_addresses(surf: SurfaceState, geometry: Geometry, layer, coords, size: int, mode: str,
                      x_in_elements: bool):
    """(uint64 addresses, keep mask) of a surface access of `size` bytes per
    lane; raises the .trap fault for the first out-of-range lane."""
    image = surf.image
    if image.geometry is not geometry:
        raise AccessFault(CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS, Space.GLOBAL, 0, 0, size,
                          f"surface access .{geometry.value} on a {image.geometry.value} surface object")
    lv = image.base
    x = coords[0].astype(np.int64) * (image.element_size if x_in_elements else 1)
    limits = [(x, lv.width * image.element_size - size, "x (bytes)")]
    if len(coords) > 1:
        limits.append((coords[1].astype(np.int64), lv.height - 1, "y"))
    if len(coords) > 2:
        limits.append((coords[2].astype(np.int64), lv.depth - 1, "z"))
    if layer is not None:
        limits.append((layer.astype(np.int64), max(1, image.layers) - 1, "layer"))
    bad = np.zeros(len(x), dtype=bool)
    for v, top, _ in limits:
        bad |= (v < 0) | (v > top)
    if bad.any() and mode == "trap":
        lane = int(np.flatnonzero(bad)[0])
        where = ", ".join(f"{name}={int(v[lane])}" for v, _, name in limits)
        dims = f"{lv.width}x{lv.height}" + (f"x{lv.depth}" if len(coords) > 2 else "") + \
            (f", {image.layers} layers" if layer is not None else "")
        raise AccessFault(CUDBGException.CUDBG_EXCEPTION_WARP_OUT_OF_RANGE_ADDRESS, Space.GLOBAL, lane,
                          lv.address, size,
                          f"Out-of-range surface access of {size} bytes at {where}: the surface is {dims} "
                          f"elements of {image.element_size} bytes", np.flatnonzero(bad))
    clipped = [np.clip(v, 0, max(top, 0)) for v, top, _ in limits]
    xs = clipped[0]
    ys = clipped[1] if len(coords) > 1 else 0
    zs = clipped[2] if len(coords) > 2 else 0
    ls = clipped[-1] if layer is not None else 0
    off = np.asarray(ls, np.int64) * lv.slice_pitch + np.asarray(zs, np.int64) * lv.depth_pitch \
        + np.asarray(ys, np.int64) * lv.row_pitch + xs
    addrs = (np.uint64(lv.address) + off.astype(U64)).astype(U64)
    return addrs, ~bad if mode == "zero" else np.ones(len(x), dtype=bool)


class SurfaceProbe:
    """The global addresses a surface instruction touches, for analysis
    tools (sim/instrument.py probes them before the access). Lanes whose
    handle names no surface read address 0: the access faults and no event
    is emitted. Out-of-range lanes of .clamp/.zero report the clamped
    location."""

    space = "global"

    def __init__(self, handle, layer_r, coord_r, geometry: Geometry, size: int, x_in_elements: bool):
        self.handle, self.layer_r, self.coord_r = handle, layer_r, coord_r
        self.geometry, self.size, self.x_in_elements = geometry, size, x_in_elements

    def addresses(self, X, idx) -> np.ndarray:
        n = _count(X, idx)
        out = np.zeros(n, dtype=U64)
        h = _lanes(self.handle(X, idx), n, U64)
        layer = _lanes(self.layer_r(X, idx), n, np.int32) if self.layer_r else None
        coords = [_lanes(r(X, idx), n, np.int32) for r in self.coord_r]
        from gpudbg.sim.texture.descriptors import image_table
        table = image_table(X.gpu)
        for value in np.unique(h):
            surf = table.get(int(value))
            if not isinstance(surf, SurfaceState) or surf.image.geometry is not self.geometry:
                continue
            pos = np.flatnonzero(h == value)
            addrs, _ = surface_addresses(surf, self.geometry, None if layer is None else layer[pos],
                                         [c[pos] for c in coords], self.size, "clamp", self.x_in_elements)
            out[pos] = addrs
        return out


def _each_surface(X, idx, handle, layer_r, coord_r, body):
    n = _count(X, idx)
    layer = _lanes(layer_r(X, idx), n, np.int32) if layer_r else None
    coords = [_lanes(r(X, idx), n, np.int32) for r in coord_r]
    for surf, pos in lanes_by_handle(X, idx, handle, SurfaceState, "surface"):
        try:
            body(surf, pos, None if layer is None else layer[pos], [c[pos] for c in coords])
        except AccessFault as f:
            raise relaned(f, pos) from None


@op("suld")
def build_suld(inst, tc) -> Built:
    m = Mods(inst)
    if not m.flag("b"):
        raise UnsupportedInstruction("only suld.b is supported (suld.p does not exist in current PTX)")
    geometry, mode = _parts(inst, m)
    count = int((m.take("v2", "v4") or "v1")[1:])
    raw = m.take(*RAW_TYPES)
    m.finish()
    if raw is None:
        raise UnsupportedInstruction("suld.b needs .b8, .b16, .b32 or .b64")
    dtype = np.dtype(RAW[raw])
    handle, layer_r, coord_r = _coord_readers(tc, geometry, inst.operands[1])
    dst = _elements(inst.operands[0])
    if len(dst) != count:
        raise UnsupportedInstruction(f"suld with .v{count} needs {count} destinations")
    writers = [tc.writer(e) for e in dst]
    size = dtype.itemsize * count

    def run(X, idx):
        n = _count(X, idx)
        out = np.zeros((n, count), dtype=dtype)

        def body(surf, pos, layer, coords):
            addrs, keep = surface_addresses(surf, geometry, layer, coords, size, mode, False)
            v = np.asarray(X.gmem.load(addrs, dtype, count, space_name="surface")).reshape(len(pos), count)
            out[pos] = np.where(keep[:, None], v, 0)
        _each_surface(X, idx, handle, layer_r, coord_r, body)
        for i, w in enumerate(writers):
            w(X, idx, np.ascontiguousarray(out[:, i]))
    probe = SurfaceProbe(handle, layer_r, coord_r, geometry, size, False)
    return Built(run, info={"access": "read", "space": "surface",
                            "memory": ((probe, AccessType.READ, size),)})


@op("sust")
def build_sust(inst, tc) -> Built:
    m = Mods(inst)
    formatted = m.take("b", "p") == "p"
    geometry, mode = _parts(inst, m)
    count = int((m.take("v2", "v4") or "v1")[1:])
    raw = m.take(*RAW_TYPES)
    m.finish()
    if raw is None:
        raise UnsupportedInstruction("sust needs .b8, .b16, .b32 or .b64")
    if formatted and raw != "b32":
        raise UnsupportedInstruction("sust.p takes .b32 components")
    dtype = np.dtype(RAW[raw])
    handle, layer_r, coord_r = _coord_readers(tc, geometry, inst.operands[0])
    src = [tc.reader_dtype(e, dtype) for e in _elements(inst.operands[1])]
    if len(src) != count:
        raise UnsupportedInstruction(f"sust with .v{count} needs {count} sources")

    def run(X, idx):
        n = _count(X, idx)
        vals = np.stack([_lanes(r(X, idx), n, dtype) for r in src], axis=1)

        def body(surf, pos, layer, coords):
            image = surf.image
            if formatted:
                # sust.p: 32-bit components converted to the surface's element type
                fdt = dtype_of(image.fmt)
                chans = np.ascontiguousarray(vals[pos][:, :image.channels])
                if fdt.kind == "f":
                    data = chans.view(np.float32).astype(fdt)
                else:
                    data = (chans.view(np.int32) if fdt.kind == "i" else chans).astype(fdt)
                size, store_dt, k = image.element_size, fdt, image.channels
            else:
                data, size, store_dt, k = vals[pos], dtype.itemsize * count, dtype, count
            addrs, keep = surface_addresses(surf, geometry, layer, coords, size, mode, formatted)
            if not keep.all():
                addrs, data = addrs[keep], data[keep]
            if len(addrs):
                X.gmem.store(addrs, data if k > 1 else data[:, 0], store_dt, k, space_name="surface")
        _each_surface(X, idx, handle, layer_r, coord_r, body)
    if formatted:       # the element size is the surface's, known only at run time: not probed
        return Built(run, info={"access": "write", "space": "surface"})
    size = dtype.itemsize * count
    probe = SurfaceProbe(handle, layer_r, coord_r, geometry, size, False)
    return Built(run, info={"access": "write", "space": "surface", "memory": ((probe, AccessType.WRITE, size),)})


@op("sured")
def build_sured(inst, tc) -> Built:
    m = Mods(inst)
    if not m.flag("b"):
        raise UnsupportedInstruction("only sured.b is supported")
    opname = m.take(*REDUCTIONS)
    geometry, mode = _parts(inst, m)
    t = m.one_type()
    m.finish()
    if opname is None or t.name not in ("u32", "u64", "s32", "b32", "b64", "s64"):
        raise UnsupportedInstruction("sured.b needs .add/.min/.max/.and/.or and a 32/64-bit type")
    dtype = t.dtype
    handle, layer_r, coord_r = _coord_readers(tc, geometry, inst.operands[0])
    src = tc.reader_dtype(inst.operands[1], dtype)

    def run(X, idx):
        n = _count(X, idx)
        vals = _lanes(src(X, idx), n, dtype)

        def body(surf, pos, layer, coords):
            addrs, keep = surface_addresses(surf, geometry, layer, coords, dtype.itemsize, mode, False)
            if keep.any():
                X.gmem.reduce(opname, addrs[keep], vals[pos][keep], dtype, space_name="surface")
        _each_surface(X, idx, handle, layer_r, coord_r, body)
    probe = SurfaceProbe(handle, layer_r, coord_r, geometry, dtype.itemsize, False)
    return Built(run, info={"access": "atomic", "space": "surface",
                            "memory": ((probe, AccessType.ATOMIC, dtype.itemsize),)})
