"""Sum of an array by a shared-memory tree reduction (256-thread blocks).

Each block reduces 2*256 elements into one partial sum with a halving tree
in shared memory; the kernel is relaunched on the partial sums until one
value is left. Checked against numpy in float64.

Usage: python reduction.py [N]   (N defaults to 2**20)
"""
import sys

import numpy as np

import gpudbg

THREADS = 256

SOURCE = r"""
#define THREADS 256

extern "C" __global__ void reduce_sum(const float *in, float *out, int n) {
    __shared__ float partial[THREADS];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * (2 * THREADS) + t;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + THREADS < n) v += in[i + THREADS];
    partial[t] = v;
    __syncthreads();
    for (unsigned stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = partial[0];
}
"""


def device_sum(module: gpudbg.Module, d_in: gpudbg.DeviceArray, n: int) -> float:
    kernel = module.reduce_sum
    while True:
        blocks = max(1, (n + 2 * THREADS - 1) // (2 * THREADS))
        d_out = gpudbg.device_array(blocks, np.float32)
        kernel[blocks, THREADS](d_in, d_out, n)
        if blocks == 1:
            return float(d_out.to_host()[0])
        d_in, n = d_out, blocks


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 1 << 20
    rng = np.random.default_rng(1)
    data = rng.random(n, dtype=np.float32)

    module = gpudbg.compile(SOURCE, name="reduction.cu")
    total = device_sum(module, gpudbg.to_device(data), n)

    expected = float(np.sum(data, dtype=np.float64))
    rel = abs(total - expected) / max(abs(expected), 1.0)
    ok = rel < 1e-5
    print(f"reduction: n={n} sum={total:.6f} expected={expected:.6f} relative error {rel:.2g}: "
          f"{'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
