"""bar.warp.sync (__syncwarp) holds each lane until every lane of its mask
has arrived: -G builds of cooperative_groups' multi-warp tile collectives
(which sync lanes that reach it from different call sites) give the
optimized build's results, and a mask lane that exits releases the rest."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

TILES = r'''
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void tiles(const int* x, int* out) {
    auto tile = cg::tiled_partition<64>(cg::this_thread_block());
    out[threadIdx.x] = cg::reduce(tile, x[threadIdx.x], cg::plus<int>());
}'''


@pytest.mark.parametrize("options", [[], ["-G"]], ids=["O", "G"])
def test_tile_reduce_over_two_warps(options):
    mod = gpudbg.compile(TILES, options=options)
    x = np.random.default_rng(2).integers(-100, 100, size=256, dtype=np.int32)
    out = gpudbg.to_device(np.zeros(256, np.int32))
    mod.tiles[1, 256](gpudbg.to_device(x), out)
    gpudbg.synchronize()
    np.testing.assert_array_equal(out.to_host(), np.repeat(x.reshape(4, 64).sum(axis=1), 64))


DIVERGED = r'''
extern "C" __global__ void handoff(int* out) {
    __shared__ int slot[32];
    int lane = threadIdx.x;
    if (lane < 16) {
        slot[lane] = lane * 10;                 // the low half writes first ...
        __syncwarp();
    } else {
        __syncwarp();                           // ... the high half waits at another __syncwarp
        out[lane] = slot[lane - 16];
    }
    if (lane == 0) return;                      // lane 0 leaves: the next sync waits for the others only
    __syncwarp(0xFFFFFFFEu);
    out[0] += 1;
}'''


def test_diverged_lanes_meet_at_different_syncwarps():
    mod = gpudbg.compile(DIVERGED)
    out = gpudbg.to_device(np.zeros(32, np.int32))
    mod.handoff[1, 32](out)
    gpudbg.synchronize()
    got = out.to_host()
    np.testing.assert_array_equal(got[16:], np.arange(16) * 10)
    assert got[0] >= 1
