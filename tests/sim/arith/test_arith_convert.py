"""Property tests: cvt (all type pairs and modes), compare, and 16-bit float ops
against exact models."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.sim.arith import ArithError, compare, convert, half as H
from arith_ref import (MODES, bf16_value, f32_bits, float_vecs, frac, int_vecs, round_fraction,
                       same_float, wrap)

# Reference-model casts in the tests themselves may overflow; the library's
# own silence is checked in test_arith_api.py.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

S = settings(max_examples=8, deadline=None)
INTS = ["u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"]
NP = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "s8": np.int8,
      "s16": np.int16, "s32": np.int32, "s64": np.int64, "f16": np.float16,
      "f32": np.float32, "f64": np.float64}


def ibits(t):
    return int(t[1:])


def decode(v, t):
    """A destination lane as a Python float."""
    if t == "bf16":
        return bf16_value(int(v))
    return float(v)


def encode_src(xs, t):
    if t == "bf16":
        return np.array([f32_bits(float(np.float32(x))) >> 16 for x in xs], np.uint16)
    return np.array(xs, NP[t])


@pytest.mark.parametrize("src", INTS)
@pytest.mark.parametrize("dst", ["f16", "bf16", "f32", "f64"])
@S
@given(data=st.data(), mode=st.sampled_from(MODES))
def test_int_to_float(src, dst, data, mode):
    xs = data.draw(int_vecs(ibits(src), src[0] == "s", 1))[0]
    got = convert.cvt(np.array(xs, NP[src]), dst, src, mode)
    assert got.dtype == (np.uint16 if dst == "bf16" else NP[dst])
    for g, x in zip(got, xs):
        assert same_float(decode(g, dst), round_fraction(Fraction(x), dst, mode)), (x, mode)


def ref_float_to_int(x, dst, rnd):
    if math.isnan(x):
        return 0
    if math.isinf(x):
        v = x
    else:
        q = frac(x)
        fl = q.numerator // q.denominator
        v = {"rzi": int(q) if q >= 0 else -((-q.numerator) // q.denominator),
             "rmi": fl, "rpi": -((-q.numerator) // q.denominator),
             "rni": round(q)}[rnd]
    bits = ibits(dst)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dst[0] == "s" else (0, (1 << bits) - 1)
    return hi if v > hi else lo if v < lo else int(v)


@pytest.mark.parametrize("src", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("dst", INTS)
@S
@given(data=st.data(), rnd=st.sampled_from(["rni", "rzi", "rmi", "rpi"]))
def test_float_to_int_saturates(src, dst, data, rnd):
    xs = data.draw(float_vecs("f64" if src == "f64" else "f32", 1))[0]
    if src in ("f16", "bf16"):
        xs = [float(np.float16(x)) if src == "f16" else bf16_value(f32_bits(float(np.float32(x))) >> 16)
              for x in xs]
    got = convert.cvt(encode_src(xs, src), dst, src, rnd)
    assert got.dtype == NP[dst]
    for g, x in zip(got, xs):
        assert int(g) == ref_float_to_int(x, dst, rnd), (x, rnd)


@pytest.mark.parametrize("src,dst", [("f64", "f32"), ("f64", "f16"), ("f32", "f16"),
                                     ("f32", "bf16"), ("f64", "bf16"), ("f16", "bf16"),
                                     ("bf16", "f16"), ("f32", "f64"), ("f16", "f32")])
@S
@given(data=st.data(), mode=st.sampled_from(MODES))
def test_float_to_float(src, dst, data, mode):
    xs = data.draw(float_vecs("f64" if src == "f64" else "f32", 1))[0]
    if src == "f16":
        xs = [float(np.float16(x)) for x in xs]
    if src == "bf16":
        xs = [bf16_value(f32_bits(float(np.float32(x))) >> 16) for x in xs]
    got = convert.cvt(encode_src(xs, src), dst, src, mode)
    for g, x in zip(got, xs):
        want = x if not math.isfinite(x) else round_fraction(frac(x), dst, mode,
                                                             neg_zero=math.copysign(1, x) < 0)
        assert same_float(decode(g, dst), want), (x, mode)
        if math.isnan(want) and dst == "bf16":
            assert int(g) == 0x7FFF


@S
@given(float_vecs("f32", 1))
def test_float_modifiers(v):
    xs = v[0]
    a = np.array(xs, np.float32)
    sat = convert.cvt(a, "f16", "f32", "rn", sat=True)
    relu = convert.cvt(a, "bf16", "f32", "rn", relu=True)
    ftz = convert.cvt(a, "f32", "f32", ftz=True)
    integral = convert.cvt(a, "f32", "f32", "rmi")
    for i, x in enumerate(xs):
        r = round_fraction(frac(x), "f16", "rn") if math.isfinite(x) else x
        want = 0.0 if math.isnan(r) or r <= 0 else min(r, 1.0)
        assert same_float(float(sat[i]), want)
        rb = bf16_value(int(relu[i]))
        if math.isnan(x):
            assert int(relu[i]) == 0x7FFF
        else:
            assert rb >= 0 or (rb == 0)
        if math.isfinite(x):
            assert same_float(float(ftz[i]), math.copysign(0.0, x) if abs(x) < 2.0**-126 else x)
            assert float(integral[i]) == math.floor(x)


@pytest.mark.parametrize("src", INTS)
@pytest.mark.parametrize("dst", INTS)
@settings(max_examples=3, deadline=None)
@given(data=st.data(), sat=st.booleans())
def test_int_to_int(src, dst, data, sat):
    xs = data.draw(int_vecs(ibits(src), src[0] == "s", 1))[0]
    got = convert.cvt(np.array(xs, NP[src]), dst, src, sat=sat)
    bits = ibits(dst)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dst[0] == "s" else (0, (1 << bits) - 1)
    for g, x in zip(got, xs):
        want = min(max(x, lo), hi) if sat else wrap(x, bits, dst[0] == "s")
        assert int(g) == want


def test_cvt_tf32_pack_and_errors():
    x = np.array([1.0 + 2.0**-11, 1.0 + 3 * 2.0**-12, np.nan, 3.4e38], np.float32)
    t = convert.cvt(x, "tf32", "f32", "rna")
    assert t.dtype == np.uint32
    assert t[0] == f32_bits(1.0 + 2.0**-10) and t[1] == f32_bits(1.0 + 2.0**-10)
    assert t[2] == 0x7FFFFFFF and ((t[[0, 1, 3]] & 0x1FFF) == 0).all()
    p = convert.cvt_pack(np.float32(1.0), np.float32(-2.0), "f16x2")
    assert int(p) == 0x3C00C000
    pb = convert.cvt_pack(np.float32(-1.0), np.float32(3.0), "bf16x2", relu=True)
    assert int(pb) == 0x00004040
    with pytest.raises(ArithError):
        convert.cvt(x, "s32", "f32", "rn")
    with pytest.raises(ArithError):
        convert.cvt(np.int32(1), "f32", "s32", "rzi")
    with pytest.raises(ArithError):
        convert.cvt(x, "e4m3", "f32", "rn")


CMPS_F = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


def ref_cmp(x, y, c):
    un = math.isnan(x) or math.isnan(y)
    base = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}
    if c == "num":
        return not un
    if c == "nan":
        return un
    if c.endswith("u"):
        return un or base[c[:-1]]
    return (not un) and base[c]


@S
@given(float_vecs("f32", 2))
def test_compare_float(v):
    xs, ys = v
    for c in CMPS_F:
        got = compare.compare(np.array(xs, np.float32), np.array(ys, np.float32), c, "f32")
        assert got.tolist() == [ref_cmp(x, y, c) for x, y in zip(xs, ys)], c
        gb = compare.compare(encode_src(xs, "bf16"), encode_src(ys, "bf16"), c, "bf16")
        assert gb.tolist() == [ref_cmp(bf16_value(int(p)), bf16_value(int(q)), c)
                               for p, q in zip(encode_src(xs, "bf16"), encode_src(ys, "bf16"))]


@S
@given(int_vecs(32, True, 2))
def test_compare_int(v):
    xs, ys = v
    a, b = np.array(xs, np.int32), np.array(ys, np.int32)
    for c, fn in (("eq", lambda p, q: p == q), ("ne", lambda p, q: p != q), ("lt", lambda p, q: p < q),
                  ("le", lambda p, q: p <= q), ("gt", lambda p, q: p > q), ("ge", lambda p, q: p >= q)):
        assert compare.compare(a, b, c, "s32").tolist() == [fn(p, q) for p, q in zip(xs, ys)]
    us = [(x % 2**32, y % 2**32) for x, y in zip(xs, ys)]
    for c, fn in (("lo", lambda p, q: p < q), ("ls", lambda p, q: p <= q),
                  ("hi", lambda p, q: p > q), ("hs", lambda p, q: p >= q)):
        assert compare.compare(a.view(np.uint32), b.view(np.uint32), c, "u32").tolist() == \
            [fn(p, q) for p, q in us]
    assert compare.compare(a.view(np.uint32), b.view(np.uint32), "eq", "b32").tolist() == \
        [p == q for p, q in us]
    with pytest.raises(ArithError):
        compare.compare(a, b, "lt", "b32")
    with pytest.raises(ArithError):
        compare.compare(a, b, "ltu", "s32")


def bf16_of(x):
    return f32_bits(float(np.float32(x))) >> 16


@pytest.mark.parametrize("mode", MODES)
@S
@given(data=st.data())
def test_bf16_ops_round_once(mode, data):
    xs, ys, zs = data.draw(float_vecs("f32", 3))
    ua, ub, uc = ([bf16_of(x) for x in col] for col in (xs, ys, zs))
    va, vb, vc = ([bf16_value(u) for u in col] for col in (ua, ub, uc))
    a, b, c = (np.array(u, np.uint16) for u in (ua, ub, uc))
    add = H.half_add(a, b, "bf16", mode)
    mul = H.half_mul(a, b, "bf16", mode)
    fma = H.half_fma(a, b, c, "bf16", mode)
    for i in range(len(xs)):
        x, y, z = va[i], vb[i], vc[i]
        if all(math.isfinite(t) for t in (x, y, z)):
            s = frac(x) + frac(y)
            if s != 0:
                assert same_float(bf16_value(int(add[i])), round_fraction(s, "bf16", mode))
            p = frac(x) * frac(y)
            if p != 0:
                assert same_float(bf16_value(int(mul[i])), round_fraction(p, "bf16", mode))
            q = p + frac(z)
            if q != 0:
                assert same_float(bf16_value(int(fma[i])), round_fraction(q, "bf16", mode))
        elif math.isnan(x) or math.isnan(y):
            assert int(add[i]) == 0x7FFF and int(mul[i]) == 0x7FFF


@S
@given(float_vecs("f32", 2))
def test_f16x2_packed_lanes(v):
    xs, ys = v
    lo = np.array(xs, np.float16)
    hi = np.array(ys, np.float16)
    pa = H.pack_x2(lo, hi)
    pb = H.pack_x2(hi, lo)
    s = H.half_add(pa, pb, "f16x2")
    e0, e1 = H.unpack_x2(s, "f16x2")
    for i in range(len(xs)):
        x, y = float(lo[i]), float(hi[i])
        want = x + y if not (math.isfinite(x) and math.isfinite(y)) else \
            round_fraction(frac(x) + frac(y), "f16", "rn")
        for got in (e0[i], e1[i]):
            if want == 0:
                assert float(got) == 0
            else:
                assert same_float(float(got), want)
    n = H.half_neg(pa, "f16x2")
    n0, n1 = H.unpack_x2(n, "f16x2")
    assert all(same_float(float(p), -float(q)) for p, q in zip(n0, lo) if not math.isnan(float(q)))
    m = H.half_max(pa, pb, "f16x2", relu=True)
    m0, _ = H.unpack_x2(m, "f16x2")
    for g, x, y in zip(m0, lo, hi):
        x, y = float(x), float(y)
        if not (math.isnan(x) or math.isnan(y)):
            assert float(g) == max(x, y, 0.0)


def test_bf16_f32_helpers():
    assert int(H.f32_to_bf16(np.float32(1.0 + 2.0**-8))) == 0x3F80  # tie to even
    assert int(H.f32_to_bf16(np.float32(1.0 + 2.0**-8), "rp")) == 0x3F81
    assert int(H.f32_to_bf16(np.float32(np.nan))) == 0x7FFF
    assert H.bf16_to_f32(np.uint16(0xC040)) == np.float32(-3.0)
    assert H.f32_to_f16(np.float32(65520.0), "rz") == np.float16(65504)
    assert np.isinf(H.f32_to_f16(np.float32(65520.0), "rn"))
