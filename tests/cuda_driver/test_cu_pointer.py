import ctypes

import numpy as np
import pytest

from cudrv_helpers import check, out_i32, out_u32, out_u64
from gpudbg.cuda_driver import context as C
from gpudbg.cuda_driver import memory as M
from gpudbg.cuda_driver.pointer import CUpointer_attribute as P
from gpudbg.cuda_driver.pointer import cuPointerGetAttribute, cuPointerGetAttributes, cuPointerSetAttribute


def get(attr: int, ptr: int, out=None):
    out = out or out_u64()
    r = cuPointerGetAttribute(out.addr, attr, ptr)
    return r, out.value


def test_device_memory(ctx):
    p = out_u64()
    check(M.cuMemAlloc_v2(p.addr, 1000))
    inner = p.value + 100
    assert get(P.CONTEXT, inner) == (0, ctx)
    assert get(P.MEMORY_TYPE, inner, out_u32()) == (0, 2)
    assert get(P.DEVICE_POINTER, inner) == (0, inner)
    assert get(P.HOST_POINTER, inner)[0] == 1          # not host-accessible
    assert get(P.IS_MANAGED, inner, out_i32()) == (0, 0)
    assert get(P.DEVICE_ORDINAL, inner, out_i32()) == (0, 0)
    assert get(P.RANGE_START_ADDR, inner) == (0, p.value)
    assert get(P.RANGE_SIZE, inner)[1] >= 1000
    assert get(P.MAPPED, inner, out_i32()) == (0, 1)
    assert get(P.ACCESS_FLAGS, inner, out_u32()) == (0, 3)
    assert get(P.MEMPOOL_HANDLE, inner) == (0, 0)
    first = get(P.BUFFER_ID, inner)[1]
    q = out_u64()
    check(M.cuMemAlloc_v2(q.addr, 16))
    assert get(P.BUFFER_ID, q.value)[1] != first
    assert get(P.P2P_TOKENS, inner)[0] == 801
    assert get(99, inner)[0] == 1


def test_pinned_and_managed(ctx):
    h, m = out_u64(), out_u64()
    check(M.cuMemHostAlloc(h.addr, 256, 0))
    check(M.cuMemAllocManaged(m.addr, 256, 1))
    assert get(P.MEMORY_TYPE, h.value, out_u32()) == (0, 1)
    assert get(P.HOST_POINTER, h.value + 4) == (0, h.value + 4)
    assert get(P.DEVICE_POINTER, h.value) == (0, h.value)
    assert get(P.IS_MANAGED, m.value, out_i32()) == (0, 1)
    assert get(P.MEMORY_TYPE, m.value, out_u32()) == (0, 2)
    assert get(P.HOST_POINTER, m.value) == (0, m.value)


def test_registered_host_memory(ctx):
    host = np.zeros(4096, np.uint8)
    check(M.cuMemHostRegister_v2(host.ctypes.data, host.nbytes, 0))
    dptr = out_u64()
    check(M.cuMemHostGetDevicePointer_v2(dptr.addr, host.ctypes.data, 0))
    assert get(P.MEMORY_TYPE, host.ctypes.data + 10, out_u32()) == (0, 1)
    assert get(P.DEVICE_POINTER, host.ctypes.data + 10) == (0, dptr.value + 10)
    assert get(P.HOST_POINTER, dptr.value + 10) == (0, host.ctypes.data + 10)
    assert get(P.RANGE_START_ADDR, host.ctypes.data + 10) == (0, host.ctypes.data)
    check(M.cuMemHostUnregister(host.ctypes.data))


def test_unknown_pointer(ctx):
    host = np.zeros(16, np.uint8)
    assert get(P.MEMORY_TYPE, host.ctypes.data, out_u32())[0] == 1      # numba's host-array test
    assert get(P.MEMORY_TYPE, 0, out_u32())[0] == 1
    assert cuPointerGetAttribute(0, P.MEMORY_TYPE, host.ctypes.data) == 1


def test_get_attributes_many_and_unknown(ctx):
    p = out_u64()
    check(M.cuMemAlloc_v2(p.addr, 64))
    kinds = (ctypes.c_int * 4)(P.MEMORY_TYPE, P.DEVICE_ORDINAL, P.CONTEXT, P.HOST_POINTER)
    mt, ordinal, c, hp = ctypes.c_uint(7), ctypes.c_int(7), ctypes.c_uint64(7), ctypes.c_uint64(7)
    data = (ctypes.c_uint64 * 4)(*(ctypes.addressof(x) for x in (mt, ordinal, c, hp)))
    check(cuPointerGetAttributes(4, ctypes.addressof(kinds), ctypes.addressof(data), p.value))
    assert (mt.value, ordinal.value, c.value, hp.value) == (2, 0, ctx, 0)
    host = np.zeros(16, np.uint8)
    check(cuPointerGetAttributes(4, ctypes.addressof(kinds), ctypes.addressof(data), host.ctypes.data))
    assert (mt.value, ordinal.value, c.value, hp.value) == (0, 0, 0, 0)
    assert cuPointerGetAttributes(0, ctypes.addressof(kinds), ctypes.addressof(data), p.value) == 1


def test_mempool_pointer(ctx):
    p, pool = out_u64(), out_u64()
    check(M.cuMemAllocAsync(p.addr, 100, 0))
    from gpudbg.cuda_driver.device import cuDeviceGetMemPool
    check(cuDeviceGetMemPool(pool.addr, 0))
    assert get(P.MEMPOOL_HANDLE, p.value) == (0, pool.value)
    assert get(P.RANGE_START_ADDR, p.value + 5) == (0, p.value)
    check(M.cuMemFreeAsync(p.value, 0))
    check(C.cuCtxSynchronize())


def test_set_sync_memops(ctx):
    p = out_u64()
    check(M.cuMemAlloc_v2(p.addr, 64))
    assert get(P.SYNC_MEMOPS, p.value, out_i32()) == (0, 0)
    one = ctypes.c_uint(1)
    check(cuPointerSetAttribute(ctypes.addressof(one), P.SYNC_MEMOPS, p.value))
    assert get(P.SYNC_MEMOPS, p.value + 8, out_i32()) == (0, 1)
    assert cuPointerSetAttribute(ctypes.addressof(one), P.MEMORY_TYPE, p.value) == 1
    host = np.zeros(16, np.uint8)
    assert cuPointerSetAttribute(ctypes.addressof(one), P.SYNC_MEMOPS, host.ctypes.data) == 1


def test_attribute_numbers_match_cuda_bindings():
    driver = pytest.importorskip("cuda.bindings.driver")
    for name, number in vars(P).items():
        if name.isupper():
            assert int(getattr(driver.CUpointer_attribute, f"CU_POINTER_ATTRIBUTE_{name}")) == number
