"""256-bin byte histogram with global atomicAdd, checked against numpy.

Usage: python histogram.py [N]   (N defaults to 2**20 bytes)
"""
import sys

import numpy as np

import gpudbg

BINS = 256

SOURCE = r"""
extern "C" __global__ void histogram(const unsigned char *data, unsigned int *bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[data[i]], 1u);
}
"""


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 1 << 20
    rng = np.random.default_rng(3)
    # A skewed distribution, so many threads of a warp hit the same bin.
    data = np.minimum(rng.exponential(40.0, n), BINS - 1).astype(np.uint8)

    module = gpudbg.compile(SOURCE, name="histogram.cu")
    d_data = gpudbg.to_device(data)
    d_bins = gpudbg.zeros(BINS, np.uint32)
    threads = 256
    module.histogram[(n + threads - 1) // threads, threads](d_data, d_bins, n)
    bins = d_bins.to_host()

    expected = np.bincount(data, minlength=BINS).astype(np.uint32)
    ok = bool(np.array_equal(bins, expected))
    print(f"histogram: n={n} bins={BINS} total={int(bins.sum())} "
          f"busiest bin {int(bins.argmax())} ({int(bins.max())}): {'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
