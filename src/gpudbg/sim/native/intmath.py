"""Integer building blocks shared by the integer lowerings (lower_integer*.py):
min/max/clamp, magnitudes, widening and the interpreter's corner-case rules
for division, written once in LLVM IR.

The one idea: each helper is the LLVM transcription of one numpy
expression of the interpreter (sim/arith/integer.py, sim/arith/bits.py), so
a lowering reads as its interpreter counterpart and shares its edge cases
(division by zero, INT_MIN / -1, shift amounts at or past the width).
Nothing here registers a lowering or reads an operand.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.sim.native.emit import I64, NotNative


def int_type(bits: int) -> L.IntType:
    return L.IntType(bits)


def bits_of(dtype) -> int:
    return np.dtype(dtype).itemsize * 8


def is_signed(dtype) -> bool:
    return np.dtype(dtype).kind == "i"


def wide_dtype(dtype) -> np.dtype:
    """The double-width dtype of mul.wide/mad.wide (16 and 32 bits only:
    the interpreter raises for 64-bit .wide at run time, so it stays there)."""
    dtype = np.dtype(dtype)
    if dtype.itemsize > 4:
        raise NotNative("mul.wide/mad.wide of a 64-bit type")
    return np.dtype(f"{dtype.kind}{dtype.itemsize * 2}")


def umin(b: L.IRBuilder, x, y):
    return b.select(b.icmp_unsigned("<", x, y), x, y)


def umax(b: L.IRBuilder, x, y):
    return b.select(b.icmp_unsigned(">", x, y), x, y)


def smin(b: L.IRBuilder, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


def smax(b: L.IRBuilder, x, y):
    return b.select(b.icmp_signed(">", x, y), x, y)


def extend(b: L.IRBuilder, x, bits: int, signed: bool):
    """x widened to `bits` by its signedness (numpy's astype to a wider type)."""
    if x.type.width == bits:
        return x
    if x.type.width > bits:
        return b.trunc(x, int_type(bits))
    return b.sext(x, int_type(bits)) if signed else b.zext(x, int_type(bits))


def magnitude(b: L.IRBuilder, x, signed: bool):
    """|x| as unsigned bits (|INT_MIN| = 2^(n-1) fits): arith.integer._magnitude."""
    if not signed:
        return x
    zero = L.Constant(x.type, 0)
    return b.select(b.icmp_signed("<", x, zero), b.sub(zero, x), x)


def divide(b: L.IRBuilder, x, y, signed: bool):
    """arith.integer.div: quotient of magnitudes truncating toward zero, all
    ones for a zero divisor, negated when the signs differ."""
    ty = x.type
    zero = L.Constant(ty, 0)
    ua, ub = magnitude(b, x, signed), magnitude(b, y, signed)
    by_zero = b.icmp_unsigned("==", ub, zero)
    q = b.udiv(ua, b.select(by_zero, L.Constant(ty, 1), ub))
    q = b.select(by_zero, L.Constant(ty, (1 << ty.width) - 1), q)
    if signed:
        differ = b.xor(b.icmp_signed("<", x, zero), b.icmp_signed("<", y, zero))
        q = b.select(differ, b.sub(zero, q), q)
    return q


def remainder(b: L.IRBuilder, x, y, signed: bool):
    """arith.integer.rem: a - div(a, b) * b, wrapping (x % 0 == x)."""
    return b.sub(x, b.mul(divide(b, x, y, signed), y))


def mul_high(b: L.IRBuilder, x, y, signed: bool):
    """The upper half of the exact double-width product (mul.hi)."""
    n = x.type.width
    p = b.mul(extend(b, x, 2 * n, signed), extend(b, y, 2 * n, signed))
    return b.trunc(b.lshr(p, L.Constant(p.type, n)), x.type)


def clamp_s32(b: L.IRBuilder, wide):
    """An i64 exact result clamped to [INT32_MIN, INT32_MAX], as i32 (.sat)."""
    lo, hi = I64(-2**31), I64(2**31 - 1)
    return b.trunc(smin(b, smax(b, wide, lo), hi), L.IntType(32))


def low_mask(b: L.IRBuilder, length, width: int):
    """arith.bits._low_mask in i64: (1 << length) - 1, all `width` ones for
    length >= width (no shift by 64 or more is ever emitted)."""
    full = I64((1 << width) - 1)
    part = b.sub(b.shl(I64(1), umin(b, length, I64(63))), I64(1))
    return b.select(b.icmp_unsigned(">=", length, I64(width)), full, part)
