"""A kernel built for source-level debugging: compiled with -G, so the
debugger shows its variables, and using shared memory and a barrier.

Each block writes v = 3*t + 1000*blockIdx.x to a shared tile, waits at
__syncthreads(), and reads its right neighbour's value back. Try

    gpudbg debug --batch -ex 'break rotate.cu:7' -ex run -ex 'p v' \\
        -ex 'cuda block 1 thread 200' -ex 'p v' -ex next -ex next \\
        -ex 'x/4dw (@shared int *)0' -ex continue examples/rotate.py

Usage: python rotate.py [BLOCKS]   (BLOCKS defaults to 2, 256 threads each)
"""
import sys

import numpy as np

import gpudbg

SOURCE = r"""
extern "C" __global__ void rotate(int *out) {
    __shared__ int tile[256];
    int t = threadIdx.x;
    int v = t * 3 + blockIdx.x * 1000;
    tile[t] = v;
    __syncthreads();
    int w = tile[(t + 1) % blockDim.x];
    out[blockIdx.x * blockDim.x + t] = w - v;
}
"""


def main(argv: list[str]) -> int:
    blocks = int(argv[1]) if len(argv) > 1 else 2
    module = gpudbg.compile(SOURCE, name="rotate.cu", options=["-G"])
    out = gpudbg.zeros(256 * blocks, np.int32)
    module.rotate[blocks, 256](out)
    got = out.to_host().reshape(blocks, 256)
    want = np.tile(np.append(np.full(255, 3), -765), (blocks, 1))
    ok = np.array_equal(got, want)
    print(f"rotate: {blocks} blocks, neighbour differences {'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
