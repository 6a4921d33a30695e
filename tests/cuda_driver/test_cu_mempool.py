"""cuMemPool*: the engine's pools through the C structs of cuda.h."""
from __future__ import annotations

import ctypes

import pytest

from gpudbg.cuda_driver import exports as cu
from gpudbg.cuda_driver.mempool import CUmemAccessDesc, CUmemLocation, CUmemPoolProps

RELEASE_THRESHOLD, REUSE_OPPORTUNISTIC, USED_MEM_CURRENT = 4, 2, 7


@pytest.fixture
def ctx():
    from gpudbg.driver.engine import reset_engine
    reset_engine()
    assert cu.cuInit(0) == 0
    c = ctypes.c_uint64()
    assert cu.cuDevicePrimaryCtxRetain(ctypes.addressof(c), 0) == 0
    assert cu.cuCtxSetCurrent(c.value) == 0
    yield c.value
    reset_engine()


def _default_pool() -> int:
    p = ctypes.c_uint64()
    assert cu.cuDeviceGetMemPool(ctypes.addressof(p), 0) == 0
    return p.value


def test_attributes_round_trip_at_their_c_widths(ctx):
    pool = _default_pool()
    v64 = ctypes.c_uint64(1 << 40)
    assert cu.cuMemPoolSetAttribute(pool, RELEASE_THRESHOLD, ctypes.addressof(v64)) == 0   # what cuda.core does
    out = ctypes.c_uint64()
    assert cu.cuMemPoolGetAttribute(pool, RELEASE_THRESHOLD, ctypes.addressof(out)) == 0
    assert out.value == 1 << 40
    flag = ctypes.c_int(0)
    assert cu.cuMemPoolSetAttribute(pool, REUSE_OPPORTUNISTIC, ctypes.addressof(flag)) == 0
    got = ctypes.c_int(7)
    assert cu.cuMemPoolGetAttribute(pool, REUSE_OPPORTUNISTIC, ctypes.addressof(got)) == 0 and got.value == 0
    assert cu.cuMemPoolGetAttribute(pool, 99, ctypes.addressof(out)) == 1
    assert cu.cuMemPoolGetAttribute(pool, RELEASE_THRESHOLD, 0) == 1


def test_created_pool_allocates_and_is_destroyed(ctx):
    props = CUmemPoolProps(allocType=1, location=CUmemLocation(type=1, id=0))
    pool = ctypes.c_uint64()
    assert cu.cuMemPoolCreate(ctypes.addressof(pool), ctypes.addressof(props)) == 0
    ptr = ctypes.c_uint64()
    assert cu.cuMemAllocFromPoolAsync(ctypes.addressof(ptr), 4096, pool.value, 0) == 0 and ptr.value
    used = ctypes.c_uint64()
    assert cu.cuMemPoolGetAttribute(pool.value, USED_MEM_CURRENT, ctypes.addressof(used)) == 0
    assert used.value >= 4096
    assert cu.cuMemFreeAsync(ptr.value, 0) == 0 and cu.cuCtxSynchronize() == 0
    assert cu.cuMemPoolTrimTo(pool.value, 0) == 0
    assert cu.cuMemPoolDestroy(pool.value) == 0
    assert cu.cuMemPoolGetAttribute(pool.value, USED_MEM_CURRENT, ctypes.addressof(used)) == 400


def test_bad_props_and_access(ctx):
    pool = ctypes.c_uint64()
    host = CUmemPoolProps(allocType=1, location=CUmemLocation(type=2, id=0))
    assert cu.cuMemPoolCreate(ctypes.addressof(pool), ctypes.addressof(host)) == 1
    wrong_type = CUmemPoolProps(allocType=0, location=CUmemLocation(type=1, id=0))
    assert cu.cuMemPoolCreate(ctypes.addressof(pool), ctypes.addressof(wrong_type)) == 1
    default = _default_pool()
    revoke_owner = CUmemAccessDesc(location=CUmemLocation(type=1, id=0), flags=0)
    assert cu.cuMemPoolSetAccess(default, ctypes.addressof(revoke_owner), 1) == 1
    flags = ctypes.c_int()
    loc = CUmemLocation(type=1, id=0)
    assert cu.cuMemPoolGetAccess(ctypes.addressof(flags), default, ctypes.addressof(loc)) == 0
    assert flags.value == 3     # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
