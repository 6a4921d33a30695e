"""cuda-python: exits with a live context, an unfreed buffer and a launch
nobody synchronized (the driver must neither crash nor hang at exit)."""
import numpy as np
from cuda.bindings import driver, nvrtc

SRC = b'extern "C" __global__ void fill(int *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = i; }'
driver.cuInit(0)
_, dev = driver.cuDeviceGet(0)
_, ctx = driver.cuCtxCreate(None, 0, dev)
_, prog = nvrtc.nvrtcCreateProgram(SRC, b"fill.cu", 0, [], [])
nvrtc.nvrtcCompileProgram(prog, 1, [b"--gpu-architecture=compute_80"])
_, size = nvrtc.nvrtcGetPTXSize(prog)
ptx = b" " * size
nvrtc.nvrtcGetPTX(prog, ptx)
_, mod = driver.cuModuleLoadData(ptx)
_, fn = driver.cuModuleGetFunction(mod, b"fill")
n = 1 << 16
_, buf = driver.cuMemAlloc(4 * n)
args = [np.array([int(buf)], np.uint64), np.array([n], np.int32)]
params = np.array([a.ctypes.data for a in args], np.uint64)
err, = driver.cuLaunchKernel(fn, n // 256, 1, 1, 256, 1, 1, 0, 0, params.ctypes.data, 0)
print("launched:", err.name)
