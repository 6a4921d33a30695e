"""Property tests: bit instructions against per-bit models written from the PTX ISA pseudo-code."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.sim.arith import bits as B
from gpudbg.sim.arith import video as V
from arith_ref import int_vecs, wrap

# Reference-model casts in the tests themselves may overflow; the library's
# own silence is checked in test_arith_api.py.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

S = settings(max_examples=12, deadline=None)
TYPES = [(32, True), (32, False), (64, True), (64, False), (16, True), (16, False)]


def dt(bits, signed):
    return np.dtype(f"{'i' if signed else 'u'}{bits // 8}")


def bit(v, i):
    return (v >> i) & 1


@pytest.mark.parametrize("bits,signed", TYPES)
@S
@given(data=st.data())
def test_shifts_popc_clz_bfind_brev(bits, signed, data):
    xs, amts = data.draw(int_vecs(bits, signed, 1).flatmap(
        lambda v: st.lists(st.integers(0, 300), min_size=len(v[0]), max_size=len(v[0])).map(
            lambda n: (v[0], n))))
    a = np.array(xs, dt(bits, signed))
    n = np.array(amts, np.uint32)
    shl, shr = B.shl(a, n), B.shr(a, n)
    pc, cz, bf, bfs, br = B.popc(a), B.clz(a), B.bfind(a), B.bfind(a, shiftamt=True), B.brev(a)
    for i, (x, k) in enumerate(zip(xs, amts)):
        u = x % (1 << bits)
        assert int(shl[i]) == (wrap(u << k, bits, signed) if k < bits else 0)
        if signed:
            assert int(shr[i]) == x >> min(k, bits)
        else:
            assert int(shr[i]) == (u >> k if k < bits else 0)
        assert int(pc[i]) == bin(u).count("1")
        assert int(cz[i]) == bits - u.bit_length()
        probe = (~x % (1 << bits)) if (signed and x < 0) else u
        want = probe.bit_length() - 1 if probe else 0xFFFFFFFF
        assert int(bf[i]) == want
        assert int(bfs[i]) == (0xFFFFFFFF if want == 0xFFFFFFFF else bits - 1 - want)
        assert int(br[i]) == wrap(int(format(u, f"0{bits}b")[::-1], 2), bits, signed)
        assert pc.dtype == cz.dtype == bf.dtype == np.uint32


def ref_bfe(x, pos, ln, bits, signed):
    msb = bits - 1
    pos, ln = pos & 0xFF, ln & 0xFF
    sbit = 0 if (not signed or ln == 0) else bit(x % (1 << bits), min(pos + ln - 1, msb))
    d = 0
    for i in range(bits):
        b = bit(x % (1 << bits), pos + i) if (i < ln and pos + i <= msb) else sbit
        d |= b << i
    return wrap(d, bits, signed)


def ref_bfi(a, b, pos, ln, bits):
    pos, ln = pos & 0xFF, ln & 0xFF
    f = b % (1 << bits)
    i = 0
    while i < ln and pos + i <= bits - 1:
        f = (f & ~(1 << (pos + i))) | (bit(a % (1 << bits), i) << (pos + i))
        i += 1
    return f


@pytest.mark.parametrize("bits,signed", [(32, True), (32, False), (64, True), (64, False)])
@S
@given(data=st.data())
def test_bfe_bfi(bits, signed, data):
    (xs, ys), (ps, ls) = data.draw(st.tuples(int_vecs(bits, signed, 2), int_vecs(32, False, 2)))
    ps = [p % 300 if i % 2 else p for i, p in enumerate(ps)]
    ls = [q % 80 if i % 3 else q for i, q in enumerate(ls)]
    a = np.array(xs, dt(bits, signed))
    b = np.array(ys, dt(bits, signed))
    pos, ln = np.array(ps, np.uint32), np.array(ls, np.uint32)
    e = B.bfe(a, pos, ln)
    f = B.bfi(a.astype(dt(bits, False)), b.astype(dt(bits, False)), pos, ln)
    for i in range(len(xs)):
        assert int(e[i]) == ref_bfe(xs[i], ps[i], ls[i], bits, signed)
        assert int(f[i]) == ref_bfi(xs[i], ys[i], ps[i], ls[i], bits)


def ref_fns(mask, base, offset):
    if offset == 0:
        return base if base < 32 and bit(mask, base) else 0xFFFFFFFF
    pos, count, inc = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if bit(mask, pos):
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return 0xFFFFFFFF


@S
@given(int_vecs(32, False, 1), st.lists(st.tuples(st.integers(0, 40), st.integers(-40, 40)),
                                        min_size=48, max_size=48))
def test_fns(masks, args):
    m = np.array(masks[0], np.uint32)
    base = np.array([b for b, _ in args], np.uint32)
    off = np.array([o for _, o in args], np.int32)
    got = B.fns(m, base, off)
    for i, (bb, oo) in enumerate(args):
        assert int(got[i]) == ref_fns(masks[0][i], bb, oo)


def ref_bmsk(a, b, mode):
    a1, b1 = a & 31, b & 31
    mask0 = (0xFFFFFFFF << a1) & 0xFFFFFFFF
    s = a1 + b1
    mask1 = (0xFFFFFFFF << s) & 0xFFFFFFFF if s < 64 else 0
    ov = s >= 32
    if mode == "clamp":
        if a >= 32:
            ov, mask0 = True, 0
        if b >= 32:
            ov = True
    if ov:
        mask1 = 0
    elif b1 == 0:
        mask1 = 0xFFFFFFFF
    return mask0 & ~mask1 & 0xFFFFFFFF


@S
@given(st.lists(st.tuples(st.integers(0, 70), st.integers(0, 70)), min_size=1, max_size=48),
       st.sampled_from(["clamp", "wrap"]))
def test_bmsk(args, mode):
    a = np.array([x for x, _ in args], np.uint32)
    b = np.array([y for _, y in args], np.uint32)
    got = B.bmsk(a, b, mode)
    assert [int(v) for v in got] == [ref_bmsk(x, y, mode) for x, y in args]
    assert int(B.bmsk(np.uint32(1), np.uint32(2), "wrap")) == 6


PRMT_TABLE = {  # written as d.b3 d.b2 d.b1 d.b0 in the ISA table
    "f4e": ["3210", "4321", "5432", "6543"], "b4e": ["5670", "6701", "7012", "0123"],
    "rc8": ["0000", "1111", "2222", "3333"], "ecl": ["3210", "3211", "3222", "3333"],
    "ecr": ["0000", "1110", "2210", "3210"], "rc16": ["1010", "3232", "1010", "3232"],
}


def ref_prmt(a, b, c, mode):
    byte = lambda k: ((b << 32 | a) >> (8 * k)) & 0xFF  # noqa: E731
    d = 0
    for i in range(4):
        if mode is None:
            nib = (c >> (4 * i)) & 0xF
            v = byte(nib & 7)
            if nib & 8:
                v = 0xFF if v & 0x80 else 0
        else:
            v = byte(int(PRMT_TABLE[mode][c & 3][3 - i]))
        d |= v << (8 * i)
    return d


@pytest.mark.parametrize("mode", [None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
@S
@given(int_vecs(32, False, 3))
def test_prmt(mode, v):
    xs, ys, cs = v
    got = B.prmt(np.array(xs, np.uint32), np.array(ys, np.uint32), np.array(cs, np.uint32), mode)
    assert [int(g) for g in got] == [ref_prmt(x, y, c, mode) for x, y, c in zip(xs, ys, cs)]


@S
@given(int_vecs(32, False, 3), st.sampled_from(["l", "r"]), st.sampled_from(["wrap", "clamp"]))
def test_shf_lop3_cnot(v, direction, mode):
    xs, ys, cs = v
    a, b, c = (np.array(t, np.uint32) for t in v)
    got = B.shf(a, b, c, direction, mode)
    for i, (x, y, z) in enumerate(zip(xs, ys, cs)):
        n = z & 31 if mode == "wrap" else min(z, 32)
        w = y << 32 | x
        want = ((w << n) >> 32) & 0xFFFFFFFF if direction == "l" else (w >> n) & 0xFFFFFFFF
        assert int(got[i]) == want
    lut = cs[0] & 0xFF
    lo = B.lop3(a, b, c, lut)
    for i, (x, y, z) in enumerate(zip(xs, ys, cs)):
        want = 0
        for k in range(32):
            idx = bit(x, k) << 2 | bit(y, k) << 1 | bit(z, k)
            want |= bit(lut, idx) << k
        assert int(lo[i]) == want
    assert B.cnot(a).tolist() == [int(x == 0) for x in xs]


@pytest.mark.parametrize("op", ["absdiff", "add", "sub", "min", "max", "avrg"])
@pytest.mark.parametrize("signed", [False, True])
@settings(max_examples=6, deadline=None)
@given(v=int_vecs(32, False, 3), sat=st.booleans(), secondary=st.sampled_from([None, "add"]))
def test_video_simd(op, signed, v, sat, secondary):
    xs, ys, cs = v
    for width in (8, 16):
        got = V.vop(op, width, np.array(xs, np.uint32), np.array(ys, np.uint32),
                    np.array(cs, np.uint32), signed, signed, sat, secondary)
        lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
        fn = {"absdiff": lambda p, q: abs(p - q), "add": lambda p, q: p + q,
              "sub": lambda p, q: p - q, "min": min, "max": max,
              "avrg": lambda p, q: (p + q + 1) >> 1}[op]
        for i, (x, y, c) in enumerate(zip(xs, ys, cs)):
            lanes = []
            for k in range(32 // width):
                r = fn(wrap(x >> (width * k), width, signed), wrap(y >> (width * k), width, signed))
                lanes.append(min(max(r, lo), hi) if sat else r)
            if secondary == "add":
                want = wrap(c, 32, signed) + sum(lanes)
                if sat:
                    want = min(max(want, -2**31), 2**31 - 1) if signed else min(max(want, 0), 2**32 - 1)
                want = wrap(want, 32, signed)
            else:
                want = wrap(sum((r & ((1 << width) - 1)) << (width * k)
                                for k, r in enumerate(lanes)), 32, signed)
            assert int(got[i]) == want
    assert int(V.vabsdiff4(np.uint32(0x01020304), np.uint32(0x04030201), np.uint32(10), "add")) == 18
