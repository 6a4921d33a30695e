"""Native lowerings of comparisons and selects with integer results: setp
on integer types (with the .and/.or/.xor combination and the p|q pair),
set with an integer destination, and slct.

They mirror sim/ops/compare.py over sim/arith/compare.py: integer
orderings take their signedness from the type (lo/ls/hi/hs always
unsigned), bit types allow only eq/ne (anything else raises in the
interpreter at run time, so it stays there), a boolean combination applies
to both results of a pair (q = c OP !r), `set` gives all ones or zero.
set's f32/f64 sources compare as IEEE (ordered operators false on NaN,
unordered ones true), which LLVM's fcmp gives bit for bit; .ftz forms and
half-precision sources stay interpreted, and setp on floats belongs to the
float lowerings (registered for setp.f*).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim.native.emit import BOOL, NotNative, lower

_SIGNED = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_UNSIGNED = {"lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
_UNORDERED = {"equ": "==", "neu": "!=", "ltu": "<", "leu": "<=", "gtu": ">", "geu": ">="}
_CMP = tuple(_SIGNED) + tuple(_UNSIGNED) + tuple(_UNORDERED) + ("num", "nan")
_BOOL_OPS = ("and", "or", "xor")
_MIN_NORMAL = {4: np.float32(2.0 ** -126), 8: np.float64(2.0 ** -1022)}


def compare(em, x, y, cmp: str, t):
    """arith.compare.compare for integer types and plain f32/f64, as i1."""
    b = em.b
    if t.kind == "f":
        if t.name not in ("f32", "f64"):
            raise NotNative(f"comparison of .{t.name}")
        if cmp in _SIGNED:
            return b.fcmp_ordered(_SIGNED[cmp], x, y)
        if cmp in _UNORDERED:
            return b.fcmp_unordered(_UNORDERED[cmp], x, y)
        if cmp in ("num", "nan"):
            return b.fcmp_ordered("ord", x, y) if cmp == "num" else b.fcmp_unordered("uno", x, y)
        raise NotNative(f"{cmp} on .{t.name}")
    if t.kind not in "usb" or cmp not in _SIGNED and cmp not in _UNSIGNED:
        raise NotNative(f"{cmp} on .{t.name}")
    if t.kind == "b" and cmp not in ("eq", "ne"):
        raise NotNative(f"{cmp} on a bit type")
    if cmp in _UNSIGNED:
        return b.icmp_unsigned(_UNSIGNED[cmp], x, y)
    if t.kind == "s":
        return b.icmp_signed(_SIGNED[cmp], x, y)
    return b.icmp_unsigned(_SIGNED[cmp], x, y)


def _comparison(em, inst, m, t):
    """compare._comparison: (raw result, combine(v) -> v OP c or v)."""
    cmp = m.take(*_CMP)
    if cmp is None:
        raise NotNative("a comparison without its operator")
    bool_op = m.take(*_BOOL_OPS)
    m.finish()
    if len(inst.operands) != (4 if bool_op else 3):
        raise NotNative(f"{inst.full_opcode} with {len(inst.operands)} operands")
    x, y = em.read(inst.operands[1], t.dtype), em.read(inst.operands[2], t.dtype)
    r = compare(em, x, y, cmp, t)
    return r, em.predicate_combiner(inst, bool_op)


@lower("setp", types="iub")
def setp_int(em, inst):
    m = em.mods(inst)
    if m.flag("ftz"):
        raise NotNative("setp.ftz on an integer type")     # ignored by the interpreter
    t = m.one_type()
    r, combine = _comparison(em, inst, m, t)
    dst = inst.operands[0]
    if isinstance(dst, ir.PredicatePair):
        first, second = combine(r), combine(em.b.not_(r))
        em.write(dst.first, first, BOOL)
        em.write(dst.second, second, BOOL)
        return
    em.write(dst, combine(r), BOOL)


@lower("set", types="iub")
def set_int(em, inst):
    m = em.mods(inst)
    if m.flag("ftz"):
        raise NotNative("set.ftz")
    ts = [PTX_TYPES[x] for x in m.left if x in PTX_TYPES]
    if len(ts) != 2:
        raise NotNative("set needs a destination and a source type")
    dt, st = ts
    m.left.remove(dt.name)
    if st.name in m.left:
        m.left.remove(st.name)
    if dt.kind not in "usb":
        raise NotNative(f"set with a .{dt.name} destination")
    r, combine = _comparison(em, inst, m, st)
    ty = L.IntType(dt.bits)
    em.write(inst.operands[0], em.b.select(combine(r), L.Constant(ty, -1), L.Constant(ty, 0)), dt.dtype)


@lower("slct")
def slct(em, inst):
    m = em.mods(inst)
    ftz = m.flag("ftz")
    ts = m.types()
    m.finish()
    if len(ts) != 2:
        raise NotNative("slct needs two types")
    dt, ct = ts
    if dt.kind == "pred" or dt.bits > 64 or ct.name not in ("s32", "f32", "f64"):
        raise NotNative(f"{inst.full_opcode}")
    d, a, bo, c = inst.operands
    b = em.b
    cv = em.read(c, ct.dtype)
    if ct.kind == "s":
        take_a = b.icmp_signed(">=", cv, L.Constant(cv.type, 0))
    elif ftz:        # a flushed negative subnormal is -0.0 >= 0: x > -min_normal
        take_a = b.fcmp_ordered(">", cv, L.Constant(cv.type, -float(_MIN_NORMAL[ct.dtype.itemsize])))
    else:
        take_a = b.fcmp_ordered(">=", cv, L.Constant(cv.type, 0.0))
    em.write(d, b.select(take_a, em.read(a, dt.dtype), em.read(bo, dt.dtype)), dt.dtype)
