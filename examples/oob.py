"""A kernel with an out-of-bounds read, to show what gpudbg reports.

`forward_difference` computes out[i] = in[i+1] - in[i] but guards with
`i < n` instead of `i < n - 1`, so the last thread reads in[n]: one float
past the end of the buffer. Run it with

    gpudbg run examples/oob.py

to get the fault report: the kernel, source line, faulting thread and block,
and the address "0 bytes past the end of the 4000-byte allocation" (4 bytes
read where the allocation ends). A real GPU may silently return garbage
here; the simulator faults precisely. The program exits non-zero.

Usage: python oob.py [N]   (N defaults to 1000 floats)
"""
import sys

import numpy as np

import gpudbg

SOURCE = r"""
extern "C" __global__ void forward_difference(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)                       // bug: should be i < n - 1
        out[i] = in[i + 1] - in[i];
}
"""


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 1000
    values = np.arange(n, dtype=np.float32) ** 2

    module = gpudbg.compile(SOURCE, name="oob.cu")
    d_in = gpudbg.to_device(values)
    d_out = gpudbg.zeros(n, np.float32)
    threads = 128
    module.forward_difference[(n + threads - 1) // threads, threads](d_in, d_out, n)
    out = d_out.to_host()   # the fault surfaces here, at the synchronizing copy

    ok = np.allclose(out[:-1], np.diff(values))
    print(f"oob: n={n} differences {'PASSED' if ok else 'FAILED'} (the bug went unnoticed)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
