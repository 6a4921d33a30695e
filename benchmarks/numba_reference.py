"""The four benchmark kernels for Numba's CUDA simulator (numba-cuda with
NUMBA_ENABLE_CUDASIM=1), written to do what the example kernels do.

Numba's simulator runs every thread as a Python thread, so it gets a size it
finishes in about a minute; the comparison is per element processed. Import
this module only to run it: importing it switches Numba to its simulator.
"""
from __future__ import annotations

import os
import time

import numpy as np

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
from numba import cuda, float32  # noqa: E402  (must follow the environment switch)


def time_numba_kernels() -> dict[str, tuple[float, int]]:
    """-> {kernel: (seconds, elements)} measured on Numba's CUDA simulator."""
    @cuda.jit
    def saxpy(n, a, x, y):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if i < n:
            y[i] = a * x[i] + y[i]

    @cuda.jit
    def reduce(inp, out, n):
        s = cuda.shared.array(256, dtype=float32)
        t = cuda.threadIdx.x
        i = cuda.blockIdx.x * 512 + t
        v = float32(0.0)
        if i < n:
            v = inp[i]
        if i + 256 < n:
            v += inp[i + 256]
        s[t] = v
        cuda.syncthreads()
        k = 128
        while k > 0:
            if t < k:
                s[t] += s[t + k]
            cuda.syncthreads()
            k //= 2
        if t == 0:
            out[cuda.blockIdx.x] = s[0]

    @cuda.jit
    def matmul(A, B, C, N):
        As = cuda.shared.array((16, 16), dtype=float32)
        Bs = cuda.shared.array((16, 16), dtype=float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * 16 + ty
        col = cuda.blockIdx.x * 16 + tx
        acc = float32(0.0)
        for t in range(N // 16):
            As[ty, tx] = A[row, t * 16 + tx]
            Bs[ty, tx] = B[t * 16 + ty, col]
            cuda.syncthreads()
            for k in range(16):
                acc += As[ty, k] * Bs[k, tx]
            cuda.syncthreads()
        C[row, col] = acc

    @cuda.jit
    def histogram(data, bins, n):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if i < n:
            cuda.atomic.add(bins, data[i], 1)

    out: dict[str, tuple[float, int]] = {}
    rng = np.random.default_rng(0)

    def timed(fn):
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t

    n = 16384
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out["saxpy"] = (timed(lambda: saxpy[n // 256, 256](n, np.float32(2.5), x, y)), n)
    res = np.zeros(n // 512, dtype=np.float32)
    out["reduction"] = (timed(lambda: reduce[n // 512, 256](x, res, n)), n)
    N = 48
    A = rng.random((N, N), dtype=np.float32)
    B = rng.random((N, N), dtype=np.float32)
    C = np.zeros((N, N), dtype=np.float32)
    out["matmul"] = (timed(lambda: matmul[(N // 16, N // 16), (16, 16)](A, B, C, N)), N * N * N)
    data = np.minimum(rng.exponential(40.0, n), 255).astype(np.uint8)
    bins = np.zeros(256, dtype=np.uint32)
    out["histogram"] = (timed(lambda: histogram[n // 256, 256](data, bins, n)), n)
    return out
