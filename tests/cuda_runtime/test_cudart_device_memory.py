"""Devices, properties, attributes and memory through the C ABI."""
import ctypes
import struct

import numpy as np
import pytest

from gpudbg.cuda_runtime import exports as rt
from gpudbg.cuda_runtime.device import cudaDeviceProp
from gpudbg.cuda_runtime.memory import cudaPointerAttributes
from rt_helpers import addr, check, malloc, out_u64

H2D, D2H = 1, 2


def test_device_prop_layout_is_cuda_13s():
    # offsets from gcc on CUDA 13.0's driver_types.h (offsetof(struct cudaDeviceProp, f))
    assert ctypes.sizeof(cudaDeviceProp) == 1008
    for field, offset in {"totalGlobalMem": 288, "maxThreadsDim": 324, "maxTexture2DLinear": 420,
                          "surfaceAlignment": 552, "sharedMemPerMultiprocessor": 624,
                          "sharedMemPerBlockOptin": 672, "reservedSharedMemPerBlock": 696,
                          "gpuPciDeviceID": 772, "hostNumaMultinodeIpcSupported": 780, "reserved": 784}.items():
        assert getattr(cudaDeviceProp, field).offset == offset, field
    assert ctypes.sizeof(cudaPointerAttributes) == 88


def test_properties_and_attributes_agree(fresh):
    n = ctypes.c_int(0)
    check(rt.cudaGetDeviceCount(addr(n)))
    assert n.value == 2
    prop = cudaDeviceProp()
    check(rt.cudaGetDeviceProperties(addr(prop), 1))
    assert prop.name and prop.major >= 7 and prop.multiProcessorCount > 0 and prop.warpSize == 32
    value = ctypes.c_int(0)
    for attr, field in ((1, "maxThreadsPerBlock"), (16, "multiProcessorCount"), (75, "major"),
                        (21, "maxTexture1D"), (30, "surfaceAlignment"), (115, "memoryPoolsSupported")):
        check(rt.cudaDeviceGetAttribute(addr(value), attr, 1))
        assert value.value == getattr(prop, field), field
    check(rt.cudaDeviceGetAttribute(addr(value), 2, 0))
    assert value.value == prop.maxThreadsDim[0]
    assert rt.cudaDeviceGetAttribute(addr(value), 1, 5) == 101          # invalid device
    assert rt.cudaDeviceGetAttribute(addr(value), 100000, 0) == 1       # invalid attribute
    assert rt.cudaGetDeviceProperties(addr(prop), 2) == 101


def test_every_header_attribute_answers(fresh):
    rtb = pytest.importorskip("cuda.bindings.runtime")
    value = ctypes.c_int(0)
    for attr in rtb.cudaDeviceAttr:
        if 0 < int(attr) < 144:
            assert rt.cudaDeviceGetAttribute(addr(value), int(attr), 0) == 0, attr.name


def test_versions_device_selection_and_limits(fresh):
    v, d = ctypes.c_int(0), ctypes.c_int(-1)
    check(rt.cudaRuntimeGetVersion(addr(v)))
    assert v.value >= 13000
    check(rt.cudaDriverGetVersion(addr(v)))
    assert v.value >= 13000
    check(rt.cudaSetDevice(1))
    check(rt.cudaGetDevice(addr(d)))
    assert d.value == 1
    assert rt.cudaSetDevice(7) == 101 and rt.cudaGetLastError() == 101
    size = out_u64()
    check(rt.cudaDeviceSetLimit(0, 4096))
    check(rt.cudaDeviceGetLimit(addr(size), 0))
    assert size.value == 4096
    least, greatest = ctypes.c_int(9), ctypes.c_int(9)
    check(rt.cudaDeviceGetStreamPriorityRange(addr(least), addr(greatest)))
    assert greatest.value <= least.value
    bus = ctypes.create_string_buffer(32)
    check(rt.cudaDeviceGetPCIBusId(addr(bus), 32, 0))
    assert bus.value.count(b":") == 2
    want = cudaDeviceProp()
    want.major = 8
    check(rt.cudaChooseDevice(addr(d), addr(want)))
    assert d.value in (0, 1)
    check(rt.cudaDeviceSynchronize())


def test_pageable_pinned_managed_and_pitched(fresh):
    a = np.arange(256, dtype=np.uint32)
    d = malloc(a.nbytes)
    check(rt.cudaMemcpy(d, a.ctypes.data, a.nbytes, H2D))
    managed = out_u64()
    check(rt.cudaMallocManaged(addr(managed), a.nbytes, 1))
    check(rt.cudaMemcpy(managed.value, d, a.nbytes, 4))                 # cudaMemcpyDefault
    check(rt.cudaDeviceSynchronize())
    np.testing.assert_array_equal(np.ctypeslib.as_array((ctypes.c_uint32 * 256).from_address(managed.value)), a)
    attrs = cudaPointerAttributes()
    for ptr, kind in ((d, 2), (managed.value, 3), (a.ctypes.data, 0)):
        check(rt.cudaPointerGetAttributes(addr(attrs), ptr))
        assert attrs.type == kind
    assert attrs.device == -2 and attrs.hostPointer == a.ctypes.data
    ptr, pitch = out_u64(), out_u64()
    check(rt.cudaMallocPitch(addr(ptr), addr(pitch), 100, 4))
    assert pitch.value >= 100
    host = np.arange(400, dtype=np.uint8).reshape(4, 100)
    check(rt.cudaMemcpy2D(ptr.value, pitch.value, host.ctypes.data, 100, 100, 4, H2D))
    check(rt.cudaMemset2D(ptr.value, pitch.value, 0xAB, 10, 4))
    back = np.zeros((4, 100), np.uint8)
    check(rt.cudaMemcpy2D(back.ctypes.data, 100, ptr.value, pitch.value, 100, 4, D2H))
    expect = host.copy()
    expect[:, :10] = 0xAB
    np.testing.assert_array_equal(back, expect)
    free, total = out_u64(), out_u64()
    check(rt.cudaMemGetInfo(addr(free), addr(total)))
    assert 0 < free.value <= total.value
    assert rt.cudaFree(d + 4) == 1 and rt.cudaGetLastError() == 1


def test_host_register_and_device_pointer(fresh):
    buf = (ctypes.c_uint8 * 8192)()
    check(rt.cudaHostRegister(addr(buf), 8192, 0))
    dev, flags = out_u64(), ctypes.c_uint(7)
    check(rt.cudaHostGetDevicePointer(addr(dev), addr(buf), 0))
    check(rt.cudaHostGetFlags(addr(flags), addr(buf)))
    assert dev.value and flags.value == 0
    check(rt.cudaMemset(dev.value, 5, 100))
    check(rt.cudaDeviceSynchronize())
    assert bytes(buf[:100]) == b"\x05" * 100
    check(rt.cudaHostUnregister(addr(buf)))
    assert rt.cudaHostUnregister(addr(buf)) == 713


def test_memcpy_3d_and_memset_3d(fresh):
    pp = (ctypes.c_uint64 * 4)()
    check(rt.cudaMalloc3D(addr(pp), struct.pack("<3Q", 64, 4, 3)))
    ptr, pitch = pp[0], pp[1]
    check(rt.cudaMemset3D(bytes(pp), 9, struct.pack("<3Q", 64, 4, 3)))
    host = np.zeros((3, 4, 64), np.uint8)
    parms = struct.pack("<Q3Q4QQ3Q4Q3Qi4x", 0, 0, 0, 0, ptr, pitch, 64, 4,
                        0, 0, 0, 0, host.ctypes.data, 64, 64, 4, 64, 4, 3, D2H)
    p = ctypes.create_string_buffer(parms, len(parms))
    check(rt.cudaMemcpy3D(addr(p)))
    assert (host == 9).all()
