"""The package contract: warnings never escape, scalars broadcast, dtypes are kept,
bad modes raise ArithError."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import gpudbg.sim.arith as A
from gpudbg.sim.arith import bits as B, floating as FL, integer as I

SPECIAL32 = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3.4e38, -3.4e38, 1.0],
                     np.float32)
SPECIAL64 = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1e-310, 1.7e308, -1.7e308, 1.0])


def _all_calls():
    ints32 = np.array([0, -1, -2**31, 2**31 - 1, 5, 7, -7, 1, 2, 3], np.int32)
    ints64 = ints32.astype(np.int64) * (2**32 + 1)
    for dt_ints in (ints32, ints64):
        for name in ("lo", "hi"):
            yield lambda: I.mul(dt_ints, dt_ints[::-1], name)
        yield lambda: I.div(dt_ints, dt_ints[::-1])
        yield lambda: I.rem(dt_ints, np.zeros_like(dt_ints))
        yield lambda: I.add_cc(dt_ints, dt_ints)
        yield lambda: B.shl(dt_ints, np.uint32(99))
        yield lambda: B.bfind(dt_ints)
    for s in (SPECIAL32, SPECIAL64):
        r = s[::-1].copy()
        for mode in ("rn", "rz", "rm", "rp"):
            yield lambda: FL.add(s, r, mode)
            yield lambda: FL.mul(s, r, mode)
            yield lambda: FL.div(s, r, mode)
            yield lambda: FL.fma(s, r, s, mode)
            yield lambda: FL.sqrt(s, mode)
            yield lambda: FL.rcp(s, mode)
            yield lambda: A.cvt(s, "s32", "f32" if s.dtype == np.float32 else "f64", "rni")
            yield lambda: A.cvt(s, "f16", "f32" if s.dtype == np.float32 else "f64", mode)
            yield lambda: A.cvt(s, "bf16", "f32" if s.dtype == np.float32 else "f64", mode)
        yield lambda: FL.min(s, r)
        yield lambda: FL.rsqrt(s)
    yield lambda: FL.div(SPECIAL32, SPECIAL32[::-1], "approx")
    for f in (FL.ex2, FL.lg2, FL.sin, FL.cos, FL.tanh):
        yield lambda: f(SPECIAL32)
    yield lambda: A.half_fma(np.uint16(0x7F7F), np.uint16(0x7F7F), np.uint16(0xFF80), "bf16", "rz")
    yield lambda: A.cvt(np.uint64(2**64 - 1), "f16", "u64", "rp")


def test_no_warning_escapes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for call in _all_calls():
            call()


def test_numpy_scalars_broadcast_and_dtypes_kept():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    r = FL.add(x, np.float32(0.5), "rz")
    assert r.dtype == np.float32 and r.tolist() == [1.5, 2.5, 3.5]
    assert FL.fma(x, np.float32(2), np.float32(1)).tolist() == [3.0, 5.0, 7.0]
    assert I.mad(np.array([1, 2], np.int32), np.int32(3), np.int32(1)).tolist() == [4, 7]
    assert B.shl(np.array([1, 1], np.uint64), np.uint32(63)).dtype == np.uint64
    assert A.cvt(np.int32(7), "f32", "s32").dtype == np.float32
    assert A.cvt(np.float32(1.0), "bf16", "f32").dtype == np.uint16
    assert A.half_add(np.uint32(0x3C003C00), np.uint32(0x3C003C00), "f16x2").dtype == np.uint32


def test_bad_arguments_raise_arith_error():
    x = np.array([1.0], np.float32)
    for call in (lambda: FL.add(x, x, "rnd"), lambda: FL.add(x.astype(np.float64), x, ftz=True),
                 lambda: FL.div(x, x, "nearest"), lambda: B.prmt(1, 2, 3, "xyz"),
                 lambda: I.mul24(np.int64(1), np.int64(1)), lambda: A.cvt(x, "f32", "q32"),
                 lambda: A.half_add(x, x, "f32"), lambda: A.compare.compare(x, x, "lo", "f32"),
                 lambda: I.add_cc(np.int16(1), np.int16(1)), lambda: FL.add(np.int32(1), np.int32(1))):
        with pytest.raises(A.ArithError):
            call()
