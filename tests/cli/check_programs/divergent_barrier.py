"""__syncthreads inside a branch only half of each warp takes (DIVERGENT=1),
or after the branch."""
import os

import numpy as np

import gpudbg

DIVERGENT = os.environ.get("DIVERGENT", "1") == "1"
SRC = r"""
extern "C" __global__ void halves(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
#ifdef DIVERGENT
    if (t % 32 < 16) {
        __syncthreads();
        out[t] = s[63 - t];
    }
#else
    __syncthreads();
    if (t % 32 < 16) out[t] = s[63 - t];
#endif
    out[t] += 1;     // the other half of each warp goes on working
}
"""
m = gpudbg.compile(SRC, name="divergent_barrier.cu", options=["-DDIVERGENT"] if DIVERGENT else [])
out = gpudbg.zeros(64, np.int32)
m.halves[1, 64](out)
print("done", out.to_host()[:4])
