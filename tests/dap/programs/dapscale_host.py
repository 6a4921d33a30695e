"""Host program of the DAP tests: compiles dapscale.cu (next to it) with
-G under its real path, runs 2 blocks of 64 threads, prints two results
and exits 0 when every other element is t * factor + 1."""
import pathlib
import sys

import numpy as np

import gpudbg

KERNEL = pathlib.Path(__file__).resolve().with_name("dapscale.cu")


def main() -> int:
    module = gpudbg.compile(KERNEL.read_text(), name=str(KERNEL), options=["-G"])
    out = gpudbg.zeros(128, np.int32)
    module.dapscale[2, 64](out, 3)
    got = out.to_host()
    print(f"out[5] = {got[5]}")
    print(f"out[67] = {got[67]}")
    want = np.arange(128, dtype=np.int32) * 3 + 1
    others = [i for i in range(128) if i != 67]
    return 0 if np.array_equal(got[others], want[others]) else 1


if __name__ == "__main__":
    sys.exit(main())
