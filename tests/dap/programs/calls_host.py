"""Host program of the DAP stepping test: a -G kernel calling a device
function, for stepIn / stepOut / next per warp."""
import numpy as np

import gpudbg

SRC = r"""
__device__ __noinline__ int helper(int a) {
    int b = a * 2;  // HELPER
    return b + 1;
}
extern "C" __global__ void caller(int *out) {
    int t = threadIdx.x;
    int r = helper(t);  // CALL
    out[t] = r;  // STORE
}
"""

module = gpudbg.compile(SRC, name="calls.cu", options=["-G"])
out = gpudbg.zeros(64, np.int32)
module.caller[1, 64](out)
print("out", out.to_host()[:4].tolist())
