"""sum/min/max of DeviceArrays run as kernels and agree with numpy over
shapes, dtypes, axes (None, int, tuple, negative), keepdims and strided
views; integers exactly, float sums to rounding (tree order vs numpy's
pairwise order), NaN propagation and empty-input errors as numpy's."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gpudbg

DTYPES = [np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.int64, np.float16, np.float32, np.float64]


def _check(op: str, got: np.ndarray, want: np.ndarray, n: int) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if op == "sum" and want.dtype.kind == "f":
        eps = np.finfo(want.dtype).eps
        np.testing.assert_allclose(got, want, rtol=4 * eps * max(np.log2(max(n, 2)), 1), atol=eps * n * 1e3)
    else:
        np.testing.assert_array_equal(got, want)


@st.composite
def reduction_case(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=7))
    dtype = draw(st.sampled_from(DTYPES))
    elems = st.floats(-100, 100, width=np.dtype(dtype).itemsize * 8) if np.dtype(dtype).kind == "f" else None
    host = draw(hnp.arrays(dtype, shape, elements=elems))
    axis = draw(st.none() | st.integers(-len(shape), len(shape) - 1) |
                st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True).map(tuple))
    return host, axis, draw(st.booleans()), draw(st.sampled_from(["sum", "min", "max"]))


@settings(max_examples=50, deadline=None)
@given(reduction_case())
def test_reductions_match_numpy(case):
    host, axis, keepdims, op = case
    want = np.asarray(getattr(np, op)(host, axis=axis, keepdims=keepdims))
    got = getattr(gpudbg.to_device(host), op)(axis=axis, keepdims=keepdims).to_host()
    _check(op, got, want, host.size)


@settings(max_examples=15, deadline=None)
@given(reduction_case(), st.sampled_from([(slice(None, None, -1),), (slice(1, None, 2),), (Ellipsis, slice(None, None, -2))]))
def test_reductions_of_strided_views(case, key):
    host, axis, keepdims, op = case
    view = host[key]
    if view.size == 0:
        return
    axis = None if axis is None else tuple(a % view.ndim for a in np.atleast_1d(axis))
    want = np.asarray(getattr(np, op)(view, axis=axis, keepdims=keepdims))
    got = getattr(gpudbg.to_device(host)[key], op)(axis=axis, keepdims=keepdims).to_host()
    _check(op, got, want, view.size)


def test_large_reduction_uses_partial_blocks_and_stays_exact_for_integers():
    host = np.arange(300_000, dtype=np.int32) % 1000 - 500
    d = gpudbg.to_device(host)
    assert d.sum().item() == host.sum()
    assert d.min().item() == host.min() and d.max().item() == host.max()
    f = gpudbg.to_device(np.linspace(0, 1, 100_001, dtype=np.float32))
    assert abs(f.sum().item() - np.float64(np.linspace(0, 1, 100_001, dtype=np.float32).astype(np.float64).sum())) < 0.05
    two = gpudbg.to_device(host.reshape(3, -1))
    np.testing.assert_array_equal(two.sum(axis=1).to_host(), host.reshape(3, -1).sum(axis=1))


def test_nan_propagates_and_empty_input_is_refused_as_numpy_does():
    d = gpudbg.to_device(np.array([1.0, np.nan, -3.0], dtype=np.float32))
    assert np.isnan(d.min().item()) and np.isnan(d.max().item()) and np.isnan(d.sum().item())
    empty = gpudbg.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(empty.sum(axis=0).to_host(), np.zeros(3, np.float32))
    assert empty.sum().item() == 0.0
    with pytest.raises(ValueError, match="zero-size array to reduction operation minimum"):
        empty.min()
    with pytest.raises(np.exceptions.AxisError):
        d.sum(axis=1)
    with pytest.raises(ValueError, match="duplicate"):
        gpudbg.zeros((2, 2)).sum(axis=(0, -2))


def test_result_is_a_0d_device_array_usable_as_a_python_number():
    d = gpudbg.to_device(np.arange(10, dtype=np.int16))
    s = d.sum()
    assert isinstance(s, gpudbg.DeviceArray) and s.shape == () and s.dtype == np.int64
    assert int(s) == 45 and float(d.max()) == 9.0 and s.item() == 45
    with pytest.raises(ValueError, match="size 1"):
        d.item()
