"""Seed 002 §2.1, §2.2, §2.7: devices, limits that really bound the
simulator, flags, configurations, reset."""
import dataclasses

import numpy as np
import pytest

from gpudbg import compile_ptx
from gpudbg.driver.engine import get_engine, reset_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.launch_limits import record_cost

S = E.mcSuccess
L = mc.mcLimit_t
F = mc.mcDeviceFlags
D2H = mc.mcMemcpyKind.mcMemcpyDeviceToHost

SRC = r'''
extern "C" __device__ int printf(const char*, ...);
extern "C" __device__ void *malloc(size_t);
// real (non-tail) recursion: the caller's work after the call cannot be
// folded into an accumulator, so NVRTC keeps the call stack
__device__ __noinline__ int depth(int n) {
    if (n <= 0) return 1;
    int r = depth(n - 1);
    return (r * 7) % 1000003 + n;
}
extern "C" __global__ void recurse(int n, int *out) { out[threadIdx.x] = depth(n); }
extern "C" __global__ void talk(int n) { for (int i = 0; i < n; ++i) printf("line %d\n", i); }
extern "C" __global__ void grab(unsigned long long *out) { out[0] = (unsigned long long)malloc(64); }
'''


@pytest.fixture(scope="module")
def ptx():
    return compile_ptx(SRC)


@pytest.fixture
def dev2():
    reset_engine(num_devices=2)
    mc.mcGetLastError()
    yield
    reset_engine()
    mc.mcGetLastError()


def _fn(ptx, name):
    _, m = mc.mcModuleLoadData(ptx)
    return mc.mcModuleGetFunction(m, name)[1]


def test_init_versions_and_device_count_from_env(monkeypatch):
    monkeypatch.setenv("GPUDBG_DEVICES", "3")
    reset_engine()
    try:
        assert mc.mcInit(0) == (S,)
        assert mc.mcInit(2) == (E.mcErrorInvalidValue,)
        assert mc.mcGetDeviceCount() == (S, 3)
        assert mc.mcDriverGetVersion() == (S, 12080) and mc.mcRuntimeGetVersion() == (S, 12080)
        # each device is its own SimGPU with its own memory window
        eng = get_engine()
        bases = {eng.device(i).gpu.memory.base for i in range(3)}
        assert len(bases) == 3
        monkeypatch.setenv("GPUDBG_DEVICES", "x")
        reset_engine()
        assert mc.mcGetDeviceCount() == (E.mcErrorInitializationError, None)
    finally:
        monkeypatch.delenv("GPUDBG_DEVICES")
        reset_engine()
        mc.mcGetLastError()


def test_device_identity_queries(dev2):
    assert mc.mcDeviceGet(1) == (S, 1)
    assert mc.mcDeviceGet(2) == (E.mcErrorInvalidDevice, None)
    err, name = mc.mcDeviceGetName(256, 0)
    assert err == S and name == get_engine().device(0).model.name
    assert mc.mcDeviceGetName(6, 0) == (S, name[:5])
    assert mc.mcDeviceGetName(0, 0) == (E.mcErrorInvalidValue, None)
    assert mc.mcDeviceGetName(16, 7) == (E.mcErrorInvalidDevice, None)
    assert mc.mcDeviceGetPCIBusId(13, 1) == (S, "0000:1c:00.0")
    assert mc.mcDeviceGetPCIBusId(5, 1) == (S, "0000")
    assert mc.mcDeviceGetPCIBusId(0, 1) == (E.mcErrorInvalidValue, None)
    e, luid0, mask = mc.mcDeviceGetLuid(0)
    assert e == S and len(luid0) == 8 and mask == 1 and luid0 != mc.mcDeviceGetLuid(1)[1]
    assert mc.mcDeviceGetLuid(4) == (E.mcErrorInvalidDevice, None, None)
    P = mc.mcDeviceP2PAttr
    assert mc.mcDeviceGetP2PAttribute(P.mcDevP2PAttrPerformanceRank, 0, 1) == (S, 0)
    assert mc.mcDeviceGetP2PAttribute(P.mcDevP2PAttrAccessSupported, 1, 0) == (S, 0)
    assert mc.mcDeviceGetP2PAttribute(P.mcDevP2PAttrAccessSupported, 0, 0) == (E.mcErrorInvalidDevice, None)
    assert mc.mcDeviceGetP2PAttribute(P.mcDevP2PAttrAccessSupported, 0, 5) == (E.mcErrorInvalidDevice, None)
    assert mc.mcDeviceGetP2PAttribute(77, 0, 1) == (E.mcErrorInvalidValue, None)
    assert mc.mcDeviceGetStreamPriorityRange() == (S, 0, -5)


def test_full_attribute_table_matches_model(dev2):
    m = get_engine().device(1).model
    A = mc.mcDeviceAttribute_t
    expect = {A.mcDevAttrMaxSharedMemoryPerBlockOptin: m.shared_per_block_optin,
              A.mcDevAttrMaxBlocksPerMultiprocessor: m.max_blocks_per_sm,
              A.mcDevAttrMaxRegistersPerMultiprocessor: m.registers_per_sm,
              A.mcDevAttrReservedSharedMemoryPerBlock: m.reserved_shared_per_block,
              A.mcDevAttrCooperativeMultiDeviceLaunch: 1, A.mcDevAttrPciBusId: m.pci_bus}
    for attr, v in expect.items():
        assert mc.mcDeviceGetAttribute(attr, 1) == (S, v), attr
    assert all(mc.mcDeviceGetAttribute(a, 1)[0] == S for a in A)


def test_choose_device(dev2):
    eng = get_engine()
    eng.ensure_init()
    eng.devices[1].model = dataclasses.replace(eng.devices[1].model, sm_count=200)
    assert mc.mcChooseDevice({"multiProcessorCount": 200}) == (S, 1)
    assert mc.mcChooseDevice({"multiProcessorCount": 100, "major": 9}) == (S, 0)
    _, prop = mc.mcGetDeviceProperties(1)
    assert mc.mcChooseDevice(prop) == (S, 1)
    assert mc.mcChooseDevice(None) == (E.mcErrorInvalidValue, None)
    assert mc.mcChooseDevice({"noSuchField": 1}) == (E.mcErrorInvalidValue, None)


def test_set_valid_devices(dev2):
    assert mc.mcSetValidDevices([1, 0], 2) == (S,)
    assert mc.mcGetDevice() == (S, 1)
    assert mc.mcSetValidDevices(None, 0) == (S,)
    assert mc.mcGetDevice() == (S, 1)
    assert mc.mcSetValidDevices([0, 9], 2) == (E.mcErrorInvalidDevice,)
    assert mc.mcSetValidDevices(None, 1) == (E.mcErrorInvalidValue,)
    assert mc.mcSetValidDevices([0, 1, 0], 3) == (E.mcErrorInvalidValue,)


def test_flags_and_configs(dev2):
    assert mc.mcGetDeviceFlags() == (S, int(F.mcDeviceMapHost))
    assert mc.mcSetDeviceFlags(F.mcDeviceScheduleSpin) == (S,)
    assert mc.mcGetDeviceFlags() == (S, int(F.mcDeviceScheduleSpin | F.mcDeviceMapHost))
    assert mc.mcSetDeviceFlags(F.mcDeviceScheduleSpin | F.mcDeviceScheduleYield) == (E.mcErrorInvalidValue,)
    assert mc.mcSetDeviceFlags(0x40) == (E.mcErrorInvalidValue,)
    assert mc.mcMalloc(16)[0] == S                        # the primary context is now active
    assert mc.mcSetDeviceFlags(F.mcDeviceScheduleBlockingSync) == (E.mcErrorSetOnActiveProcess,)
    assert mc.mcSetDeviceFlags(F.mcDeviceScheduleSpin | F.mcDeviceMapHost) == (S,)   # same flags
    assert mc.mcSetDevice(1) == (S,)
    assert mc.mcGetDeviceFlags() == (S, int(F.mcDeviceMapHost))   # flags are per device
    assert mc.mcSetDevice(0) == (S,)
    assert mc.mcDeviceReset() == (S,)
    assert mc.mcGetDeviceFlags() == (S, int(F.mcDeviceMapHost))
    assert mc.mcSetDeviceFlags(F.mcDeviceScheduleBlockingSync | F.mcDeviceLmemResizeToMax) == (S,)
    C, B = mc.mcFuncCache_t, mc.mcSharedMemConfig
    assert mc.mcDeviceSetCacheConfig(C.mcFuncCachePreferShared) == (S,)
    assert mc.mcDeviceSetCacheConfig(9) == (E.mcErrorInvalidValue,)
    assert mc.mcDeviceSetSharedMemConfig(B.mcSharedMemBankSizeEightByte) == (S,)
    assert mc.mcDeviceGetSharedMemConfig() == (S, B.mcSharedMemBankSizeFourByte)
    assert mc.mcDeviceSetSharedMemConfig(5) == (E.mcErrorInvalidValue,)


def test_limits_get_set_rules(dev2):
    assert mc.mcDeviceGetLimit(L.mcLimitStackSize) == (S, 1024)
    assert mc.mcDeviceGetLimit(L.mcLimitMallocHeapSize) == (S, 8 << 20)
    assert mc.mcDeviceGetLimit(L.mcLimitPrintfFifoSize) == (S, 1 << 20)
    assert mc.mcDeviceSetLimit(L.mcLimitStackSize, 1000) == (S,)
    assert mc.mcDeviceGetLimit(L.mcLimitStackSize) == (S, 1008)          # rounded up to 16
    assert mc.mcDeviceSetLimit(L.mcLimitStackSize, 1 << 20) == (E.mcErrorInvalidValue,)
    assert mc.mcDeviceSetLimit(L.mcLimitMaxL2FetchGranularity, 4096) == (S,)
    assert mc.mcDeviceGetLimit(L.mcLimitMaxL2FetchGranularity) == (S, 128)
    assert mc.mcDeviceSetLimit(L.mcLimitDevRuntimePendingLaunchCount, 4096) == (S,)
    assert mc.mcDeviceGetLimit(L.mcLimitDevRuntimePendingLaunchCount) == (S, 4096)
    assert mc.mcDeviceGetLimit(L.mcLimitDevRuntimeSyncDepth) == (E.mcErrorUnsupportedLimit, None)
    assert mc.mcDeviceSetLimit(L.mcLimitDevRuntimeSyncDepth, 4) == (E.mcErrorUnsupportedLimit,)
    assert mc.mcDeviceGetLimit(42) == (E.mcErrorUnsupportedLimit, None)
    assert mc.mcDeviceSetLimit(L.mcLimitMallocHeapSize, -1) == (E.mcErrorInvalidValue,)
    assert mc.mcDeviceSetLimit(L.mcLimitMallocHeapSize, 0) == (E.mcErrorInvalidValue,)
    # limits are per device (primary context) and mcDeviceReset restores them
    mc.mcSetDevice(1)
    assert mc.mcDeviceGetLimit(L.mcLimitStackSize) == (S, 1024)
    mc.mcSetDevice(0)
    assert mc.mcDeviceReset() == (S,)
    assert mc.mcDeviceGetLimit(L.mcLimitStackSize) == (S, 1024)


def test_stack_size_limit_bounds_recursion(dev2, ptx):
    f = _fn(ptx, "recurse")
    _, out = mc.mcMalloc(32 * 4)
    assert mc.mcDeviceSetLimit(L.mcLimitStackSize, 256) == (S,)
    assert mc.mcLaunchKernel(f, 1, 32, [40, out], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (E.mcErrorLaunchFailure,)
    assert mc.fault_report().kind is CUDBGException.CUDBG_EXCEPTION_LANE_USER_STACK_OVERFLOW
    assert mc.mcDeviceReset() == (S,)
    f = _fn(ptx, "recurse")
    _, out = mc.mcMalloc(32 * 4)
    assert mc.mcDeviceSetLimit(L.mcLimitStackSize, 16384) == (S,)
    assert mc.mcLaunchKernel(f, 1, 32, [40, out], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    h = np.zeros(32, np.int32)
    assert mc.mcMemcpy(h, out, h.nbytes, D2H) == (S,)
    r = 1
    for n in range(1, 41):
        r = (r * 7) % 1000003 + n
    assert (h == r).all()


def test_printf_fifo_drops_overflow_and_is_frozen_after_use(dev2, ptx, capfd):
    f = _fn(ptx, "talk")
    size = 5 * record_cost("line 0\n")        # room for exactly 5 of the 20 records
    assert mc.mcDeviceSetLimit(L.mcLimitPrintfFifoSize, size) == (S,)
    assert mc.mcLaunchKernel(f, 1, 1, [20], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    lines = [ln for ln in capfd.readouterr().out.splitlines() if ln.startswith("line")]
    assert lines == [f"line {i}" for i in range(5)]
    assert mc.mcDeviceSetLimit(L.mcLimitPrintfFifoSize, 1 << 20) == (E.mcErrorInvalidValue,)
    assert mc.mcDeviceGetLimit(L.mcLimitPrintfFifoSize) == (S, size)


def test_heap_size_sets_device_heap_and_is_frozen_after_use(dev2, ptx):
    f = _fn(ptx, "grab")
    assert mc.mcDeviceSetLimit(L.mcLimitMallocHeapSize, 1 << 16) == (S,)
    _, out = mc.mcMalloc(8)
    assert mc.mcLaunchKernel(f, 1, 1, [out], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    heap = get_engine().current_device().gpu.heap
    assert heap.size == 1 << 16
    h = np.zeros(1, np.uint64)
    mc.mcMemcpy(h, out, 8, D2H)
    assert heap.base <= int(h[0]) < heap.base + heap.size
    assert mc.mcDeviceSetLimit(L.mcLimitMallocHeapSize, 1 << 20) == (E.mcErrorInvalidValue,)
    assert mc.mcDeviceReset() == (S,)                      # tears the heap down with the context
    assert get_engine().current_device().gpu.heap is None
    assert mc.mcDeviceSetLimit(L.mcLimitMallocHeapSize, 1 << 20) == (S,)


def test_device_reset_tears_down_context_state(dev2, ptx):
    f = _fn(ptx, "talk")
    _, d = mc.mcMalloc(64)
    _, s = mc.mcStreamCreate()
    assert mc.mcDeviceReset() == (S,)
    assert mc.mcStreamQuery(s) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcLaunchKernel(f, 1, 1, [1], 0, None) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcMemset(d, 0, 64)[0] != S
    assert mc.mcDeviceSynchronize() == (S,)
