"""CUDA arrays and texture/surface objects through the driver API at the C
ABI: cuArray3DCreate_v2 (layered), cuMemcpy3D/cuMemcpy2D with array
sides, cuTexObjectCreate with the CU_TRSF flags (integers promoted to
normalized float unless READ_AS_INTEGER), a kernel from NVRTC launched with
cuLaunchKernel, the descriptor getters, and the handle errors."""
import ctypes

import numpy as np
import pytest

from cu_kernels import Params, dalloc, from_device, function, load_module
from cudrv_helpers import check, out_u64
from gpudbg import compile_ptx
from gpudbg.cuda_driver import arrays as A
from gpudbg.cuda_driver import copies as X
from gpudbg.cuda_driver import launch as L
from gpudbg.cuda_driver import textures as TX
from gpudbg.cuda_driver.copies import ARRAY, HOST, CUDA_MEMCPY2D, CUDA_MEMCPY3D

U8, F32 = 0x01, 0x20          # CU_AD_FORMAT_UNSIGNED_INT8, CU_AD_FORMAT_FLOAT
LAYERED, SURFACE_LDST = 0x01, 0x02
INVALID_VALUE, INVALID_HANDLE = 1, 400

SRC = r'''
extern "C" __global__ void layered(cudaTextureObject_t t, float *out, int w, int h, int layers) {
  int x = threadIdx.x, y = threadIdx.y, l = blockIdx.x;
  if (x < w && y < h && l < layers) out[(l * h + y) * w + x] = tex2DLayered<float>(t, x + 0.5f, y + 0.5f, l);
}
extern "C" __global__ void bytes(cudaTextureObject_t t, float *out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex1D<float>(t, i + 0.5f);
}
extern "C" __global__ void ints(cudaTextureObject_t t, unsigned *out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex1D<unsigned char>(t, i + 0.5f);
}
'''


@pytest.fixture
def module(ctx):
    return load_module(compile_ptx(SRC, name="cutex.cu"))


def array3d(w, h, d, fmt, channels, flags=0) -> int:
    desc = A.CUDA_ARRAY3D_DESCRIPTOR(w, h, d, fmt, channels, flags)
    out = out_u64()
    check(A.cuArray3DCreate_v2(out.addr, ctypes.addressof(desc)))
    return out.value


def texture(res: TX.CUDA_RESOURCE_DESC, flags=0, filt=0) -> int:
    td = TX.CUDA_TEXTURE_DESC()
    td.addressMode[:] = [1, 1, 1]
    td.filterMode, td.flags = filt, flags
    out = out_u64()
    check(TX.cuTexObjectCreate(out.addr, ctypes.addressof(res), ctypes.addressof(td), 0))
    return out.value


def array_resource(h: int) -> TX.CUDA_RESOURCE_DESC:
    res = TX.CUDA_RESOURCE_DESC()
    res.resType = 0
    res.res.hArray = h
    return res


def test_layered_array_copied_with_cumemcpy3d_and_sampled(ctx, module):
    w, h, layers = 5, 3, 4
    data = np.arange(layers * h * w, dtype=np.float32).reshape(layers, h, w) * 0.5
    arr = array3d(w, h, layers, F32, 1, LAYERED)
    desc = A.CUDA_ARRAY3D_DESCRIPTOR()
    check(A.cuArray3DGetDescriptor_v2(ctypes.addressof(desc), arr))
    assert (desc.Width, desc.Height, desc.Depth, desc.Format, desc.NumChannels, desc.Flags) == (w, h, layers, F32,
                                                                                                  1, LAYERED)
    cp = CUDA_MEMCPY3D(srcMemoryType=HOST, srcHost=data.ctypes.data, srcPitch=w * 4, srcHeight=h,
                       dstMemoryType=ARRAY, dstArray=arr, WidthInBytes=w * 4, Height=h, Depth=layers)
    check(X.cuMemcpy3D_v2(ctypes.addressof(cp)))
    tex = texture(array_resource(arr))
    out = dalloc(data.nbytes)
    p = Params(ctypes.c_uint64(tex), ctypes.c_uint64(out), ctypes.c_int(w), ctypes.c_int(h), ctypes.c_int(layers))
    check(L.cuLaunchKernel(function(module, "layered"), layers, 1, 1, 8, 4, 1, 0, 0, p.addr, 0))
    np.testing.assert_array_equal(from_device(out, data), data)
    # and back with cuMemcpy2D from one layer-0 row range
    back = np.zeros((2, w), np.float32)
    cp2 = CUDA_MEMCPY2D(srcMemoryType=ARRAY, srcArray=arr, srcY=1, dstMemoryType=HOST, dstHost=back.ctypes.data,
                        dstPitch=w * 4, WidthInBytes=w * 4, Height=2)
    check(X.cuMemcpy2D_v2(ctypes.addressof(cp2)))
    np.testing.assert_array_equal(back, data[0, 1:3])
    check(TX.cuTexObjectDestroy(tex))
    check(A.cuArrayDestroy(arr))
    assert A.cuArrayDestroy(arr) == INVALID_HANDLE


def test_integer_texels_promote_unless_read_as_integer(ctx, module):
    vals = np.array([0, 51, 255, 128], np.uint8)
    arr = array3d(4, 0, 0, U8, 1)
    cp = CUDA_MEMCPY2D(srcMemoryType=HOST, srcHost=vals.ctypes.data, srcPitch=4, dstMemoryType=ARRAY,
                       dstArray=arr, WidthInBytes=4, Height=1)
    check(X.cuMemcpy2D_v2(ctypes.addressof(cp)))
    res = array_resource(arr)
    promoted, raw = texture(res), texture(res, flags=0x01)     # CU_TRSF_READ_AS_INTEGER
    f_out, u_out = dalloc(16), dalloc(16)
    pf = Params(ctypes.c_uint64(promoted), ctypes.c_uint64(f_out), ctypes.c_int(4))
    pu = Params(ctypes.c_uint64(raw), ctypes.c_uint64(u_out), ctypes.c_int(4))
    check(L.cuLaunchKernel(function(module, "bytes"), 1, 1, 1, 4, 1, 1, 0, 0, pf.addr, 0))
    check(L.cuLaunchKernel(function(module, "ints"), 1, 1, 1, 4, 1, 1, 0, 0, pu.addr, 0))
    np.testing.assert_allclose(from_device(f_out, np.zeros(4, np.float32)), vals / np.float32(255), atol=1e-7)
    np.testing.assert_array_equal(from_device(u_out, np.zeros(4, np.uint32)), vals)
    td = TX.CUDA_TEXTURE_DESC()
    check(TX.cuTexObjectGetTextureDesc(ctypes.addressof(td), raw))
    assert td.flags == 0x01 and list(td.addressMode) == [1, 1, 1]
    back = TX.CUDA_RESOURCE_DESC()
    check(TX.cuTexObjectGetResourceDesc(ctypes.addressof(back), promoted))
    assert back.resType == 0 and back.res.hArray == arr


def test_surface_objects_and_handle_errors(ctx):
    plain = array3d(4, 4, 0, F32, 1)
    res = array_resource(plain)
    out = out_u64()
    assert TX.cuSurfObjectCreate(out.addr, ctypes.addressof(res)) == INVALID_VALUE    # no SURFACE_LDST
    ok = array3d(4, 4, 0, F32, 1, SURFACE_LDST)
    ok_res = array_resource(ok)
    check(TX.cuSurfObjectCreate(out.addr, ctypes.addressof(ok_res)))
    check(TX.cuSurfObjectDestroy(out.value))
    assert TX.cuSurfObjectDestroy(out.value) == INVALID_VALUE
    stale = array_resource(0x1234)
    td = TX.CUDA_TEXTURE_DESC()
    assert TX.cuTexObjectCreate(out.addr, ctypes.addressof(stale), ctypes.addressof(td), 0) == INVALID_HANDLE
    d = A.CUDA_ARRAY_DESCRIPTOR(8, 2, 0x77, 1)
    assert A.cuArrayCreate_v2(out.addr, ctypes.addressof(d)) == INVALID_VALUE              # not a CUarray_format
    d = A.CUDA_ARRAY_DESCRIPTOR(8, 2, F32, 3)
    assert A.cuArrayCreate_v2(out.addr, ctypes.addressof(d)) == INVALID_VALUE              # 3 channels
    d = A.CUDA_ARRAY_DESCRIPTOR(8, 2, F32, 2)
    check(A.cuArrayCreate_v2(out.addr, ctypes.addressof(d)))
    got = A.CUDA_ARRAY_DESCRIPTOR()
    check(A.cuArrayGetDescriptor_v2(ctypes.addressof(got), out.value))
    assert (got.Width, got.Height, got.Format, got.NumChannels) == (8, 2, F32, 2)


def test_mipmapped_arrays(ctx):
    desc = A.CUDA_ARRAY3D_DESCRIPTOR(16, 8, 0, F32, 1, 0)
    m = out_u64()
    check(A.cuMipmappedArrayCreate(m.addr, ctypes.addressof(desc), 5))
    sizes = []
    for level in range(5):
        lv = out_u64()
        check(A.cuMipmappedArrayGetLevel(lv.addr, m.value, level))
        d = A.CUDA_ARRAY3D_DESCRIPTOR()
        check(A.cuArray3DGetDescriptor_v2(ctypes.addressof(d), lv.value))
        sizes.append((d.Width, d.Height))
    assert sizes == [(16, 8), (8, 4), (4, 2), (2, 1), (1, 1)]
    lv = out_u64()
    assert A.cuMipmappedArrayGetLevel(lv.addr, m.value, 5) == INVALID_VALUE
    assert A.cuMipmappedArrayCreate(m.addr, ctypes.addressof(desc), 6) == INVALID_VALUE   # 16 has 5 levels
    check(A.cuMipmappedArrayDestroy(m.value))
