"""Property tests: integer arithmetic against Python-int models of PTX semantics."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.sim.arith import integer as I
from gpudbg.sim.arith import ArithError
from arith_ref import int_vecs, ints, lists, wrap

# Reference-model casts in the tests themselves may overflow; the library's
# own silence is checked in test_arith_api.py.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

S = settings(max_examples=12, deadline=None)
TYPES = [(16, True), (16, False), (32, True), (32, False), (64, True), (64, False)]


def dt(bits, signed):
    return np.dtype(f"{'i' if signed else 'u'}{bits // 8}")


def pairs(bits, signed):
    return int_vecs(bits, signed, 2).map(lambda v: list(zip(*v)))


def triples(bits, signed):
    return int_vecs(bits, signed, 3).map(lambda v: list(zip(*v)))


@pytest.mark.parametrize("bits,signed", TYPES)
@S
@given(data=st.data())
def test_mul_lo_hi_wide(bits, signed, data):
    xs = data.draw(pairs(bits, signed))
    a = np.array([x for x, _ in xs], dt(bits, signed))
    b = np.array([y for _, y in xs], dt(bits, signed))
    lo, hi = I.mul(a, b, "lo"), I.mul(a, b, "hi")
    for i, (x, y) in enumerate(xs):
        p = x * y
        assert int(lo[i]) == wrap(p, bits, signed)
        assert int(hi[i]) == wrap(p >> bits, bits, signed)
    if bits < 64:
        w = I.mul(a, b, "wide")
        assert w.dtype == dt(2 * bits, signed)
        assert [int(v) for v in w] == [x * y for x, y in xs]


@S
@given(triples(32, True))
def test_mad_hi_sat_s32(xs):
    a, b, c = (np.array(col, np.int32) for col in zip(*xs))
    got = I.mad(a, b, c, "hi", sat=True)
    for i, (x, y, z) in enumerate(xs):
        assert int(got[i]) == min(max(((x * y) >> 32) + z, -2**31), 2**31 - 1)
    lo = I.mad(a, b, c, "lo")
    assert [int(v) for v in lo] == [wrap(x * y + z, 32, True) for x, y, z in xs]


@pytest.mark.parametrize("signed", [True, False])
@S
@given(data=st.data())
def test_mul24_mad24(signed, data):
    xs = data.draw(triples(32, signed))
    d = dt(32, signed)
    a, b, c = (np.array(col, d) for col in zip(*xs))

    def low24(v):
        return wrap(v, 24, signed)
    for mode in ("lo", "hi"):
        got = I.mul24(a, b, mode)
        gm = I.mad24(a, b, c, mode)
        for i, (x, y, z) in enumerate(xs):
            p = low24(x) * low24(y)
            part = p if mode == "lo" else p >> 16
            assert int(got[i]) == wrap(part, 32, signed)
            assert int(gm[i]) == wrap(part + z, 32, signed)
    if signed:
        gs = I.mad24(a, b, c, "hi", sat=True)
        for i, (x, y, z) in enumerate(xs):
            part = wrap((low24(x) * low24(y)) >> 16, 32, True)
            assert int(gs[i]) == min(max(part + z, -2**31), 2**31 - 1)


def ref_div(x, y, bits, signed):
    if y == 0:
        if not signed:
            return (1 << bits) - 1
        return -1 if x >= 0 else 1
    q = abs(x) // abs(y)
    if (x < 0) != (y < 0):
        q = -q
    return wrap(q, bits, signed)


@pytest.mark.parametrize("bits,signed", TYPES + [(8, True), (8, False)])
@S
@given(data=st.data())
def test_div_rem(bits, signed, data):
    xs = data.draw(pairs(bits, signed))
    a = np.array([x for x, _ in xs], dt(bits, signed))
    b = np.array([y for _, y in xs], dt(bits, signed))
    q, r = I.div(a, b), I.rem(a, b)
    assert q.dtype == a.dtype and r.dtype == a.dtype
    for i, (x, y) in enumerate(xs):
        qq = ref_div(x, y, bits, signed)
        assert int(q[i]) == qq
        assert int(r[i]) == (x if y == 0 else wrap(x - qq * y, bits, signed))


def test_div_documented_corners():
    a = np.array([7, -7, -2**31, 0], np.int32)
    b = np.array([0, 0, -1, 0], np.int32)
    assert I.div(a, b).tolist() == [-1, 1, -2**31, -1]
    assert I.rem(a, b).tolist() == [7, -7, 0, 0]
    assert I.div(np.uint32(5), np.uint32(0)) == 0xFFFFFFFF


@S
@given(pairs(32, True))
def test_add_sub_sat(xs):
    a, b = (np.array(col, np.int32) for col in zip(*xs))
    clamp = lambda v: min(max(v, -2**31), 2**31 - 1)  # noqa: E731
    assert I.add_sat(a, b).tolist() == [clamp(x + y) for x, y in xs]
    assert I.sub_sat(a, b).tolist() == [clamp(x - y) for x, y in xs]
    with pytest.raises(ArithError):
        I.add_sat(a.astype(np.uint32), b.astype(np.uint32))


@pytest.mark.parametrize("bits", [32, 64])
@S
@given(data=st.data())
def test_carry_chains_build_wide_arithmetic(bits, data):
    """add.cc + addc.cc + addc over limbs == big-int addition; same for sub."""
    n = 3
    wide = data.draw(lists(st.tuples(st.integers(0, 2**(bits * n) - 1),
                                     st.integers(0, 2**(bits * n) - 1)), 8))
    m = (1 << bits) - 1
    u = dt(bits, False)
    limbs = lambda v, k: np.array([(x >> (bits * k)) & m for x in v], u)  # noqa: E731
    xs = [x for x, _ in wide]
    ys = [y for _, y in wide]
    for op, ref in ((I.add_cc, lambda x, y: x + y), (I.sub_cc, lambda x, y: x - y)):
        carry = None

        res = [0] * len(wide)
        for k in range(n):
            d, carry = op(limbs(xs, k), limbs(ys, k), carry)
            assert carry.dtype == np.uint32
            res = [r | (int(v) << (bits * k)) for r, v in zip(res, d)]
        for i, (x, y) in enumerate(wide):
            assert res[i] == ref(x, y) % (1 << (bits * n))
            top = ref(x, y)
            assert int(carry[i]) == (1 if (top >> (bits * n)) or top < 0 else 0)



@S
@given(lists(st.tuples(ints(32, False), ints(32, False), ints(32, False), st.integers(0, 1))))
def test_mad_cc(xs):
    a, b, c, cin = (np.array(col, np.uint32) for col in zip(*xs))
    for mode in ("lo", "hi"):
        d, co = I.mad_cc(a, b, c, mode, cin)
        for i, (x, y, z, ci) in enumerate(xs):
            part = (x * y) & 0xFFFFFFFF if mode == "lo" else (x * y) >> 32
            t = part + z + ci
            assert int(d[i]) == t & 0xFFFFFFFF and int(co[i]) == t >> 32


@pytest.mark.parametrize("bits", [16, 32, 64])
@S
@given(data=st.data())
def test_abs_neg_min_max_sad(bits, data):
    xs = data.draw(triples(bits, True))
    a, b, c = (np.array(col, dt(bits, True)) for col in zip(*xs))
    assert I.neg(a).tolist() == [wrap(-x, bits, True) for x, _, _ in xs]
    assert I.abs(a).tolist() == [wrap(abs(x), bits, True) for x, _, _ in xs]
    assert I.min(a, b).tolist() == [min(x, y) for x, y, _ in xs]
    assert I.max(a, b).tolist() == [max(x, y) for x, y, _ in xs]
    assert I.sad(a, b, c).tolist() == [wrap(z + abs(x - y), bits, True) for x, y, z in xs]
    ua, ub, uc = (v.astype(dt(bits, False)) for v in (a, b, c))
    assert I.sad(ua, ub, uc).tolist() == [
        wrap((z % (1 << bits)) + abs((x % (1 << bits)) - (y % (1 << bits))), bits, False)
        for x, y, z in xs]
    if bits == 32:
        assert I.max(a, b, relu=True).tolist() == [max(x, y, 0) for x, y, _ in xs]
        assert I.min(a, b, relu=True).tolist() == [max(min(x, y), 0) for x, y, _ in xs]


@pytest.mark.parametrize("sa,sb", [(False, False), (True, False), (False, True), (True, True)])
@S
@given(data=st.data())
def test_dp4a_dp2a(sa, sb, data):
    xs = data.draw(triples(32, False))
    a, b = (np.array(col, np.uint32) for col in list(zip(*xs))[:2])
    out_signed = sa or sb
    c = np.array([wrap(z, 32, True) for *_, z in xs], np.int32)
    lane = lambda v, k, w, s: wrap(v >> (w * k), w, s)  # noqa: E731
    d4 = I.dp4a(a, b, c, sa, sb)
    assert d4.dtype == (np.int32 if out_signed else np.uint32)
    for hi in (False, True):
        d2 = I.dp2a(a, b, c, sa, sb, hi)
        for i, (x, y, z) in enumerate(xs):
            base = 2 if hi else 0
            zz = wrap(z, 32, out_signed)
            ref2 = zz + lane(x, 0, 16, sa) * lane(y, base, 8, sb) + lane(x, 1, 16, sa) * lane(y, base + 1, 8, sb)
            assert int(d2[i]) == wrap(ref2, 32, out_signed)
    for i, (x, y, z) in enumerate(xs):
        ref = wrap(z, 32, out_signed) + sum(lane(x, k, 8, sa) * lane(y, k, 8, sb) for k in range(4))
        assert int(d4[i]) == wrap(ref, 32, out_signed)


@S
@given(lists(st.tuples(ints(32, False), st.integers(0, 80))), st.sampled_from(["clamp", "wrap"]),
       st.booleans())
def test_szext(xs, mode, signed):
    a = np.array([x for x, _ in xs], np.uint32)
    n = np.array([k for _, k in xs], np.uint32)
    got = I.szext(a, n, signed, mode)
    for i, (x, k) in enumerate(xs):
        nn = k % 32 if mode == "wrap" else min(k, 32)
        if nn == 0:
            want = 0
        elif nn >= 32:
            want = wrap(x, 32, signed)
        else:
            want = wrap(wrap(x, nn, signed), 32, signed)
        assert int(got[i]) == want


def test_bad_modes_rejected():
    a = np.array([1], np.int32)
    with pytest.raises(ArithError):
        I.mul(a, a, "middle")
    with pytest.raises(ArithError):
        I.mad(a, a, a, "lo", sat=True)
    with pytest.raises(ArithError):
        I.mul(a.astype(np.int64), a.astype(np.int64), "wide")
