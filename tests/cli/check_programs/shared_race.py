"""A shared-memory race: each thread reads its neighbour's slot with no
__syncthreads after the writes (RACY=1), or with one (RACY=0)."""
import os

import numpy as np

import gpudbg

RACY = os.environ.get("RACY", "1") == "1"
SRC = r"""
extern "C" __global__ void shift(const int *in, int *out) {
    __shared__ int s[128];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
#ifndef RACY
    __syncthreads();
#endif
    int v = s[(t + 1) % 128];
    out[blockIdx.x * 128 + t] = v;
}
"""
m = gpudbg.compile(SRC, name="shared_race.cu", options=["-DRACY"] if RACY else [])
x = np.arange(256, dtype=np.int32)
d_in, d_out = gpudbg.to_device(x), gpudbg.zeros(256, np.int32)
m.shift[2, 128](d_in, d_out)
ok = np.array_equal(d_out.to_host(), np.roll(x.reshape(2, 128), -1, axis=1).ravel())
print("PASSED" if ok else "FAILED")
