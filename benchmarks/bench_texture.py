"""Texture sampling throughput: an N x N float image resampled by one
thread per pixel with tex2D (point and bilinear filtering) through a
texture object over a CUDA array, next to the same kernel reading the
image with plain global loads (the nearest texel), so the texture unit's
cost (addressing, 4 gathers and the fixed-point blend per bilinear sample)
is seen against an ordinary load. The bilinear result is checked against a
numpy model of the filter.

    python benchmarks/bench_texture.py [--n 512] [--repeat 3]
"""
from __future__ import annotations

import argparse

import numpy as np

import gpudbg
from gpudbg.runtime import mc
from timing import best_of

SRC = r"""
extern "C" __global__ void sample(cudaTextureObject_t t, float *out, int n, float shift) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < n) out[y * n + x] = tex2D<float>(t, x + shift, y + shift);
}
extern "C" __global__ void load(const float *img, float *out, int n, float shift) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    int sx = min(max((int)(x + shift), 0), n - 1), sy = min(max((int)(y + shift), 0), n - 1);
    if (x < n) out[y * n + x] = img[sy * n + sx];
}
"""


def texture(arr, linear: bool) -> int:
    rd = mc.mcResourceDesc()
    rd.res.array.array = arr
    td = mc.mcTextureDesc()
    td.addressMode = [1, 1, 1]
    td.filterMode = int(linear)
    err, tex = mc.mcCreateTextureObject(rd, td, None)
    assert err == 0, mc.last_error_message()
    return tex


def model(img: np.ndarray, shift: float) -> np.ndarray:
    n = img.shape[0]
    c = np.arange(n, dtype=np.float32) + np.float32(shift) - np.float32(0.5)
    i = np.floor(c).astype(np.int64)
    w = (np.floor((c - np.floor(c)).astype(np.float64) * 256 + 0.5) / 256).astype(np.float32)
    i0, i1 = np.clip(i, 0, n - 1), np.clip(i + 1, 0, n - 1)
    rows = (1 - w)[None, :] * img[:, i0] + w[None, :] * img[:, i1]
    return ((1 - w)[:, None] * rows[i0, :] + w[:, None] * rows[i1, :]).astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    n, shift = a.n, 0.3
    img = np.random.default_rng(0).random((n, n), dtype=np.float32)
    mod = gpudbg.compile(SRC, name="bench_texture.cu")
    _, desc = mc.mcCreateChannelDesc(32, 0, 0, 0, 2)
    _, arr = mc.mcMallocArray(desc, n, n)
    assert mc.mcMemcpy2DToArray(arr, 0, 0, img, 4 * n, 4 * n, n, 1)[0] == 0
    dimg, out = gpudbg.to_device(img), gpudbg.zeros(n * n, np.float32)
    grid, block = ((n + 127) // 128, n), 128

    def run(kernel, first):
        def go():
            kernel[grid, block](first, out, n, np.float32(shift))
            gpudbg.Device().synchronize()
        return best_of(go, a.repeat)

    t_load = run(mod.get_function("load"), dimg)
    t_point = run(mod.get_function("sample"), texture(arr, False))
    t_linear = run(mod.get_function("sample"), texture(arr, True))
    assert np.allclose(out.to_host().reshape(n, n), model(img, shift), rtol=0, atol=1e-6), "bilinear != model"
    px = n * n
    for name, t in (("global load", t_load), ("tex2D point", t_point), ("tex2D bilinear", t_linear)):
        print(f"{name:15s} {n}x{n}: {t * 1e3:8.1f} ms  {px / t / 1e6:6.2f} Msamples/s")


if __name__ == "__main__":
    main()
