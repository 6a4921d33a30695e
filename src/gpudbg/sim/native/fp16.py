"""The 16-bit floats (IEEE binary16 f16, and bf16) in LLVM IR on their
bits: exact widening to f64 and correct rounding of an f64 value in
rn/rz/rm/rp, the two steps the
interpreter's half-precision semantics are built from (sim/arith/half.py,
convert.py: widen exactly, compute in f64, round once).

The one idea: f16 values travel as i16 and every conversion is integer
and power-of-two arithmetic that LLVM computes exactly, so no half-float
library call (compiler-rt's __extendhfsf2/__truncdfhf2, not in every
process) and no host F16C instruction is needed. NaN results are the
canonical NaN 0x7FFF of either format, as the interpreter's encodings give.

What it deliberately does not do: packed x2 registers (callers split them).
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir as L

from gpudbg.sim.native.emit import F16, F64, I1, I16, I32, I64

CANONICAL = 0x7FFF          # the canonical NaN of both formats


@dataclass(frozen=True)
class Half:
    """A 16-bit binary format: p significand bits (with the hidden one)."""
    name: str
    p: int
    emin: int
    emax: int

    @property
    def bias(self) -> int:
        return self.emax

    @property
    def inf(self) -> int:
        return ((1 << (16 - self.p)) - 1) << (self.p - 1)

    @property
    def max_finite(self) -> int:
        return self.inf - 1

    @property
    def min_normal(self) -> float:
        return 2.0 ** self.emin


F16_FMT = Half("f16", 11, -14, 15)
BF16_FMT = Half("bf16", 8, -126, 127)
FORMATS = {"f16": F16_FMT, "bf16": BF16_FMT}


def _pow2(e: int) -> L.Constant:
    return L.Constant(F64, 2.0 ** e)


def _scale(b: L.IRBuilder, e: L.Value) -> L.Value:
    """2^e as f64 for an i32 e inside the normal range."""
    return b.bitcast(b.shl(b.zext(b.add(e, I32(1023)), I64), I64(52)), F64)


def bits_of(b: L.IRBuilder, v: L.Value) -> L.Value:
    """A `half` (or i16) value's bits as i16."""
    return v if v.type == I16 else b.bitcast(v, I16)


def as_half(b: L.IRBuilder, u: L.Value) -> L.Value:
    return b.bitcast(u, F16)


def widen(b: L.IRBuilder, u: L.Value, fmt: Half = F16_FMT) -> L.Value:
    """16-bit float bits -> the exact f64 value (NaN: a quiet f64 NaN,
    callers canonicalize)."""
    frac_bits = fmt.p - 1
    u32 = b.zext(u, I32)
    sign = b.icmp_unsigned("!=", b.and_(u32, I32(0x8000)), I32(0))
    exp = b.lshr(b.and_(u32, I32(fmt.inf)), I32(frac_bits))
    frac = b.and_(u32, I32((1 << frac_bits) - 1))
    normal = b.icmp_unsigned("!=", exp, I32(0))
    mant = b.select(normal, b.or_(frac, I32(1 << frac_bits)), frac)
    e = b.select(normal, exp, I32(1))             # value = mant * 2^(e - bias - frac_bits)
    mag = b.fmul(b.uitofp(mant, F64), _scale(b, b.sub(e, I32(fmt.bias + frac_bits))))
    special = b.icmp_unsigned("==", exp, I32(fmt.inf >> frac_bits))
    inf_nan = b.select(b.icmp_unsigned("==", frac, I32(0)), L.Constant(F64, float("inf")),
                       b.bitcast(I64(0x7FF8000000000000), F64))
    mag = b.select(special, inf_nan, mag)
    return b.select(sign, b.fneg(mag), mag)


def round_to(b: L.IRBuilder, v: L.Value, mode: str, fmt: Half = F16_FMT) -> L.Value:
    """f64 -> 16-bit float bits (i16), correctly rounded in `mode`; NaN -> 0x7FFF."""
    top = fmt.p - 1
    u = b.bitcast(v, I64)
    sign = b.icmp_signed("<", u, I64(0))
    a = b.bitcast(b.and_(u, I64((1 << 63) - 1)), F64)
    e = b.trunc(b.lshr(u, I64(52)), I32)
    e = b.sub(b.and_(e, I32(0x7FF)), I32(1023))          # unbiased exponent (f64 subnormals: -1023)
    normal = b.icmp_signed(">=", e, I32(fmt.emin))
    # t = a * 2^shift counts units of the result's ulp (normal: [2^top, 2^p))
    shift = b.select(normal, b.sub(I32(top), e), I32(top - fmt.emin))
    big = b.fcmp_ordered(">=", a, _pow2(fmt.emax + 1))
    t = b.fmul(b.select(big, L.Constant(F64, 0.0), a), _scale(b, shift))
    n = b.fptoui(t, I32)
    frac = b.fsub(t, b.uitofp(n, F64))
    up = _round_up(b, frac, n, sign, mode)
    m = b.add(n, b.zext(up, I32))
    base = b.select(normal, b.sub(b.shl(b.add(e, I32(fmt.bias)), I32(top)), I32(1 << top)), I32(0))
    mag = b.add(base, m)
    over = I32(_overflow(mode, False, fmt)), I32(_overflow(mode, True, fmt))
    mag = b.select(big, b.select(sign, over[1], over[0]), mag)
    mag = b.select(b.fcmp_ordered("==", a, L.Constant(F64, float("inf"))), I32(fmt.inf), mag)
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


def _overflow(mode: str, negative: bool, fmt: Half) -> int:
    """The magnitude a finite value >= 2^(emax+1) rounds to."""
    if mode == "rn":
        return fmt.inf
    if mode == "rz":
        return fmt.max_finite
    if mode == "rp":
        return fmt.max_finite if negative else fmt.inf
    return fmt.inf if negative else fmt.max_finite
