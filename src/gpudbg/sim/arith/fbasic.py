"""Float operations that never round: NaN rules, min/max, abs/neg, copysign,
testp, .ftz flushing and .sat clamping, shared by floating.py and half.py.

The one idea: these are decided on IEEE classes and sign bits, so they work
on float16/float32/float64 arrays alike, and NaN results are replaced by the
canonical NaN bit pattern NVIDIA GPUs produce (f32 0x7FFFFFFF, f16/bf16
0x7FFF); for f64 the all-ones-payload 0x7FFFFFFFFFFFFFFF is used by analogy
(PTX does not specify it).  bf16 values arrive here already widened.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._common import ArithError, quiet

CANONICAL_NAN_BITS = {np.dtype(np.float16): 0x7FFF, np.dtype(np.float32): 0x7FFFFFFF,
                      np.dtype(np.float64): 0x7FFFFFFFFFFFFFFF}
BF16_CANONICAL_NAN = 0x7FFF

_MIN_NORMAL = {np.dtype(np.float16): 2.0 ** -14, np.dtype(np.float32): 2.0 ** -126,
               np.dtype(np.float64): 2.0 ** -1022}
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def as_float(a: ArrayLike) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype not in _MIN_NORMAL:
        raise ArithError(f"float16/float32/float64 operand expected, got {a.dtype}")
    return a


def canonical_nan(dt: np.dtype) -> np.generic:
    dt = np.dtype(dt)
    return np.array(CANONICAL_NAN_BITS[dt], _UINT[dt.itemsize]).view(dt)[()]


@quiet
def canonicalize(r: np.ndarray) -> np.ndarray:
    """Replace every NaN by the canonical NaN of r's dtype."""
    r = np.asarray(r)
    return np.where(np.isnan(r), canonical_nan(r.dtype), r).astype(r.dtype)


@quiet
def flush_subnormals(a: ArrayLike) -> np.ndarray:
    """.ftz: subnormal values become zero of the same sign."""
    a = as_float(a)
    tiny = np.abs(a) < a.dtype.type(_MIN_NORMAL[a.dtype])
    return np.where(tiny, np.copysign(a.dtype.type(0), a), a).astype(a.dtype)


@quiet
def saturate(a: ArrayLike) -> np.ndarray:
    """.sat: clamp to [+0.0, 1.0]; NaN (and -0.0) give +0.0."""
    a = as_float(a)
    t = a.dtype.type
    r = np.where(np.isnan(a) | (a <= 0), t(0), np.where(a > 1, t(1), a))
    return r.astype(a.dtype)


def finish(r: np.ndarray, ftz: bool, sat: bool) -> np.ndarray:
    """Common output stage: flush, saturate, canonicalize NaN."""
    if ftz:
        r = flush_subnormals(r)
    if sat:
        r = saturate(r)
    return canonicalize(r)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.atleast_1d(a).view(_UINT[a.dtype.itemsize]).reshape(a.shape)


def _from_bits(u: np.ndarray, dt: np.dtype) -> np.ndarray:
    return np.atleast_1d(u).view(dt).reshape(np.shape(u))


@quiet
def abs(a: ArrayLike, ftz: bool = False) -> np.ndarray:  # noqa: A001 - PTX name
    """abs.f: clears the sign bit (NaN payloads kept; PTX leaves them unspecified)."""
    a = as_float(a)
    if ftz:
        a = flush_subnormals(a)
    sign = np.array(1 << (a.dtype.itemsize * 8 - 1), _UINT[a.dtype.itemsize])
    return _from_bits(_bits(a) & ~sign, a.dtype)


@quiet
def neg(a: ArrayLike, ftz: bool = False) -> np.ndarray:
    """neg.f: flips the sign bit."""
    a = as_float(a)
    if ftz:
        a = flush_subnormals(a)
    sign = np.array(1 << (a.dtype.itemsize * 8 - 1), _UINT[a.dtype.itemsize])
    return _from_bits(_bits(a) ^ sign, a.dtype)


@quiet
def copysign(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """copysign.f d, a, b: b's magnitude with a's sign (PTX operand order)."""
    a = as_float(a)
    b = np.asarray(b).astype(a.dtype)
    return np.copysign(b, a).astype(a.dtype)


_TESTP = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")


@quiet
def testp(a: ArrayLike, op: str) -> np.ndarray:
    """testp.op: IEEE class test, as bool."""
    a = as_float(a)
    tiny = a.dtype.type(_MIN_NORMAL[a.dtype])
    mag = np.abs(a)
    if op == "finite":
        return np.isfinite(a)
    if op == "infinite":
        return np.isinf(a)
    if op == "number":
        return ~np.isnan(a)
    if op == "notanumber":
        return np.isnan(a)
    if op == "normal":
        return np.isfinite(a) & (mag >= tiny)
    if op == "subnormal":
        return (mag < tiny) & (mag > 0)
    raise ArithError(f"testp: op {op!r} not one of {_TESTP}")


def _minmax(a, b, nan: bool, ftz: bool, xorsign_abs: bool, want_min: bool) -> np.ndarray:
    a = as_float(a)
    b = np.asarray(b).astype(a.dtype)
    if ftz:
        a, b = flush_subnormals(a), flush_subnormals(b)
    sign_x = np.signbit(a) ^ np.signbit(b)
    if xorsign_abs:
        a, b = np.abs(a), np.abs(b)
    an, bn = np.isnan(a), np.isnan(b)
    # -0 orders below +0: break equal-value ties by the sign bit.
    a_first = (a < b) | ((a == b) & np.signbit(a) & ~np.signbit(b))
    if not want_min:
        a_first = (a > b) | ((a == b) & ~np.signbit(a) & np.signbit(b))
    r = np.where(a_first, a, b)
    r = np.where(an & ~bn, b, np.where(bn & ~an, a, r))
    bad = (an | bn) if nan else (an & bn)
    if xorsign_abs:
        r = np.where(sign_x, -np.abs(r), np.abs(r))
    r = np.where(bad, canonical_nan(a.dtype), r).astype(a.dtype)
    if ftz:
        r = flush_subnormals(r)
    return canonicalize(r)


@quiet
def min(a: ArrayLike, b: ArrayLike, nan: bool = False, ftz: bool = False, xorsign_abs: bool = False) -> np.ndarray:  # noqa: A001
    """min.f{.NaN}{.xorsign.abs}: one NaN operand gives the other; two NaNs (or,
    with nan=True, any NaN) give the canonical NaN; -0 < +0.  With
    xorsign_abs the minimum of |a|, |b| gets sign(a) xor sign(b)."""
    return _minmax(a, b, nan, ftz, xorsign_abs, True)


@quiet
def max(a: ArrayLike, b: ArrayLike, nan: bool = False, ftz: bool = False, xorsign_abs: bool = False) -> np.ndarray:  # noqa: A001
    """max.f: as min, mirrored."""
    return _minmax(a, b, nan, ftz, xorsign_abs, False)
