"""16-bit float arithmetic: f16 and bf16 scalars and the packed f16x2/bf16x2.

Values are widened exactly to float64 and each operation's exact result is
formed as an unevaluated sum of float64 terms (f16 add/sub/mul and bf16 mul
are already exact in one float64; bf16 add and f16/bf16 fma need TwoSum's
error term), then rounded once with rounding.round_terms.  No step relies on
double rounding: rounding an f32 intermediate would be provably safe for
add/sub/mul (24 >= 2*11+2 significand bits, Figueroa) but not for fma, so it
is not done at all.  Packed forms apply the scalar op to the low half
(element 0) and the high half independently.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._common import ArithError, quiet
from . import fbasic
from .rounding import BF16, F16, Fmt, bf16_bits_to_f64, check_rnd, f64_to_fmt_bits, round_terms, two_sum

_TYPES = ("f16", "bf16", "f16x2", "bf16x2")


@quiet
def bf16_to_f32(u: ArrayLike) -> np.ndarray:
    """Widen raw bf16 bits to float32 (exact)."""
    return bf16_bits_to_f64(u).astype(np.float32)


@quiet
def f32_to_bf16(x: ArrayLike, rnd: str = "rn") -> np.ndarray:
    """Round float32 (or float64) values to bf16 bits in mode rnd; NaN -> 0x7FFF."""
    return _encode(_round1(np.asarray(x).astype(np.float64), BF16, rnd), BF16)


@quiet
def f16_to_f32(x: ArrayLike) -> np.ndarray:
    return np.asarray(x).astype(np.float16).astype(np.float32)


@quiet
def f32_to_f16(x: ArrayLike, rnd: str = "rn") -> np.ndarray:
    """Round float32/float64 values to float16 in mode rnd (correct in all modes)."""
    return _encode(_round1(np.asarray(x).astype(np.float64), F16, rnd), F16)


def _round1(v: np.ndarray, fmt: Fmt, rnd: str) -> np.ndarray:
    check_rnd(rnd)
    fin = np.isfinite(v)
    r = round_terms([np.where(fin, v, 0.0)], fmt, rnd)
    return np.where(fin, r, v)


def _encode(v: np.ndarray, fmt: Fmt) -> np.ndarray:
    out = np.asarray(f64_to_fmt_bits(v, fmt))
    if fmt is F16:
        out = fbasic.canonicalize(out.astype(np.float16))
    return out


@quiet
def pack_x2(lo: ArrayLike, hi: ArrayLike) -> np.ndarray:
    """Pack two 16-bit halves (float16 values or bf16 bits) into uint32, lo = element 0."""
    def bits(h):
        h = np.asarray(h)
        if h.dtype == np.float16:
            h = np.atleast_1d(h).view(np.uint16).reshape(h.shape)
        return h.astype(np.uint32)
    return ((bits(hi) << np.uint32(16)) | bits(lo)).astype(np.uint32)


@quiet
def unpack_x2(u: ArrayLike, type: str = "f16x2") -> tuple[np.ndarray, np.ndarray]:  # noqa: A002
    """Split a packed x2 register into (element 0, element 1)."""
    u = np.asarray(u).astype(np.uint32)
    lo = (u & np.uint32(0xFFFF)).astype(np.uint16)
    hi = (u >> np.uint32(16)).astype(np.uint16)
    if type == "f16x2":
        return (np.atleast_1d(lo).view(np.float16).reshape(u.shape),
                np.atleast_1d(hi).view(np.float16).reshape(u.shape))
    if type == "bf16x2":
        return lo, hi
    raise ArithError(f"unpack_x2: type must be f16x2 or bf16x2, not {type!r}")


def _check(type_: str) -> tuple[Fmt, bool]:
    if type_ not in _TYPES:
        raise ArithError(f"half-precision op: type {type_!r} not one of {_TYPES}")
    return (F16 if type_.startswith("f16") else BF16), type_.endswith("x2")


def _widen(x, fmt: Fmt) -> np.ndarray:
    if fmt is F16:
        return np.asarray(x).astype(np.float16).astype(np.float64)
    return bf16_bits_to_f64(np.asarray(x).astype(np.uint16))


def _flush(v: np.ndarray, fmt: Fmt) -> np.ndarray:
    return np.where(np.abs(v) < fmt.minnormal, np.copysign(0.0, v), v)


def _post(r: np.ndarray, fmt: Fmt, ftz: bool, sat: bool, relu: bool) -> np.ndarray:
    if ftz:
        r = _flush(r, fmt)
    if relu:
        r = np.where(r < 0, 0.0, r)
    if sat:
        r = np.where(np.isnan(r) | (r <= 0), 0.0, np.minimum(r, 1.0))
    return _encode(r, fmt)


def _lanes(type_: str, fn, *ops):
    """Apply fn(fmt, *widened operands) -> f64 result per element and re-encode."""
    fmt, packed = _check(type_)
    if not packed:
        return fn(fmt, *[_widen(o, fmt) for o in ops])
    halves = [unpack_x2(o, type_) for o in ops]
    lo = fn(fmt, *[_widen(h[0], fmt) for h in halves])
    hi = fn(fmt, *[_widen(h[1], fmt) for h in halves])
    return pack_x2(lo, hi)


def _exact_round(fmt, terms, naive, fin, mode, zero_rm):
    r = round_terms([np.where(fin, t, 0.0) for t in terms], fmt, mode)
    r = np.where(fin, r, naive)
    if mode == "rm":
        r = np.where(zero_rm, -0.0, r)
    return r


def _pos0(x):
    return (x == 0) & ~np.signbit(x)


@quiet
def half_add(a: ArrayLike, b: ArrayLike, type: str, rnd: str = "rn", ftz: bool = False, sat: bool = False) -> np.ndarray:  # noqa: A002
    """add{.rnd}{.ftz}{.sat}.{f16,f16x2,bf16,bf16x2}, one correct rounding."""
    check_rnd(rnd)

    def op(fmt, x, y):
        if ftz:
            x, y = _flush(x, fmt), _flush(y, fmt)
        fin = np.isfinite(x) & np.isfinite(y)
        s, e = two_sum(np.where(fin, x, 0.0), np.where(fin, y, 0.0))
        zero_rm = fin & (x == -y) & ~(_pos0(x) & _pos0(y))
        return _post(_exact_round(fmt, [s, e], x + y, fin, rnd, zero_rm), fmt, ftz, sat, False)
    return _lanes(type, op, a, b)


@quiet
def half_sub(a: ArrayLike, b: ArrayLike, type: str, rnd: str = "rn", ftz: bool = False, sat: bool = False) -> np.ndarray:  # noqa: A002
    """sub: a + (-b) for the 16-bit float types."""
    return half_add(a, half_neg(b, type), type, rnd, ftz, sat)


@quiet
def half_mul(a: ArrayLike, b: ArrayLike, type: str, rnd: str = "rn", ftz: bool = False, sat: bool = False) -> np.ndarray:  # noqa: A002
    """mul{.rnd}{.ftz}{.sat} for the 16-bit float types (product exact in f64)."""
    check_rnd(rnd)

    def op(fmt, x, y):
        if ftz:
            x, y = _flush(x, fmt), _flush(y, fmt)
        fin = np.isfinite(x) & np.isfinite(y)
        p = x * y
        return _post(_exact_round(fmt, [p], p, fin, rnd, np.zeros(p.shape, bool)), fmt, ftz, sat, False)
    return _lanes(type, op, a, b)


@quiet
def half_fma(a: ArrayLike, b: ArrayLike, c: ArrayLike, type: str, rnd: str = "rn", ftz: bool = False, sat: bool = False,  # noqa: A002
             relu: bool = False) -> np.ndarray:
    """fma.rnd{.ftz}{.sat|.relu} for the 16-bit float types: a*b + c rounded once."""
    check_rnd(rnd)

    def op(fmt, x, y, z):
        if ftz:
            x, y, z = _flush(x, fmt), _flush(y, fmt), _flush(z, fmt)
        fin = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
        p = np.where(fin, x * y, 0.0)
        s, e = two_sum(p, np.where(fin, z, 0.0))
        zero_rm = fin & (p == -z) & ~(_pos0(p) & _pos0(z))
        return _post(_exact_round(fmt, [s, e], x * y + z, fin, rnd, zero_rm), fmt, ftz, sat, relu)
    return _lanes(type, op, a, b, c)


def _minmax(a, b, type_, nan, xorsign_abs, relu, want_min, ftz):
    def op(fmt, x, y):
        f = fbasic.min if want_min else fbasic.max
        r = f(x, y, nan=nan, xorsign_abs=xorsign_abs).astype(np.float64)
        return _post(r, fmt, ftz, False, relu)
    return _lanes(type_, op, a, b)


@quiet
def half_min(a: ArrayLike, b: ArrayLike, type: str, nan: bool = False, xorsign_abs: bool = False, relu: bool = False,  # noqa: A002
             ftz: bool = False) -> np.ndarray:
    """min{.ftz}{.NaN}{.xorsign.abs}{.relu} for the 16-bit float types (fbasic rules)."""
    return _minmax(a, b, type, nan, xorsign_abs, relu, True, ftz)


@quiet
def half_max(a: ArrayLike, b: ArrayLike, type: str, nan: bool = False, xorsign_abs: bool = False, relu: bool = False,  # noqa: A002
             ftz: bool = False) -> np.ndarray:
    """max: as half_min, mirrored."""
    return _minmax(a, b, type, nan, xorsign_abs, relu, False, ftz)


def _signop(a, type_: str, flip: bool, ftz: bool) -> np.ndarray:
    fmt, packed = _check(type_)
    u = np.asarray(a)
    if u.dtype == np.float16:
        u = np.atleast_1d(u).view(np.uint16).reshape(u.shape)
    u = u.astype(np.uint32)
    sign = np.uint32(0x80008000 if packed else 0x8000)
    if ftz:
        lanes = [u & np.uint32(0xFFFF)] + ([u >> np.uint32(16)] if packed else [])
        out = np.zeros(u.shape, np.uint32)
        for i, lane in enumerate(lanes):
            tiny = ((lane & np.uint32(0x7FFF)) != 0) & ((lane & np.uint32(0x7FFF)) < np.uint32(
                0x0400 if fmt is F16 else 0x0080))
            lane = np.where(tiny, lane & np.uint32(0x8000), lane)
            out |= lane << np.uint32(16 * i)
        u = out
    r = (u ^ sign) if flip else (u & ~sign)
    if packed:
        return r.astype(np.uint32)
    r16 = r.astype(np.uint16)
    return np.atleast_1d(r16).view(np.float16).reshape(r16.shape) if fmt is F16 else r16


@quiet
def half_neg(a: ArrayLike, type: str, ftz: bool = False) -> np.ndarray:  # noqa: A002
    """neg for the 16-bit float types: flips each sign bit."""
    return _signop(a, type, True, ftz)


@quiet
def half_abs(a: ArrayLike, type: str, ftz: bool = False) -> np.ndarray:  # noqa: A002
    """abs for the 16-bit float types: clears each sign bit."""
    return _signop(a, type, False, ftz)
