"""cuda-python: a kernel without a bounds check launched on more threads
than its buffer has elements."""
import numpy as np
from cuda.bindings import driver, nvrtc

SRC = b"""extern "C" __global__ void twice(float *x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = 2.0f * x[i];
}"""
driver.cuInit(0)
_, dev = driver.cuDeviceGet(0)
_, ctx = driver.cuDevicePrimaryCtxRetain(dev)
driver.cuCtxSetCurrent(ctx)
_, prog = nvrtc.nvrtcCreateProgram(SRC, b"twice.cu", 0, [], [])
nvrtc.nvrtcCompileProgram(prog, 2, [b"--gpu-architecture=compute_80", b"-lineinfo"])
_, size = nvrtc.nvrtcGetPTXSize(prog)
ptx = b" " * size
nvrtc.nvrtcGetPTX(prog, ptx)
_, mod = driver.cuModuleLoadData(ptx)
_, fn = driver.cuModuleGetFunction(mod, b"twice")
_, buf = driver.cuMemAlloc(4 * 1000)
args = [np.array([int(buf)], np.uint64)]
params = np.array([a.ctypes.data for a in args], np.uint64)
driver.cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, 0, params.ctypes.data, 0)
err, = driver.cuCtxSynchronize()
print("cuCtxSynchronize:", err.name)
