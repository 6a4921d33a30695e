"""Textures and surfaces end to end: CUDA C++ kernels compiled by NVRTC
(tex2D, tex3D, tex2DLayered, tex2Dgather, tex2DLod, tex1Dfetch,
surf2Dread/surf2Dwrite), arrays and objects made through the mc* runtime,
results compared with an independent numpy model of the texture unit
(half-texel shift, floor, 8-fraction-bit weights, address modes)."""
import math

import numpy as np
import pytest

from gpudbg import compile_ptx
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E

S = E.mcSuccess
H2D, D2H = mc.mcMemcpyKind.mcMemcpyHostToDevice, mc.mcMemcpyKind.mcMemcpyDeviceToHost
FLOAT, UNSIGNED = mc.mcChannelFormatKind.mcChannelFormatKindFloat, mc.mcChannelFormatKind.mcChannelFormatKindUnsigned
WRAP, CLAMP, MIRROR, BORDER = 0, 1, 2, 3

SRC = r'''
extern "C" __global__ void sample2d(cudaTextureObject_t t, float *out, const float *u, const float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, u[i], v[i]);
}
extern "C" __global__ void sample_uchar4(cudaTextureObject_t t, float4 *out, const float *u, const float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, u[i], v[i]);
}
extern "C" __global__ void sample3d(cudaTextureObject_t t, float *out, const float *u, const float *v,
                                    const float *w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float>(t, u[i], v[i], w[i]);
}
extern "C" __global__ void sample_layered(cudaTextureObject_t t, float *out, const float *u, const float *v,
                                          const int *layer, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float>(t, u[i], v[i], layer[i]);
}
extern "C" __global__ void gather(cudaTextureObject_t t, float4 *out, const float *u, const float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2Dgather<float4>(t, u[i], v[i], 0);
}
extern "C" __global__ void sample_lod(cudaTextureObject_t t, float *out, const float *u, const float *v,
                                      float lod, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLod<float>(t, u[i], v[i], lod);
}
extern "C" __global__ void fetch1d(cudaTextureObject_t t, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(t, i - 2);
}
extern "C" __global__ void invert(cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  uchar4 c;
  surf2Dread(&c, s, x * 4, y);
  surf2Dwrite(make_uchar4(255 - c.x, c.y + 1, c.z, x + y), s, x * 4, y);
}
extern "C" __global__ void poke(cudaSurfaceObject_t s, int x, int y) {
  surf2Dwrite(1.0f, s, x * 4, y);
}
extern "C" __global__ void query(cudaTextureObject_t t, int *out) {
  float v = tex2D<float>(t, 0.5f, 0.5f);
  out[0] = (int)v;
}
'''


@pytest.fixture(scope="module", params=["", "-G"], ids=["plain", "-G"])
def kernels(request):
    ptx = compile_ptx(SRC, options=[request.param] if request.param else [], name="textures.cu")
    err, m = mc.mcModuleLoadData(ptx)
    assert err == S, mc.last_error_message()
    names = ("sample2d", "sample_uchar4", "sample3d", "sample_layered", "gather", "sample_lod", "fetch1d",
             "invert", "poke", "query")
    out = {}
    for name in names:
        err, f = mc.mcModuleGetFunction(m, name)
        assert err == S
        out[name] = f
    return out


# ------------------------------------------------------------------ an independent model of the texture unit
def weight(frac: float) -> float:
    """The 9-bit fixed-point weight (8 fraction bits) of a fraction."""
    return math.floor(frac * 256 + 0.5) / 256


def wrap_index(i: int, n: int, mode: int, normalized: bool):
    if not normalized and mode in (WRAP, MIRROR):
        mode = CLAMP
    if mode == WRAP:
        return i % n
    if mode == MIRROR:
        m = i % (2 * n)
        return m if m < n else 2 * n - 1 - m
    if mode == CLAMP:
        return min(max(i, 0), n - 1)
    return i if 0 <= i < n else None


def model_2d(img, u, v, mode, linear, normalized, border=0.0):
    h, w = img.shape

    def texel(i, j):
        i2, j2 = wrap_index(i, w, mode, normalized), wrap_index(j, h, mode, normalized)
        return np.float32(border) if i2 is None or j2 is None else img[j2, i2]

    x = np.float32(u) * np.float32(w) if normalized else np.float32(u)
    y = np.float32(v) * np.float32(h) if normalized else np.float32(v)
    if not linear:
        return texel(math.floor(x), math.floor(y))
    xb, yb = np.float32(x - np.float32(0.5)), np.float32(y - np.float32(0.5))
    i, j = math.floor(xb), math.floor(yb)
    a, b = np.float32(weight(xb - i)), np.float32(weight(yb - j))
    one = np.float32(1)
    r0 = (one - a) * texel(i, j) + a * texel(i + 1, j)
    r1 = (one - a) * texel(i, j + 1) + a * texel(i + 1, j + 1)
    return np.float32((one - b) * r0 + b * r1)


# ------------------------------------------------------------------ helpers
def dev(a: np.ndarray) -> int:
    err, p = mc.mcMalloc(a.nbytes)
    assert err == S
    assert mc.mcMemcpy(p, np.ascontiguousarray(a), a.nbytes, H2D) == (S,)
    return p


def back(p: int, like: np.ndarray) -> np.ndarray:
    out = np.zeros_like(like)
    assert mc.mcMemcpy(out, p, out.nbytes, D2H) == (S,), mc.last_error_message()
    return out


def launch(f, n, args, block=64):
    assert mc.mcLaunchKernel(f, ((n + block - 1) // block, 1, 1), (block, 1, 1), args) == (S,), \
        mc.last_error_message()
    assert mc.mcDeviceSynchronize() == (S,), mc.last_error_message()


def float_array(img: np.ndarray):
    err, desc = mc.mcCreateChannelDesc(32, 0, 0, 0, FLOAT)
    h, w = img.shape
    err, arr = mc.mcMallocArray(desc, w, h)
    assert err == S, mc.last_error_message()
    assert mc.mcMemcpy2DToArray(arr, 0, 0, img, w * 4, w * 4, h, H2D) == (S,), mc.last_error_message()
    return arr


def texture(resource, mode=CLAMP, linear=True, normalized=False, read_normalized=False, border=(0, 0, 0, 0)):
    rd = mc.mcResourceDesc()
    if isinstance(resource, mc.mcResourceDesc):
        rd = resource
    else:
        rd.res.array.array = resource
    td = mc.mcTextureDesc()
    td.addressMode = [mode] * 3
    td.filterMode = int(linear)
    td.normalizedCoords = int(normalized)
    td.readMode = int(read_normalized)
    td.borderColor = list(border)
    err, tex = mc.mcCreateTextureObject(rd, td, None)
    assert err == S, mc.last_error_message()
    return tex


IMG = np.random.default_rng(7).random((9, 13), dtype=np.float32)


# ------------------------------------------------------------------ tests
def test_bilinear_image_matches_the_fixed_point_model(kernels):
    arr = float_array(IMG)
    tex = texture(arr, CLAMP, linear=True)
    rng = np.random.default_rng(3)
    u = rng.uniform(-2, 15, 200).astype(np.float32)
    v = rng.uniform(-2, 11, 200).astype(np.float32)
    out = np.zeros(200, np.float32)
    pu, pv, po = dev(u), dev(v), dev(out)
    launch(kernels["sample2d"], 200, [tex, po, pu, pv, 200])
    got = back(po, out)
    want = np.array([model_2d(IMG, a, b, CLAMP, True, False) for a, b in zip(u, v)], np.float32)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-7)
    # the fixed-point weights are visible: exact float weights give other results
    global weight
    quantized, weight = weight, (lambda frac: float(frac))
    try:
        exact = np.array([model_2d(IMG, a, b, CLAMP, True, False) for a, b in zip(u, v)], np.float32)
    finally:
        weight = quantized
    assert np.abs(got - exact).max() > 1e-4
    assert mc.mcDestroyTextureObject(tex) == (S,)
    assert mc.mcFreeArray(arr) == (S,)


@pytest.mark.parametrize("mode", [WRAP, CLAMP, MIRROR, BORDER])
@pytest.mark.parametrize("linear", [False, True])
def test_each_address_mode_with_normalized_coordinates(kernels, mode, linear):
    arr = float_array(IMG)
    tex = texture(arr, mode, linear=linear, normalized=True, border=(0.25, 0, 0, 0))
    rng = np.random.default_rng(mode * 2 + linear)
    n = 128
    u = rng.uniform(-1.5, 2.5, n).astype(np.float32)
    v = rng.uniform(-1.5, 2.5, n).astype(np.float32)
    out = np.zeros(n, np.float32)
    po = dev(out)
    launch(kernels["sample2d"], n, [tex, po, dev(u), dev(v), n])
    got = back(po, out)
    want = np.array([model_2d(IMG, a, b, mode, linear, True, 0.25) for a, b in zip(u, v)], np.float32)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-7)
    if mode == BORDER:
        assert (got == np.float32(0.25)).any()


def test_unnormalized_wrap_behaves_as_clamp(kernels):
    arr = float_array(IMG)
    tex = texture(arr, WRAP, linear=False, normalized=False)
    u = np.array([-3, 20, 5.5], np.float32)
    v = np.array([1, 2, 40], np.float32)
    out = np.zeros(3, np.float32)
    po = dev(out)
    launch(kernels["sample2d"], 3, [tex, po, dev(u), dev(v), 3])
    np.testing.assert_array_equal(back(po, out), [IMG[1, 0], IMG[2, 12], IMG[8, 5]])


def test_uchar4_read_as_normalized_float(kernels):
    rng = np.random.default_rng(5)
    img = rng.integers(0, 256, (4, 6, 4), dtype=np.uint8)
    err, desc = mc.mcCreateChannelDesc(8, 8, 8, 8, UNSIGNED)
    err, arr = mc.mcMallocArray(desc, 6, 4)
    assert err == S
    assert mc.mcMemcpy2DToArray(arr, 0, 0, img, 24, 24, 4, H2D) == (S,)
    tex = texture(arr, CLAMP, linear=True, read_normalized=True)
    u = np.array([0.5, 2.75, 5.5], np.float32)
    v = np.array([0.5, 1.25, 3.5], np.float32)
    out = np.zeros((3, 4), np.float32)
    po = dev(out)
    launch(kernels["sample_uchar4"], 3, [tex, po, dev(u), dev(v), 3])
    got = back(po, out)
    norm = img.astype(np.float32) / np.float32(255)
    for c in range(4):
        want = [model_2d(norm[:, :, c], a, b, CLAMP, True, False) for a, b in zip(u, v)]
        np.testing.assert_allclose(got[:, c], want, rtol=0, atol=3e-7)
    np.testing.assert_allclose(got[0], norm[0, 0], atol=1e-7)   # a texel centre is the texel


def test_3d_texture_trilinear(kernels):
    vol = np.random.default_rng(11).random((3, 4, 5), dtype=np.float32)   # depth, height, width
    err, desc = mc.mcCreateChannelDesc(32, 0, 0, 0, FLOAT)
    err, arr = mc.mcMalloc3DArray(desc, mc.mcExtent(5, 4, 3), 0)
    assert err == S, mc.last_error_message()
    p = mc.mcMemcpy3DParms()
    p.srcPtr = mc.mcPitchedPtr(vol, 5 * 4, 5, 4)
    p.dstArray = arr
    p.extent = mc.mcExtent(5, 4, 3)
    p.kind = H2D
    assert mc.mcMemcpy3D(p) == (S,), mc.last_error_message()
    tex = texture(arr, CLAMP, linear=True)
    rng = np.random.default_rng(2)
    n = 64
    u, v, w = (rng.uniform(0, s, n).astype(np.float32) for s in (5, 4, 3))
    out = np.zeros(n, np.float32)
    po = dev(out)
    launch(kernels["sample3d"], n, [tex, po, dev(u), dev(v), dev(w), n])
    got = back(po, out)
    want = []
    for a, b, c in zip(u, v, w):
        zb = np.float32(c - np.float32(0.5))
        k = math.floor(zb)
        g = np.float32(weight(zb - k))
        s0 = model_2d(vol[min(max(k, 0), 2)], a, b, CLAMP, True, False)
        s1 = model_2d(vol[min(max(k + 1, 0), 2)], a, b, CLAMP, True, False)
        want.append((np.float32(1) - g) * s0 + g * s1)
    np.testing.assert_allclose(got, np.array(want, np.float32), rtol=0, atol=3e-7)
    # and back out of the array with a 3D copy
    q = mc.mcMemcpy3DParms()
    host = np.zeros_like(vol)
    q.srcArray = arr
    q.dstPtr = mc.mcPitchedPtr(host, 20, 5, 4)
    q.extent = mc.mcExtent(5, 4, 3)
    q.kind = D2H
    assert mc.mcMemcpy3D(q) == (S,), mc.last_error_message()
    np.testing.assert_array_equal(host, vol)


def test_layered_texture_reads_each_layer(kernels):
    layers = np.random.default_rng(13).random((3, 4, 6), dtype=np.float32)
    err, desc = mc.mcCreateChannelDesc(32, 0, 0, 0, FLOAT)
    err, arr = mc.mcMalloc3DArray(desc, mc.mcExtent(6, 4, 3), mc.mcArrayFlags.mcArrayLayered)
    assert err == S, mc.last_error_message()
    assert mc.mcArrayGetInfo(arr)[2:] == (mc.mcExtent(6, 4, 3), 1)
    p = mc.mcMemcpy3DParms()
    p.srcPtr = mc.mcPitchedPtr(layers, 24, 6, 4)
    p.dstArray = arr
    p.extent = mc.mcExtent(6, 4, 3)
    p.kind = H2D
    assert mc.mcMemcpy3D(p) == (S,), mc.last_error_message()
    tex = texture(arr, CLAMP, linear=True)
    n = 48
    rng = np.random.default_rng(4)
    u = rng.uniform(0, 6, n).astype(np.float32)
    v = rng.uniform(0, 4, n).astype(np.float32)
    layer = rng.integers(0, 3, n).astype(np.int32)
    out = np.zeros(n, np.float32)
    po = dev(out)
    launch(kernels["sample_layered"], n, [tex, po, dev(u), dev(v), dev(layer), n])
    want = [model_2d(layers[k], a, b, CLAMP, True, False) for a, b, k in zip(u, v, layer)]
    np.testing.assert_allclose(back(po, out), np.array(want, np.float32), rtol=0, atol=2e-7)


def test_gather_returns_the_bilinear_footprint(kernels):
    img = np.arange(20, dtype=np.float32).reshape(4, 5)
    arr = float_array(img)
    tex = texture(arr, CLAMP, linear=False)
    u = np.array([1.2, 3.9], np.float32)
    v = np.array([1.6, 0.1], np.float32)
    out = np.zeros((2, 4), np.float32)
    po = dev(out)
    launch(kernels["gather"], 2, [tex, po, dev(u), dev(v), 2])
    got = back(po, out)
    # (1.2, 1.6): footprint i0=0, j0=1 -> (i0,j1), (i1,j1), (i1,j0), (i0,j0)
    np.testing.assert_array_equal(got[0], [img[2, 0], img[2, 1], img[1, 1], img[1, 0]])
    # (3.9, 0.1): i0=3, j0=-1 clamped to 0
    np.testing.assert_array_equal(got[1], [img[0, 3], img[0, 4], img[0, 4], img[0, 3]])


def test_mipmapped_texture_reads_the_level_the_lod_names(kernels):
    err, desc = mc.mcCreateChannelDesc(32, 0, 0, 0, FLOAT)
    err, mip = mc.mcMallocMipmappedArray(desc, mc.mcExtent(8, 8, 0), 3, 0)
    assert err == S, mc.last_error_message()
    levels = []
    for lv, size in enumerate((8, 4, 2)):
        err, a = mc.mcGetMipmappedArrayLevel(mip, lv)
        assert err == S
        data = np.full((size, size), float(lv + 1) * 10, np.float32) + np.arange(size, dtype=np.float32)
        assert mc.mcMemcpy2DToArray(a, 0, 0, data, size * 4, size * 4, size, H2D) == (S,)
        levels.append(data)
    assert mc.mcFreeArray(a)[0] == E.mcErrorInvalidResourceHandle   # a level belongs to its mipmap
    rd = mc.mcResourceDesc(mc.mcResourceType.mcResourceTypeMipmappedArray)
    rd.res.mipmap.mipmap = mip
    td = mc.mcTextureDesc()
    td.normalizedCoords = 1
    td.maxMipmapLevelClamp = 2.0
    err, tex = mc.mcCreateTextureObject(rd, td, None)
    assert err == S, mc.last_error_message()
    u = np.array([0.1, 0.6], np.float32)
    v = np.array([0.5, 0.5], np.float32)
    out = np.zeros(2, np.float32)
    po = dev(out)
    for lod, lv in ((0.0, 0), (1.2, 1), (1.6, 2), (7.0, 2)):
        launch(kernels["sample_lod"], 2, [tex, po, dev(u), dev(v), np.float32(lod), 2])
        size = levels[lv].shape[0]
        want = [levels[lv][int(b * size), int(a * size)] for a, b in zip(u, v)]
        np.testing.assert_array_equal(back(po, out), want)
    assert mc.mcDestroyTextureObject(tex) == (S,)
    assert mc.mcFreeMipmappedArray(mip) == (S,)


def test_linear_memory_texture_fetch_clamps_out_of_range_indices(kernels):
    data = np.arange(100, 116, dtype=np.int32)
    err, base = mc.mcMalloc(1024 + data.nbytes)
    p = -(-base // 512) * 512                 # devPtr must be aligned to the texture alignment
    assert mc.mcMemcpy(p, data, data.nbytes, H2D) == (S,)
    rd = mc.mcResourceDesc(mc.mcResourceType.mcResourceTypeLinear)
    rd.res.linear.devPtr = p + 4
    rd.res.linear.sizeInBytes = data.nbytes
    rd.res.linear.desc = mc.mcChannelFormatDesc(32, 0, 0, 0, mc.mcChannelFormatKind.mcChannelFormatKindSigned)
    assert mc.mcCreateTextureObject(rd, mc.mcTextureDesc(), None) == (E.mcErrorInvalidValue, None)
    assert "texture alignment" in mc.last_error_message()
    rd = mc.mcResourceDesc(mc.mcResourceType.mcResourceTypeLinear)
    rd.res.linear.devPtr = p
    rd.res.linear.sizeInBytes = data.nbytes
    rd.res.linear.desc = mc.mcChannelFormatDesc(32, 0, 0, 0, mc.mcChannelFormatKind.mcChannelFormatKindSigned)
    tex = texture(rd, BORDER, linear=False)
    out = np.zeros(20, np.int32)
    po = dev(out)
    launch(kernels["fetch1d"], 20, [tex, po, 20])
    want = [data[i - 2] if 0 <= i - 2 < 16 else 0 for i in range(20)]
    np.testing.assert_array_equal(back(po, out), want)
    err, got = mc.mcGetTextureObjectResourceDesc(tex)
    assert err == S and got.res.linear.devPtr == p and got.res.linear.sizeInBytes == 64
    err, td = mc.mcGetTextureObjectTextureDesc(tex)
    assert err == S and td.addressMode == [BORDER] * 3 and td.filterMode == 0


def test_surface_writes_read_back(kernels):
    w, h = 7, 5
    img = np.random.default_rng(1).integers(0, 200, (h, w, 4), dtype=np.uint8)
    err, desc = mc.mcCreateChannelDesc(8, 8, 8, 8, UNSIGNED)
    err, arr = mc.mcMallocArray(desc, w, h, mc.mcArrayFlags.mcArraySurfaceLoadStore)
    assert err == S
    assert mc.mcMemcpy2DToArray(arr, 0, 0, img, w * 4, w * 4, h, H2D) == (S,)
    rd = mc.mcResourceDesc()
    rd.res.array.array = arr
    err, surf = mc.mcCreateSurfaceObject(rd)
    assert err == S, mc.last_error_message()
    assert mc.mcLaunchKernel(kernels["invert"], (1, 1, 1), (8, 8, 1), [surf, w, h]) == (S,)
    assert mc.mcDeviceSynchronize() == (S,), mc.last_error_message()
    got = np.zeros_like(img)
    assert mc.mcMemcpy2DFromArray(got, w * 4, arr, 0, 0, w * 4, h, D2H) == (S,)
    want = img.copy()
    want[:, :, 0] = 255 - img[:, :, 0]
    want[:, :, 1] = img[:, :, 1] + 1
    want[:, :, 3] = np.add.outer(np.arange(h), np.arange(w))
    np.testing.assert_array_equal(got, want)
    assert mc.mcDestroySurfaceObject(surf) == (S,)


def test_surface_needs_the_load_store_flag():
    err, desc = mc.mcCreateChannelDesc(32, 0, 0, 0, FLOAT)
    err, arr = mc.mcMallocArray(desc, 4, 4)
    rd = mc.mcResourceDesc()
    rd.res.array.array = arr
    assert mc.mcCreateSurfaceObject(rd) == (E.mcErrorInvalidValue, None)
    assert "cudaArraySurfaceLoadStore" in mc.last_error_message()


def test_linear_filtering_of_integers_read_as_elements_is_refused():
    err, desc = mc.mcCreateChannelDesc(8, 0, 0, 0, UNSIGNED)
    err, arr = mc.mcMallocArray(desc, 4, 4)
    rd = mc.mcResourceDesc()
    rd.res.array.array = arr
    td = mc.mcTextureDesc()
    td.filterMode = 1
    assert mc.mcCreateTextureObject(rd, td, None) == (E.mcErrorInvalidValue, None)
    assert "linear filtering" in mc.last_error_message()


def test_param_2d_copies_name_arrays():
    img = np.arange(24, dtype=np.float32).reshape(4, 6)
    arr = float_array(np.zeros((4, 6), np.float32))
    T = mc.mcMemoryType
    up = mc.mc_Memcpy2D(srcMemoryType=T.mcMemoryTypeHost, srcHost=img, srcPitch=24, dstMemoryType=T.mcMemoryTypeArray,
                        dstArray=arr, dstXInBytes=8, dstY=1, WidthInBytes=16, Height=3)
    assert mc.mcMemcpyParam2D(up) == (S,), mc.last_error_message()
    out = np.zeros((4, 6), np.float32)
    assert mc.mcMemcpy2DFromArray(out, 24, arr, 0, 0, 24, 4, D2H) == (S,)
    want = np.zeros((4, 6), np.float32)
    want[1:4, 2:6] = img[0:3, 0:4]
    np.testing.assert_array_equal(out, want)
    up.Height = 4                                    # rows 1..4 of a 4-row array
    assert mc.mcMemcpyParam2D(up) == (E.mcErrorInvalidValue,)
    assert "does not fit in CUDA array" in mc.last_error_message()


def test_srgb_and_half_textures(kernels):
    rng = np.random.default_rng(9)
    img = rng.integers(0, 256, (2, 3, 4), dtype=np.uint8)
    err, desc = mc.mcCreateChannelDesc(8, 8, 8, 8, UNSIGNED)
    err, arr = mc.mcMallocArray(desc, 3, 2)
    assert mc.mcMemcpy2DToArray(arr, 0, 0, img, 12, 12, 2, H2D) == (S,)
    rd = mc.mcResourceDesc()
    rd.res.array.array = arr
    td = mc.mcTextureDesc()
    td.readMode, td.sRGB = 1, 1
    err, tex = mc.mcCreateTextureObject(rd, td, None)
    assert err == S
    u = np.array([0.5, 2.5], np.float32)
    v = np.array([1.5, 0.5], np.float32)
    out = np.zeros((2, 4), np.float32)
    po = dev(out)
    launch(kernels["sample_uchar4"], 2, [tex, po, dev(u), dev(v), 2])
    got = back(po, out)
    c = img[[1, 0], [0, 2]].astype(np.float64) / 255
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    np.testing.assert_allclose(got[:, :3], lin[:, :3], rtol=1e-5, atol=1e-6)     # colour decoded
    np.testing.assert_allclose(got[:, 3], c[:, 3], atol=1e-7)                      # alpha is linear
    half = rng.standard_normal((3, 5)).astype(np.float16)
    err, hdesc = mc.mcCreateChannelDesc(16, 0, 0, 0, FLOAT)
    err, harr = mc.mcMallocArray(hdesc, 5, 3)
    assert mc.mcMemcpy2DToArray(harr, 0, 0, half, 10, 10, 3, H2D) == (S,)
    htex = texture(harr, CLAMP, linear=True)
    n = 16
    hu = rng.uniform(0, 5, n).astype(np.float32)
    hv = rng.uniform(0, 3, n).astype(np.float32)
    hout = np.zeros(n, np.float32)
    ph = dev(hout)
    launch(kernels["sample2d"], n, [htex, ph, dev(hu), dev(hv), n])
    want = [model_2d(half.astype(np.float32), a, b, CLAMP, True, False) for a, b in zip(hu, hv)]
    np.testing.assert_allclose(back(ph, hout), np.array(want, np.float32), rtol=0, atol=1e-6)


def test_pitch2d_texture_over_pitched_memory(kernels):
    img = np.random.default_rng(21).random((5, 7), dtype=np.float32)
    err, p, pitch = mc.mcMallocPitch(7 * 4, 5)
    assert err == S
    assert mc.mcMemcpy2D(p, pitch, img, 28, 28, 5, H2D) == (S,)
    rd = mc.mcResourceDesc(mc.mcResourceType.mcResourceTypePitch2D)
    rd.res.pitch2D.devPtr, rd.res.pitch2D.width, rd.res.pitch2D.height = p, 7, 5
    rd.res.pitch2D.pitchInBytes = pitch
    rd.res.pitch2D.desc = mc.mcChannelFormatDesc(32, 0, 0, 0, FLOAT)
    tex = texture(rd, MIRROR, linear=True, normalized=True)
    rng = np.random.default_rng(22)
    n = 40
    u = rng.uniform(-1, 2, n).astype(np.float32)
    v = rng.uniform(-1, 2, n).astype(np.float32)
    out = np.zeros(n, np.float32)
    po = dev(out)
    launch(kernels["sample2d"], n, [tex, po, dev(u), dev(v), n])
    want = [model_2d(img, a, b, MIRROR, True, True) for a, b in zip(u, v)]
    np.testing.assert_allclose(back(po, out), np.array(want, np.float32), rtol=0, atol=2e-7)
    rd.res.pitch2D.pitchInBytes = 28                 # below the texture pitch alignment
    assert mc.mcCreateTextureObject(rd, mc.mcTextureDesc(), None)[0] == E.mcErrorInvalidValue
    assert "pitch alignment" in mc.last_error_message()


CUBE_SRC = r'''
// as CUDA's simpleCubemapTexture sample: every face texel read back through texCubemap
extern "C" __global__ void faces(float *out, int w, cudaTextureObject_t tex) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  float u = ((x + 0.5f) / (float)w) * 2.f - 1.f, v = ((y + 0.5f) / (float)w) * 2.f - 1.f;
  for (int face = 0; face < 6; face++) {
    float cx, cy, cz;
    if (face == 0) { cx = 1; cy = -v; cz = -u; }
    else if (face == 1) { cx = -1; cy = -v; cz = u; }
    else if (face == 2) { cx = u; cy = 1; cz = v; }
    else if (face == 3) { cx = u; cy = -1; cz = -v; }
    else if (face == 4) { cx = u; cy = -v; cz = 1; }
    else { cx = -u; cy = -v; cz = -1; }
    out[face * w * w + y * w + x] = -texCubemap<float>(tex, cx, cy, cz);
  }
}
'''


@pytest.mark.parametrize("options", [[], ["-G"]], ids=["plain", "-G"])
def test_cubemap_sample_reads_every_face_texel(options):
    w = 8
    data = np.arange(6 * w * w, dtype=np.float32).reshape(6, w, w)
    err, m = mc.mcModuleLoadData(compile_ptx(CUBE_SRC, options=options, name="cube.cu"))
    assert err == S, mc.last_error_message()
    _, f = mc.mcModuleGetFunction(m, "faces")
    err, desc = mc.mcCreateChannelDesc(32, 0, 0, 0, FLOAT)
    err, arr = mc.mcMalloc3DArray(desc, mc.mcExtent(w, w, 6), mc.mcArrayFlags.mcArrayCubemap)
    assert err == S, mc.last_error_message()
    p = mc.mcMemcpy3DParms(srcPtr=mc.mcPitchedPtr(data, w * 4, w, w), dstArray=arr, extent=mc.mcExtent(w, w, 6),
                           kind=H2D)
    assert mc.mcMemcpy3D(p) == (S,), mc.last_error_message()
    tex = texture(arr, WRAP, linear=True, normalized=True)
    out = np.zeros_like(data)
    po = dev(out)
    assert mc.mcLaunchKernel(f, (1, 1, 1), (w, w, 1), [po, w, tex]) == (S,)
    assert mc.mcDeviceSynchronize() == (S,), mc.last_error_message()
    np.testing.assert_allclose(back(po, out), -data, atol=1e-5)


@pytest.mark.parametrize("make, message", [
    (lambda d: mc.mcMallocArray(d, 0, 4), "width >= 1"),
    (lambda d: mc.mcMallocArray(mc.mcChannelFormatDesc(32, 32, 32, 0, FLOAT), 4, 4), "1, 2 or 4 channels"),
    (lambda d: mc.mcMallocArray(mc.mcChannelFormatDesc(8, 0, 0, 0, FLOAT), 4, 4), "channels of 8 bits"),
    (lambda d: mc.mcMallocArray(d, 1 << 20, 4), "width must be an int in 0..65536"),
    (lambda d: mc.mcMallocArray(d, 4, 4, 0x40), "not cudaArray* flags"),
    (lambda d: mc.mcMallocArray(d, 4, 4, 0x1), "made with mcMalloc3DArray"),
    (lambda d: mc.mcMalloc3DArray(d, mc.mcExtent(4, 4, 5), 0x4), "cubemap array needs depth 6"),
    (lambda d: mc.mcMalloc3DArray(d, mc.mcExtent(4, 3, 6), 0x4), "width == height"),
    (lambda d: mc.mcMalloc3DArray(d, mc.mcExtent(4, 4, 0), 0x1), "depth >= 1 (the layer count)"),
    (lambda d: mc.mcMalloc3DArray(d, mc.mcExtent(4, 0, 3), 0), "3D array needs a height"),
    (lambda d: mc.mcMallocMipmappedArray(d, mc.mcExtent(8, 8, 0), 5, 0), "exceeds the 4 levels"),
])
def test_bad_array_shapes_are_refused_with_the_reason(make, message):
    err, desc = mc.mcCreateChannelDesc(32, 0, 0, 0, FLOAT)
    assert make(desc)[0] == E.mcErrorInvalidValue
    assert message in mc.last_error_message()


def test_array_copies_out_of_bounds_or_between_elements_are_refused():
    arr = float_array(np.zeros((3, 4), np.float32))
    src = np.zeros(64, np.float32)
    assert mc.mcMemcpy2DToArray(arr, 4, 0, src, 16, 16, 3, H2D) == (E.mcErrorInvalidValue,)
    assert "does not fit in CUDA array" in mc.last_error_message()
    assert mc.mcMemcpy2DToArray(arr, 2, 0, src, 16, 8, 1, H2D) == (E.mcErrorInvalidValue,)
    assert "multiples of 4" in mc.last_error_message()
    assert mc.mcMemcpyToArray(arr, 0, 2, src, 48, H2D) == (E.mcErrorInvalidValue,)
    assert "run past the end" in mc.last_error_message()
    assert mc.mcMemcpy2DToArray("arr", 0, 0, src, 16, 16, 1, H2D) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcFreeArray(arr) == (S,)
    assert mc.mcMemcpy2DToArray(arr, 0, 0, src, 16, 16, 1, H2D) == (E.mcErrorInvalidResourceHandle,)
