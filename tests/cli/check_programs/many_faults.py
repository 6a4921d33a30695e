"""24 threads in 3 blocks read past the end of their buffer (8 per block)."""
import numpy as np

import gpudbg

SRC = r"""
extern "C" __global__ void tail(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = i;
    if (threadIdx.x >= 24 && blockIdx.x < 3) j = n + (1 << 22) + i;   // far past every allocation
    out[i] = in[j];
}
"""
n = 128
m = gpudbg.compile(SRC, name="many_faults.cu")
src, dst = gpudbg.to_device(np.zeros(n, np.int32)), gpudbg.zeros(n, np.int32)
m.tail[4, 32](src, dst, n)
dst.to_host()
