"""PTX float arithmetic (add/sub/mul/fma/div/rcp/sqrt) for f16, f32 and f64 lanes.

Round-to-nearest comes straight from numpy for f32/f64 add/sub/mul/div/sqrt
(IEEE-correct in the operand's own dtype).  Directed modes nudge that result
by the exact sign of its error (rounding.nudge), computed error-free:
  f32: in float64, where the products/residuals needed are exact;
  f64: TwoSum / Dekker TwoProduct on frexp-scaled operands (so subnormal
       results and overflow are handled), residual signs summed exactly.
fma rounds once.  f32/f16: the product is exact in f64, TwoSum(p, c) plus
round-to-odd leaves enough sticky bits that one numpy cast is RN
(rounding.round_sum2).  f64: Boldo-Melquiond (TwoProduct, TwoSum, an
odd-rounded tail, one RN add) on lanes well inside the exponent range; the
rest (subnormal/huge results or operands) go through frexp-scaled terms and
rounding.round_oracle, a term >200 binades below the other replaced by a
same-signed sticky term.  All modes are exact, with no residual cases known.
Not here: approximate transcendentals (fapprox.py), bf16 (half.py).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._common import ArithError, quiet
from .fbasic import as_float, finish, flush_subnormals
from .rounding import (F16, F64, check_rnd, nudge, round_f64, round_oracle, round_sum2,
                       sign_of_sum, terms_oracle, two_prod, two_sum)


def _prep(arrays, ftz: bool) -> list[np.ndarray]:
    a = as_float(arrays[0])
    out = [a] + [np.asarray(x).astype(a.dtype) for x in arrays[1:]]
    if ftz:
        if a.dtype == np.float64:
            raise ArithError(".ftz is not defined for f64 arithmetic")
        out = [flush_subnormals(x) for x in out]
    return out


def _rnd(rnd: str | None) -> str:
    mode = "rn" if rnd is None else rnd
    check_rnd(mode)
    return mode


def _pos_zero(x: np.ndarray) -> np.ndarray:
    return (x == 0) & ~np.signbit(x)


def _zero_sign_rm(r, exact_zero, p, c, mode):
    """IEEE: an exact zero sum is -0 under rm unless both addends are +0."""
    if mode != "rm":
        return r
    return np.where(exact_zero & ~(_pos_zero(p) & _pos_zero(c)), -r.dtype.type(0), r)


def _overflow_sign(r, es, finite_in):
    return np.where(np.isinf(r) & finite_in, -np.sign(r), es)


@quiet
def add(a: ArrayLike, b: ArrayLike, rnd: str | None = None, ftz: bool = False, sat: bool = False) -> np.ndarray:
    """add{.rnd}{.ftz}{.sat}.f16/f32/f64, correctly rounded in every mode."""
    mode = _rnd(rnd)
    a, b = _prep((a, b), ftz)
    dt = a.dtype
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    fin = np.isfinite(a) & np.isfinite(b)
    if dt == np.float16:
        r64 = round_f64(np.where(fin, a64 + b64, 0.0), F16, mode)  # f16 sums are exact in f64
        r = np.where(fin, r64, a64 + b64).astype(dt)
        exact_zero = fin & (a64 == -b64)
    else:
        r = (a + b).astype(dt)
        if dt == np.float32:
            s, e = two_sum(a64, b64)
            es = np.sign((s - r.astype(np.float64)) + e)
        else:
            _, e = two_sum(a, b)
            es = np.sign(e)
        es = np.where(fin & np.isfinite(r), es, 0)
        es = _overflow_sign(r, es, fin)
        r = nudge(r, es, mode)
        exact_zero = fin & (es == 0) & (r == 0)
    r = _zero_sign_rm(r, exact_zero, a, b, mode)
    return finish(r.astype(dt), ftz, sat)


@quiet
def sub(a: ArrayLike, b: ArrayLike, rnd: str | None = None, ftz: bool = False, sat: bool = False) -> np.ndarray:
    """sub: a + (-b), exactly as add rounds it."""
    a = as_float(a)
    b = np.asarray(b).astype(a.dtype)
    return add(a, -b, rnd, ftz, sat)


def _scaled(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m, e = np.frexp(np.where(np.isfinite(x), x, 1.0))
    return m, e.astype(np.int64)


@quiet
def mul(a: ArrayLike, b: ArrayLike, rnd: str | None = None, ftz: bool = False, sat: bool = False) -> np.ndarray:
    """mul{.rnd}{.ftz}{.sat}.f16/f32/f64, correctly rounded in every mode."""
    mode = _rnd(rnd)
    a, b = _prep((a, b), ftz)
    dt = a.dtype
    fin = np.isfinite(a) & np.isfinite(b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if dt == np.float16:
        p = a64 * b64  # exact: 22 significant bits
        r64 = round_f64(np.where(fin, p, 0.0), F16, mode)
        r = np.where(fin, r64, p).astype(dt)
        return finish(r, ftz, sat)
    r = (a * b).astype(dt)
    if dt == np.float32:
        es = np.sign(a64 * b64 - r.astype(np.float64))  # a*b exact in f64
    else:
        ma, ea = _scaled(a)
        mb, eb = _scaled(b)
        hi, lo = two_prod(ma, mb)
        rr = np.ldexp(np.where(np.isfinite(r), r, 0.0), -(ea + eb).astype(np.int32))
        es = sign_of_sum([hi, lo, -rr])
    es = np.where(fin & np.isfinite(r), es, 0)
    es = _overflow_sign(r, es, fin)
    return finish(nudge(r, es, mode).astype(dt), ftz, sat)


def _fma64(a, b, c, mode):
    """f64 fma: Boldo-Melquiond (TwoProduct, TwoSum, round-to-odd) where the
    operands and result are far from the f64 range limits, else _fma64_scaled
    on just those lanes."""
    a, b, c = np.broadcast_arrays(a, b, c)
    shape = a.shape
    a, b, c = a.ravel(), b.ravel(), c.ravel()
    p, e = two_prod(a, b)
    th, tl = two_sum(c, p)
    v, w = two_sum(tl, e)
    even = (v.view(np.uint64) & np.uint64(1)) == 0
    ro = np.where((w != 0) & even, np.nextafter(v, np.where(w > 0, np.inf, -np.inf)), v)
    r = th + ro
    big, tiny = 2.0 ** 995, 2.0 ** -960
    mag = np.abs(r)
    safe = ((np.abs(a) < big) & (np.abs(b) < big) & (np.abs(c) < big)
            & ((a == 0) | (b == 0) | (np.abs(p) > tiny)) & (mag > tiny) & (mag < big))
    if mode != "rn":
        r = nudge(r, sign_of_sum([th, tl, e, -r]), mode)
    exact_zero = np.zeros(r.shape, bool)
    idx = np.nonzero(~safe)[0]
    if idx.size:
        rs, zs = _fma64_scaled(a[idx], b[idx], c[idx], mode)
        r[idx] = rs
        exact_zero[idx] = zs
    return r.reshape(shape), exact_zero.reshape(shape)


def _fma64_scaled(a, b, c, mode):
    fin = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    ma, ea = _scaled(a)
    mb, eb = _scaled(b)
    mc, ec = _scaled(c)
    ph, pl = two_prod(ma, mb)
    kp = ea + eb
    pz, cz = ph == 0, mc == 0
    big = np.where(pz, ec, np.where(cz, kp, np.maximum(kp, ec)))
    dp, dc = kp - big, ec - big
    sticky = 2.0 ** -250
    far_p = (dp < -200) & ~pz
    far_c = (dc < -200) & ~cz
    Ph = np.where(far_p, np.copysign(sticky, ph), np.ldexp(ph, np.maximum(dp, -200).astype(np.int32)))
    Pl = np.where(far_p, 0.0, np.ldexp(pl, np.maximum(dp, -200).astype(np.int32)))
    C = np.where(far_c, np.copysign(sticky, mc), np.ldexp(mc, np.maximum(dc, -200).astype(np.int32)))
    terms = [Ph, Pl, C]
    approx = np.ldexp((Ph + C) + Pl, big.astype(np.int32))
    r = round_oracle(np.where(fin, approx, 0.0), F64, mode, terms_oracle(terms, big))
    naive = a * b + c
    naive = np.where(np.isinf(c) & np.isfinite(a) & np.isfinite(b), c, naive)
    r = np.where(fin, r, naive)
    exact_zero = fin & pz & cz | (fin & (sign_of_sum(terms) == 0))
    return r, exact_zero


@quiet
def fma(a: ArrayLike, b: ArrayLike, c: ArrayLike, rnd: str | None = "rn", ftz: bool = False, sat: bool = False) -> np.ndarray:
    """fma.rnd{.ftz}{.sat}.f16/f32/f64: a*b + c with a single rounding."""
    mode = _rnd(rnd)
    a, b, c = _prep((a, b, c), ftz)
    dt = a.dtype
    if dt == np.float64:
        r, exact_zero = _fma64(a, b, c, mode)
        p = a * b
    else:
        a64, b64, c64 = (x.astype(np.float64) for x in (a, b, c))
        p = a64 * b64  # exact for f16/f32 operands
        fin = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        r = round_sum2(np.where(fin, p, 0.0), np.where(fin, c64, 0.0), dt, mode)
        r = np.where(fin, r, (p + c64).astype(dt))
        exact_zero = fin & (p == -c64)
    r = np.asarray(r).astype(dt)
    both_zero = ((a == 0) | (b == 0)) & (c == 0) & np.isfinite(a) & np.isfinite(b)
    r = np.where(both_zero, (a * b).astype(dt) + c, r).astype(dt)  # IEEE zero-sum signs
    r = _zero_sign_rm(r, exact_zero, np.asarray(p), c, mode)
    return finish(r, ftz, sat)


def mad(a: ArrayLike, b: ArrayLike, c: ArrayLike, rnd: str | None = "rn", ftz: bool = False, sat: bool = False) -> np.ndarray:
    """mad.rnd.f32/f64 is fma (PTX: mad with a rounding modifier is fused)."""
    return fma(a, b, c, rnd, ftz, sat)


def _div_exact(a, b, mode):
    """Correctly rounded a / b for float32/float64 arrays."""
    dt = a.dtype
    r = (a / b).astype(dt)
    if mode == "rn":
        return r
    exact_special = ~(np.isfinite(a) & np.isfinite(b) & (b != 0))
    if dt == np.float32:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        es = np.sign(a64 - r.astype(np.float64) * b64) * np.sign(b64)
    else:
        ma, ea = _scaled(a)
        mb, eb = _scaled(b)
        rr = np.ldexp(np.where(np.isfinite(r), r, 0.0), -(ea - eb).astype(np.int32))
        p, e = two_prod(rr, np.abs(mb))
        es = sign_of_sum([ma * np.sign(mb), -p, -e])
        es = _overflow_sign(r, es, ~exact_special)
    es = np.where(exact_special | np.isnan(es), 0, es)
    return nudge(r, es, mode)


_DIV_MODES = ("approx", "full", "rn", "rz", "rm", "rp")


@quiet
def div(a: ArrayLike, b: ArrayLike, mode: str = "rn", ftz: bool = False) -> np.ndarray:
    """div.{approx,full,rn,rz,rm,rp}{.ftz}.f32 and div.rnd.f64.

    .approx is a * rcp(b) with the reciprocal rounded to nearest and, as on
    NVIDIA hardware, flushed to zero when subnormal: so |b| in (2^126, 2^128)
    gives 0 (NaN for infinite a), within PTX's 2-ulp bound elsewhere.
    .full (2 ulp bound in PTX) is computed correctly rounded.
    """
    if mode not in _DIV_MODES:
        raise ArithError(f"div: mode {mode!r} not one of {_DIV_MODES}")
    a, b = _prep((a, b), ftz)
    dt = a.dtype
    if dt == np.float16:
        raise ArithError("div has no f16 form")
    if mode in ("approx", "full") and dt != np.float32:
        raise ArithError(f"div.{mode} exists only for f32")
    if mode == "approx":
        rc = flush_subnormals((dt.type(1) / b).astype(dt))
        r = (a * rc).astype(dt)
    else:
        r = _div_exact(a, b, "rn" if mode == "full" else mode)
    return finish(r, ftz, False)


_RCP_MODES = ("approx", "rn", "rz", "rm", "rp")


@quiet
def rcp(a: ArrayLike, mode: str = "rn", ftz: bool = False) -> np.ndarray:
    """rcp.{approx,rnd}{.ftz}.f32, rcp.rnd.f64, rcp.approx.ftz.f64.

    .approx (PTX: max 1 ulp for f32) is computed correctly rounded; for f64
    (only as .approx.ftz) inputs and results are flushed and the value is
    correctly rounded, which is within that instruction's looser bound.
    """
    if mode not in _RCP_MODES:
        raise ArithError(f"rcp: mode {mode!r} not one of {_RCP_MODES}")
    a = as_float(a)
    if a.dtype == np.float16:
        raise ArithError("rcp has no f16 form")
    if a.dtype == np.float64 and ftz:
        if mode != "approx":
            raise ArithError("rcp .ftz.f64 exists only as rcp.approx.ftz.f64")
        x = flush_subnormals(a)
        return finish(flush_subnormals((1.0 / x).astype(np.float64)), False, False)
    if a.dtype == np.float64 and mode == "approx":
        raise ArithError("rcp.approx.f64 requires .ftz")
    a = flush_subnormals(a) if ftz else a
    r = _div_exact(np.ones_like(a), a, "rn" if mode == "approx" else mode)
    return finish(r, ftz, False)


@quiet
def sqrt(a: ArrayLike, mode: str = "rn", ftz: bool = False) -> np.ndarray:
    """sqrt.{approx,rnd}{.ftz}.f32, sqrt.rnd.f64 (.approx: computed correctly
    rounded, inside PTX's 2^-23 relative-error bound)."""
    if mode not in _RCP_MODES:
        raise ArithError(f"sqrt: mode {mode!r} not one of {_RCP_MODES}")
    a = as_float(a)
    if a.dtype == np.float64 and (mode == "approx" or ftz):
        raise ArithError("sqrt .approx/.ftz exist only for f32")
    if ftz:
        a = flush_subnormals(a)
    dt = a.dtype
    r = np.sqrt(a).astype(dt)
    m = "rn" if mode == "approx" else mode
    if m != "rn":
        ok = np.isfinite(a) & (a > 0)
        if dt == np.float32:
            r64 = r.astype(np.float64)
            es = np.sign(a.astype(np.float64) - r64 * r64)
        else:
            mant, e = _scaled(np.where(ok, a, 1.0))
            odd = (e & 1) == 1
            mant = np.where(odd, mant * 0.5, mant)
            e = np.where(odd, e + 1, e)
            rr = np.ldexp(np.where(ok, r, 1.0), -(e // 2).astype(np.int32))
            p, pe = two_prod(rr, rr)
            es = sign_of_sum([mant, -p, -pe])
        r = nudge(r, np.where(ok, es, 0), m)
    return finish(r.astype(dt), ftz, False)


# The non-rounding and .approx float instructions belong to this family too;
# they live in fbasic.py / fapprox.py to keep files small.
from .fbasic import (abs, copysign, max, min, neg, saturate,  # noqa: E402,F401,A004
                     testp)
from .fapprox import cos, ex2, lg2, rsqrt, sin, tanh  # noqa: E402,F401
