"""SAXPY (y = a*x + y) on the simulated GPU, checked against numpy.

Usage: python saxpy.py [N]   (or: gpudbg run examples/saxpy.py [N]); N defaults to 2**20.
"""
import sys

import numpy as np

import gpudbg

SOURCE = r"""
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
"""


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 1 << 20
    a = np.float32(2.5)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)

    module = gpudbg.compile(SOURCE, name="saxpy.cu")
    d_x, d_y = gpudbg.to_device(x), gpudbg.to_device(y)
    threads = 256
    module.saxpy[(n + threads - 1) // threads, threads](n, a, d_x, d_y)
    result = d_y.to_host()

    expected = a * x + y
    err = float(np.max(np.abs(result - expected))) if n else 0.0
    ok = np.allclose(result, expected, rtol=1e-6, atol=1e-6)
    print(f"saxpy: n={n} a={a} max abs error {err:.3g}: {'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
