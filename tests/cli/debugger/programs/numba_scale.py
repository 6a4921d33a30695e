"""A Numba kernel for `gpudbg debug`: `python numba_scale.py [lineinfo|debug]`
compiles `scale` with lineinfo=True (default) or debug=True, runs it on 64
elements and prints PASSED when a[i] == 3*i + 1 everywhere."""
import sys

import numpy as np
from numba import cuda


def scale(a, factor):
    i = cuda.grid(1)
    scaled = i * factor + 1  # LOCAL
    if i < a.size:
        a[i] = scaled  # STORE


def main(argv):
    mode = argv[1] if len(argv) > 1 else "lineinfo"
    options = {"debug": True, "opt": False} if mode == "debug" else {"lineinfo": True}
    kernel = cuda.jit(**options)(scale)
    a = cuda.to_device(np.zeros(64, dtype=np.int32))
    kernel[2, 32](a, np.int32(3))
    out = a.copy_to_host()
    ok = bool((out == np.arange(64) * 3 + 1).all())
    print("PASSED" if ok else f"FAILED {out[:8].tolist()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
