"""DeviceArray views: numpy's basic indexing, reshape/ravel/T and writes
through views, checked against numpy views of the same data (the pure
geometry with many examples, the device copies with fewer)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpudbg
from gpudbg.api import views

shapes = st.lists(st.integers(0, 5), min_size=1, max_size=4).map(tuple)


@st.composite
def array_and_key(draw):
    shape = draw(shapes)
    key = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "int", "full", "none"] if n else ["slice", "full", "none"]))
        if kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            key.append(slice(draw(st.none() | st.integers(-n - 2, n + 2)), draw(st.none() | st.integers(-n - 2, n + 2)),
                             draw(st.sampled_from([None, 1, 2, 3, -1, -2, -3]))))
        elif kind == "none":
            key.append(None)
            key.append(slice(None))
        else:
            key.append(slice(None))
    if draw(st.booleans()) and key:
        key[draw(st.integers(0, len(key) - 1))] = Ellipsis
    return shape, tuple(key)


@settings(max_examples=400, deadline=None)
@given(array_and_key())
def test_index_geometry_is_numpys(case):
    shape, key = case
    host = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    try:
        expected = host[key]
    except IndexError:
        with pytest.raises(IndexError):
            views.index(shape, host.strides, key)
        return
    offset, vshape, vstrides = views.index(shape, host.strides, key)
    expected = np.asarray(expected)
    assert vshape == expected.shape
    if expected.size:   # arange: the first element's value is its index in the base
        assert offset == int(expected.flat[0]) * host.itemsize
        assert all(s == e for s, e, d in zip(vstrides, expected.strides, vshape) if d > 1)


@settings(max_examples=25, deadline=None)
@given(array_and_key())
def test_device_view_reads_what_numpy_sees(case):
    shape, key = case
    host = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    try:
        expected = host[key]
    except IndexError:
        return
    d = gpudbg.to_device(host)
    np.testing.assert_array_equal(d[key].to_host(), expected)
    np.testing.assert_array_equal(d[key].copy().to_host(), expected)


def test_negative_steps_integer_indexing_and_writes_through_views():
    host = np.arange(60, dtype=np.int64).reshape(3, 4, 5)
    d = gpudbg.to_device(host)
    np.testing.assert_array_equal(d[::-1, 1, ::-2].to_host(), host[::-1, 1, ::-2])
    assert d[2, 3, 4].item() == 59 and d[2, 3, 4].shape == ()
    d[1, :, 1:4:2] = -7
    host[1, :, 1:4:2] = -7
    d[0, ::-1] = np.arange(5)             # host data broadcast over the view's rows
    host[0, ::-1] = np.arange(5)
    d[2, 1:3] = d[0, 0:2]                 # another device view
    host[2, 1:3] = host[0, 0:2]
    np.testing.assert_array_equal(d.to_host(), host)


def test_overlapping_assignment_is_buffered_as_numpy_does():
    host = np.arange(10, dtype=np.float64)
    d = gpudbg.to_device(host)
    d[1:] = d[:-1]
    host[1:] = host[:-1].copy()
    np.testing.assert_array_equal(d.to_host(), host)
    d[1:] += d[:-1]
    host[1:] += host[:-1].copy()
    np.testing.assert_array_equal(d.to_host(), host)


def test_reshape_ravel_transpose():
    host = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    d = gpudbg.to_device(host)
    np.testing.assert_array_equal(d.reshape(4, -1).to_host(), host.reshape(4, -1))
    np.testing.assert_array_equal(d.reshape((6, 4)).to_host(), host.reshape(6, 4))
    np.testing.assert_array_equal(d.T.to_host(), host.T)
    np.testing.assert_array_equal(d.transpose(1, 0, 2).to_host(), host.transpose(1, 0, 2))
    np.testing.assert_array_equal(d.T.ravel().to_host(), host.T.ravel())
    assert d.ravel().ptr == d.ptr                     # contiguous: a view, no copy
    with pytest.raises(ValueError, match="non-contiguous"):
        d.T.reshape(-1)
    with pytest.raises(ValueError, match="cannot reshape array of size 24 into shape"):
        d.reshape(5, 5)


def test_bad_indices_say_what_is_wrong():
    d = gpudbg.zeros((3, 4), np.float32)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        d[3]
    with pytest.raises(IndexError, match="too many indices"):
        d[1, 2, 3]
    with pytest.raises(IndexError, match="advanced indexing"):
        d[[0, 1]]
    with pytest.raises(IndexError, match="single ellipsis"):
        d[..., ...]


def test_views_keep_their_base_alive_and_refuse_freeing():
    d = gpudbg.to_device(np.arange(8, dtype=np.float32))
    v = d[2:6]
    with pytest.raises(ValueError, match="view"):
        v.free()
    d.free()
    with pytest.raises(ValueError, match="freed"):
        v.to_host()


@settings(max_examples=25, deadline=None)
@given(array_and_key(), st.sampled_from(["scalar", "host", "device"]))
def test_writes_through_views_match_numpy_assignment(case, source):
    shape, key = case
    host = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    try:
        target_shape = host[key].shape
    except IndexError:
        return
    value = (np.int32(-5) if source == "scalar"
             else -np.arange(int(np.prod(target_shape)), dtype=np.int32).reshape(target_shape) - 1)
    d = gpudbg.to_device(host)
    d[key] = gpudbg.to_device(value) if source == "device" else value
    host[key] = value
    np.testing.assert_array_equal(d.to_host(), host)
