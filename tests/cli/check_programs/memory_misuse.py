"""Leaks, a double free and a use after free through the mc* API; each
part switched on by an argument: leak, double-free, use-after-free, clean."""
import sys

import numpy as np

import gpudbg
from gpudbg import mc

SRC = r"""
extern "C" __global__ void read_first(const int *p, int *out) { out[threadIdx.x] = p[threadIdx.x]; }
"""
parts = set(sys.argv[1:])
m = gpudbg.compile(SRC, name="misuse.cu")
err, out = mc.mcMalloc(128)
err, kept = mc.mcMalloc(4096)
if "leak" not in parts:
    mc.mcFree(kept)
err, once = mc.mcMalloc(256)
mc.mcFree(once)
if "double-free" in parts:
    err, = mc.mcFree(once)
    print("second free:", err.name)
if "use-after-free" in parts:
    for _ in range(50):            # reuse pressure: the freed range must not come back
        err, p = mc.mcMalloc(256)
        mc.mcFree(p)
    m.read_first[1, 32](once, out)
    print("sync:", mc.mcDeviceSynchronize()[0].name)
mc.mcFree(out)
print("done")
