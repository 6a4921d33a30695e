"""DLPack and the CUDA Array Interface without numba: real capsules read by
a C consumer (cuda.core's StridedMemoryView) and by numpy (which refuses
CUDA memory, as it must), capsules from numpy read by gpudbg, deleters
called exactly once, and the checks on wrapped pointers."""
from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest

import gpudbg
from gpudbg.api import dlpack


class HostProducer:
    """A CPU DLPack producer that is not a numpy array (numpy makes its capsules)."""

    def __init__(self, array: np.ndarray):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class CAIProducer:
    """A foreign CUDA Array Interface producer over gpudbg memory."""

    def __init__(self, ptr, shape, typestr, strides=None, stream=None, readonly=False):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, readonly),
                                         "strides": strides, "version": 3, "stream": stream}


def test_round_trip_with_numpy_through_dlpack():
    host = np.arange(24, dtype=np.int32).reshape(4, 6)[:, ::2]     # numpy exports strided capsules too
    d = gpudbg.to_device(HostProducer(host))                         # numpy's capsule, copied to the device
    np.testing.assert_array_equal(d.to_host(), host)
    back = np.from_dlpack(HostProducer(d.to_host()))                 # the host copy, numpy's own exchange
    np.testing.assert_array_equal(back, host)
    assert d.__dlpack_device__() == (2, 0)                            # kDLCUDA, device ordinal
    with pytest.raises(RuntimeError, match="Unsupported device"):    # device memory is not faked as CPU
        np.from_dlpack(d)
    gc.collect()
    assert dlpack.exported_count() == 0                              # the refused capsule was released


def test_cuda_core_reads_the_capsule_structs():
    smv = pytest.importorskip("cuda.core.utils").StridedMemoryView
    d = gpudbg.to_device(np.arange(40, dtype=np.float64).reshape(5, 8))
    view = d[1::2, ::-3]
    v = smv.from_dlpack(view, stream_ptr=-1)
    assert v.ptr == view.ptr and v.shape == view.shape and v.device_id == 0 and v.is_device_accessible
    assert tuple(v.strides) == tuple(s // 8 for s in view.strides) and v.dtype == np.float64
    assert v.exporting_obj is view
    del v
    gc.collect()
    assert dlpack.exported_count() == 0


def test_gpudbg_consumes_capsules_zero_copy_with_one_deleter_call():
    d = gpudbg.to_device(np.arange(10, dtype=np.uint16))
    for version in (None, (1, 0)):
        cap = d.__dlpack__(max_version=version)
        assert ctypes.pythonapi.PyCapsule_IsValid(ctypes.c_void_p(id(cap)),
                                                  b"dltensor_versioned" if version else b"dltensor")
        del cap
        assert dlpack.exported_count() == 0                         # an unconsumed capsule's destructor
    w = gpudbg.from_dlpack(d[::-1])
    assert w.ptr == d.ptr + 18 and w.strides == (-2,)
    assert dlpack.exported_count() == 1
    w[0] = 500                                                        # writes reach the producer's memory
    assert d[9].item() == 500
    del w
    gc.collect()
    assert dlpack.exported_count() == 0                               # the deleter ran once


def test_dlpack_refuses_what_it_cannot_describe():
    d = gpudbg.zeros(4, np.float32)
    with pytest.raises(BufferError, match="kDLCUDA"):
        d.__dlpack__(dl_device=(1, 0))
    with pytest.raises(ValueError, match="stream=0"):
        d.__dlpack__(stream=0)
    with pytest.raises(BufferError, match="strides"):
        gpudbg.DeviceArray(d.ptr, (2,), np.float32, owner=False, strides=(6,)).__dlpack__()
    with pytest.raises(BufferError, match="not CUDA memory"):
        gpudbg.from_dlpack(HostProducer(np.ones(3)))


def test_cai_export_is_v3_with_strides_and_stream():
    d = gpudbg.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    cai = d.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (3, 4) and cai["typestr"] == "<f4"
    assert cai["data"] == (d.ptr, False) and cai["strides"] is None and cai["stream"] == 1
    t = d.T.__cuda_array_interface__
    assert t["strides"] == (4, 16) and t["data"][0] == d.ptr
    s = gpudbg.Stream()
    e = gpudbg.to_device(np.ones(3), stream=s)
    handle = e.__cuda_array_interface__["stream"]
    from gpudbg import cabi
    assert cabi.handles.lookup("CUstream", handle) is s.handle       # the driver API's CUstream for it


def test_cai_import_wraps_checks_and_syncs():
    d = gpudbg.to_device(np.arange(16, dtype=np.int32))
    w = gpudbg.asarray(CAIProducer(d.ptr + 8, (3,), "<i4", strides=(12,), stream=1))
    np.testing.assert_array_equal(w.to_host(), [2, 5, 8])
    copy = gpudbg.to_device(CAIProducer(d.ptr, (4,), "<i4"), dtype=np.float64)
    np.testing.assert_array_equal(copy.to_host(), [0.0, 1.0, 2.0, 3.0])
    ro = gpudbg.asarray(CAIProducer(d.ptr, (4,), "<i4", readonly=True))
    with pytest.raises(ValueError, match="read-only"):
        ro[0] = 1
    with pytest.raises(ValueError, match="outside its allocation"):
        gpudbg.asarray(CAIProducer(d.ptr, (17,), "<i4"))
    with pytest.raises(ValueError, match="not memory of gpudbg's simulated device"):
        gpudbg.asarray(CAIProducer(0x1000, (4,), "<i4"))
    with pytest.raises(ValueError, match="stream 0 is disallowed"):
        gpudbg.asarray(CAIProducer(d.ptr, (4,), "<i4", stream=0))
    with pytest.raises(TypeError, match="not device memory"):
        gpudbg.asarray(np.ones(3))


def test_foreign_arrays_as_kernel_arguments():
    mod = gpudbg.compile(r'''
    extern "C" __global__ void inc(int n, int *x) { int i = threadIdx.x; if (i < n) x[i] += 1; }''')
    d = gpudbg.to_device(np.zeros(4, np.int32))
    mod.inc[1, 4](4, CAIProducer(d.ptr, (4,), "<i4"))
    mod.inc[1, 4](4, HostDLPackOnDevice(d))
    np.testing.assert_array_equal(d.to_host(), [2, 2, 2, 2])


class HostDLPackOnDevice:
    """A DLPack-only CUDA producer (no CAI), like a torch tensor."""

    def __init__(self, d):
        self.d = d

    def __dlpack__(self, **kwargs):
        return self.d.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.d.__dlpack_device__()


# ---------------------------------------------------------------- properties of the encoders/decoders
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

DTYPES = st.sampled_from([np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.float32, np.float64])


@st.composite
def strided_view(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5))
    key = tuple(slice(draw(st.integers(0, 1)), None, draw(st.sampled_from([1, 2, -1, -2]))) for _ in shape)
    return draw(DTYPES), shape, key


@settings(max_examples=40, deadline=None)
@given(strided_view(), st.sampled_from([None, (1, 0)]))
def test_dlpack_export_then_import_keeps_the_geometry(case, version):
    dtype, shape, key = case
    host = np.arange(int(np.prod(shape)), dtype=np.int64).astype(dtype).reshape(shape)
    view = gpudbg.to_device(host)[key]

    class Versioned:
        def __dlpack__(self, **kw):
            return view.__dlpack__(**{**kw, "max_version": version})

        def __dlpack_device__(self):
            return view.__dlpack_device__()
    back = gpudbg.from_dlpack(Versioned())
    if view.size:
        assert (back.ptr, back.shape, back.strides, back.dtype) == (view.ptr, view.shape, view.strides, view.dtype)
        np.testing.assert_array_equal(back.to_host(), host[key])
    del back                                      # no cycles: the deleter runs here, without gc
    assert dlpack.exported_count() == 0


@settings(max_examples=60, deadline=None)
@given(strided_view())
def test_numpys_capsules_decode_to_numpys_geometry(case):
    dtype, shape, key = case
    host = np.asarray(np.arange(int(np.prod(shape)), dtype=np.int64).astype(dtype).reshape(shape)[key])
    ptr, dshape, strides, dt, device, readonly, owner = dlpack.consume(host, None)
    assert device == (int(dlpack.DLDeviceType.kDLCPU), 0) and dt == host.dtype and dshape == host.shape
    if host.size:
        assert ptr == host.__array_interface__["data"][0]
        assert all(s == e for s, e, n in zip(strides, host.strides, dshape) if n > 1)
    del owner                                     # numpy's deleter runs here


@settings(max_examples=40, deadline=None)
@given(strided_view())
def test_cai_export_then_import_keeps_the_geometry(case):
    dtype, shape, key = case
    host = np.arange(int(np.prod(shape)), dtype=np.int64).astype(dtype).reshape(shape)
    view = gpudbg.to_device(host)[key]
    cai = dict(view.__cuda_array_interface__)

    class Foreign:
        __cuda_array_interface__ = cai
    back = gpudbg.asarray(Foreign())
    if view.size:
        assert (back.ptr, back.shape, back.dtype) == (view.ptr, view.shape, view.dtype)
        assert all(s == e for s, e, n in zip(back.strides, view.strides, view.shape) if n > 1)
        np.testing.assert_array_equal(back.to_host(), host[key])
