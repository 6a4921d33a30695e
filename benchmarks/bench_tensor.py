"""Tensor-core throughput: a wmma f16 GEMM (one warp per 16x16 output tile,
f32 accumulators) on the simulated GPU through the public API, checked
against numpy, next to the scalar shared-memory tiled matmul of
examples/matmul.py at the same size, so the cost of the warp-collective
path (gather each warp's fragments, multiply, scatter) is seen against the
ordinary per-thread instructions computing the same product.

    python benchmarks/bench_tensor.py [--n 256] [--repeat 3]
"""
from __future__ import annotations

import argparse

import numpy as np

import gpudbg
from bench_sim import example_source
from timing import best_of

WMMA = r"""
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void gemm(const half *A, const half *B, float *C, int n) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int tm = warp / (n / 16), tn = warp % (n / 16);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < n; k += 16) {
        wmma::load_matrix_sync(fa, A + tm * 16 * n + k, n);
        wmma::load_matrix_sync(fb, B + tn * 16 * n + k, n);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(C + tm * 16 * n + tn * 16, acc, n, wmma::mem_row_major);
}
"""


def wmma_case(n: int, repeat: int) -> float:
    rs = np.random.default_rng(0)
    A = rs.standard_normal((n, n)).astype(np.float16)
    B = rs.standard_normal((n, n)).astype(np.float16)
    k = gpudbg.compile(WMMA, name="bench_wmma.cu").get_function("gemm")
    dA, dBt = gpudbg.to_device(A), gpudbg.to_device(np.ascontiguousarray(B.T))
    dC = gpudbg.zeros(n * n, np.float32)
    warps = (n // 16) ** 2

    def sim():
        k[warps // 4, 128](dA, dBt, dC, n)
        gpudbg.Device().synchronize()
    t = best_of(sim, repeat)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert np.allclose(dC.to_host().reshape(n, n), ref, rtol=1e-3, atol=1e-2), "wmma GEMM differs from numpy"
    return t


def scalar_case(n: int, repeat: int) -> float:
    mod = gpudbg.compile(example_source("matmul"))
    k = mod.get_function("matmul")
    rs = np.random.default_rng(1)
    A = rs.random((n, n), dtype=np.float32)
    B = rs.random((n, n), dtype=np.float32)
    dA, dB, dC = gpudbg.to_device(A), gpudbg.to_device(B), gpudbg.zeros(n * n, np.float32)
    tile = 16

    def sim():
        k[(n // tile, n // tile), (tile, tile)](dA, dB, dC, n)
        gpudbg.Device().synchronize()
    t = best_of(sim, repeat)
    assert np.allclose(dC.to_host().reshape(n, n), A @ B, rtol=1e-3), "scalar matmul differs from numpy"
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n = args.n
    flop = 2 * n ** 3
    tw = wmma_case(n, args.repeat)
    print(f"wmma f16 GEMM {n}^3: {tw * 1e3:8.1f} ms  {flop / tw / 1e9:6.2f} GFLOP/s (simulated)")
    ts = scalar_case(n, args.repeat)
    print(f"scalar tiled matmul {n}^3 (examples/matmul.py): {ts * 1e3:8.1f} ms  {flop / ts / 1e9:6.2f} GFLOP/s")
    print(f"wmma / scalar time: {tw / ts:.2f}")


if __name__ == "__main__":
    main()
