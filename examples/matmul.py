"""Tiled matrix multiply C = A @ B with 16x16 shared-memory tiles.

Each 16x16 block computes one tile of C, stepping through tiles of A and B
staged in shared memory between two barriers. Checked against numpy.

Usage: python matmul.py [N]   (N defaults to 256; any N works, edges are guarded)
"""
import sys

import numpy as np

import gpudbg

TILE = 16

SOURCE = r"""
#define TILE 16

extern "C" __global__ void matmul(const float *A, const float *B, float *C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        int a_col = t * TILE + tx, b_row = t * TILE + ty;
        As[ty][tx] = (row < n && a_col < n) ? A[row * n + a_col] : 0.0f;
        Bs[ty][tx] = (b_row < n && col < n) ? B[b_row * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < n && col < n)
        C[row * n + col] = acc;
}
"""


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 256
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)

    module = gpudbg.compile(SOURCE, name="matmul.cu")
    d_a, d_b = gpudbg.to_device(a), gpudbg.to_device(b)
    d_c = gpudbg.device_array((n, n), np.float32)
    grid = ((n + TILE - 1) // TILE, (n + TILE - 1) // TILE)
    module.matmul[grid, (TILE, TILE)](d_a, d_b, d_c, n)
    c = d_c.to_host()

    expected = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.max(np.abs(c - expected))) if n else 0.0
    ok = np.allclose(c, expected, rtol=1e-4, atol=1e-3)
    print(f"matmul: {n}x{n} tiled {TILE}x{TILE}, max abs error {err:.3g}: {'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
