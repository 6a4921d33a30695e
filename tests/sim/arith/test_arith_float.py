"""Property tests: f32/f64/f16 arithmetic in all rounding modes against an exact
Fraction model with an independent correct-rounding function."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.sim.arith import floating as FL
from gpudbg.sim.arith import ArithError
from arith_ref import (MODES, f32_bits, float_vecs, frac, round_fraction, same_float)

# Reference-model casts in the tests themselves may overflow; the library's
# own silence is checked in test_arith_api.py.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

S = settings(max_examples=12, deadline=None)
DT = {"f32": np.float32, "f64": np.float64, "f16": np.float16}
MINNORM = {"f32": 2.0 ** -126, "f64": 2.0 ** -1022, "f16": 2.0 ** -14}


def neg0(x: float) -> bool:
    return x == 0 and math.copysign(1, x) < 0


def ref_add(x, y, fmt, mode):
    if not (math.isfinite(x) and math.isfinite(y)):
        return x + y
    q = frac(x) + frac(y)
    if q == 0:
        both_neg = neg0(x) and neg0(y)
        both_pos = x == 0 and y == 0 and not neg0(x) and not neg0(y)
        return -0.0 if both_neg or (mode == "rm" and not both_pos) else 0.0
    return round_fraction(q, fmt, mode)


def ref_mul(x, y, fmt, mode):
    if not (math.isfinite(x) and math.isfinite(y)):
        return x * y
    q = frac(x) * frac(y)
    sign_neg = (math.copysign(1, x) < 0) != (math.copysign(1, y) < 0)
    return round_fraction(q, fmt, mode, neg_zero=sign_neg)


def ref_div(x, y, fmt, mode):
    sneg = (math.copysign(1, x) < 0) != (math.copysign(1, y) < 0)
    if math.isnan(x) or math.isnan(y) or (x == 0 and y == 0) or (math.isinf(x) and math.isinf(y)):
        return math.nan
    if math.isinf(x) or y == 0:
        return -math.inf if sneg else math.inf
    if math.isinf(y):
        return -0.0 if sneg else 0.0
    return round_fraction(frac(x) / frac(y), fmt, mode, neg_zero=sneg)


def ref_sqrt(x, fmt, mode):
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0 or math.isinf(x):
        return x
    s = 600
    n = frac(x) * Fraction(2) ** (2 * s)
    assert n.denominator == 1
    r = math.isqrt(n.numerator)
    q = Fraction(r, 2 ** s) if r * r == n.numerator else Fraction(2 * r + 1, 2 ** (s + 1))
    return round_fraction(q, fmt, mode)


def ref_fma(x, y, z, fmt, mode):
    if any(math.isnan(v) for v in (x, y, z)):
        return math.nan
    if math.isinf(x) or math.isinf(y):
        if x == 0 or y == 0:
            return math.nan
        pinf = math.copysign(math.inf, x) * math.copysign(1, y)
        if math.isinf(z) and z != pinf:
            return math.nan
        return pinf
    if math.isinf(z):
        return z
    p = frac(x) * frac(y)
    q = p + frac(z)
    if q == 0:
        p_neg = p == 0 and ((math.copysign(1, x) < 0) != (math.copysign(1, y) < 0))
        p_pos = p == 0 and not p_neg
        both_neg = p_neg and neg0(z)
        both_pos = p_pos and z == 0 and not neg0(z)
        return -0.0 if both_neg or (mode == "rm" and not both_pos) else 0.0
    return round_fraction(q, fmt, mode)


def check(got, want_fn, cols, fmt):
    for i, args in enumerate(zip(*cols)):
        want = want_fn(*args)
        assert same_float(got[i], want), (args, float(got[i]), want)
        if fmt == "f32" and math.isnan(want):
            assert f32_bits(float(got[i])) == 0x7FFFFFFF


@pytest.mark.parametrize("fmt", ["f32", "f64"])
@pytest.mark.parametrize("mode", MODES)
@S
@given(data=st.data())
def test_add_sub_mul_div(fmt, mode, data):
    xs, ys = data.draw(float_vecs(fmt, 2))
    a, b = np.array(xs, DT[fmt]), np.array(ys, DT[fmt])
    check(FL.add(a, b, mode), lambda x, y: ref_add(x, y, fmt, mode), (xs, ys), fmt)
    check(FL.sub(a, b, mode), lambda x, y: ref_add(x, -y, fmt, mode), (xs, ys), fmt)
    check(FL.mul(a, b, mode), lambda x, y: ref_mul(x, y, fmt, mode), (xs, ys), fmt)
    check(FL.div(a, b, mode), lambda x, y: ref_div(x, y, fmt, mode), (xs, ys), fmt)
    check(FL.rcp(a, mode), lambda x: ref_div(1.0, x, fmt, mode), (xs,), fmt)
    check(FL.sqrt(np.abs(a), mode), lambda x: ref_sqrt(abs(x), fmt, mode), (xs,), fmt)


def _fma_inputs(fmt, xs, ys, zs):
    """Make half the addends cancel the product nearly exactly (hard cases)."""
    out = []
    for i, (x, y, z) in enumerate(zip(xs, ys, zs)):
        p = float(DT[fmt](x) * DT[fmt](y)) if math.isfinite(x * y) else z
        if i % 2 and math.isfinite(p):
            z = float(-DT[fmt](p))
            if i % 4 == 1 and math.isfinite(z):
                z = float(np.nextafter(DT[fmt](z), DT[fmt](math.inf)))
        out.append(z)
    return out


@pytest.mark.parametrize("fmt", ["f32", "f64"])
@pytest.mark.parametrize("mode", MODES)
@S
@given(data=st.data())
def test_fma_single_rounding(fmt, mode, data):
    xs, ys, zs = data.draw(float_vecs(fmt, 3))
    zs = _fma_inputs(fmt, xs, ys, zs)
    a, b, c = (np.array(v, DT[fmt]) for v in (xs, ys, zs))
    check(FL.fma(a, b, c, mode), lambda x, y, z: ref_fma(x, y, z, fmt, mode), (xs, ys, zs), fmt)
    check(FL.mad(a, b, c, mode), lambda x, y, z: ref_fma(x, y, z, fmt, mode), (xs, ys, zs), fmt)


def test_fma_known_hard_cases():
    # f64: the product's low half decides the rounding of 1 + tiny.
    a = np.array([1.0 + 2.0**-52, 2.0**-600, 3.0], np.float64)
    b = np.array([1.0 - 2.0**-53, 2.0**-600, 2.0**-1074], np.float64)
    c = np.array([-1.0, 1.0, 0.0], np.float64)
    got = FL.fma(a, b, c, "rn")
    assert got[0] == 2.0**-53 - 2.0**-105
    assert got[1] == 1.0 and FL.fma(a, b, c, "rp")[1] == np.nextafter(1.0, 2.0)
    assert got[2] == 3 * 2.0**-1074
    # f32 double-rounding trap: exact a*b+c lies just above a midpoint.
    x = np.float32(1 + 2**-12)
    r = FL.fma(x, x, np.float32(2**-60), "rn")
    assert r == np.float32(1 + 2**-11 + 2**-23)  # naive f64-then-f32 gives 1 + 2**-11
    assert FL.fma(x, x, np.float32(0), "rn") == np.float32(1 + 2**-11)  # a true tie: even
    assert FL.fma(x, x, np.float32(2**-60), "rz") == np.float32(1 + 2**-11)


@pytest.mark.parametrize("mode", MODES)
@S
@given(data=st.data())
def test_f16_add_mul_fma(mode, data):
    xs, ys, zs = data.draw(float_vecs("f32", 3))
    xs, ys, zs = ([float(np.float16(v)) for v in col] for col in (xs, ys, zs))
    a, b, c = (np.array(v, np.float16) for v in (xs, ys, zs))
    check(FL.add(a, b, mode), lambda x, y: ref_add(x, y, "f16", mode), (xs, ys), "f16")
    check(FL.mul(a, b, mode), lambda x, y: ref_mul(x, y, "f16", mode), (xs, ys), "f16")
    check(FL.fma(a, b, c, mode), lambda x, y, z: ref_fma(x, y, z, "f16", mode), (xs, ys, zs), "f16")


def flush(x, fmt="f32"):
    return math.copysign(0.0, x) if abs(x) < MINNORM[fmt] else x


@pytest.mark.parametrize("mode", MODES)
@S
@given(data=st.data())
def test_ftz_and_sat(mode, data):
    xs, ys = data.draw(float_vecs("f32", 2))
    a, b = np.array(xs, np.float32), np.array(ys, np.float32)

    def sat(v):
        return 0.0 if math.isnan(v) or v <= 0 else min(v, 1.0)
    check(FL.add(a, b, mode, ftz=True),
          lambda x, y: flush(ref_add(flush(x), flush(y), "f32", mode)), (xs, ys), "f32")
    check(FL.mul(a, b, mode, ftz=True, sat=True),
          lambda x, y: sat(flush(ref_mul(flush(x), flush(y), "f32", mode))), (xs, ys), "f32")


@S
@given(float_vecs("f32", 2), st.booleans(), st.booleans())
def test_min_max_nan_rules(v, nan, xorsign):
    xs, ys = v
    a, b = np.array(xs, np.float32), np.array(ys, np.float32)

    def ref(x, y, want_min):
        if xorsign:
            sx = (math.copysign(1, x) < 0) != (math.copysign(1, y) < 0)
            x, y = abs(x), abs(y)
        if math.isnan(x) and math.isnan(y) or (nan and (math.isnan(x) or math.isnan(y))):
            return math.nan
        if math.isnan(x):
            r = y
        elif math.isnan(y):
            r = x
        else:
            key = lambda t: (t, math.copysign(1, t))  # noqa: E731  -0 < +0
            r = min(x, y, key=key) if want_min else max(x, y, key=key)
        if xorsign:
            r = -abs(r) if sx else abs(r)
        return r
    check(FL.min(a, b, nan=nan, xorsign_abs=xorsign), lambda x, y: ref(x, y, True), v, "f32")
    check(FL.max(a, b, nan=nan, xorsign_abs=xorsign), lambda x, y: ref(x, y, False), v, "f32")


@S
@given(float_vecs("f64", 2))
def test_abs_neg_copysign_testp(v):
    xs, ys = v
    a, b = np.array(xs), np.array(ys)
    for got, fn in ((FL.abs(a), abs), (FL.neg(a), lambda t: -t)):
        for g, x in zip(got, xs):
            assert same_float(g, fn(x))
    for g, x, y in zip(FL.copysign(a, b), xs, ys):
        assert same_float(g, math.copysign(y, x))
    for op, fn in (("finite", math.isfinite), ("infinite", math.isinf),
                   ("number", lambda t: not math.isnan(t)), ("notanumber", math.isnan),
                   ("normal", lambda t: math.isfinite(t) and abs(t) >= 2.0**-1022),
                   ("subnormal", lambda t: 0 < abs(t) < 2.0**-1022)):
        assert FL.testp(a, op).tolist() == [fn(x) for x in xs]


@S
@given(float_vecs("f32", 1))
def test_approx_functions(v):
    xs = v[0]
    a = np.array(xs, np.float32)
    cases = ((FL.ex2, lambda t: 2.0 ** t, 2.0**-22), (FL.lg2, math.log2, 2.0**-22),
             (FL.sin, math.sin, 2.0**-22), (FL.cos, math.cos, 2.0**-22),
             (FL.tanh, math.tanh, 2.0**-22), (FL.rsqrt, lambda t: 1 / math.sqrt(t), 2.0**-22))
    for fn, ref, tol in cases:
        got = fn(a)
        assert got.dtype == np.float32
        for g, x in zip(got, xs):
            try:
                want = ref(x)
            except (ValueError, OverflowError, ZeroDivisionError):
                continue
            if not math.isfinite(x) or not math.isfinite(want) or abs(want) > 3e38 or abs(want) < 1e-37:
                continue
            assert abs(float(g) - want) <= tol * abs(want) + 2.0**-149, (fn, x)


def test_approx_special_values():
    s = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0], np.float32)
    assert FL.lg2(s)[:2].tolist() == [-np.inf, -np.inf] and FL.lg2(s)[2] == np.inf
    assert np.isnan(FL.lg2(s)[5]) and np.isnan(FL.lg2(s)[3])
    assert FL.ex2(s)[3] == 0 and FL.ex2(s)[2] == np.inf and FL.ex2(s)[0] == 1
    assert np.isnan(FL.sin(s)[2]) and np.isnan(FL.cos(s)[3])
    assert FL.tanh(s)[2] == 1 and FL.tanh(s)[3] == -1
    r = FL.rsqrt(s)
    assert r[0] == np.inf and r[1] == -np.inf and r[2] == 0 and np.isnan(r[5])
    assert f32_bits(float(FL.lg2(s)[5])) == 0x7FFFFFFF
    assert FL.lg2(np.float32(1e-40), ftz=True) == -np.inf


def test_div_approx_and_full():
    a = np.array([1.0, 3.0, np.inf, 10.0], np.float32)
    b = np.array([3.0, 2.0**127, 2.0**127, 7.0], np.float32)
    ap = FL.div(a, b, "approx")
    assert ap[1] == 0 and np.isnan(ap[2])
    assert abs(float(ap[0]) - 1 / 3) <= 2 * np.spacing(np.float32(1 / 3))
    assert FL.div(a, b, "full")[3] == np.float32(10.0) / np.float32(7.0)
    with pytest.raises(ArithError):
        FL.div(a.astype(np.float64), b.astype(np.float64), "approx")
    with pytest.raises(ArithError):
        FL.add(a, b, "rx")
    x = FL.rcp(np.array([2.0, 1e-310, -0.0]), "approx", ftz=True)
    assert x[0] == 0.5 and x[1] == np.inf and x[2] == -np.inf


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_zero_signs_all_modes(dt):
    a = np.array([-0.0, 0.0, -0.0, 1.0, 2.0], dt)
    b = np.array([1.0, 1.0, -1.0, 1.0, -2.0], dt)
    c = np.array([-0.0, -0.0, 0.0, -1.0, 4.0], dt)
    for mode in MODES:
        rm = mode == "rm"
        want_fma = [-0.0, -0.0 if rm else 0.0, 0.0, -0.0 if rm else 0.0, -0.0 if rm else 0.0]
        got = FL.fma(a, b, c, mode)
        assert all(same_float(g, w) for g, w in zip(got, want_fma)), (mode, got)
        s = FL.add(a, c, mode)
        z = -0.0 if rm else 0.0
        want_add = [-0.0, z, z, z, 6.0]
        assert all(same_float(g, w) for g, w in zip(s, want_add)), (mode, s)
