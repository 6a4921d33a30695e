"""saxpy on NVIDIA's cuda-python driver API (cuda.bindings.driver), written
as its documentation does: NVRTC compiles, the driver loads and launches."""
import ctypes

import numpy as np
from cuda.bindings import driver, nvrtc

SAXPY = b"""
extern "C" __global__ void saxpy(float a, const float *x, float *y, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if isinstance(err, driver.CUresult) and err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"driver error {err.name}")
    if isinstance(err, nvrtc.nvrtcResult) and err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"nvrtc error {err.name}")
    return rest[0] if len(rest) == 1 else rest


check(driver.cuInit(0))
dev = check(driver.cuDeviceGet(0))
major = check(driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
minor = check(driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
prog = check(nvrtc.nvrtcCreateProgram(SAXPY, b"saxpy.cu", 0, [], []))
check(nvrtc.nvrtcCompileProgram(prog, 1, [f"--gpu-architecture=compute_{major}{minor}".encode()]))
size = check(nvrtc.nvrtcGetPTXSize(prog))
ptx = b" " * size
check(nvrtc.nvrtcGetPTX(prog, ptx))

ctx = check(driver.cuDevicePrimaryCtxRetain(dev))
check(driver.cuCtxSetCurrent(ctx))
module = check(driver.cuModuleLoadData(ptx))
kernel = check(driver.cuModuleGetFunction(module, b"saxpy"))

n = 4096
a = np.array([2.0], dtype=np.float32)
x = np.random.default_rng(0).random(n, dtype=np.float32)
y = np.random.default_rng(1).random(n, dtype=np.float32)
nbytes = x.nbytes
dx = check(driver.cuMemAlloc(nbytes))
dy = check(driver.cuMemAlloc(nbytes))
stream = check(driver.cuStreamCreate(0))
check(driver.cuMemcpyHtoD(dx, x.ctypes.data, nbytes))
check(driver.cuMemcpyHtoD(dy, y.ctypes.data, nbytes))
args = [np.array([a[0]], np.float32), np.array([int(dx)], np.uint64), np.array([int(dy)], np.uint64),
        np.array([n], np.uint64)]
params = np.array([arg.ctypes.data for arg in args], dtype=np.uint64)
check(driver.cuLaunchKernel(kernel, n // 256, 1, 1, 256, 1, 1, 0, stream, params.ctypes.data, 0))
check(driver.cuStreamSynchronize(stream))
out = np.empty_like(y)
check(driver.cuMemcpyDtoH(out.ctypes.data, dy, nbytes))
ok = np.allclose(out, 2.0 * x + y)
check(driver.cuMemFree(dx))
check(driver.cuMemFree(dy))
check(driver.cuModuleUnload(module))
print("cuda-python saxpy:", "PASSED" if ok else "FAILED")
raise SystemExit(0 if ok else 1)
