"""Seed 002 §2.14 (stream-ordered allocator) and the §2.2 pool functions:
allocation and free in stream order, reuse rules, attributes, trim, access,
sharing; every function with a success and an exact-code failure."""
from pathlib import Path

import numpy as np
import pytest

from gpudbg.driver.engine import get_engine, reset_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.runtime.types import mcMemcpyKind as K

S = E.mcSuccess
MiB2 = 2 << 20
A = mc.mcMemPoolAttr
FIX = Path(__file__).resolve().parent.parent / "driver" / "fixtures"
POSIX = mc.mcMemAllocationHandleType.mcMemHandleTypePosixFileDescriptor
WIN32 = mc.mcMemAllocationHandleType.mcMemHandleTypeWin32


def _attr(pool, a):
    err, v = mc.mcMemPoolGetAttribute(pool, a)
    assert err == S
    return v


def _mapped(ptr) -> bool:
    return get_engine().current_context().gpu.memory.find(ptr) is not None


@pytest.fixture
def saxpy(real):
    err, m = mc.mcModuleLoad(FIX / "saxpy.ptx")
    assert err == S
    return mc.mcModuleGetFunction(m, "saxpy")[1]


def _hold(stream):
    """Block one stream on the GPU (a SEM_ACQUIRE on a pinned word) without
    blocking the others; returns the function that lets it go."""
    _, word = mc.mcMallocHost(8)
    stream.wait_for(word, 1)
    gpu = get_engine().current_context().gpu

    def release():
        with gpu.cv:
            mc.host_view(word, 8, np.uint64)[0] = 1
            gpu.cv.notify_all()
    return release


def _launch(fn, x, y, stream, n=32):
    assert mc.mcModuleLaunchKernel(fn, 1, 1, 1, n, 1, 1, 0, stream,
                                   [n, np.float32(2.0), x, y], None) == (S,)


def test_device_pools(fake):
    err, default = mc.mcDeviceGetDefaultMemPool(0)
    assert err == S and mc.mcDeviceGetMemPool(0) == (S, default)
    assert mc.mcDeviceGetDefaultMemPool(5) == (E.mcErrorInvalidDevice, None)
    assert mc.mcDeviceGetMemPool(-1) == (E.mcErrorInvalidDevice, None)
    err, pool = mc.mcMemPoolCreate(mc.mcMemPoolProps())
    assert err == S and pool is not default
    assert mc.mcDeviceSetMemPool(0, pool) == (S,)
    assert mc.mcDeviceGetMemPool(0) == (S, pool)
    assert mc.mcDeviceSetMemPool(1, pool) == (E.mcErrorInvalidValue,)   # not local to device 1
    assert mc.mcDeviceSetMemPool(0, "pool") == (E.mcErrorInvalidValue,)
    assert mc.mcDeviceSetMemPool(7, pool) == (E.mcErrorInvalidDevice,)
    assert mc.mcMemPoolDestroy(pool) == (S,)
    assert mc.mcDeviceGetMemPool(0) == (S, default)      # destroying the current pool
    assert mc.mcMemPoolDestroy(default) == (E.mcErrorInvalidValue,)
    assert mc.mcMemPoolDestroy(pool) == (E.mcErrorInvalidValue,)
    props = mc.mcMemPoolProps(location=mc.mcMemLocation(id=1))
    err, p1 = mc.mcMemPoolCreate(props)
    assert err == S and mc.mcDeviceSetMemPool(1, p1) == (S,)
    assert mc.mcMemPoolCreate(mc.mcMemPoolProps(location=mc.mcMemLocation(id=9))) == \
        (E.mcErrorInvalidDevice, None)
    assert mc.mcMemPoolCreate(mc.mcMemPoolProps(allocType=0)) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemPoolCreate(mc.mcMemPoolProps(handleTypes=WIN32)) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemPoolCreate(None) == (E.mcErrorInvalidValue, None)


def test_allocation_becomes_valid_when_the_stream_gets_there(fake, kernels):
    _, s = mc.mcStreamCreate()
    _, target = mc.mcMalloc(4)
    mc.mcLaunchKernel(kernels["gated"], 1, 1, [target, 5], 0, s)   # holds the stream
    err, p = mc.mcMallocAsync(1000, s)
    assert err == S and p and not _mapped(p)        # pointer now, memory later
    # a copy queued behind it is accepted before the allocation happened
    assert mc.mcMemcpyAsync(p, np.arange(250, dtype=np.uint32), 1000, K.mcMemcpyHostToDevice, s) == (S,)
    assert mc.mcStreamQuery(s) == (E.mcErrorNotReady,)
    fake.gate.set()
    assert mc.mcStreamSynchronize(s) == (S,)
    assert _mapped(p)
    out = np.zeros(250, np.uint32)
    assert mc.mcMemcpy(out, p, 1000, K.mcMemcpyDeviceToHost) == (S,)
    assert (out == np.arange(250)).all()
    assert mc.mcFreeAsync(p, s) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    assert not _mapped(p)
    assert "is inside a freed 1000-byte allocation" in get_engine().current_context().gpu.memory.describe(p)


def test_use_before_the_free_works_after_it_faults(saxpy):
    _, s = mc.mcStreamCreate()
    _, x = mc.mcMallocAsync(128, s)
    _, y = mc.mcMallocAsync(128, s)
    assert (x, y) != (None, None) and y == x + 256
    assert mc.mcMemsetAsync(y, 0, 128, s) == (S,)
    assert mc.mcMemcpyAsync(x, np.arange(32, dtype=np.float32), 128, K.mcMemcpyHostToDevice, s) == (S,)
    _launch(saxpy, x, y, s)                           # before the free: fine
    out = np.zeros(32, np.float32)
    assert mc.mcMemcpyAsync(out, y, 128, K.mcMemcpyDeviceToHost, s) == (S,)
    assert mc.mcFreeAsync(y, s) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    np.testing.assert_allclose(out, 2 * np.arange(32))
    # the host refuses copies into the freed block before queueing them
    assert mc.mcMemcpyAsync(y, out, 128, K.mcMemcpyHostToDevice, s) == (E.mcErrorInvalidValue,)
    assert "is inside a freed 128-byte allocation" in mc.last_error_message()
    _launch(saxpy, x, y, s)                           # after the free in stream order
    assert mc.mcStreamSynchronize(s) == (E.mcErrorIllegalAddress,)
    rep = mc.fault_report()
    assert rep.kernel == "saxpy" and rep.address == y
    assert "is inside a freed 128-byte allocation" in rep.format()


def test_kernel_after_free_on_another_ordered_stream_faults(saxpy):
    _, s1 = mc.mcStreamCreate()
    _, x = mc.mcMallocAsync(128, s1)
    assert mc.mcFreeAsync(x, s1) == (S,)
    _launch(saxpy, x, x, None)      # legacy stream: ordered after s1's free
    assert mc.mcDeviceSynchronize() == (E.mcErrorIllegalAddress,)
    assert "freed" in mc.fault_report().format()


def test_reuse_in_stream_order(fake):
    _, s1 = mc.mcStreamCreateWithFlags(1)
    _, s2 = mc.mcStreamCreateWithFlags(1)
    # a pool of one chunk, so a block can only be reused or refused
    _, pool = mc.mcMemPoolCreate(mc.mcMemPoolProps(maxSize=MiB2))
    assert mc.mcMemPoolSetAttribute(pool, A.mcMemPoolAttrReleaseThreshold, MiB2) == (S,)
    _, a = mc.mcMallocFromPoolAsync(MiB2, pool, s1)
    assert mc.mcFreeAsync(a, s1) == (S,)
    assert mc.mcMallocFromPoolAsync(MiB2, pool, s1) == (S, a)      # same stream: at once
    assert mc.mcFreeAsync(a, s1) == (S,)
    release = _hold(s1)                                           # s1's free cannot run yet
    assert mc.mcMallocFromPoolAsync(MiB2, pool, s1) == (S, a)
    assert mc.mcFreeAsync(a, s1) == (S,)
    # another stream may reuse it with a GPU-side wait (internal dependencies)
    assert mc.mcMallocFromPoolAsync(MiB2, pool, s2) == (S, a)
    assert mc.mcStreamQuery(s2) == (E.mcErrorNotReady,)
    assert mc.mcFreeAsync(a, s2) == (S,)
    for attr in (A.mcMemPoolReuseAllowInternalDependencies, A.mcMemPoolReuseAllowOpportunistic):
        assert mc.mcMemPoolSetAttribute(pool, attr, 0) == (S,)
    # now nothing orders s1 after s2's free: refused in a capped pool
    assert mc.mcMallocFromPoolAsync(MiB2, pool, s1) == (E.mcErrorMemoryAllocation, None)
    release()
    s2.wait()      # the GPU passed the free; the host has not synchronized
    assert mc.mcMallocFromPoolAsync(MiB2, pool, s1) == (E.mcErrorMemoryAllocation, None)
    assert mc.mcMemPoolSetAttribute(pool, A.mcMemPoolReuseAllowOpportunistic, 1) == (S,)
    assert mc.mcMallocFromPoolAsync(MiB2, pool, s1) == (S, a)      # opportunistic
    assert mc.mcMemPoolSetAttribute(pool, A.mcMemPoolReuseAllowOpportunistic, 0) == (S,)
    # an event dependency makes the reuse safe (follow event dependencies)
    assert mc.mcFreeAsync(a, s1) == (S,)
    _, ev = mc.mcEventCreate()
    mc.mcEventRecord(ev, s1)
    assert mc.mcStreamWaitEvent(s2, ev, 0) == (S,)
    assert mc.mcMallocFromPoolAsync(MiB2, pool, s2) == (S, a)
    assert mc.mcFreeAsync(a, s2) == (S,)
    assert mc.mcMemPoolSetAttribute(pool, A.mcMemPoolReuseFollowEventDependencies, 0) == (S,)
    assert mc.mcMallocFromPoolAsync(MiB2, pool, s1) == (E.mcErrorMemoryAllocation, None)
    # a host synchronization observes the free: reusable by any stream
    assert mc.mcDeviceSynchronize() == (S,)
    assert mc.mcMallocFromPoolAsync(MiB2, pool, s1) == (S, a)


def test_fresh_memory_is_preferred_to_a_dependency(fake):
    _, s1 = mc.mcStreamCreateWithFlags(1)
    _, s2 = mc.mcStreamCreateWithFlags(1)
    release = _hold(s1)
    _, a = mc.mcMallocAsync(512, s1)
    assert mc.mcFreeAsync(a, s1) == (S,)
    err, b = mc.mcMallocAsync(512, s2)
    assert err == S and b != a
    s2.wait()
    assert mc.mcStreamQuery(s2) == (S,) and mc.mcStreamQuery(s1) == (E.mcErrorNotReady,)
    release()
    assert mc.mcDeviceSynchronize() == (S,)


def test_attributes_watermarks_threshold_and_trim(fake):
    _, s = mc.mcStreamCreate()
    err, pool = mc.mcDeviceGetDefaultMemPool(0)
    assert [_attr(pool, a) for a in (1, 2, 3, 4)] == [1, 1, 1, 0]
    _, a = mc.mcMallocAsync(100, s)
    _, b = mc.mcMallocAsync(3 << 20, s)
    assert _attr(pool, A.mcMemPoolAttrUsedMemCurrent) == 256 + (3 << 20)
    assert _attr(pool, A.mcMemPoolAttrReservedMemCurrent) == MiB2 + (4 << 20)
    _, free_before, _ = mc.mcMemGetInfo()
    mc.mcFreeAsync(b, s)
    assert mc.mcStreamSynchronize(s) == (S,)        # threshold 0: the free chunk goes back
    assert _attr(pool, A.mcMemPoolAttrReservedMemCurrent) == MiB2
    assert mc.mcMemGetInfo()[1] == free_before + (4 << 20)
    assert _attr(pool, A.mcMemPoolAttrReservedMemHigh) == MiB2 + (4 << 20)
    assert _attr(pool, A.mcMemPoolAttrUsedMemHigh) == 256 + (3 << 20)
    assert mc.mcMemPoolSetAttribute(pool, A.mcMemPoolAttrUsedMemHigh, 0) == (S,)
    assert _attr(pool, A.mcMemPoolAttrUsedMemHigh) == 256
    assert mc.mcMemPoolSetAttribute(pool, A.mcMemPoolAttrReservedMemHigh, 5) == (E.mcErrorInvalidValue,)
    assert mc.mcMemPoolSetAttribute(pool, A.mcMemPoolAttrUsedMemCurrent, 0) == (E.mcErrorInvalidValue,)
    assert mc.mcMemPoolSetAttribute(pool, A.mcMemPoolReuseAllowOpportunistic, 2) == (E.mcErrorInvalidValue,)
    assert mc.mcMemPoolSetAttribute(pool, 99, 0) == (E.mcErrorInvalidValue,)
    assert mc.mcMemPoolGetAttribute(pool, 0) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemPoolGetAttribute("x", 1) == (E.mcErrorInvalidValue, None)
    # a threshold keeps memory across synchronizations; trim releases it
    assert mc.mcMemPoolSetAttribute(pool, A.mcMemPoolAttrReleaseThreshold, 64 << 20) == (S,)
    _, c = mc.mcMallocAsync(3 << 20, s)
    mc.mcFreeAsync(c, s)
    assert mc.mcStreamSynchronize(s) == (S,)
    assert _attr(pool, A.mcMemPoolAttrReservedMemCurrent) == MiB2 + (4 << 20)
    assert mc.mcMemPoolTrimTo(pool, 1 << 30) == (S,)     # already below: no-op
    assert _attr(pool, A.mcMemPoolAttrReservedMemCurrent) == MiB2 + (4 << 20)
    assert mc.mcMemPoolTrimTo(pool, 0) == (S,)           # the chunk of `a` is still in use
    assert _attr(pool, A.mcMemPoolAttrReservedMemCurrent) == MiB2
    mc.mcFreeAsync(a, s)
    assert mc.mcStreamSynchronize(s) == (S,)            # observed, but below the threshold
    assert _attr(pool, A.mcMemPoolAttrReservedMemCurrent) == MiB2
    assert mc.mcMemPoolTrimTo(pool, 0) == (S,)
    assert _attr(pool, A.mcMemPoolAttrReservedMemCurrent) == 0
    assert mc.mcMemPoolTrimTo(pool, -1) == (E.mcErrorInvalidValue,)
    assert mc.mcMemPoolTrimTo(None, 0) == (E.mcErrorInvalidValue,)


def test_allocation_and_free_errors(fake):
    _, s = mc.mcStreamCreate()
    assert mc.mcMallocAsync(0, s) == (E.mcErrorInvalidValue, None)
    assert mc.mcMallocAsync(-4, s) == (E.mcErrorInvalidValue, None)
    assert mc.mcMallocAsync(16, "stream") == (E.mcErrorInvalidResourceHandle, None)
    assert mc.mcMallocAsync(1 << 50, s) == (E.mcErrorMemoryAllocation, None)
    _, p = mc.mcMallocAsync(16, s)
    assert mc.mcFreeAsync(p + 8, s) == (E.mcErrorInvalidValue,)
    assert mc.mcFreeAsync(p, "stream") == (E.mcErrorInvalidResourceHandle,)
    _, d = mc.mcMalloc(16)
    assert mc.mcFreeAsync(d, s) == (E.mcErrorInvalidValue,)     # not from a pool
    assert mc.mcFreeAsync(p, s) == (S,)
    assert mc.mcFreeAsync(p, s) == (E.mcErrorInvalidValue,)     # double free
    assert "double free" in mc.last_error_message()


def test_driver_style_twins_and_pools(fake):
    _, s = mc.mcStreamCreate()
    props = mc.mcMemPoolProps(maxSize=MiB2)
    _, pool = mc.mcMemPoolCreate(props)
    err, p = mc.mcMemAllocFromPoolAsync(1024, pool, s)
    assert err == S and mc.mcMemPoolGetAttribute(pool, 7) == (S, 1024)
    assert mc.mcMemAllocFromPoolAsync(4 << 20, pool, s) == (E.mcErrorMemoryAllocation, None)
    assert mc.mcMemAllocFromPoolAsync(16, "pool", s) == (E.mcErrorInvalidValue, None)
    err, q = mc.mcMallocFromPoolAsync(1024, pool, s)
    assert err == S and q == p + 1024
    assert mc.mcMallocFromPoolAsync(0, pool, s) == (E.mcErrorInvalidValue, None)
    err, r = mc.mcMemAllocAsync(64, s)
    assert err == S and mc.mcMemAllocAsync(0, s) == (E.mcErrorInvalidValue, None)
    _, default = mc.mcDeviceGetDefaultMemPool(0)
    assert mc.mcMemPoolGetAttribute(default, 7) == (S, 256)
    for ptr in (p, q, r):
        assert mc.mcMemFreeAsync(ptr, s) == (S,)
    assert mc.mcMemFreeAsync(r, s) == (E.mcErrorInvalidValue,)
    # destroying a pool with an outstanding block returns at once
    _, t = mc.mcMallocFromPoolAsync(64, pool, s)
    assert mc.mcMemPoolDestroy(pool) == (S,)
    assert mc.mcMallocFromPoolAsync(64, pool, s) == (E.mcErrorInvalidValue, None)
    assert mc.mcFreeAsync(t, s) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    assert not _mapped(t)


def test_pool_access(fake):
    _, pool = mc.mcDeviceGetDefaultMemPool(0)
    dev0, dev1 = mc.mcMemLocation(id=0), mc.mcMemLocation(id=1)
    F = mc.mcMemAccessFlags
    assert mc.mcMemPoolGetAccess(pool, dev0) == (S, F.mcMemAccessFlagsProtReadWrite)
    assert mc.mcMemPoolGetAccess(pool, dev1) == (S, F.mcMemAccessFlagsProtNone)
    assert mc.mcMemPoolSetAccess(pool, [mc.mcMemAccessDesc(dev1, F.mcMemAccessFlagsProtReadWrite)], 1) == (S,)
    assert mc.mcMemPoolGetAccess(pool, dev1) == (S, F.mcMemAccessFlagsProtReadWrite)
    bad = [mc.mcMemAccessDesc(dev0, F.mcMemAccessFlagsProtNone)]
    assert mc.mcMemPoolSetAccess(pool, bad, 1) == (E.mcErrorInvalidValue,)
    assert mc.mcMemPoolSetAccess(pool, [mc.mcMemAccessDesc(dev1, 2)], 1) == (E.mcErrorInvalidValue,)
    assert mc.mcMemPoolSetAccess(pool, [mc.mcMemAccessDesc(mc.mcMemLocation(id=4))], 1) == \
        (E.mcErrorInvalidDevice,)
    assert mc.mcMemPoolSetAccess(pool, [], 1) == (E.mcErrorInvalidValue,)
    assert mc.mcMemPoolGetAccess(pool, mc.mcMemLocation(id=8)) == (E.mcErrorInvalidDevice, None)


def test_sharing_in_process(fake):
    _, s = mc.mcStreamCreate()
    _, pool = mc.mcMemPoolCreate(mc.mcMemPoolProps(handleTypes=POSIX))
    err, fd = mc.mcMemPoolExportToShareableHandle(pool, POSIX, 0)
    assert err == S and isinstance(fd, int)
    assert mc.mcMemPoolExportToShareableHandle(pool, WIN32, 0) == (E.mcErrorNotSupported, None)
    _, plain = mc.mcMemPoolCreate(mc.mcMemPoolProps())
    assert mc.mcMemPoolExportToShareableHandle(plain, POSIX, 0) == (E.mcErrorInvalidValue, None)
    err, imported = mc.mcMemPoolImportFromShareableHandle(fd, POSIX, 0)
    assert err == S
    assert mc.mcMemPoolImportFromShareableHandle(fd + 99, POSIX, 0) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemPoolImportFromShareableHandle(fd, WIN32, 0) == (E.mcErrorNotSupported, None)
    assert mc.mcMallocFromPoolAsync(16, imported, s) == (E.mcErrorInvalidValue, None)
    assert mc.mcDeviceSetMemPool(0, imported) == (E.mcErrorInvalidValue,)
    _, p = mc.mcMallocFromPoolAsync(64, pool, s)
    err, data = mc.mcMemPoolExportPointer(p)
    assert err == S and len(data.reserved) == 64
    assert mc.mcMemPoolImportPointer(imported, data) == (S, p)
    assert mc.mcMemPoolImportPointer(pool, data) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemPoolImportPointer(imported, mc.mcMemPoolPtrExportData()) == (E.mcErrorInvalidValue, None)
    _, q = mc.mcMallocFromPoolAsync(64, plain, s)
    assert mc.mcMemPoolExportPointer(q) == (E.mcErrorInvalidValue, None)
    assert mc.mcMemPoolExportPointer(12345) == (E.mcErrorInvalidValue, None)
    assert mc.mcFreeAsync(p, s) == (S,)        # the importer's free
    assert mc.mcStreamSynchronize(s) == (S,) and _mapped(p)
    assert mc.mcFreeAsync(p, s) == (S,)        # the exporter's free
    assert mc.mcStreamSynchronize(s) == (S,) and not _mapped(p)
    assert mc.mcMemPoolGetAttribute(imported, A.mcMemPoolAttrUsedMemCurrent) == (S, 0)
    assert mc.mcMemPoolDestroy(imported) == (S,)


def test_device_reset_tears_pools_down(fake):
    _, s = mc.mcStreamCreate()
    _, pool = mc.mcDeviceGetDefaultMemPool(0)
    _, p = mc.mcMallocAsync(64, s)
    assert mc.mcStreamSynchronize(s) == (S,)
    used = get_engine().current_context().gpu.memory.used
    assert mc.mcDeviceReset() == (S,)
    assert mc.mcMemPoolGetAttribute(pool, 5) == (E.mcErrorInvalidValue, None)
    assert mc.mcFreeAsync(p, None) == (E.mcErrorInvalidValue,)
    assert get_engine().current_context().gpu.memory.used <= used - MiB2
    err, fresh = mc.mcDeviceGetDefaultMemPool(0)
    assert err == S and fresh is not pool


def test_pool_on_another_device_than_the_stream():
    reset_engine(num_devices=2)
    try:
        _, p1 = mc.mcMemPoolCreate(mc.mcMemPoolProps(location=mc.mcMemLocation(id=1)))
        _, s = mc.mcStreamCreate()
        err, ptr = mc.mcMallocFromPoolAsync(64, p1, s)
        assert err == S and get_engine().device(1).gpu.memory.find(ptr) is not None
        assert mc.mcFreeAsync(ptr, s) == (S,)
        assert get_engine().device(1).gpu.memory.find(ptr) is None
    finally:
        reset_engine()
        mc.mcGetLastError()


def test_mcfree_releases_a_stream_ordered_allocation():
    """Regression: mcFree refused pointers from mcMallocAsync; CUDA's
    cudaFree accepts them (it synchronizes, then frees)."""
    err, stream = mc.mcStreamCreate()
    err, ptr = mc.mcMallocAsync(4096, stream)
    assert err == mc.mcError_t.mcSuccess
    assert mc.mcMemsetAsync(ptr, 7, 4096, stream) == (mc.mcError_t.mcSuccess,)
    assert mc.mcFree(ptr) == (mc.mcError_t.mcSuccess,)
    # the block is gone: freeing it again, either way, is a double free
    assert mc.mcFree(ptr)[0] == mc.mcError_t.mcErrorInvalidValue
    assert mc.mcFreeAsync(ptr, stream)[0] == mc.mcError_t.mcErrorInvalidValue
    assert mc.mcStreamDestroy(stream) == (mc.mcError_t.mcSuccess,)
