"""Seed 002 §2.4: launches, cooperative launches (grid-wide sync and the
co-residency limit), multi-device launches, function attributes."""
import numpy as np
import pytest

from gpudbg import compile_ptx
from gpudbg.driver.engine import reset_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E

S = E.mcSuccess
D2H = mc.mcMemcpyKind.mcMemcpyDeviceToHost

SRC = r'''
__device__ unsigned int arrived;
// A grid barrier from atomics (no cooperative_groups header under NVRTC);
// not inlined, so the spinning loop sits at lower pcs than the kernel code
// of blocks that have not arrived yet.
__device__ __noinline__ void grid_sync(unsigned int target) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(&arrived, 1u);
        while (atomicAdd(&arrived, 0u) < target) { }
        __threadfence();
    }
    __syncthreads();
}
extern "C" __global__ void sync_kernel(unsigned int *out, unsigned int *flag) {
    unsigned int b = blockIdx.x;
    if (b % 2 == 0) {
        if (threadIdx.x == 0) flag[b] = 1;
        grid_sync(gridDim.x);
    } else {
        unsigned int acc = 0;
        for (unsigned int i = 0; i < b * 10; ++i) acc += i * flag[0];
        if (threadIdx.x == 0) flag[b] = 1 + (acc == 123456789u ? 1u : 0u);
        grid_sync(gridDim.x);
    }
    unsigned int seen = 0;
    for (unsigned int j = 0; j < gridDim.x; ++j) seen += flag[j];
    out[b * blockDim.x + threadIdx.x] = seen;
}
extern "C" __global__ void fill(unsigned int *out, unsigned int v) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
extern "C" __global__ void dyn_shared(unsigned int *out) {
    extern __shared__ unsigned int buf[];
    buf[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}
__constant__ float coeff[16];
extern "C" __global__ void with_static(float *out) {
    __shared__ float tile[256];
    tile[threadIdx.x] = coeff[threadIdx.x % 16];
    __syncthreads();
    out[threadIdx.x] = tile[255 - threadIdx.x];
}
'''


@pytest.fixture(scope="module")
def ptx():
    return compile_ptx(SRC)


@pytest.fixture
def mod(ptx):
    reset_engine(num_devices=2)
    mc.mcGetLastError()
    err, m = mc.mcModuleLoadData(ptx)
    assert err == S
    yield {n: mc.mcModuleGetFunction(m, n)[1] for n in ("sync_kernel", "fill", "dyn_shared", "with_static")}
    reset_engine()
    mc.mcGetLastError()


def _read(ptr, n, dtype=np.uint32):
    h = np.zeros(n, dtype)
    assert mc.mcMemcpy(h, ptr, h.nbytes, D2H) == (S,)
    return h


def test_cooperative_grid_sync_works(mod):
    nb, bs = 8, 64
    _, out = mc.mcMalloc(nb * bs * 4)
    _, flag = mc.mcMalloc(nb * 4)
    assert mc.mcMemset(flag, 0, nb * 4) == (S,)
    assert mc.mcLaunchCooperativeKernel(mod["sync_kernel"], nb, bs, [out, flag], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    # every block saw every block's flag: the barrier held all of them
    assert (_read(out, nb * bs) == nb).all()
    assert mc.last_launch_stats().waves == 1


def test_cooperative_too_large_and_attribute(mod):
    f = mod["fill"]
    _, per_sm = mc.mcOccupancyMaxActiveBlocksPerMultiprocessor(f, 1024, 0)
    _, sms = mc.mcDeviceGetAttribute(mc.mcDeviceAttribute_t.mcDevAttrMultiProcessorCount, 0)
    assert mc.mcDeviceGetAttribute(mc.mcDeviceAttribute_t.mcDevAttrCooperativeLaunch, 0) == (S, 1)
    _, out = mc.mcMalloc(4)
    assert mc.mcLaunchCooperativeKernel(f, per_sm * sms + 1, 1024, [out, 1], 0, None) == \
        (E.mcErrorCooperativeLaunchTooLarge,)
    assert "can be resident" in mc.last_error_message()
    assert mc.mcLaunchCooperativeKernel(f, 1, 2048, [out, 1], 0, None) == (E.mcErrorInvalidConfiguration,)
    assert mc.mcLaunchCooperativeKernel("nope", 1, 32, [out, 1], 0, None) == (E.mcErrorInvalidResourceHandle,)


def test_launch_kernel_and_module_launch_extra(mod):
    f = mod["fill"]
    _, out = mc.mcMalloc(64 * 4)
    assert mc.mcLaunchKernel(f, 2, 32, [out, 7], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert (_read(out, 64) == 7).all()
    buf = np.zeros(16, np.uint8)
    buf[:8] = np.frombuffer(np.uint64(out).tobytes(), np.uint8)
    buf[8:12] = np.frombuffer(np.uint32(9).tobytes(), np.uint8)
    P = mc.mcLaunchParam
    extra = [P.MC_LAUNCH_PARAM_BUFFER_POINTER, buf.tobytes(), P.MC_LAUNCH_PARAM_BUFFER_SIZE, 16,
             P.MC_LAUNCH_PARAM_END]
    assert mc.mcModuleLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, None, None, extra) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert (_read(out, 64) == 9).all()
    assert mc.mcModuleLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, None, [out, 1], extra) == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchKernel(f, (1, 1 << 17), 32, [out, 7], 0, None) == (E.mcErrorInvalidConfiguration,)


def test_func_get_attributes_from_translated_kernel(mod):
    err, a = mc.mcFuncGetAttributes(mod["with_static"])
    assert err == S
    assert a.sharedSizeBytes == 256 * 4 and a.constSizeBytes == 16 * 4
    assert a.maxDynamicSharedSizeBytes == 48 * 1024 - 1024
    assert a.binaryVersion == 90 and a.ptxVersion >= 70 and a.numRegs >= 4
    assert a.preferredShmemCarveout == -1 and a.localSizeBytes == 0
    from gpudbg.driver.engine import get_engine
    k = mod["with_static"].kernel
    assert (a.numRegs, a.maxThreadsPerBlock) == (k.num_regs, k.max_threads_per_block)
    assert mc.mcFuncGetAttributes("with_static") == (E.mcErrorInvalidDeviceFunction, None)
    assert get_engine().device_count() == 2


def test_func_set_attribute_max_dynamic_shared(mod):
    f = mod["dyn_shared"]
    A = mc.mcFuncAttribute
    _, out = mc.mcMalloc(256 * 4)
    big = 100 * 1024
    assert mc.mcLaunchKernel(f, 1, 256, [out], big, None) == (E.mcErrorInvalidValue,)
    assert mc.mcFuncSetAttribute(f, A.mcFuncAttributeMaxDynamicSharedMemorySize, big) == (S,)
    assert mc.mcFuncGetAttributes(f)[1].maxDynamicSharedSizeBytes == big
    assert mc.mcLaunchKernel(f, 1, 256, [out], big, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert (_read(out, 256) == np.arange(255, -1, -1)).all()
    assert mc.mcLaunchKernel(f, 1, 256, [out], big + 1, None) == (E.mcErrorInvalidValue,)
    # lowering it below a launch's request refuses that launch again
    assert mc.mcFuncSetAttribute(f, A.mcFuncAttributeMaxDynamicSharedMemorySize, 1024) == (S,)
    assert mc.mcLaunchKernel(f, 1, 256, [out], 2048, None) == (E.mcErrorInvalidValue,)
    assert mc.mcFuncSetAttribute(f, A.mcFuncAttributeMaxDynamicSharedMemorySize, 228 * 1024) == \
        (E.mcErrorInvalidValue,)
    assert mc.mcFuncSetAttribute(f, A.mcFuncAttributePreferredSharedMemoryCarveout, 50) == (S,)
    assert mc.mcFuncGetAttributes(f)[1].preferredShmemCarveout == 50
    assert mc.mcFuncSetAttribute(f, A.mcFuncAttributePreferredSharedMemoryCarveout, 101) == \
        (E.mcErrorInvalidValue,)
    assert mc.mcFuncSetAttribute(f, 3, 0) == (E.mcErrorInvalidValue,)
    assert mc.mcFuncSetAttribute(None, A.mcFuncAttributePreferredSharedMemoryCarveout, 0) == \
        (E.mcErrorInvalidDeviceFunction,)


def _on_device(ptx, dev):
    assert mc.mcSetDevice(dev) == (S,)
    _, m = mc.mcModuleLoadData(ptx)
    f = mc.mcModuleGetFunction(m, "fill")[1]
    _, out = mc.mcMalloc(64 * 4)
    _, s = mc.mcStreamCreate()
    return f, out, s


def test_multi_device_launches(mod, ptx):
    f0, out0, s0 = _on_device(ptx, 0)
    f1, out1, s1 = _on_device(ptx, 1)
    LP = mc.mcLaunchParams
    params = [LP(f0, 2, 32, [out0, 5], 0, s0), LP(f1, 2, 32, [out1, 5], 0, s1)]
    assert mc.mcLaunchCooperativeKernelMultiDevice(params, 2, 0) == (S,)
    mc.mcSetDevice(0)
    assert (_read(out0, 64) == 5).all()
    mc.mcSetDevice(1)
    assert (_read(out1, 64) == 5).all()
    # different values per device are fine for the Ext variant
    ext = [LP(f0, 2, 32, [out0, 1], 0, s0), LP(f1, 2, 32, [out1, 2], 0, s1)]
    assert mc.mcExtLaunchMultiKernelMultiDevice(ext, 2, 0) == (S,)
    assert mc.mcStreamSynchronize(s1) == (S,)
    assert (_read(out1, 64) == 2).all()
    mc.mcSetDevice(0)
    assert mc.mcStreamSynchronize(s0) == (S,)
    assert (_read(out0, 64) == 1).all()
    # errors
    assert mc.mcLaunchCooperativeKernelMultiDevice([params[0], params[0]], 2, 0) == (E.mcErrorInvalidDevice,)
    assert mc.mcLaunchCooperativeKernelMultiDevice(
        [params[0], LP(f1, 4, 32, [out1, 5], 0, s1)], 2, 0) == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchCooperativeKernelMultiDevice(
        [LP(f0, 10**6, 1024, [out0, 5], 0, s0), LP(f1, 10**6, 1024, [out1, 5], 0, s1)], 2, 0) == \
        (E.mcErrorCooperativeLaunchTooLarge,)
    assert mc.mcLaunchCooperativeKernelMultiDevice(params, 3, 0) == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchCooperativeKernelMultiDevice(params, 2, 4) == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchCooperativeKernelMultiDevice(
        [LP(f0, 2, 32, [out0, 5], 0, s1)], 1, 0) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcExtLaunchMultiKernelMultiDevice(ext, 2, 1) == (E.mcErrorInvalidValue,)
    assert mc.mcExtLaunchMultiKernelMultiDevice([object()], 1, 0) == (E.mcErrorInvalidValue,)
