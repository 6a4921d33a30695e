"""Elementwise arithmetic and comparisons on DeviceArrays run as kernels and
agree with numpy (float16 is computed in float32 and rounded, as numpy does): result dtype (promotion, NEP 50 weak Python scalars),
broadcasting, integer wrap-around and division by zero, floored division
and modulo of negative and float operands. Property tests draw shapes,
dtypes, operators and operands; the exact ops must match numpy bit for bit."""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gpudbg

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32,
          np.float64]
EXACT = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
         "//": operator.floordiv, "%": operator.mod, "<": operator.lt, "<=": operator.le,
         ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}


def _numpy(op, a, b):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return op(a, b)


def _same(got: np.ndarray, want: np.ndarray) -> None:
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@st.composite
def broadcast_pair(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    other = list(shape)
    for i in range(len(other)):
        if draw(st.booleans()):
            other[i] = 1
    cut = draw(st.integers(0, len(other)))
    return shape, tuple(other[cut:])


def _values(draw, dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        elems = st.floats(-1e3, 1e3, width=dt.itemsize * 8) | st.sampled_from([0.0, -0.0, 0.5, -2.5])
    else:
        elems = None
    return draw(hnp.arrays(dt, shape, elements=elems))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_binary_ops_match_numpy(data):
    shape_a, shape_b = data.draw(broadcast_pair())
    if data.draw(st.booleans()):
        shape_a, shape_b = shape_b, shape_a
    da, db = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    sym = data.draw(st.sampled_from(sorted(EXACT)))
    op = EXACT[sym]
    a, b = _values(data.draw, da, shape_a), _values(data.draw, db, shape_b)
    try:
        want = _numpy(op, a, b)
    except TypeError:
        with pytest.raises(TypeError):
            op(gpudbg.to_device(a), gpudbg.to_device(b))
        return
    _same(op(gpudbg.to_device(a), gpudbg.to_device(b)).to_host(), want)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_scalar_operands_follow_nep50(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, max_side=5))
    a = _values(data.draw, dtype, shape)
    scalar = data.draw(st.sampled_from([0, 1, 3, -2, 2.5, -0.5, True, np.int16(7), np.float32(1.5),
                                        np.float64(-3.0), np.uint8(200)]))
    sym = data.draw(st.sampled_from(sorted(EXACT)))
    op = EXACT[sym]
    reflected = data.draw(st.booleans())
    try:
        want = _numpy(op, scalar, a) if reflected else _numpy(op, a, scalar)
    except (TypeError, OverflowError) as e:
        with pytest.raises(type(e)):
            d = gpudbg.to_device(a)
            op(scalar, d) if reflected else op(d, scalar)
        return
    d = gpudbg.to_device(a)
    got = op(scalar, d) if reflected else op(d, scalar)
    _same(got.to_host(), np.asarray(want))


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32, np.float64]), st.data())
def test_power_matches_numpy(dtype, data):
    a = data.draw(hnp.arrays(dtype, 6, elements=st.integers(-3, 3) if np.dtype(dtype).kind == "i"
                             else st.integers(0, 3) if np.dtype(dtype).kind == "u" else st.floats(0.25, 4)))
    b = data.draw(hnp.arrays(dtype, 6, elements=st.integers(0, 5) if np.dtype(dtype).kind in "iu"
                             else st.floats(-2, 2)))
    got = (gpudbg.to_device(a) ** gpudbg.to_device(b)).to_host()
    want = _numpy(operator.pow, a, b)
    assert got.dtype == want.dtype
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(want.dtype).eps)
    else:
        np.testing.assert_array_equal(got, want)


def test_integer_corner_cases_are_numpys():
    a = np.array([7, -7, 7, -7, -128, 0, 5], dtype=np.int8)
    b = np.array([2, 2, -2, -2, -1, 0, 0], dtype=np.int8)
    d, e = gpudbg.to_device(a), gpudbg.to_device(b)
    for op in (operator.floordiv, operator.mod, operator.add, operator.mul, operator.sub):
        _same(op(d, e).to_host(), _numpy(op, a, b))
    _same((-d).to_host(), _numpy(lambda x, _: -x, a, None))
    _same(abs(d).to_host(), _numpy(lambda x, _: abs(x), a, None))
    u = gpudbg.to_device(np.array([0, 1, 255], dtype=np.uint8))
    _same((-u).to_host(), -np.array([0, 1, 255], dtype=np.uint8))


def test_float_floor_division_and_modulo_of_signed_zeros_and_infinities():
    a = np.array([5.5, -5.5, 5.5, -5.5, 0.0, -0.0, 1.0, np.inf, 3.0], dtype=np.float64)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 2.0, np.inf])
    d, e = gpudbg.to_device(a), gpudbg.to_device(b)
    for op in (operator.floordiv, operator.mod):
        got, want = op(d, e).to_host(), _numpy(op, a, b)
        np.testing.assert_array_equal(got, want)
        real = ~np.isnan(want)      # a NaN's sign is the platform's (x86 makes negative ones)
        np.testing.assert_array_equal(np.signbit(got[real]), np.signbit(want[real]))


def test_in_place_ops_cast_as_numpy_allows():
    host = np.arange(6, dtype=np.float32)
    d = gpudbg.to_device(host)
    d += 1
    d *= gpudbg.to_device(np.full(6, 2, np.float32))
    d[::2] -= 0.5
    host += 1
    host *= 2
    host[::2] -= 0.5
    np.testing.assert_array_equal(d.to_host(), host)
    i = gpudbg.to_device(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="same_kind"):
        i += 1.5
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        i ** gpudbg.to_device(np.array([1, -1, 2], np.int32))


def test_mixed_sign_64_bit_comparison_is_by_value():
    a = np.array([-1, 0, 5], dtype=np.int64)
    b = np.array([2**64 - 1, 0, 3], dtype=np.uint64)
    for op in (operator.lt, operator.eq, operator.ge):
        _same(op(gpudbg.to_device(a), gpudbg.to_device(b)).to_host(), op(a, b))


def test_astype_and_unsupported_operands():
    d = gpudbg.to_device(np.array([1.7, -1.2, 3.0]))
    _same(d.astype(np.int32).to_host(), np.array([1.7, -1.2, 3.0]).astype(np.int32))
    with pytest.raises(TypeError, match="unsupported operand"):
        d + "x"
    with pytest.raises(TypeError, match="complex64"):
        gpudbg.to_device(np.ones(2, np.complex64)) + 1
    with pytest.raises(ValueError, match="broadcast"):
        d + gpudbg.to_device(np.ones(2))
