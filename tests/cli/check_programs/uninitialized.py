"""Reads device memory nothing wrote (UNINIT=1), or memsets it first."""
import os

import numpy as np

import gpudbg
from gpudbg import mc

UNINIT = os.environ.get("UNINIT", "1") == "1"
SRC = r"""
extern "C" __global__ void add_one(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1;
}
"""
n = 64
m = gpudbg.compile(SRC, name="uninitialized.cu")
err, src = mc.mcMalloc(4 * n)
err, dst = mc.mcMalloc(4 * n)
if not UNINIT:
    mc.mcMemset(src, 0, 4 * n)
m.add_one[1, n](src, dst, n)
out = np.zeros(n, dtype=np.int32)
mc.mcMemcpy(out, dst, 4 * n, mc.mcMemcpyKind.mcMemcpyDeviceToHost)
mc.mcFree(src)
mc.mcFree(dst)
print("PASSED" if (out == 1).all() else "FAILED")
