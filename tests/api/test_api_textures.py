"""The Pythonic texture layer: CudaArray from a numpy image, Texture and
Surface objects as kernel arguments of a gpudbg.compile kernel, round trips
through the array, and the words that configure sampling."""
import numpy as np
import pytest

import gpudbg

SRC = r'''
extern "C" __global__ void shift(cudaTextureObject_t t, float *out, int w, int h, float dx) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w) out[y * w + x] = tex2D<float>(t, (x + 0.5f + dx) / w, (y + 0.5f) / h);
}
extern "C" __global__ void paint(cudaSurfaceObject_t s, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) surf2Dwrite(make_uchar2(x, y * 10), s, x * 2, y);
}
'''


@pytest.fixture(scope="module")
def mod():
    return gpudbg.compile(SRC, name="api_textures.cu")


def test_wrapping_bilinear_texture_from_a_numpy_image(mod):
    img = np.arange(32, dtype=np.float32).reshape(4, 8)
    arr = gpudbg.CudaArray.from_host(img)
    np.testing.assert_array_equal(arr.to_host(), img)
    tex = gpudbg.Texture(arr, filter="linear", address="wrap", normalized=True)
    out = gpudbg.zeros(32, np.float32)
    mod.shift[(1, 4), 8](tex, out, 8, 4, np.float32(1.5))
    got = out.to_host().reshape(4, 8)
    # a shift of 1.5 texels: halfway between columns x+1 and x+2, wrapping at the right edge
    want = 0.5 * (np.roll(img, -1, axis=1) + np.roll(img, -2, axis=1))
    np.testing.assert_allclose(got, want, atol=1e-5)
    tex.destroy()
    arr.free()


def test_surface_over_a_two_channel_array(mod):
    arr = gpudbg.CudaArray((3, 5), np.uint8, channels=2, surface=True)
    surf = gpudbg.Surface(arr)
    mod.paint[3, 5](surf, 5, 3)
    got = arr.to_host()
    assert got.shape == (3, 5, 2)
    np.testing.assert_array_equal(got[..., 0], np.tile(np.arange(5), (3, 1)))
    np.testing.assert_array_equal(got[..., 1], np.repeat(np.arange(3)[:, None] * 10, 5, axis=1))
    assert "Surface(0x" in repr(surf)


def test_bad_words_and_formats_are_clear_errors():
    arr = gpudbg.CudaArray.from_host(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="address must be one of wrap, clamp, mirror, border, not 'repeat'"):
        gpudbg.Texture(arr, address="repeat")
    with pytest.raises(TypeError, match="not float64"):
        gpudbg.CudaArray((4,), np.float64)
    with pytest.raises(gpudbg.GPUError):
        gpudbg.Surface(arr)                       # not made with surface=True
