"""Numba @cuda.jit kernels as Numba's documentation writes them, unmodified:
elementwise, shared memory with cuda.syncthreads, atomics, a device
function and cuda.local.array. Prints PASSED when every result matches numpy."""
import numpy as np
from numba import cuda, float32, int32


@cuda.jit
def increment_by_one(an_array):
    pos = cuda.grid(1)
    if pos < an_array.size:
        an_array[pos] += 1


TPB = 64


@cuda.jit
def block_sums(a, out):
    tile = cuda.shared.array(TPB, dtype=float32)
    tx = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[tx] = a[i] if i < a.size else 0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if tx < stride:
            tile[tx] += tile[tx + stride]
        cuda.syncthreads()
        stride //= 2
    if tx == 0:
        out[cuda.blockIdx.x] = tile[0]


@cuda.jit
def histogram(data, bins):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(bins, data[i] % bins.size, 1)


@cuda.jit(device=True)
def clamp(x, lo, hi):
    return min(max(x, lo), hi)


@cuda.jit
def clamp_all(a, lo, hi):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = clamp(a[i], lo, hi)


@cuda.jit
def reverse_fours(a):
    scratch = cuda.local.array(4, dtype=int32)
    i = cuda.grid(1)
    if 4 * i + 3 < a.size:
        for k in range(4):
            scratch[k] = a[4 * i + k]
        for k in range(4):
            a[4 * i + k] = scratch[3 - k]


def main():
    ok = True
    a = np.arange(1000, dtype=np.float32)
    d = cuda.to_device(a)
    increment_by_one[(a.size + 127) // 128, 128](d)
    ok &= np.array_equal(d.copy_to_host(), a + 1)

    x = np.random.default_rng(1).random(TPB * 8, dtype=np.float32)
    out = cuda.device_array(8, dtype=np.float32)
    block_sums[8, TPB](cuda.to_device(x), out)
    ok &= np.allclose(out.copy_to_host(), x.reshape(8, TPB).sum(axis=1), rtol=1e-5)

    data = np.random.default_rng(2).integers(0, 1000, 4096).astype(np.int32)
    bins = cuda.to_device(np.zeros(16, dtype=np.int32))
    histogram[32, 128](cuda.to_device(data), bins)
    ok &= np.array_equal(bins.copy_to_host(), np.bincount(data % 16, minlength=16).astype(np.int32))

    c = np.linspace(-2, 2, 300).astype(np.float64)
    dc = cuda.to_device(c)
    clamp_all[3, 128](dc, -1.0, 1.0)
    ok &= np.array_equal(dc.copy_to_host(), np.clip(c, -1, 1))

    r = np.arange(64, dtype=np.int32)
    dr = cuda.to_device(r)
    reverse_fours[1, 16](dr)
    ok &= np.array_equal(dr.copy_to_host(), r.reshape(16, 4)[:, ::-1].ravel())
    print("numba kernels:", "PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
