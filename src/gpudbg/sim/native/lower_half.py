"""Native f16/bf16 and f16x2/bf16x2 arithmetic: add/sub/mul/fma/mad (every rounding,
.ftz, .sat), min/max (.NaN, .ftz) and abs/neg (.ftz),
mirroring sim/arith/half.py bit for bit (entered from the f32/f64
lowerings of the same opcodes, which own the "f" registration).

The one idea: as in the interpreter, each half is widened exactly to f64,
the operation's exact result is formed there (f16 sums and products are
exact in f64; fma adds TwoSum's error, folded in by round-to-odd, which
keeps every rounding to 11 bits correct) and rounded once by
fp16.round_to; an exactly zero result takes the sign of the interpreter's
f64 sum s + e, as rounding.round_oracle keeps its candidate's zero. A
packed register is two independent halves.

bf16/bf16x2 are the same code with bf16's format (their registers hold raw
bits). What it deliberately does not do: the forms the interpreter's half
semantics ignore modifiers of (min/max .xorsign.abs, .relu): interpreted.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.sim.native import fp16
from gpudbg.sim.native.emit import I16, I32, I64, NotNative
from gpudbg.sim.native.fpbits import FP, all_of, two_sum

HALF_TYPES = ("f16", "f16x2", "bf16", "bf16x2")
_F64 = np.dtype(np.float64)
_U32 = np.dtype(np.uint32)
_F16 = np.dtype(np.float16)
_U16 = np.dtype(np.uint16)


def _fmt(t) -> fp16.Half:
    return fp16.FORMATS[t.name[:-2] if t.name.endswith("x2") else t.name]


def is_half(inst) -> bool:
    return any(m in HALF_TYPES for m in inst.modifiers)


def _form(em, inst, *extra):
    m = em.mods(inst)
    got = {name: m.flag(name) for name in extra}
    rnd = m.rounding() or "rn"
    got["ftz"] = m.flag("ftz")
    t = m.one_type()
    m.finish()
    if t.name not in HALF_TYPES or rnd not in ("rn", "rz", "rm", "rp"):
        raise NotNative(f"{inst.full_opcode} stays interpreted")
    return t, rnd, got


def _lanes(em, inst, t, n: int, fn) -> None:
    """Read n operands, apply fn(*f16 bits) -> f16 bits to each half, write."""
    b = em.b
    if t.name == "f16":
        xs = [fp16.bits_of(b, em.read(op, _F16)) for op in inst.operands[1:1 + n]]
        em.write(inst.operands[0], fp16.as_half(b, fn(*xs)), _F16)
        return
    if t.name == "bf16":                          # raw bits in the interpreter's registers
        xs = [em.read(op, _U16) for op in inst.operands[1:1 + n]]
        em.write(inst.operands[0], fn(*xs), _U16)
        return
    words = [em.read(op, _U32) for op in inst.operands[1:1 + n]]
    lo = fn(*[b.trunc(w, I16) for w in words])
    hi = fn(*[b.trunc(b.lshr(w, I32(16)), I16) for w in words])
    packed = b.or_(b.zext(lo, I32), b.shl(b.zext(hi, I32), I32(16)))
    em.write(inst.operands[0], packed, _U32)


def _flush64(f64: FP, v: L.Value, fmt: fp16.Half) -> L.Value:
    """half._flush: |v| below the format's smallest normal becomes the zero of v's sign."""
    b = f64.b
    tiny = b.fcmp_ordered("<", f64.fabs(v), f64.const(fmt.min_normal))
    return b.select(tiny, f64.from_bits(b.and_(f64.bits(v), I64(1 << 63))), v)


def _post(em, f64: FP, r16: L.Value, ftz, sat, relu, fmt: fp16.Half) -> L.Value:
    """half._post on a rounded result (bits): flush, relu, sat, encode."""
    if not (ftz or sat or relu):
        return r16
    b = em.b
    w = fp16.widen(b, r16, fmt)
    if ftz:
        w = _flush64(f64, w, fmt)
    if relu:
        w = b.select(b.fcmp_ordered("<", w, f64.const(0.0)), f64.const(0.0), w)
    if sat:
        w = f64.saturate(w)
    return fp16.round_to(b, w, "rn", fmt)       # exact: w is a value of the format


def _round_odd(f64: FP, s: L.Value, e: L.Value) -> L.Value:
    """s with its last bit forced to 1 toward e when e != 0 (round to odd)."""
    b = f64.b
    u = f64.bits(s)
    even = b.icmp_unsigned("==", b.and_(u, I64(1)), I64(0))
    inexact = b.fcmp_unordered("!=", e, f64.const(0.0))
    away = b.icmp_unsigned("==", f64.signbit(s), f64.signbit(e))
    moved = b.select(away, b.add(u, I64(1)), b.sub(u, I64(1)))
    return f64.from_bits(b.select(b.and_(even, inexact), moved, u))


def _rounded(em, f64: FP, s, e, naive, fin, mode, zero_rm, fmt: fp16.Half) -> L.Value:
    """half._exact_round: round s + e once (NaN/inf lanes: naive)."""
    b = em.b
    exact_zero = f64.is_zero(s)
    v = b.select(exact_zero, b.fadd(s, e), _round_odd(f64, s, e))
    v = b.select(fin, v, naive)
    r = fp16.round_to(b, v, mode, fmt)
    if mode == "rm":
        r = b.select(zero_rm, I16(0x8000), r)
    return r


def _pos0(f64: FP, x):
    return f64.b.and_(f64.is_zero(x), f64.b.not_(f64.signbit(x)))


def add_sub_mul(em, inst) -> None:
    t, mode, got = _form(em, inst, "sat")
    ftz, sat = got["ftz"], got["sat"]
    fmt = _fmt(t)
    f64 = FP(em, _F64)
    b = em.b
    zero = f64.const(0.0)
    op = inst.opcode

    def lane(xb, yb):
        if op == "sub":       # half_sub: a + neg(b), neg flipping the sign bit
            yb = b.xor(yb, I16(0x8000))
        x, y = fp16.widen(b, xb, fmt), fp16.widen(b, yb, fmt)
        if ftz:
            x, y = _flush64(f64, x, fmt), _flush64(f64, y, fmt)
        fin = b.and_(f64.is_finite(x), f64.is_finite(y))
        if op == "mul":
            r = fp16.round_to(b, b.fmul(x, y), mode, fmt)     # exact in f64
        else:
            s, e = two_sum(b, b.select(fin, x, zero), b.select(fin, y, zero))
            zero_rm = all_of(b, fin, b.fcmp_ordered("==", x, f64.neg(y)),
                             b.not_(b.and_(_pos0(f64, x), _pos0(f64, y))))
            r = _rounded(em, f64, s, e, b.fadd(x, y), fin, mode, zero_rm, fmt)
        return _post(em, f64, r, ftz, sat, False, fmt)
    _lanes(em, inst, t, 2, lane)


def fma(em, inst) -> None:
    t, mode, got = _form(em, inst, "sat")
    ftz, sat = got["ftz"], got["sat"]
    fmt = _fmt(t)
    f64 = FP(em, _F64)
    b = em.b
    zero = f64.const(0.0)

    def lane(xb, yb, zb):
        x, y, z = (fp16.widen(b, v, fmt) for v in (xb, yb, zb))
        if ftz:
            x, y, z = (_flush64(f64, v, fmt) for v in (x, y, z))
        fin = all_of(b, f64.is_finite(x), f64.is_finite(y), f64.is_finite(z))
        p = b.select(fin, b.fmul(x, y), zero)
        s, e = two_sum(b, p, b.select(fin, z, zero))
        zero_rm = all_of(b, fin, b.fcmp_ordered("==", p, f64.neg(z)),
                         b.not_(b.and_(_pos0(f64, p), _pos0(f64, z))))
        naive = b.fadd(b.fmul(x, y), z)
        r = _rounded(em, f64, s, e, naive, fin, mode, zero_rm, fmt)
        return _post(em, f64, r, ftz, sat, False, fmt)
    _lanes(em, inst, t, 3, lane)


def minmax(em, inst) -> None:
    m = em.mods(inst)
    ftz = m.flag("ftz")
    nan = m.flag("NaN")
    xorsign = m.flag("xorsign")
    abs_ = m.flag("abs")
    relu = m.flag("relu")
    t = m.one_type()
    m.finish()
    if t.name not in HALF_TYPES or abs_ or xorsign or relu:
        # the interpreter's half min/max ignores .xorsign.abs and .relu: left to it
        raise NotNative(f"{inst.full_opcode} stays interpreted")
    fmt = _fmt(t)
    f64 = FP(em, _F64)
    b = em.b
    want_min = inst.opcode == "min"

    def lane(xb, yb):
        # fbasic.min/max on the widened values (no flush), then half._post
        x, y = fp16.widen(b, xb, fmt), fp16.widen(b, yb, fmt)
        sign_x = b.xor(f64.signbit(x), f64.signbit(y))
        if xorsign:
            x, y = f64.fabs(x), f64.fabs(y)
        xn, yn = f64.is_nan(x), f64.is_nan(y)
        sx, sy = f64.signbit(x), f64.signbit(y)
        eq = b.fcmp_ordered("==", x, y)
        if want_min:
            x_first = b.or_(b.fcmp_ordered("<", x, y), b.and_(eq, b.and_(sx, b.not_(sy))))
        else:
            x_first = b.or_(b.fcmp_ordered(">", x, y), b.and_(eq, b.and_(b.not_(sx), sy)))
        r = b.select(x_first, x, y)
        r = b.select(b.and_(xn, b.not_(yn)), y, b.select(b.and_(yn, b.not_(xn)), x, r))
        if xorsign:
            mag = f64.fabs(r)
            r = b.select(sign_x, f64.neg(mag), mag)
        bad = b.or_(xn, yn) if nan else b.and_(xn, yn)
        r16 = b.select(bad, I16(fp16.CANONICAL), fp16.round_to(b, r, "rn", fmt))
        return _post(em, f64, r16, ftz, False, relu, fmt)
    _lanes(em, inst, t, 2, lane)


def abs_neg(em, inst) -> None:
    m = em.mods(inst)
    ftz = m.flag("ftz")
    t = m.one_type()
    m.finish()
    if t.name not in HALF_TYPES:
        raise NotNative(f"{inst.full_opcode} stays interpreted")
    b = em.b
    flip = inst.opcode == "neg"
    smallest = 1 << (_fmt(t).p - 1)         # the smallest normal's bits

    def lane(xb):
        # half._signop: flush nonzero subnormals, then clear or flip the sign
        if ftz:
            mag = b.and_(xb, I16(0x7FFF))
            tiny = b.and_(b.icmp_unsigned("!=", mag, I16(0)), b.icmp_unsigned("<", mag, I16(smallest)))
            xb = b.select(tiny, b.and_(xb, I16(0x8000)), xb)
        return b.xor(xb, I16(0x8000)) if flip else b.and_(xb, I16(0x7FFF))
    _lanes(em, inst, t, 1, lane)


__all__ = ["HALF_TYPES", "abs_neg", "add_sub_mul", "fma", "is_half", "minmax"]
