"""PTX integer arithmetic over arrays of lanes (mul/mad/div/rem/sat/carry/...).

Every operation is computed on the unsigned view of the operands, where
numpy wraps modulo 2**n exactly as the hardware does, and products wider than
64 bits are assembled from 32-bit limbs.  Signedness is taken from the dtype
(int* = .s, uint* = .u/.b), as the executor stores registers that way.

Hardware-defined corner cases (PTX leaves them "machine specific"), as NVIDIA
GPUs produce them, because the compiler's division sequence yields them:
  * div.u by 0 = all ones; div.s by 0 = -1 when a >= 0, +1 when a < 0
    (the unsigned quotient of |a| by 0 is all ones, then negated when the
    operand signs differ); INT_MIN / -1 = INT_MIN (wraps).
  * rem by 0 = a (the remainder is formed as a - q*b); INT_MIN % -1 = 0.
Not here: packed .u16x2/.s16x2 forms and the video instructions (video.py).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._common import (ArithError, all_ones, as_int, bits_of, check_mode, from_u,
                      like, quiet, to_u)
from gpudbg.ptx.types import signed_dtype, unsigned_dtype

_M32 = np.uint64(0xFFFFFFFF)


def _pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    a = as_int(a)
    b = like(b, a.dtype)
    return a, b


def _signed(a: np.ndarray) -> bool:
    return a.dtype.kind == "i"


def umul128(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full 128-bit product of uint64 arrays as (hi, lo) uint64 limbs."""
    a = np.asarray(a, dtype=np.uint64)
    b = np.asarray(b, dtype=np.uint64)
    s32 = np.uint64(32)
    a0, a1 = a & _M32, a >> s32
    b0, b1 = b & _M32, b >> s32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> s32) + (p01 & _M32) + (p10 & _M32)
    lo = (p00 & _M32) | (mid << s32)
    hi = p11 + (p01 >> s32) + (p10 >> s32) + (mid >> s32)
    return hi, lo


def _mul_hi64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ua, ub = to_u(a), to_u(b)
    hi, _ = umul128(ua, ub)
    if _signed(a):
        # (a mod 2^64)(b mod 2^64) differs from a*b by 2^64*(a<0)*b + 2^64*(b<0)*a.
        hi = hi - np.where(a < 0, ub, np.uint64(0)) - np.where(b < 0, ua, np.uint64(0))
    return from_u(hi, a.dtype)


def _wide_dtype(dt: np.dtype) -> np.dtype:
    n = bits_of(dt)
    if n > 32:
        raise ArithError("mul.wide/mad.wide exist only for 16- and 32-bit types")
    return signed_dtype(2 * n) if dt.kind == "i" else unsigned_dtype(2 * n)


@quiet
def mul(a: ArrayLike, b: ArrayLike, mode: str = "lo") -> np.ndarray:
    """mul.{lo,hi,wide}: lo/hi halves of the double-width product, or all of it."""
    check_mode(mode, ("lo", "hi", "wide"), "mul")
    a, b = _pair(a, b)
    n = bits_of(a.dtype)
    if mode == "lo":
        return from_u(to_u(a) * to_u(b), a.dtype)
    if mode == "wide":
        wd = _wide_dtype(a.dtype)
        return a.astype(wd) * b.astype(wd)
    if n == 64:
        return _mul_hi64(a, b)
    wd = np.int64 if _signed(a) else np.uint64
    p = a.astype(wd) * b.astype(wd)
    return (p >> n).astype(a.dtype)


@quiet
def mad(a: ArrayLike, b: ArrayLike, c: ArrayLike, mode: str = "lo", sat: bool = False) -> np.ndarray:
    """mad.{lo,hi,wide}{.sat}: product part plus c; only mad.hi.sat.s32 saturates."""
    a, b = _pair(a, b)
    if sat and not (mode == "hi" and a.dtype == np.int32):
        raise ArithError("mad .sat is only defined for mad.hi.sat.s32")
    p = mul(a, b, mode)
    return _plus(p, like(c, p.dtype), sat)


def _plus(p: np.ndarray, c: np.ndarray, sat: bool) -> np.ndarray:
    """The addend step of mad/mad24: wrapping, or saturating to s32."""
    if sat:
        t = p.astype(np.int64) + c.astype(np.int64)
        return np.clip(t, -2**31, 2**31 - 1).astype(np.int32)
    return from_u(to_u(p) + to_u(c), p.dtype)


def _low24(a: np.ndarray) -> np.ndarray:
    """The low 24 bits as int64, sign-extended for .s32."""
    a64 = a.astype(np.int64)
    if _signed(a):
        return ((a64 & 0xFFFFFF) ^ 0x800000) - 0x800000
    return a64 & 0xFFFFFF


def _check32(a: np.ndarray, what: str) -> None:
    if a.dtype not in (np.int32, np.uint32):
        raise ArithError(f"{what} is defined only for .u32/.s32, got {a.dtype}")


@quiet
def mul24(a: ArrayLike, b: ArrayLike, mode: str = "lo") -> np.ndarray:
    """mul24.{lo,hi}: 24x24-bit product (48 bits); lo = bits 31..0, hi = 47..16."""
    check_mode(mode, ("lo", "hi"), "mul24")
    a, b = _pair(a, b)
    _check32(a, "mul24")
    p = _low24(a) * _low24(b)
    shifted = p if mode == "lo" else p >> 16
    return from_u((shifted & 0xFFFFFFFF).astype(np.uint32), a.dtype)


@quiet
def mad24(a: ArrayLike, b: ArrayLike, c: ArrayLike, mode: str = "lo", sat: bool = False) -> np.ndarray:
    """mad24.{lo,hi}: mul24 plus c; mad24.hi.sat.s32 saturates the sum."""
    a, b = _pair(a, b)
    if sat and not (mode == "hi" and a.dtype == np.int32):
        raise ArithError("mad24 .sat is only defined for mad24.hi.sat.s32")
    return _plus(mul24(a, b, mode), like(c, a.dtype), sat)


def _magnitude(a: np.ndarray) -> np.ndarray:
    """|a| as the unsigned dtype (|INT_MIN| = 2^(n-1) fits)."""
    u = to_u(a)
    if _signed(a):
        return np.where(a < 0, -u, u)
    return u


@quiet
def div(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Integer div truncating toward zero, with NVIDIA's results for b == 0.

    See the module docstring for the rule and why it holds.
    """
    a, b = _pair(a, b)
    ua, ub = _magnitude(a), _magnitude(b)
    ut = ua.dtype.type
    zero = ub == 0
    uq = ua // np.where(zero, ut(1), ub)
    uq = np.where(zero, ut(all_ones(a.dtype)), uq)
    if _signed(a):
        uq = np.where((a < 0) ^ (b < 0), -uq, uq)
    return from_u(uq, a.dtype)


@quiet
def rem(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Integer remainder with the dividend's sign, a - div(a,b)*b; x % 0 == x."""
    a, b = _pair(a, b)
    q = div(a, b)
    return from_u(to_u(a) - to_u(q) * to_u(b), a.dtype)


def _check_s32(a: np.ndarray, what: str) -> None:
    if a.dtype != np.int32:
        raise ArithError(f"{what} is defined only for .s32, got {a.dtype}")


@quiet
def add_sat(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """add.sat.s32: the exact sum clamped to [INT_MIN, INT_MAX]."""
    a, b = _pair(a, b)
    _check_s32(a, "add.sat")
    return np.clip(a.astype(np.int64) + b.astype(np.int64), -2**31, 2**31 - 1).astype(np.int32)


@quiet
def sub_sat(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """sub.sat.s32: the exact difference clamped to [INT_MIN, INT_MAX]."""
    a, b = _pair(a, b)
    _check_s32(a, "sub.sat")
    return np.clip(a.astype(np.int64) - b.astype(np.int64), -2**31, 2**31 - 1).astype(np.int32)


def _check_cc(a: np.ndarray) -> None:
    if bits_of(a.dtype) not in (32, 64):
        raise ArithError(f"carry-chain arithmetic needs 32- or 64-bit types, got {a.dtype}")


def _carry_arg(cin, dt: np.dtype) -> np.ndarray:
    if cin is None:
        return np.asarray(0, dtype=dt)
    return (np.asarray(cin).astype(np.uint64) & np.uint64(1)).astype(dt)


@quiet
def add_cc(a: ArrayLike, b: ArrayLike, carry_in: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """add.cc / addc / addc.cc: a + b (+ CC.CF); returns (sum, carry-out as uint32 0/1).

    carry_in=None is add.cc (no carry in); pass the previous CC.CF for addc.
    """
    a, b = _pair(a, b)
    _check_cc(a)
    ua, ub = to_u(a), to_u(b)
    cin = _carry_arg(carry_in, ua.dtype)
    t = ua + ub
    s = t + cin
    carry = (t < ua) | (s < t)
    return from_u(s, a.dtype), carry.astype(np.uint32)


@quiet
def sub_cc(a: ArrayLike, b: ArrayLike, borrow_in: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """sub.cc / subc / subc.cc: a - b (- CC.CF); returns (difference, borrow-out 0/1).

    CC.CF carries the borrow along a subtraction chain, as PTX specifies.
    """
    a, b = _pair(a, b)
    _check_cc(a)
    ua, ub = to_u(a), to_u(b)
    bin_ = _carry_arg(borrow_in, ua.dtype)
    t = ua - ub
    s = t - bin_
    borrow = (ua < ub) | (t < bin_)
    return from_u(s, a.dtype), borrow.astype(np.uint32)


@quiet
def mad_cc(a: ArrayLike, b: ArrayLike, c: ArrayLike, mode: str = "lo", carry_in: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """mad{c}.{lo,hi}{.cc}: (lo or hi half of a*b) + c (+ CC.CF), with carry-out."""
    check_mode(mode, ("lo", "hi"), "mad.cc")
    a, b = _pair(a, b)
    _check_cc(a)
    return add_cc(mul(a, b, mode), like(c, a.dtype), carry_in)


@quiet
def neg(a: ArrayLike) -> np.ndarray:
    """neg.s: two's complement negation (neg INT_MIN = INT_MIN)."""
    a = as_int(a)
    return from_u(-to_u(a), a.dtype)


@quiet
def abs(a: ArrayLike) -> np.ndarray:  # noqa: A001 - PTX instruction name
    """abs.s: |a| wrapping (abs INT_MIN = INT_MIN)."""
    a = as_int(a)
    return from_u(_magnitude(a), a.dtype)


def _check_relu(a: np.ndarray, relu: bool) -> None:
    if relu and a.dtype != np.int32:
        raise ArithError("min/max .relu is defined only for .s32 (and .s16x2)")


@quiet
def min(a: ArrayLike, b: ArrayLike, relu: bool = False) -> np.ndarray:  # noqa: A001
    """min (signedness from dtype); .relu clamps negative results to 0."""
    a, b = _pair(a, b)
    _check_relu(a, relu)
    r = np.minimum(a, b)
    return np.maximum(r, a.dtype.type(0)) if relu else r


@quiet
def max(a: ArrayLike, b: ArrayLike, relu: bool = False) -> np.ndarray:  # noqa: A001
    """max (signedness from dtype); .relu clamps negative results to 0."""
    a, b = _pair(a, b)
    _check_relu(a, relu)
    r = np.maximum(a, b)
    return np.maximum(r, a.dtype.type(0)) if relu else r


@quiet
def sad(a: ArrayLike, b: ArrayLike, c: ArrayLike) -> np.ndarray:
    """sad: c + |a - b|, the difference taken exactly and the sum wrapping."""
    a, b = _pair(a, b)
    c = like(c, a.dtype)
    ua, ub = to_u(a), to_u(b)
    d = np.where(a > b, ua - ub, ub - ua)
    return from_u(to_u(c) + d, a.dtype)


def _lanes(x: np.ndarray, width: int, count: int, signed: bool) -> list[np.ndarray]:
    u = np.asarray(x).astype(np.uint32).astype(np.int64)
    m = (1 << width) - 1
    out = []
    for i in range(count):
        v = (u >> (width * i)) & m
        if signed:
            v = (v ^ (1 << (width - 1))) - (1 << (width - 1))
        out.append(v)
    return out


@quiet
def dp4a(a: ArrayLike, b: ArrayLike, c: ArrayLike, a_signed: bool, b_signed: bool) -> np.ndarray:
    """dp4a: c + sum of the four byte products; .s32 result if either side is signed."""
    out_dt = np.dtype(np.int32 if (a_signed or b_signed) else np.uint32)
    la = _lanes(a, 8, 4, a_signed)
    lb = _lanes(b, 8, 4, b_signed)
    acc = np.asarray(c).astype(out_dt).astype(np.int64)
    for x, y in zip(la, lb):
        acc = acc + x * y
    return from_u((acc & 0xFFFFFFFF).astype(np.uint32), out_dt)


@quiet
def dp2a(a: ArrayLike, b: ArrayLike, c: ArrayLike, a_signed: bool, b_signed: bool, hi: bool) -> np.ndarray:
    """dp2a.{lo,hi}: c + a.h0*b.byte[k] + a.h1*b.byte[k+1], k = 2 for .hi else 0."""
    out_dt = np.dtype(np.int32 if (a_signed or b_signed) else np.uint32)
    la = _lanes(a, 16, 2, a_signed)
    lb = _lanes(b, 8, 4, b_signed)
    k = 2 if hi else 0
    acc = np.asarray(c).astype(out_dt).astype(np.int64) + la[0] * lb[k] + la[1] * lb[k + 1]
    return from_u((acc & 0xFFFFFFFF).astype(np.uint32), out_dt)


@quiet
def szext(a: ArrayLike, n: ArrayLike, signed: bool, mode: str = "clamp") -> np.ndarray:
    """szext.{clamp,wrap}.{s32,u32}: extend the low N bits of a, N from operand n.

    wrap uses N = n mod 32; clamp treats n >= 32 as "keep all 32 bits"; N = 0
    gives 0.  Result dtype is int32 for signed, else uint32.
    """
    check_mode(mode, ("clamp", "wrap"), "szext")
    ua = np.asarray(a).astype(np.uint32).astype(np.uint64)
    n = np.asarray(n).astype(np.uint32).astype(np.uint64)
    n1 = n & np.uint64(31)
    too_large = (n >= 32) if mode == "clamp" else np.zeros(n.shape, bool)
    mask = np.where(too_large, np.uint64(0), (np.uint64(0xFFFFFFFF) << n1) & _M32)
    sign_pos = (n1 - np.uint64(1)) & np.uint64(31)
    if signed:
        sbit = ((ua >> sign_pos) & np.uint64(1)).astype(bool) & (n1 != 0) & ~too_large
    else:
        sbit = np.zeros(np.broadcast(ua, n).shape, bool)
    d = (ua & ~mask & _M32) | np.where(sbit, mask, np.uint64(0))
    return from_u(d.astype(np.uint32), np.dtype(np.int32 if signed else np.uint32))
