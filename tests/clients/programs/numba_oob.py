"""A Numba kernel that reads one element past the end of its array."""
import numpy as np
from numba import cuda


@cuda.jit(lineinfo=True)
def shift_left(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i + 1]


src = cuda.to_device(np.arange(256, dtype=np.float32))
dst = cuda.device_array(256, dtype=np.float32)
shift_left[2, 128](src, dst)
cuda.synchronize()
print("numba oob: no fault seen")
