"""Correct rounding to any PTX float format, from exact error information.

The one idea: numpy's float32/float64 arithmetic already rounds to nearest
correctly, so a directed result (rz/rm/rp) is the RN result or its neighbour,
chosen by the *sign* of the exact error X - RN(X) (`nudge`).  That sign is
obtained without extended precision from error-free transformations
(TwoSum, Dekker/Veltkamp TwoProduct) and an exact sign-of-a-sum
(`sign_of_sum`, Shewchuk's grow-expansion).  Where even the RN result is not
available from numpy (fma, f16/bf16/tf32 targets, conversions) `round_oracle`
starts from a candidate within one ulp and decides between it and its
neighbours by exactly comparing X with the midpoints, so every mode is
correct including subnormal results and overflow.

Formats are described by precision and exponent range (`Fmt`) and values are
carried as float64 (every PTX float format is a subset of it).  This module
does not know PTX instructions, .ftz/.sat, or NaN canonicalization.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ._common import ROUNDING_MODES, ArithError, quiet


@dataclass(frozen=True)
class Fmt:
    """A binary floating-point format: p significand bits, normal exponents emin..emax."""
    name: str
    p: int
    emin: int
    emax: int

    @property
    def maxval(self) -> float:
        return float(np.ldexp(2.0 - 2.0 ** (1 - self.p), self.emax))

    @property
    def minnormal(self) -> float:
        return float(np.ldexp(1.0, self.emin))

    @property
    def minsub_exp(self) -> int:
        return self.emin - self.p + 1


F64 = Fmt("f64", 53, -1022, 1023)
F32 = Fmt("f32", 24, -126, 127)
F16 = Fmt("f16", 11, -14, 15)
BF16 = Fmt("bf16", 8, -126, 127)
TF32 = Fmt("tf32", 11, -126, 127)

FORMATS = {f.name: f for f in (F64, F32, F16, BF16, TF32)}
DTYPE_FMT = {np.dtype(np.float64): F64, np.dtype(np.float32): F32, np.dtype(np.float16): F16}


def check_rnd(mode: str) -> None:
    if mode not in ROUNDING_MODES:
        raise ArithError(f"rounding mode {mode!r} not one of {ROUNDING_MODES}")


# ---------------------------------------------------------------- exact tools

def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s = fl(a+b) and e with a + b == s + e exactly (Knuth; no overflow assumed)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = 134217729.0 * a  # 2**27 + 1, Veltkamp
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p = fl(a*b) and e with a*b == p + e exactly (Dekker), for operands whose
    product neither overflows nor has an error term below the f64 subnormal
    range; callers scale operands to [0.25, 2] to guarantee that."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def sign_of_sum(terms: list[np.ndarray]) -> np.ndarray:
    """Exact sign (-1/0/+1, int8) of a sum of float64 arrays.

    Grow-expansion turns the terms into a non-overlapping expansion, whose
    most significant non-zero component carries the sign of the whole sum.
    Terms must be finite and small enough that no partial sum overflows.
    """
    expansion = [np.asarray(terms[0], np.float64)]
    for t in terms[1:]:
        q = np.asarray(t, np.float64)
        new = []
        for comp in expansion:
            q, h = two_sum(q, comp)
            new.append(h)
        new.append(q)
        expansion = new
    sign = np.zeros(np.broadcast(*expansion).shape, np.int8)
    for comp in reversed(expansion):
        sign = np.where(sign == 0, np.sign(comp).astype(np.int8), sign)
    return sign


def pow2(e: np.ndarray) -> np.ndarray:
    """2**e as float64 for integer arrays, clamped into the finite f64 range.

    Clamping only happens for comparisons so lopsided that the clamped value
    decides them the same way."""
    return np.ldexp(1.0, np.clip(np.asarray(e), -1074, 1000).astype(np.int32))


# ------------------------------------------------------- neighbours in a Fmt

def _log2floor(mag: np.ndarray, fmt: Fmt) -> tuple[np.ndarray, np.ndarray]:
    m, e = np.frexp(mag)
    lg = np.where(mag > 0, e.astype(np.int64) - 1, fmt.emin)
    return lg, m == 0.5


def gap_exp(x: np.ndarray, fmt: Fmt, direction: int) -> np.ndarray:
    """Exponent g with |next(x, direction) - x| == 2**g, for finite x in fmt
    (at +-max the gap outward is that of a virtual next binade)."""
    mag = np.abs(x)
    lg, is_pow2 = _log2floor(mag, fmt)
    base = np.maximum(lg, fmt.emin) - fmt.p + 1
    toward_zero = (np.sign(x) == -direction) & (mag > 0)
    shrink = toward_zero & is_pow2 & (lg > fmt.emin)
    return np.where(shrink, base - 1, base)


def step(x: np.ndarray, fmt: Fmt, direction: int) -> np.ndarray:
    """The fmt neighbour of finite x toward +inf (direction=+1) or -inf (-1)."""
    g = gap_exp(x, fmt, direction)
    mag = np.abs(x)
    away = (np.sign(x) == direction) | (mag == 0)
    new = np.where(away, mag + np.ldexp(1.0, g.astype(np.int32)), mag - np.ldexp(1.0, g.astype(np.int32)))
    new = np.where(new > fmt.maxval, np.inf, new)
    sign = np.where(mag == 0, float(direction), np.where(np.signbit(x), -1.0, 1.0))
    return np.copysign(new, sign)


def is_odd(x: np.ndarray, fmt: Fmt) -> np.ndarray:
    """Whether the last significand bit of finite fmt value x is 1."""
    mag = np.abs(x)
    q = mag / np.ldexp(1.0, gap_exp(mag, fmt, 1).astype(np.int32))
    return np.fmod(q, 2.0) == 1.0


# ------------------------------------------------------------ RN candidates

def _bits_round_f32(x32: np.ndarray, drop: int) -> np.ndarray:
    """Round float32 values to (24 - drop) significand bits, nearest-even, via bits."""
    u = x32.view(np.uint32).astype(np.uint64)
    half = np.uint64((1 << (drop - 1)) - 1)
    lsb = (u >> np.uint64(drop)) & np.uint64(1)
    r = ((u + half + lsb) >> np.uint64(drop)) << np.uint64(drop)
    return (r & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)


@quiet
def rn_cast(x: np.ndarray, fmt: Fmt) -> np.ndarray:
    """A value of fmt within one ulp of finite f64 x (exactly RN(x) for f64/f32/f16)."""
    x = np.asarray(x, np.float64)
    if fmt is F64:
        return x
    if fmt is F32:
        return x.astype(np.float32).astype(np.float64)
    if fmt is F16:
        return x.astype(np.float16).astype(np.float64)
    x32 = np.atleast_1d(x.astype(np.float32))
    drop = 24 - fmt.p
    r = _bits_round_f32(x32, drop).astype(np.float64)
    return r.reshape(x.shape)


# ----------------------------------------------------------------- rounding

Oracle = Callable[[np.ndarray, np.ndarray, int], np.ndarray]
"""oracle(c, g, s) -> exact sign of X - (c + s * 2**g), c/g arrays, s in {-1, 0, 1}."""


@quiet
def round_oracle(cand: np.ndarray, fmt: Fmt, mode: str, oracle: Oracle) -> np.ndarray:
    """Correctly round the exact value X behind `oracle` to fmt in `mode`.

    cand: fmt values (f64 arrays) within one ulp of X, +-inf standing for an
    overflowed candidate.  An exactly-zero X keeps the candidate's zero.
    """
    check_rnd(mode)
    cand = np.asarray(cand, np.float64)
    c = np.where(np.isinf(cand), np.copysign(fmt.maxval, cand), cand)
    s0 = oracle(c, np.zeros(c.shape, np.int64), 0)
    xsign = np.where(c != 0, np.sign(c), s0)
    if mode == "rn":
        s_up = oracle(c, gap_exp(c, fmt, 1) - 1, 1)
        s_dn = oracle(c, gap_exp(c, fmt, -1) - 1, -1)
        odd = is_odd(c, fmt)
        go_up = (s_up > 0) | ((s_up == 0) & odd)
        go_dn = (s_dn < 0) | ((s_dn == 0) & odd)
        res = np.where(go_up, step(c, fmt, 1), np.where(go_dn, step(c, fmt, -1), c))
    else:
        floor = np.where(s0 < 0, step(c, fmt, -1), c)
        ceil = np.where(s0 > 0, step(c, fmt, 1), c)
        if mode == "rm":
            res = floor
        elif mode == "rp":
            res = ceil
        else:
            res = np.where(xsign > 0, floor, ceil)
    res = np.where((res == 0) & (xsign != 0), np.copysign(0.0, xsign), res)
    return np.where((xsign == 0) & (c == 0), cand, res)


def terms_oracle(terms: list[np.ndarray], k: np.ndarray | int = 0) -> Oracle:
    """Oracle for X = (sum of exact f64 terms) * 2**k."""
    def oracle(c: np.ndarray, g: np.ndarray, s: int) -> np.ndarray:
        cs = np.ldexp(c, -np.asarray(k, np.int32)) if not np.isscalar(k) or k else c
        extra = [] if s == 0 else [-s * pow2(np.asarray(g) - k)]
        return sign_of_sum(list(terms) + [-cs] + extra)
    return oracle


@quiet
def round_terms(terms: list[np.ndarray], fmt: Fmt, mode: str) -> np.ndarray:
    """Correctly round an exact sum of finite f64 terms to fmt (result as f64)."""
    approx = terms[0]
    for t in terms[1:]:
        approx = approx + t
    return round_oracle(rn_cast(approx, fmt), fmt, mode, terms_oracle(terms))


_NUMPY_DT = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16)}


@quiet
def round_f64(x: np.ndarray, fmt: Fmt, mode: str) -> np.ndarray:
    """Correctly round f64 values to fmt (as f64); non-finite values pass through.

    f32/f16 take the fast path: numpy's cast is the RN result and the exact
    sign of x - RN(x) nudges it for directed modes.
    """
    check_rnd(mode)
    x = np.asarray(x, np.float64)
    if fmt is F64:
        return x
    if fmt.name in _NUMPY_DT:
        r = x.astype(_NUMPY_DT[fmt.name])
        if mode != "rn":
            es = np.where(np.isfinite(x), np.sign(x - r.astype(np.float64)), 0)
            r = nudge(r, es, mode)
        return r.astype(np.float64)
    fin = np.isfinite(x)
    xf = np.where(fin, x, 0.0)
    if mode == "rn" and bool(np.all(xf.astype(np.float32).astype(np.float64) == xf)):
        r = rn_cast(xf, fmt)  # bit rounding of an exact f32 is the RN result
    else:
        r = round_terms([xf], fmt, mode)
    return np.where(fin, r, x)


@quiet
def round_sum2(p: np.ndarray, c: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """Correctly round the exact sum p + c of finite f64 values to float32/float16.

    TwoSum gives p + c = s + e exactly; forcing s to round-to-odd when e != 0
    keeps 53 >= p+2 bits of sticky information, so one numpy cast is then the
    RN result; the sign of (s - RN) + e, exact, nudges it for directed modes.
    """
    check_rnd(mode)
    s, e = two_sum(np.asarray(p, np.float64), np.asarray(c, np.float64))
    even = (np.atleast_1d(s).view(np.uint64).reshape(s.shape) & np.uint64(1)) == 0
    ro = np.where((e != 0) & even, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
    r = ro.astype(dtype)
    if mode != "rn":
        r = nudge(r, np.sign((s - r.astype(np.float64)) + e), mode)
    return r


@quiet
def nudge(r: np.ndarray, err_sign: np.ndarray, mode: str) -> np.ndarray:
    """Directed result from the RN result r of the same dtype and sign(X - r).

    Overflowed r = +-inf of a finite X must be given err_sign = -sign(r).
    """
    check_rnd(mode)
    if mode == "rn":
        return r
    dt = r.dtype.type
    if mode == "rm":
        return np.where(err_sign < 0, np.nextafter(r, dt(-np.inf)), r)
    if mode == "rp":
        return np.where(err_sign > 0, np.nextafter(r, dt(np.inf)), r)
    toward = (err_sign != 0) & (np.sign(err_sign) != np.sign(r)) & (r != 0)
    return np.where(toward, np.nextafter(r, dt(0)), r)


# -------------------------------------------------------------- format I/O

@quiet
def bf16_bits_to_f64(u: np.ndarray) -> np.ndarray:
    u = np.asarray(u).astype(np.uint32) << np.uint32(16)
    return np.atleast_1d(u).view(np.float32).astype(np.float64).reshape(np.shape(u))


@quiet
def f64_to_fmt_bits(x: np.ndarray, fmt: Fmt) -> np.ndarray:
    """Encode f64 values already in fmt (or inf/NaN) as fmt's storage dtype."""
    x = np.asarray(x, np.float64)
    if fmt is F64:
        return x
    if fmt is F32:
        return x.astype(np.float32)
    if fmt is F16:
        return x.astype(np.float16)
    u = np.atleast_1d(x.astype(np.float32)).view(np.uint32).reshape(x.shape)
    nan = np.isnan(x)
    if fmt is BF16:
        out = (u >> np.uint32(16)).astype(np.uint16)
        return np.where(nan, np.uint16(0x7FFF), out).astype(np.uint16)
    if fmt is TF32:
        return np.where(nan, np.uint32(0x7FFFFFFF), u & np.uint32(0xFFFFE000)).astype(np.uint32)
    raise ArithError(f"no storage encoding for {fmt.name}")
