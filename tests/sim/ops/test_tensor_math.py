"""Properties of the tensor-core arithmetic model (sim/ops/tensor_math.py)
against an independent exact reference: Python Fractions for the sums and
a nearest-even rounding to f32/f16 done by comparing exact distances to the
neighbouring representable values (no numpy cast of the sum involved)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.sim.ops import tensor_math as TM


def _round(x: Fraction, dtype) -> float:
    """Nearest-even rounding of an exact value to dtype (float32/float16)."""
    with np.errstate(over="ignore"):
        guess = dtype(float(x))
    if not np.isfinite(guess):
        return float(guess)
    cands = {guess, np.nextafter(guess, dtype(np.inf)), np.nextafter(guess, dtype(-np.inf))}
    best = min(cands, key=lambda c: (abs(Fraction(float(c)) - x),
                                     int(np.array(c, dtype).view({4: np.uint32, 2: np.uint16}[np.dtype(dtype).itemsize])) & 1))
    return float(best)


def _ref(a, b, c, out_f16=False):
    M, K = a.shape
    N = b.shape[1]
    d = np.zeros((M, N))
    for i in range(M):
        for j in range(N):
            acc = float(np.float32(c[i, j]))
            for k in range(K):
                if not np.isfinite(acc):        # inf stays inf (or meets -inf: NaN)
                    acc = float(np.float32(acc + float(a[i, k]) * float(b[k, j])))
                    continue
                acc = _round(Fraction(acc) + Fraction(float(a[i, k])) * Fraction(float(b[k, j])), np.float32)
            d[i, j] = _round(Fraction(acc), np.float16) if out_f16 else acc
    return d


halfs = st.integers(0, 0xFFFF).map(lambda u: np.array(u, np.uint16).view(np.float16)).filter(
    lambda h: np.isfinite(h))


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from([(2, 16, 3), (4, 8, 2), (1, 32, 1)]), st.booleans())
def test_f16_products_accumulate_in_k_order_rounded_per_step(data, shape, out_f16):
    M, K, N = shape
    a = np.array(data.draw(st.lists(halfs, min_size=M * K, max_size=M * K)), np.float16).reshape(M, K)
    b = np.array(data.draw(st.lists(halfs, min_size=K * N, max_size=K * N)), np.float16).reshape(K, N)
    c = np.array(data.draw(st.lists(halfs, min_size=M * N, max_size=M * N)), np.float16).reshape(M, N)
    got = TM.multiply_accumulate(a[None].astype(np.float64), b[None].astype(np.float64),
                                 c[None].astype(np.float64), "f16", "f16" if out_f16 else "f32")[0]
    ref = _ref(a, b, c, out_f16)
    both_nan = np.isnan(got) & np.isnan(ref)
    assert np.array_equal(got[~both_nan], ref[~both_nan])


bf16s = st.tuples(st.integers(0, 1), st.integers(0, 254), st.integers(0, 127)).map(
    lambda f: f[0] << 15 | f[1] << 7 | f[2])                                   # finite bf16 bits


@settings(max_examples=80, deadline=None)
@given(st.lists(bf16s, min_size=24, max_size=24), st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=1))
def test_bf16_products_over_the_whole_exponent_range_round_once_per_step(bits, cbits):
    """bf16 spans f32's exponents: sums of wildly different magnitudes and
    subnormal products, where an f64 intermediate could round twice."""
    u = np.array(bits, np.uint16)
    vals = TM.decode(u, "bf16")
    a, b = vals[:12].reshape(1, 12), vals[12:].reshape(12, 1)
    c = TM.decode(np.array(cbits, np.uint32), "f32").reshape(1, 1)
    if not np.isfinite(c).all():
        c = np.zeros((1, 1))
    got = TM.multiply_accumulate(a[None], b[None], c[None], "bf16", "f32")[0]
    ref = _ref(a, b, c)
    assert np.array_equal(got, ref) or (np.isnan(got).all() and np.isnan(ref).all())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=64))
def test_tf32_decoding_ignores_the_low_13_bits(words):
    u = np.array(words, np.uint32)
    got = TM.decode(u, "tf32")
    assert np.array_equal(np.isnan(got), np.isnan(u.view(np.float32)))
    fin = ~np.isnan(got)
    assert np.array_equal(got[fin], (u & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)[fin])
    assert np.array_equal(TM.decode(u & np.uint32(0xFFFFE000), "tf32")[fin], got[fin])


@settings(max_examples=80, deadline=None)
@given(st.data(), st.sampled_from(["s8", "u8"]), st.sampled_from(["s8", "u8"]), st.booleans())
def test_integer_mma_is_exact_then_wrapped_or_saturated(data, ta, tb, sat):
    lo = {"s8": -128, "u8": 0}
    M, K, N = 2, 16, 3
    ints = lambda t, n: data.draw(st.lists(st.integers(lo[t], lo[t] + 255), min_size=n, max_size=n))
    a = np.array(ints(ta, M * K)).reshape(M, K)
    b = np.array(ints(tb, K * N)).reshape(K, N)
    c = np.array(data.draw(st.lists(st.integers(-2**31, 2**31 - 1), min_size=M * N, max_size=M * N))).reshape(M, N)
    got = TM.multiply_accumulate(a[None], b[None], c[None], ta, "s32", satfinite=sat)[0]
    for i in range(M):
        for j in range(N):
            exact = int(c[i, j]) + sum(int(a[i, k]) * int(b[k, j]) for k in range(K))
            want = max(-2**31, min(2**31 - 1, exact)) if sat else (exact + 2**31) % 2**32 - 2**31
            assert got[i, j] == want


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False, width=32), min_size=2 * 4 + 4 * 2 + 4, max_size=2 * 4 + 4 * 2 + 4))
def test_f64_mma_is_one_fma_per_k_step(vals):
    v = np.array(vals, np.float64)
    a, b, c = v[:8].reshape(2, 4), v[8:16].reshape(4, 2), v[16:20].reshape(2, 2)
    got = TM.multiply_accumulate(a[None], b[None], c[None], "f64", "f64")[0]
    for i in range(2):
        for j in range(2):
            acc = Fraction(c[i, j])
            for k in range(4):      # fma: the exact a*b + acc, rounded once to f64
                acc = Fraction(float(Fraction(a[i, k]) * Fraction(b[k, j]) + acc))
            assert got[i, j] == float(acc)


def test_encode_decode_round_trip():
    rs = np.random.RandomState(0)
    for elem, dt in (("f16", np.float16), ("f32", np.float32), ("f64", np.float64)):
        x = rs.standard_normal(100).astype(dt)
        assert np.array_equal(TM.decode(TM.encode(x.astype(np.float64), elem), elem), x.astype(np.float64))
    ints = rs.randint(-2**31, 2**31, 100)
    assert np.array_equal(TM.decode(TM.encode(ints, "s32"), "s32"), ints)
