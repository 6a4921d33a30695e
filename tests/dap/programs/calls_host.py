"""Host program of the DAP stepping test: a -G kernel calling a device
function, for stepIn / stepOut / next per warp; its printf reaches the
client as program output."""
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
    if (t == 0) printf("caller done: %d\n", r);
}
"""

module = gpudbg.compile(SRC, name="calls.cu", options=["-G"])
out = gpudbg.zeros(64, np.int32)
module.caller[1, 64](out)
print("out", out.to_host()[:4].tolist())
