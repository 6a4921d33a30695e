"""Tensor-core instructions: wmma.load, wmma.store, wmma.mma and mma.sync.

The one idea: each instruction is data plus three generic steps. The
fragment table (fragments.py) says which (row, col) element every
(lane, register element) holds; loads and stores are per-thread accesses at
base + (row * stride + col) * size (row-major; col-major swaps them), so each
thread touches only its own elements and faults precisely like ld/st; an
mma gathers each warp's A, B and C by the tables (warp_matrix.py), computes
D = A x B + C with the documented model (tensor_math.py) and scatters D
back. Shapes and types are checked against the ISA's tables at load time
(a clear UnsupportedInstruction naming what is wrong).

Alignment: the ISA asks every row (column) start of a wmma matrix to be
aligned to the fragment's size in bytes; sm_80 moves fragments with
accesses of at most 16 bytes, and CUDA documents a 16-byte multiple for the
leading dimension, so the simulator faults (misaligned address) when a row
start is not a multiple of min(fragment bytes, 16), which is what would
trap on the hardware, and accepts the rest.

What it deliberately does not do: the sub-byte, .b1, fp8 and sparse
(mma.sp) forms, Volta's mma.m8n8k4 .f16, and wgmma (sm_90a).
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim.memory.spaces import AccessType
from gpudbg.sim.ops import fragments as F
from gpudbg.sim.ops import tensor_math as TM
from gpudbg.sim.ops import tensor_memory as TMem
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op
from gpudbg.sim.ops.memory_ops import address_of
from gpudbg.sim.ops.warp_matrix import Warps, gather_matrix, pack, read_bits, scatter_matrix, unpack

U32 = PTX_TYPES["u32"]
_REG = {4: PTX_TYPES["b32"], 8: PTX_TYPES["b64"]}
_ELEM_DTYPE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
FULL_WARP = {"sync_mask": None}   # .sync.aligned: the whole warp, no mask operand
# shape modifiers as plain tuples (also what the PTX census reads: sim/census.py)
WMMA_SHAPE_NAMES = tuple(F.WMMA_SHAPES)
MMA_SHAPE_NAMES = tuple(F.MMA_SHAPES)


def _vector(operand, count: int, what: str) -> tuple:
    if not isinstance(operand, ir.Vector):
        raise UnsupportedInstruction(f"{what} must be a vector of {count} registers {{...}}")
    if len(operand.elements) != count:
        raise UnsupportedInstruction(f"{what} needs {count} registers, got {len(operand.elements)}")
    return operand.elements


def _readers(tc, operand, layout: F.Layout, what: str) -> list:
    t = _REG[layout.reg_bytes]
    return [tc.reader(e, t) for e in _vector(operand, layout.regs, what)]


def _writers(tc, operand, layout: F.Layout, what: str) -> list:
    return [tc.writer(e) for e in _vector(operand, layout.regs, what)]


def _lane_bits(X, idx, readers, layout: F.Layout) -> np.ndarray:
    """Each selected thread's own fragment elements (threads, elements)."""
    regs = []
    for r in readers:
        v = np.asarray(r(X, idx))
        regs.append(np.broadcast_to(v, (X.count(idx),)))
    return unpack(regs, layout)


# ------------------------------------------------------------------ wmma.load / wmma.store

def _wmma_kind(m: Mods, inst) -> tuple[str, str, str, str]:
    """(matrix, layout, shape, space) of a wmma.load/store."""
    matrix = m.take("a", "b", "c", "d")
    layout = m.take("row", "col")
    shape = m.take(*WMMA_SHAPE_NAMES)
    space = TMem.space_of(m.take("global", "shared", "shared::cta"))
    if matrix is None or layout is None or shape is None:
        raise UnsupportedInstruction(f"{inst.opcode}.{'.'.join(inst.modifiers)}: needs a matrix "
                                     "(.a/.b/.c/.d), a layout (.row/.col) and a shape "
                                     f"({', '.join('.' + s for s in F.WMMA_SHAPES)})")
    return matrix, layout, shape, space


def _wmma_layout(shape: str, matrix: str, elem: str) -> F.Layout:
    ok = F.WMMA_SHAPES[shape]
    if matrix in ("a", "b"):
        if elem not in ok:
            raise UnsupportedInstruction(f"wmma .{shape} takes .{'/.'.join(ok)} multiplicands, not .{elem}")
    else:
        acc = {"f16": ("f16", "f32"), "bf16": ("f32",), "tf32": ("f32",), "s8": ("s32",), "u8": ("s32",),
               "f64": ("f64",)}
        allowed = sorted({t for e in ok for t in acc[e]})
        if elem not in allowed:
            raise UnsupportedInstruction(f"wmma .{shape} accumulators are .{'/.'.join(allowed)}, not .{elem}")
    return F.wmma_layout(shape, "c" if matrix == "d" else matrix, elem)


def _element_addresses(tc, inst, addr_operand, stride_operand, layout: F.Layout, row_major: bool):
    """-> address-matrix function (X, idx) -> (threads, elements) and the
    row-start function (X, idx) -> (base, stride bytes) for alignment."""
    kind, base = address_of(tc, addr_operand)
    if base is None:
        raise UnsupportedInstruction(f"{inst.opcode}: the address must be a register or a variable")
    lead = layout.cols if row_major else layout.rows
    stride = tc.reader(stride_operand, U32) if stride_operand is not None else None
    major = (layout.row if row_major else layout.col).astype(np.uint64)[:, : layout.distinct]
    minor = (layout.col if row_major else layout.row).astype(np.uint64)[:, : layout.distinct]
    size = np.uint64(layout.elem_bytes)

    def parts(X, idx):
        n = X.count(idx)
        b = np.broadcast_to(np.asarray(base(X, idx), dtype=np.uint64), (n,))
        s = (np.broadcast_to(np.asarray(stride(X, idx)).astype(np.uint64), (n,)) if stride is not None
             else np.full(n, lead, dtype=np.uint64))
        return b, s

    def matrix(X, idx):
        b, s = parts(X, idx)
        lane = (X.all_slots if idx is None else np.asarray(idx)) & 31
        return b[:, None] + (major[lane] * s[:, None] + minor[lane]) * size

    return matrix, parts


def _check_rows(X, idx, parts, space: str, layout: F.Layout, access: AccessType, what: str) -> None:
    """Row (column) 0 and 1 start aligned: together with the stride that is
    every row start; a bad stride is reported at row 1's address."""
    align = min(layout.regs * layout.reg_bytes, 16)
    base, stride = parts(X, idx)
    TMem.check_aligned(space, base, align, access, layout.elem_bytes,
                       f"the {what} start address must be a multiple of {align} bytes")
    TMem.check_aligned(space, base + stride * np.uint64(layout.elem_bytes), align, access, layout.elem_bytes,
                       f"{what} 1 starts one stride after {what} 0: the stride must be a multiple of "
                       f"{align} bytes")


def _build_wmma_load(inst, tc, m: Mods) -> Built:
    matrix, lay, shape, space = _wmma_kind(m, inst)
    elem = m.one_type().name
    m.finish()
    if matrix == "d":
        raise UnsupportedInstruction("wmma.load loads .a, .b or .c, not .d")
    layout = _wmma_layout(shape, matrix, elem)
    ops = inst.operands
    outs = _writers(tc, ops[0], layout, f"wmma.load.{matrix} destination")
    addrs, parts = _element_addresses(tc, inst, ops[1], ops[2] if len(ops) > 2 else None, layout, lay == "row")
    edt = _ELEM_DTYPE[layout.elem_bytes]
    copies = np.arange(layout.elements) % layout.distinct

    def run(X, idx):
        _check_rows(X, idx, parts, space, layout, AccessType.READ, "row" if lay == "row" else "column")
        el = TMem.load(X, idx, space, addrs(X, idx), edt)
        for w, v in zip(outs, pack(el[:, copies], layout)):
            w(X, idx, v)
    return Built(run, info={"space": space, "access": "read", "sync_op": "wmma.load.sync", **FULL_WARP,
                            "memory": TMem.probes(space, addrs, layout.distinct, AccessType.READ,
                                                  layout.elem_bytes)})


def _build_wmma_store(inst, tc, m: Mods) -> Built:
    matrix, lay, shape, space = _wmma_kind(m, inst)
    elem = m.one_type().name
    m.finish()
    if matrix != "d":
        raise UnsupportedInstruction("wmma.store stores .d only")
    layout = _wmma_layout(shape, "d", elem)
    ops = inst.operands
    ins = _readers(tc, ops[1], layout, "wmma.store.d source")
    addrs, parts = _element_addresses(tc, inst, ops[0], ops[2] if len(ops) > 2 else None, layout, lay == "row")
    edt = _ELEM_DTYPE[layout.elem_bytes]

    def run(X, idx):
        _check_rows(X, idx, parts, space, layout, AccessType.WRITE, "row" if lay == "row" else "column")
        el = _lane_bits(X, idx, ins, layout)[:, : layout.distinct]
        TMem.store(X, idx, space, addrs(X, idx), el, edt)
    return Built(run, info={"space": space, "access": "write", "sync_op": "wmma.store.sync", **FULL_WARP,
                            "memory": TMem.probes(space, addrs, layout.distinct, AccessType.WRITE,
                                                  layout.elem_bytes)})


# ------------------------------------------------------------------ the multiply-accumulate

def _mma_run(tc, inst, ops, la: F.Layout, lb: F.Layout, lc: F.Layout, ld: F.Layout,
             atype: str, btype: str, ctype: str, dtype: str, satfinite: bool, rnd: str, sync_op: str) -> Built:
    ra = _readers(tc, ops[1], la, "the A operand")
    rb = _readers(tc, ops[2], lb, "the B operand")
    rc = _readers(tc, ops[3], lc, "the C operand")
    wd = _writers(tc, ops[0], ld, "the D operand")

    def run(X, idx):
        warps = Warps(X, idx)
        a = TM.decode(gather_matrix(warps, read_bits(X, ra, la.reg_bytes), la), atype)
        b = TM.decode(gather_matrix(warps, read_bits(X, rb, lb.reg_bytes), lb), btype)
        c = TM.decode(gather_matrix(warps, read_bits(X, rc, lc.reg_bytes), lc), ctype)
        d = TM.multiply_accumulate(a, b, c, atype, dtype, satfinite, rnd)
        lanes = scatter_matrix(TM.encode(d, dtype), ld)       # (warps, 32, elements)
        for w, v in zip(wd, pack(lanes, ld)):
            w(X, idx, warps.of_selected(v))
    return Built(run, info={"sync_op": sync_op, **FULL_WARP})


def _build_wmma_mma(inst, tc, m: Mods) -> Built:
    m.take("a", "b", "c", "d")
    layouts = [m.take("row", "col"), m.take("row", "col")]
    shape = m.take(*WMMA_SHAPE_NAMES)
    satfinite = m.flag("satfinite")
    rnd = m.take("rn", "rz", "rm", "rp") or "rn"
    types = [t.name for t in m.types()]
    m.finish()
    if shape is None or None in layouts:
        raise UnsupportedInstruction("wmma.mma needs .alayout.blayout (.row/.col) and a shape")
    if len(types) == 2:                      # .dtype.ctype with .f16 multiplicands
        dtype, ctype = types
        atype = btype = "f16"
    elif len(types) == 4:
        dtype, atype, btype, ctype = types
    else:
        raise UnsupportedInstruction("wmma.mma needs .dtype.ctype or .dtype.atype.btype.ctype")
    if atype != btype and not {atype, btype} <= {"s8", "u8"}:
        raise UnsupportedInstruction(f"wmma.mma: .{atype} A with .{btype} B is not a valid combination")
    if satfinite and atype not in ("s8", "u8"):
        raise UnsupportedInstruction("wmma.mma .satfinite is only supported for .s8/.u8 multiplicands")
    if rnd != "rn" and atype != "f64":
        raise UnsupportedInstruction(f"wmma.mma .{rnd} is only valid for .f64")
    la, lb = _wmma_layout(shape, "a", atype), _wmma_layout(shape, "b", btype)
    lc, ld = _wmma_layout(shape, "c", ctype), _wmma_layout(shape, "d", dtype)
    return _mma_run(tc, inst, inst.operands, la, lb, lc, ld, atype, btype, ctype, dtype, satfinite, rnd,
                    "wmma.mma.sync")


@op("wmma")
def build_wmma(inst, tc) -> Built:
    m = Mods(inst)
    kind = m.take("load", "store", "mma")
    if kind == "load":
        return _build_wmma_load(inst, tc, m)
    if kind == "store":
        return _build_wmma_store(inst, tc, m)
    if kind == "mma":
        return _build_wmma_mma(inst, tc, m)
    raise UnsupportedInstruction("wmma needs .load, .store or .mma")


_MMA_ACC = {"f16": ("f16", "f32"), "bf16": ("f32",), "tf32": ("f32",), "s8": ("s32",), "u8": ("s32",),
            "f64": ("f64",)}


@op("mma")
def build_mma(inst, tc) -> Built:
    m = Mods(inst)
    shape = m.take(*MMA_SHAPE_NAMES)
    alay, blay = m.take("row", "col"), m.take("row", "col")
    satfinite = m.flag("satfinite")
    rnd = m.take("rn", "rz", "rm", "rp") or "rn"
    if shape is None:
        other = [x for x in m.left if x[:1] == "m" and "n" in x and "k" in x]
        raise UnsupportedInstruction(f"mma.sync: unsupported shape{' .' + other[0] if other else ''}; the "
                                     f"simulator executes {', '.join('.' + s for s in F.MMA_SHAPES)}")
    types = [t.name for t in m.types()]
    m.finish()
    if len(types) != 4:
        raise UnsupportedInstruction("mma.sync needs .dtype.atype.btype.ctype")
    dtype, atype, btype, ctype = types
    if shape == "m8n8k4" and atype == "f16":
        raise UnsupportedInstruction("mma.sync.m8n8k4 with .f16 (Volta quad-pair layout) is not supported")
    if (alay, blay) != ("row", "col"):
        raise UnsupportedInstruction(f"mma.sync.{shape} takes .row.col layouts, not .{alay}.{blay}")
    ok = F.MMA_SHAPES[shape]
    if atype not in ok:
        raise UnsupportedInstruction(f"mma.sync.{shape} takes .{'/.'.join(ok)} multiplicands, not .{atype}")
    if atype != btype and not {atype, btype} <= {"s8", "u8"}:
        raise UnsupportedInstruction(f"mma.sync: .{atype} A with .{btype} B is not a valid combination")
    if dtype not in _MMA_ACC[atype] or ctype not in _MMA_ACC[atype]:
        raise UnsupportedInstruction(f"mma.sync with .{atype} multiplicands accumulates in "
                                     f".{'/.'.join(_MMA_ACC[atype])}, not .{dtype}/.{ctype}")
    if satfinite and atype not in ("s8", "u8"):
        raise UnsupportedInstruction("mma.sync .satfinite is only valid for integer multiplicands")
    if rnd != "rn" and atype != "f64":
        raise UnsupportedInstruction(f"mma.sync .{rnd} is only valid for .f64")
    la, lb = F.mma_layout(shape, "a", atype), F.mma_layout(shape, "b", btype)
    lc, ld = F.mma_layout(shape, "c", ctype), F.mma_layout(shape, "c", dtype)
    return _mma_run(tc, inst, inst.operands, la, lb, lc, ld, atype, btype, ctype, dtype, satfinite, rnd,
                    "mma.sync")
