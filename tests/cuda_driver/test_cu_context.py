import ctypes
import threading

from cudrv_helpers import check, out_i32, out_u32, out_u64
from gpudbg.cuda_driver import context as C
from gpudbg.cuda_driver import device as D
from gpudbg.cuda_driver import memory as M
from gpudbg.driver.engine import get_engine


def current() -> int:
    h = out_u64()
    check(C.cuCtxGetCurrent(h.addr))
    return h.value


def test_before_init_and_without_context(fresh):
    assert C.cuCtxGetCurrent(out_u64().addr) == 3
    assert C.cuDevicePrimaryCtxRetain(out_u64().addr, 0) == 3
    check(D.cuInit(0))
    assert current() == 0
    assert C.cuCtxSynchronize() == 201          # never made implicitly
    assert C.cuCtxGetDevice(out_i32().addr) == 201
    assert C.cuCtxPopCurrent_v2(0) == 201
    assert C.cuCtxGetCurrent(0) == 1


def test_primary_retain_release(fresh):
    check(D.cuInit(0))
    a, b = out_u64(), out_u64()
    flags, active = out_u32(), out_i32()
    check(C.cuDevicePrimaryCtxGetState(0, flags.addr, active.addr))
    assert active.value == 0
    check(C.cuDevicePrimaryCtxRetain(a.addr, 0))
    check(C.cuDevicePrimaryCtxRetain(b.addr, 0))
    assert a.value == b.value
    assert current() == 0                          # retaining does not make it current
    check(C.cuDevicePrimaryCtxGetState(0, flags.addr, active.addr))
    assert active.value == 1
    check(C.cuDevicePrimaryCtxRelease_v2(0))
    check(C.cuDevicePrimaryCtxGetState(0, flags.addr, active.addr))
    assert active.value == 1                       # one retain left
    check(C.cuDevicePrimaryCtxRelease(0))
    check(C.cuDevicePrimaryCtxGetState(0, flags.addr, active.addr))
    assert active.value == 0
    assert C.cuDevicePrimaryCtxRelease_v2(0) == 201
    assert C.cuCtxSetCurrent(a.value) == 709       # the context was destroyed with the last release
    assert C.cuDevicePrimaryCtxRetain(a.addr, 5) == 101


def test_primary_reset_keeps_the_retain(ctx):
    p = out_u64()
    check(M.cuMemAlloc_v2(p.addr, 256))
    check(C.cuDevicePrimaryCtxReset_v2(0))
    assert get_engine().resolve_pointer(p.value) is None     # its memory is gone
    check(C.cuCtxSynchronize())                   # still current: a fresh primary context
    check(M.cuMemAlloc_v2(p.addr, 256))
    check(C.cuCtxSetCurrent(ctx))                 # the old handle names it still
    check(C.cuDevicePrimaryCtxRelease_v2(0))


def test_primary_flags(ctx):
    flags, active = out_u32(), out_i32()
    check(C.cuDevicePrimaryCtxSetFlags_v2(0, 4))           # allowed while active
    check(C.cuDevicePrimaryCtxGetState(0, flags.addr, active.addr))
    assert (flags.value, active.value) == (4, 1)
    assert C.cuDevicePrimaryCtxSetFlags(0, 1) == 708       # the CUDA 7 form refuses
    assert C.cuDevicePrimaryCtxSetFlags_v2(0, 3) == 1      # two schedule modes
    assert C.cuDevicePrimaryCtxSetFlags_v2(0, 0x100) == 1
    check(C.cuCtxGetFlags(flags.addr))
    assert flags.value == 4
    check(C.cuCtxSetFlags(0x80))
    check(C.cuDevicePrimaryCtxGetState(0, flags.addr, active.addr))
    assert flags.value == 0x80


def test_create_destroy_and_the_stack(ctx):
    h, d = out_u64(), out_i32()
    check(C.cuCtxCreate_v2(h.addr, 0, 1))
    assert current() == h.value != ctx
    check(C.cuCtxGetDevice(d.addr))
    assert d.value == 1
    check(C.cuCtxGetDevice_v2(d.addr, ctx))
    assert d.value == 0
    ids = out_u64(), out_u64()
    check(C.cuCtxGetId(h.value, ids[0].addr))
    check(C.cuCtxGetId(ctx, ids[1].addr))
    assert ids[0].value != ids[1].value
    check(C.cuCtxDestroy_v2(h.value))             # current: popped
    assert current() == ctx
    assert C.cuCtxDestroy_v2(h.value) == 201
    assert C.cuCtxPushCurrent_v2(h.value) == 201
    assert C.cuCtxDestroy_v2(ctx) == 201          # primary: released, not destroyed
    assert C.cuCtxCreate_v2(h.addr, 0, 9) == 101
    assert C.cuCtxCreate_v2(h.addr, 3, 0) == 1
    assert C.cuCtxCreate_v2(0, 0, 0) == 1


def test_create_v3_v4(ctx):
    h = out_u64()
    affinity = C.CUexecAffinityParam(0, 4)
    assert C.cuCtxCreate_v3(h.addr, ctypes.addressof(affinity), 1, 0, 0) == 224
    check(C.cuCtxCreate_v3(h.addr, 0, 0, 0, 0))
    check(C.cuCtxDestroy_v2(h.value))
    check(C.cuCtxCreate_v4(h.addr, 0, 0, 0))
    check(C.cuCtxDestroy_v2(h.value))
    params = C.CUctxCreateParams(ctypes.addressof(affinity), 1, None)
    assert C.cuCtxCreate_v4(h.addr, ctypes.addressof(params), 0, 0) == 224
    cig = ctypes.c_uint64(0)
    params = C.CUctxCreateParams(None, 0, ctypes.addressof(cig))
    assert C.cuCtxCreate_v4(h.addr, ctypes.addressof(params), 0, 0) == 801
    assert current() == ctx


def test_push_pop_set(ctx):
    h, popped = out_u64(), out_u64()
    check(C.cuCtxCreate_v2(h.addr, 0, 0))
    check(C.cuCtxPopCurrent_v2(popped.addr))
    assert popped.value == h.value and current() == ctx
    check(C.cuCtxPushCurrent_v2(h.value))
    check(C.cuCtxSetCurrent(ctx))                 # replaces the top
    check(C.cuCtxPopCurrent_v2(popped.addr))
    assert popped.value == ctx and current() == ctx   # the primary below it
    check(C.cuCtxSetCurrent(0))
    assert current() == 0
    assert C.cuCtxPushCurrent_v2(0) == 201
    assert C.cuCtxPushCurrent_v2(0x1234) == 201
    check(C.cuCtxDestroy_v2(h.value))


def test_each_thread_has_its_own_stack(ctx):
    made = out_u64()
    check(C.cuCtxCreate_v2(made.addr, 0, 1))
    seen = {}

    def worker():
        seen["start"] = current()
        check(C.cuCtxSetCurrent(ctx))
        d = out_i32()
        check(C.cuCtxGetDevice(d.addr))
        seen["device"] = d.value
        seen["after"] = current()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == {"start": 0, "device": 0, "after": ctx}
    assert current() == made.value
    check(C.cuCtxDestroy_v2(made.value))


def test_destroyed_context_current_in_another_thread(ctx):
    made = out_u64()
    check(C.cuCtxCreate_v2(made.addr, 0, 0))
    ready, done = threading.Event(), threading.Event()
    results = {}

    def worker():
        check(C.cuCtxSetCurrent(made.value))
        ready.set()
        done.wait(5)
        results["sync"] = C.cuCtxSynchronize()

    t = threading.Thread(target=worker)
    t.start()
    ready.wait(5)
    check(C.cuCtxDestroy_v2(made.value))
    done.set()
    t.join()
    assert results["sync"] == 709
    assert current() == ctx


def test_settings(ctx):
    v, w = out_u64(), out_i32()
    check(C.cuCtxSetLimit(0, 4000))
    check(C.cuCtxGetLimit(v.addr, 0))
    assert v.value == 4000
    assert C.cuCtxGetLimit(v.addr, 3) == 215       # sync depth: not on CC 9.0
    assert C.cuCtxGetLimit(v.addr, 99) == 215
    check(C.cuCtxSetCacheConfig(1))
    check(C.cuCtxGetCacheConfig(w.addr))
    assert w.value == 1
    assert C.cuCtxSetCacheConfig(9) == 1
    check(C.cuCtxSetSharedMemConfig(2))
    check(C.cuCtxGetSharedMemConfig(w.addr))
    assert w.value == 1                            # four-byte banks, fixed
    version = out_u32()
    check(C.cuCtxGetApiVersion(ctx, version.addr))
    assert version.value == 3020
    least, greatest = out_i32(), out_i32()
    check(C.cuCtxGetStreamPriorityRange(least.addr, greatest.addr))
    assert greatest.value <= least.value
    check(C.cuCtxGetStreamPriorityRange(0, 0))
    check(C.cuCtxResetPersistingL2Cache())
    aff = C.CUexecAffinityParam()
    check(C.cuCtxGetExecAffinity(ctypes.addressof(aff), 0))
    assert (aff.type, aff.smCount) == (0, get_engine().device(0).model.sm_count)
    assert C.cuCtxGetExecAffinity(ctypes.addressof(aff), 1) == 1
    check(C.cuCtxSynchronize())
    check(C.cuCtxSynchronize_v2(ctx))


def test_peer_access_and_old_names(ctx):
    other = out_u64()
    check(C.cuCtxCreate(other.addr, 0, 1))
    check(C.cuCtxPopCurrent(0))
    assert C.cuCtxEnablePeerAccess(other.value, 0) == 217
    assert C.cuCtxEnablePeerAccess(ctx, 0) == 1
    assert C.cuCtxDisablePeerAccess(other.value) == 705
    check(C.cuCtxPushCurrent(other.value))
    check(C.cuCtxDestroy(other.value))
    assert current() == ctx
    assert C.cuCtxDestroy(other.value) == 201
