"""IEEE binary16 (f16) in LLVM IR on its bits: exact widening to f64 and
correct rounding of an f64 value to f16 in rn/rz/rm/rp, the two steps the
interpreter's half-precision semantics are built from (sim/arith/half.py,
convert.py: widen exactly, compute in f64, round once).

The one idea: f16 values travel as i16 and every conversion is integer
and power-of-two arithmetic that LLVM computes exactly, so no half-float
library call (compiler-rt's __extendhfsf2/__truncdfhf2, not in every
process) and no host F16C instruction is needed. NaN results are the
canonical f16 NaN 0x7FFF, as the interpreter's encoding gives.

What it deliberately does not do: bf16 (raw bits in the interpreter, with
its own rounding), or packed f16x2 registers.
"""
from __future__ import annotations

from llvmlite import ir as L

from gpudbg.sim.native.emit import F16, F64, I1, I16, I32, I64

CANONICAL = 0x7FFF
MAX_FINITE = 0x7BFF
INF = 0x7C00


def _pow2(e: int) -> L.Constant:
    return L.Constant(F64, 2.0 ** e)


def bits_of(b: L.IRBuilder, v: L.Value) -> L.Value:
    """A `half` (or i16) value's bits as i16."""
    return v if v.type == I16 else b.bitcast(v, I16)


def as_half(b: L.IRBuilder, u: L.Value) -> L.Value:
    return b.bitcast(u, F16)


def widen(b: L.IRBuilder, u: L.Value) -> L.Value:
    """f16 bits -> the exact f64 value (NaN: a quiet f64 NaN, callers
    canonicalize)."""
    u32 = b.zext(u, I32)
    sign = b.icmp_unsigned("!=", b.and_(u32, I32(0x8000)), I32(0))
    exp = b.lshr(b.and_(u32, I32(0x7C00)), I32(10))
    frac = b.and_(u32, I32(0x3FF))
    normal = b.icmp_unsigned("!=", exp, I32(0))
    mant = b.select(normal, b.or_(frac, I32(0x400)), frac)
    e = b.select(normal, exp, I32(1))             # value = mant * 2^(e - 25)
    scale = b.bitcast(b.shl(b.zext(b.add(e, I32(1023 - 25)), I64), I64(52)), F64)
    mag = b.fmul(b.uitofp(mant, F64), scale)
    special = b.icmp_unsigned("==", exp, I32(31))
    inf_nan = b.select(b.icmp_unsigned("==", frac, I32(0)), L.Constant(F64, float("inf")),
                       b.bitcast(I64(0x7FF8000000000000), F64))
    mag = b.select(special, inf_nan, mag)
    return b.select(sign, b.fneg(mag), mag)


def round_to(b: L.IRBuilder, v: L.Value, mode: str) -> L.Value:
    """f64 -> f16 bits (i16), correctly rounded in `mode`; NaN -> 0x7FFF."""
    u = b.bitcast(v, I64)
    sign = b.icmp_signed("<", u, I64(0))
    a = b.bitcast(b.and_(u, I64((1 << 63) - 1)), F64)
    e = b.trunc(b.lshr(u, I64(52)), I32)
    e = b.sub(b.and_(e, I32(0x7FF)), I32(1023))          # unbiased exponent (f64 subnormals: -1023)
    normal = b.icmp_signed(">=", e, I32(-14))
    shift = b.select(normal, b.sub(I32(10), e), I32(24))  # t = a * 2^shift: units of the f16 ulp
    scale = b.bitcast(b.shl(b.zext(b.add(shift, I32(1023)), I64), I64(52)), F64)
    big = b.fcmp_ordered(">=", a, _pow2(16))
    t = b.fmul(b.select(big, L.Constant(F64, 0.0), a), scale)
    n = b.fptoui(t, I32)
    frac = b.fsub(t, b.uitofp(n, F64))
    up = _round_up(b, frac, n, sign, mode)
    m = b.add(n, b.zext(up, I32))
    base = b.select(normal, b.sub(b.shl(b.add(e, I32(15)), I32(10)), I32(1024)), I32(0))
    mag = b.add(base, m)
    over = I32(_overflow(mode, False)), I32(_overflow(mode, True))
    mag = b.select(big, b.select(sign, over[1], over[0]), mag)
    mag = b.select(b.fcmp_ordered("==", a, L.Constant(F64, float("inf"))), I32(INF), mag)
    nan = b.fcmp_unordered("uno", v, v)
    out = b.or_(mag, b.select(sign, I32(0x8000), I32(0)))
    out = b.select(nan, I32(CANONICAL), out)
    return b.trunc(out, I16)


def _round_up(b: L.IRBuilder, frac: L.Value, n: L.Value, sign: L.Value, mode: str) -> L.Value:
    half = L.Constant(F64, 0.5)
    if mode == "rn":
        odd = b.trunc(n, I1)
        return b.or_(b.fcmp_ordered(">", frac, half),
                     b.and_(b.fcmp_ordered("==", frac, half), odd))
    inexact = b.fcmp_ordered(">", frac, L.Constant(F64, 0.0))
    if mode == "rz":
        return I1(0)
    if mode == "rp":
        return b.and_(inexact, b.not_(sign))
    if mode == "rm":
        return b.and_(inexact, sign)
    raise ValueError(f"rounding mode {mode}")


def _overflow(mode: str, negative: bool) -> int:
    """The magnitude a finite value >= 2^16 rounds to (inf is 0x7C00)."""
    if mode == "rn":
        return INF
    if mode == "rz":
        return MAX_FINITE
    if mode == "rp":
        return MAX_FINITE if negative else INF
    return INF if negative else MAX_FINITE
