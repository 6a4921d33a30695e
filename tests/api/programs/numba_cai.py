"""gpudbg arrays and numba-cuda arrays in one program, through the CUDA Array
Interface: numba kernels take gpudbg DeviceArrays (views included), gpudbg
wraps numba arrays without copying, and each side honours the other's
stream. Prints PASSED when every check holds; run with `gpudbg run`."""
import numpy as np
from numba import cuda

import gpudbg


@cuda.jit
def add_index(a):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] += i * 100 + j


@cuda.jit
def fill(a, value):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = value


mod = gpudbg.compile(r'''
extern "C" __global__ void twice(int n, float *x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}''')

# 1. a numba kernel writes a gpudbg array, through a strided view
host = np.zeros((4, 6), np.float32)
d = gpudbg.to_device(host)
view = d[1:, ::2]
add_index[(1, 1), (8, 8)](view)
expected = host.copy()
expected[1:, ::2] += np.add.outer(np.arange(3) * 100, np.arange(3))
assert np.array_equal(d.to_host(), expected), d.to_host()

# 2. numba sees a gpudbg array as its own device array, zero-copy
nd = cuda.as_cuda_array(d)
assert nd.device_ctypes_pointer.value == d.ptr
assert np.array_equal(nd.copy_to_host(), expected)

# 3. gpudbg wraps a numba array without copying; arithmetic and a gpudbg kernel on it
na = cuda.to_device(np.arange(8, dtype=np.float32))
g = gpudbg.asarray(na)
assert g.ptr == na.device_ctypes_pointer.value
mod.twice[1, 8](8, na)                       # a numba array as a gpudbg kernel argument
assert np.array_equal(na.copy_to_host(), np.arange(8) * 2)
assert g.sum().item() == 56.0 and np.array_equal((g + 1).to_host(), np.arange(8) * 2 + 1)

# 4. stream order across the two: gpudbg work on a gpudbg.Stream, read by numba
s = gpudbg.Stream(non_blocking=True)         # not ordered with numba's default stream
x = gpudbg.to_device(np.ones(1 << 14, np.float32), stream=s)
mod.twice[64, 256](1 << 14, x, stream=s)
cai = x.__cuda_array_interface__
assert cai["stream"] not in (None, 0, 1, 2), cai   # the producing stream's CUstream handle
seen = cuda.as_cuda_array(x)                       # numba synchronizes on that stream
assert s.query()
assert seen.copy_to_host().sum() == 2 * (1 << 14)

# 5. and numba work on a numba stream, read by gpudbg
ns = cuda.stream()
y = cuda.device_array(1 << 14, np.float32, stream=ns)
fill[64, 256, ns](y, 3.0)
assert y.__cuda_array_interface__["stream"] == int(ns.handle)
assert gpudbg.asarray(y).sum().item() == 3.0 * (1 << 14)

print("numba interop: PASSED")
