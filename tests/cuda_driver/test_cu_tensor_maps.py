"""Tensor maps and TMA: cuTensorMapEncodeTiled at the C ABI (its checks,
CUDA_ERROR_INVALID_VALUE naming the argument), and an sm_90 kernel moving
2-D boxes with cp.async.bulk.tensor (out-of-bounds fill, element strides,
the 128B swizzle, a tiled store back), against numpy."""
import ctypes

import numpy as np
import pytest

from cu_kernels import Params, dalloc, from_device, function, load_module, to_device
from cudrv_helpers import check
from gpudbg import compile_ptx
from gpudbg.cuda_driver import launch as L
from gpudbg.cuda_driver import tensor_maps as TM
from gpudbg.sim import tensor_map

F32, U8 = 7, 0
INVALID_VALUE = 1
W, H, PITCH = 100, 70, 112          # elements; rows padded to 112 floats (448 bytes)
BOX_X, BOX_Y = 32, 8

SRC = r'''
struct alignas(64) TMap { unsigned long long w[16]; };

__device__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

extern "C" __global__ void tma_load_store(const TMap* in_map, const TMap* out_map, float* dump, int x0, int y0) {
  __shared__ alignas(1024) float box[8][32];
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = smem_addr(&bar), s = smem_addr(box);
  int t = threadIdx.x;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  if (t == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"((int)sizeof(box)));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" :: "r"(s), "l"(in_map), "r"(x0), "r"(y0), "r"(b) : "memory");
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(b));
  float* flat = &box[0][0];
  for (int i = t; i < 256; i += blockDim.x) dump[i] = flat[i];      // the shared layout as it landed
  __syncthreads();
  for (int i = t; i < 256; i += blockDim.x) flat[i] *= 2.0f;
  asm volatile("fence.proxy.async.shared::cta;");
  __syncthreads();
  if (t == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                 :: "l"(out_map), "r"(x0), "r"(y0), "r"(s) : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group 0;");
  }
}
'''


def encode(dtype, address, dims, strides, box, es, swizzle=0, oob=0, interleave=0) -> tuple[int, bytes]:
    m = (ctypes.c_uint64 * 16)()
    rank = len(dims)
    a = [(ctypes.c_uint64 * max(rank, 1))(*dims), (ctypes.c_uint64 * max(rank - 1, 1))(*strides),
         (ctypes.c_uint32 * rank)(*box), (ctypes.c_uint32 * rank)(*es)]
    r = TM.cuTensorMapEncodeTiled(ctypes.addressof(m), dtype, rank, address, *(ctypes.addressof(x) for x in a),
                                  interleave, swizzle, 0, oob)
    return r, bytes(m)


def test_encode_checks_the_documented_rules(ctx):
    good = dict(dtype=F32, address=0x10000, dims=[W, H], strides=[PITCH * 4], box=[BOX_X, BOX_Y], es=[1, 1])
    r, raw = encode(**good)
    assert r == 0
    tm = tensor_map.decode(raw)
    assert (tm.rank, tm.dims, tm.strides, tm.box, tm.address) == (2, (W, H), (PITCH * 4,), (BOX_X, BOX_Y), 0x10000)
    for change in [dict(address=0x10008), dict(strides=[W * 4 + 8]), dict(box=[BOX_X, 300]), dict(box=[3, 8]),
                   dict(es=[1, 9]), dict(dims=[0, H]), dict(dtype=U8, oob=1), dict(interleave=1), dict(swizzle=4),
                   dict(swizzle=1, box=[16, 8])]:
        assert encode(**{**good, **change})[0] == INVALID_VALUE, change
    with pytest.raises(tensor_map.TensorMapError, match="not a tensor map"):
        tensor_map.decode(bytes(128))


def _expected_box(src, x0, y0, es_y=1, oob_nan=False):
    out = np.full((BOX_Y // es_y, BOX_X), np.nan if oob_nan else 0, np.float32)
    for j in range(out.shape[0]):
        for i in range(BOX_X):
            x, y = x0 + i, y0 + j * es_y
            if 0 <= x < W and 0 <= y < H:
                out[j, i] = src[y, x]
    return out


def _swizzled(box: np.ndarray) -> np.ndarray:
    """128B swizzle: 16-byte chunk c of shared memory holds chunk c ^ ((c >> 3) & 7) of the box."""
    chunks = box.reshape(-1).view(np.uint8).reshape(-1, 16)
    c = np.arange(len(chunks))
    return chunks[c ^ ((c >> 3) & 7)].reshape(-1).view(np.float32)


# the maps as __grid_constant__ parameters: the instruction gets their generic
# addresses (cvta.param), as CUDA's TMA examples pass them
GRID_CONSTANT = SRC.replace("const TMap* in_map, const TMap* out_map",
                            "const __grid_constant__ TMap in_map, const __grid_constant__ TMap out_map") \
    .replace('"l"(in_map)', '"l"(&in_map)').replace('"l"(out_map)', '"l"(&out_map)')


@pytest.mark.parametrize("x0,y0,swizzle,by_value", [(8, 4, 0, False), (80, -3, 0, False), (-5, 66, 3, False),
                                                    (80, -3, 3, True)],
                         ids=["inside", "edge", "swizzled", "grid_constant"])
def test_tma_box_load_and_store(ctx, x0, y0, swizzle, by_value):
    ptx = compile_ptx(GRID_CONSTANT if by_value else SRC, ["-arch=compute_90", "-std=c++17"], "tma.cu")
    assert ("cvta.param" in ptx) == by_value
    mod = load_module(ptx)
    src = np.random.RandomState(5).standard_normal((H, PITCH)).astype(np.float32)
    dst = np.full((H, PITCH), -7.0, np.float32)
    d_src, d_dst = to_device(src), to_device(dst)
    maps = []
    for base in (d_src, d_dst):
        r, raw = encode(F32, base, [W, H], [PITCH * 4], [BOX_X, BOX_Y], [1, 1], swizzle=swizzle)
        assert r == 0
        maps.append((ctypes.c_uint8 * 128).from_buffer_copy(raw) if by_value
                    else ctypes.c_uint64(to_device(np.frombuffer(raw, np.uint8).copy())))
    dump = dalloc(256 * 4)
    p = Params(maps[0], maps[1], ctypes.c_uint64(dump), ctypes.c_int(x0), ctypes.c_int(y0))
    check(L.cuLaunchKernel(function(mod, "tma_load_store"), 1, 1, 1, 64, 1, 1, 0, 0, p.addr, 0))
    box = _expected_box(src[:, :W], x0, y0)
    landed = from_device(dump, np.zeros(256, np.float32))
    np.testing.assert_array_equal(landed, _swizzled(box) if swizzle == 3 else box.reshape(-1))
    exp = dst.copy()
    for j in range(BOX_Y):
        for i in range(BOX_X):
            x, y = x0 + i, y0 + j
            if 0 <= x < W and 0 <= y < H:
                exp[y, x] = src[y, x] * 2
    np.testing.assert_array_equal(from_device(d_dst, dst), exp)      # out-of-bounds elements are not stored


def test_box_gathering_with_element_strides_and_nan_fill():
    src = np.arange(H * PITCH, dtype=np.float32).reshape(H, PITCH)
    raw = tensor_map.encode(F32, 2, 0x1000, [W, H], [PITCH * 4], [BOX_X, BOX_Y], [1, 2], 0, 0, 0, 1)
    tm = tensor_map.decode(raw)
    assert tm.counts == (BOX_X, BOX_Y // 2) and tm.box_bytes == BOX_X * BOX_Y // 2 * 4
    addrs, inside = tensor_map.box_elements(tm, [90, 64])
    got = np.full(len(addrs), np.nan, np.float32)
    flat = src.reshape(-1)
    got[inside] = flat[(addrs[inside] - 0x1000) // 4]
    fill = np.uint32(tensor_map.fill_value(tm)).view(np.float32)
    assert np.isnan(fill)
    np.testing.assert_array_equal(got.reshape(BOX_Y // 2, BOX_X), _expected_box(src[:, :W], 90, 64, es_y=2,
                                                                                   oob_nan=True))
