"""CUDA's headers from the pinned pip packages, found by gpudbg.compile with
no -I: half/bfloat16/fp8 types, cooperative groups (tiles, reduce, a grid
sync under a cooperative launch), CUB and libcu++, against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg
from gpudbg import compiler
from gpudbg.runtime import mc

pytestmark = pytest.mark.skipif(not compiler.cuda_include_dirs(),
                                reason="the CUDA header packages are not installed")


def test_include_dirs_are_the_pip_packages():
    dirs = compiler.cuda_include_dirs()
    assert any(d.endswith("cccl") for d in dirs)
    assert all("site-packages" in d or "dist-packages" in d for d in dirs)
    opts = compiler.effective_options([])
    assert [o for o in opts if o.startswith("--include-path=")] == [f"--include-path={d}" for d in dirs]
    assert opts[-1] == f"--pre-include={compiler.PRELUDE_NAME}"


def test_package_headers_are_cacheable_user_headers_are_not(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert compiler.cacheable("#include <cuda_fp16.h>\n#include <cub/block/block_reduce.cuh>\n", [])
    (tmp_path / "mine.h").write_text("#define X 1\n")
    assert not compiler.cacheable('#include "mine.h"\n', [])
    assert not compiler.cacheable("#include <not_a_cuda_header.h>\n", [])


def test_half_bfloat16_and_fp8_round_like_numpy():
    mod = gpudbg.compile(r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void conv(const float* x, float* h, float* b, float* e, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        h[i] = __half2float(__float2half_rn(x[i]));
        b[i] = __bfloat162float(__float2bfloat16_rn(x[i]));
        e[i] = float(__nv_fp8_e4m3(x[i]));
    }
}''')
    x = np.array([0.1, 1.0 / 3, 65504, 70000, -2.5e-8, 3.14159, 448, 500, 0.013671875], np.float32)
    dx = gpudbg.to_device(x)
    h, b, e = (gpudbg.to_device(np.zeros_like(x)) for _ in range(3))
    mod.conv[1, 32](dx, h, b, e, np.int32(x.size))
    with np.errstate(over="ignore"):    # 70000 is past half's range: inf, as on the device
        np.testing.assert_array_equal(h.to_host(), x.astype(np.float16).astype(np.float32))
    bits = x.view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    np.testing.assert_array_equal(b.to_host(), rounded.view(np.float32))
    # e4m3 saturates at 448 (satfinite, as __nv_fp8_e4m3's constructor does);
    # 0.013671875 = 7 * 2^-9 is the largest subnormal
    got = e.to_host()
    assert got[1] == 0.34375 and got[6] == 448 and got[7] == 448 and got[8] == 0.013671875


def test_cooperative_groups_tile_reduce_and_grid_sync():
    mod = gpudbg.compile(r'''
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void grid_sum(const int* x, int* partial, int* out, int n) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    int v = 0;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) v += x[i];
    v = cg::reduce(tile, v, cg::plus<int>());
    if (tile.thread_rank() == 0) partial[grid.thread_rank() / 32] = v;
    grid.sync();
    if (grid.thread_rank() == 0) {
        int s = 0;
        for (int w = 0; w < grid.size() / 32; ++w) s += partial[w];
        *out = s;
    }
}''')
    x = np.random.default_rng(7).integers(-1000, 1000, size=5000, dtype=np.int32)
    dx = gpudbg.to_device(x)
    blocks, threads = 4, 128
    partial = gpudbg.to_device(np.zeros(blocks * threads // 32, np.int32))
    out = gpudbg.to_device(np.zeros(1, np.int32))
    assert mc.mcLaunchCooperativeKernel(mod.grid_sum.handle, blocks, threads,
                                        [dx.ptr, partial.ptr, out.ptr, x.size], 0, None) == (0,)
    assert mc.mcDeviceSynchronize() == (0,)
    assert int(out.to_host()[0]) == int(x.sum())


def test_grid_sync_outside_a_cooperative_launch_traps():
    """CUDA gives grid.sync() its workspace only in a cooperative launch;
    elsewhere cooperative_groups aborts (a trap), and so does the simulator."""
    mod = gpudbg.compile(r'''
#include <cooperative_groups.h>
extern "C" __global__ void sync_once(int* out) {
    cooperative_groups::this_grid().sync();
    *out = 1;
}''')
    out = gpudbg.to_device(np.zeros(1, np.int32))
    try:
        mod.sync_once[2, 32](out)
        with pytest.raises(gpudbg.KernelFaultError, match="trap"):
            gpudbg.synchronize()
    finally:
        gpudbg.Device(0).reset()    # the fault is sticky in its context


def test_cub_block_radix_sort():
    mod = gpudbg.compile(r'''
#include <cub/block/block_radix_sort.cuh>
extern "C" __global__ void sort(int* d) {
    using BlockRadixSort = cub::BlockRadixSort<int, 128, 4>;
    __shared__ typename BlockRadixSort::TempStorage temp;
    int keys[4];
    for (int i = 0; i < 4; ++i) keys[i] = d[blockIdx.x * 512 + threadIdx.x * 4 + i];
    BlockRadixSort(temp).Sort(keys);
    for (int i = 0; i < 4; ++i) d[blockIdx.x * 512 + threadIdx.x * 4 + i] = keys[i];
}''')
    a = np.random.default_rng(1).integers(-2**31, 2**31 - 1, size=1024, dtype=np.int32)
    d = gpudbg.to_device(a)
    mod.sort[2, 128](d)
    np.testing.assert_array_equal(d.to_host().reshape(2, 512), np.sort(a.reshape(2, 512), axis=1))


def test_libcuxx_atomic_ref_histogram():
    mod = gpudbg.compile(r'''
#include <cuda/std/atomic>
extern "C" __global__ void hist(const unsigned char* x, unsigned int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        cuda::std::atomic_ref<unsigned int> bin(bins[x[i] % 16]);
        bin.fetch_add(1u, cuda::std::memory_order_relaxed);
    }
}''')
    x = np.random.default_rng(3).integers(0, 256, size=3000, dtype=np.uint8)
    bins = gpudbg.to_device(np.zeros(16, np.uint32))
    mod.hist[12, 256](gpudbg.to_device(x), bins, np.int32(x.size))
    np.testing.assert_array_equal(bins.to_host(), np.bincount(x % 16, minlength=16))
