import ctypes

import numpy as np

from cudrv_helpers import check, out_u32, out_u64
from gpudbg.cuda_driver import context as C
from gpudbg.cuda_driver import copies as X
from gpudbg.cuda_driver import memory as M
from gpudbg.driver.engine import get_engine
from gpudbg.sim.memory.spaces import AllocationKind


def alloc(n=256) -> int:
    p = out_u64()
    check(M.cuMemAlloc_v2(p.addr, n))
    return p.value


def test_needs_a_context(fresh):
    assert M.cuMemAlloc_v2(out_u64().addr, 16) == 3
    from gpudbg.cuda_driver.device import cuInit
    check(cuInit(0))
    assert M.cuMemAlloc_v2(out_u64().addr, 16) == 201


def test_alloc_free(ctx):
    p = alloc(1000)
    info = get_engine().resolve_pointer(p)
    assert info.kind is AllocationKind.DEVICE and info.allocation.size >= 1000
    assert M.cuMemAlloc_v2(out_u64().addr, 0) == 1
    assert M.cuMemAlloc_v2(0, 16) == 1
    assert M.cuMemAlloc_v2(out_u64().addr, 1 << 50) == 2
    check(M.cuMemFree_v2(p))
    assert M.cuMemFree_v2(p) == 1                 # double free
    assert M.cuMemFree_v2(alloc() + 8) == 1       # interior pointer
    check(M.cuMemFree_v2(0))


def test_pitch_and_info(ctx):
    p, pitch = out_u64(), out_u64()
    check(M.cuMemAllocPitch_v2(p.addr, pitch.addr, 100, 7, 4))
    assert pitch.value == 512 and get_engine().resolve_pointer(p.value).allocation.size >= 512 * 7
    assert M.cuMemAllocPitch_v2(p.addr, pitch.addr, 100, 7, 3) == 1
    free, total = out_u64(), out_u64()
    check(M.cuMemGetInfo_v2(free.addr, total.addr))
    assert 0 < free.value < total.value
    base, size = out_u64(), out_u64()
    check(M.cuMemGetAddressRange_v2(base.addr, size.addr, p.value + 600))
    assert base.value == p.value and size.value >= 512 * 7
    check(M.cuMemGetAddressRange_v2(0, size.addr, p.value))
    assert M.cuMemGetAddressRange_v2(base.addr, size.addr, 0x10) == 500


def test_pinned_and_managed(ctx):
    h, f, d = out_u64(), out_u32(), out_u64()
    check(M.cuMemHostAlloc(h.addr, 4096, 0x3))
    check(M.cuMemHostGetFlags(f.addr, h.value))
    assert f.value == 0x3
    check(M.cuMemHostGetDevicePointer_v2(d.addr, h.value, 0))
    assert d.value == h.value
    assert M.cuMemHostGetDevicePointer_v2(d.addr, h.value, 1) == 1
    assert M.cuMemHostAlloc(h.addr, 16, 0x8) == 1
    assert M.cuMemFree_v2(h.value) == 1           # pinned memory is freed with cuMemFreeHost
    check(M.cuMemFreeHost(h.value))
    check(M.cuMemAllocHost_v2(h.addr, 64))
    assert get_engine().resolve_pointer(h.value).kind is AllocationKind.HOST_PINNED
    m = out_u64()
    check(M.cuMemAllocManaged(m.addr, 4096, 1))
    assert get_engine().resolve_pointer(m.value).kind is AllocationKind.MANAGED
    assert M.cuMemAllocManaged(m.addr, 4096, 4) == 1
    assert M.cuMemHostGetFlags(f.addr, m.value) == 1


def test_register_host_memory(ctx):
    host = np.arange(1024, dtype=np.uint32)
    addr = host.ctypes.data
    check(M.cuMemHostRegister_v2(addr, host.nbytes, 0x2))
    assert M.cuMemHostRegister_v2(addr, 16, 0) == 712
    dptr, f = out_u64(), out_u32()
    check(M.cuMemHostGetDevicePointer_v2(dptr.addr, addr + 8, 0))
    check(M.cuMemHostGetFlags(f.addr, addr))
    assert f.value == 0x2
    dev = out_u64()
    check(M.cuMemAlloc_v2(dev.addr, host.nbytes))
    check(X.cuMemsetD32_v2(dev.value, 0xABCD, 1024))
    check(X.cuMemcpyDtoD_v2(dptr.value - 8, dev.value, host.nbytes))   # through the device mapping
    check(C.cuCtxSynchronize())
    assert (host == 0xABCD).all()                   # the program's own bytes changed
    host[:] = 5
    out = np.zeros(1024, np.uint32)
    check(X.cuMemcpyDtoH_v2(out.ctypes.data, dptr.value - 8, host.nbytes))
    assert (out == 5).all()
    assert M.cuMemHostUnregister(addr + 4) == 713
    check(M.cuMemHostUnregister(addr))
    assert M.cuMemHostUnregister(addr) == 713
    assert M.cuMemHostRegister_v2(addr, 16, 0x10) == 1


def test_stream_ordered(ctx):
    p = out_u64()
    check(M.cuMemAllocAsync(p.addr, 1000, 0))
    check(X.cuMemsetD8Async(p.value, 3, 1000, 0))
    out = np.zeros(1000, np.uint8)
    check(X.cuMemcpyDtoH_v2(out.ctypes.data, p.value, 1000))
    assert (out == 3).all()
    base, size = out_u64(), out_u64()
    check(M.cuMemGetAddressRange_v2(base.addr, size.addr, p.value + 10))
    assert base.value == p.value
    check(M.cuMemFreeAsync(p.value, 0))
    assert M.cuMemFreeAsync(p.value, 0) == 1
    check(M.cuMemAllocAsync_ptsz(p.addr, 64, 0))
    check(M.cuMemFree_v2(p.value))
    pool = out_u64()
    from gpudbg.cuda_driver.device import cuDeviceGetDefaultMemPool
    check(cuDeviceGetDefaultMemPool(pool.addr, 0))
    check(M.cuMemAllocFromPoolAsync(p.addr, 64, pool.value, 0))
    check(M.cuMemFreeAsync_ptsz(p.value, 0))
    assert M.cuMemAllocFromPoolAsync(p.addr, 64, 0x99, 0) == 400
    assert M.cuMemAllocAsync(p.addr, 64, 0x99) == 400
