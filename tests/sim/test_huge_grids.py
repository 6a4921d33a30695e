"""Grids of any legal size: waves are computed on demand (no list of block
ids), so a (2^31-1, 1, 1) grid starts at once in bounded memory, every wave
sees the right blockIdx, and the hang timeout or a cancellation stops a
huge grid at the next wave."""
from __future__ import annotations

import sys
import threading
import time
import tracemalloc

import numpy as np
import pytest

import gpudbg
from gpudbg.ptx.parser import parse
from gpudbg.sim import kernel_watch
from gpudbg.sim.executor import launch_grid
from gpudbg.sim.faults import HangKind, KernelFault
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.wave import WaveExecution, build_waves
from gpudbg.sim.wave_plan import WaveRanges

EMPTY = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry empty()
{
  ret;
}
"""

MAX_X = 2**31 - 1


@pytest.fixture
def empty():
    gpu = SimGPU()
    return gpu, load_module(gpu, parse(EMPTY)).functions["empty"]


def test_the_largest_grid_is_planned_without_listing_its_blocks(empty):
    gpu, k = empty
    t0 = time.perf_counter()
    plan = build_waves(gpu.model, k, (MAX_X, 1, 1), (1, 1, 1), 0)
    assert time.perf_counter() - t0 < 0.5
    cap = gpu.model.sm_count * gpu.model.max_blocks_per_sm
    assert plan.blocks_per_wave == cap and plan.nblocks == MAX_X
    waves = plan.waves
    assert len(waves) == plan.wave_count == -(-MAX_X // cap)
    assert waves[0] == range(0, cap) and waves[1] == range(cap, 2 * cap)
    assert waves[-1] == range((len(waves) - 1) * cap, MAX_X)
    assert sys.getsizeof(waves) < 200 and plan.largest_wave == cap
    with pytest.raises(IndexError):
        waves[len(waves)]
    assert [len(w) for w in WaveRanges(10, 4)] == [4, 4, 2] and WaveRanges(10, 4)[1:] == [range(4, 8),
                                                                                        range(8, 10)]


def test_block_coordinates_of_a_late_wave_follow_the_linear_order(empty):
    gpu, k = empty
    grid, block = (1000, 70, 3), (48, 1, 1)          # 48 threads: padded warps
    plan = build_waves(gpu.model, k, grid, block, 0)
    from gpudbg.sim.launch_resources import LaunchResources, local_size_for
    res = LaunchResources.for_launch(gpu, plan, k, 0, local_size_for(gpu, k))
    i = len(plan.waves) - 2
    X = WaveExecution(gpu, k, grid, block, 0, b"", 1, plan.waves[i], plan, 1 << 40, res)
    lin = np.arange(plan.waves[i].start, plan.waves[i].stop)
    want = np.stack(np.unravel_index(lin, (3, 70, 1000))[::-1], axis=1)
    L = X.layout
    assert [tuple(map(int, w)) for w in want[[0, 1, -1]]] == [L.block_ids[0], L.block_ids[1], L.block_ids[-1]]
    for axis in range(3):
        assert (L.ctaid[axis] == np.repeat(want[:, axis], plan.slots_per_block)).all()
    assert (X._wave_blocks == lin).all()
    slot = 5 * plan.slots_per_block + 7
    assert X.block_idx_of(slot) == tuple(map(int, want[5])) and X.thread_idx_of(slot) == (7, 0, 0)


BLOCK_IDS = r"""
extern "C" __global__ void ids(unsigned *out) {
    unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (threadIdx.x == 0) out[b] = blockIdx.x | (blockIdx.y << 16) | (blockIdx.z << 24);
}
"""


def test_every_wave_of_a_many_wave_launch_sees_its_block_ids():
    m = gpudbg.compile(BLOCK_IDS, name="huge_grid_ids.cu")
    grid = (9000, 2, 3)                    # 54,000 blocks: 13 waves
    out = gpudbg.zeros(9000 * 6, np.uint32)
    m.ids[grid, 32](out)
    gpudbg.synchronize()
    x, y, z = np.meshgrid(np.arange(9000), np.arange(2), np.arange(3), indexing="ij")
    want = (x | (y << 16) | (z << 24)).transpose(2, 1, 0).reshape(-1)
    assert (out.to_host() == want).all()


def test_the_largest_grid_runs_in_bounded_memory_until_the_timeout_stops_it(empty, monkeypatch):
    gpu, k = empty
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "1")
    launch_grid(gpu, k, (1, 1, 1), (1, 1, 1), 0, b"", 1)     # warm the shared layouts
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(KernelFault) as e:
            launch_grid(gpu, k, (MAX_X, 1, 1), (1, 1, 1), 0, b"", 2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    elapsed = time.perf_counter() - t0
    r = e.value.report
    assert r.hang is HangKind.KERNEL_TIMEOUT and elapsed < 10
    nwaves = len(build_waves(gpu.model, k, (MAX_X, 1, 1), (1, 1, 1), 0).waves)
    assert f"of {nwaves})" in r.message                       # "(wave i of 508401)"
    assert peak < 64 << 20, peak                              # a list of the block ids alone: ~80 GB


def test_a_cancel_stops_the_largest_grid_at_the_next_wave(empty, monkeypatch):
    gpu, k = empty
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "off")
    timer = threading.Timer(0.3, kernel_watch.cancel, ("Ctrl-C",))
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KernelFault) as e:
            launch_grid(gpu, k, (MAX_X, 1, 1), (1, 1, 1), 0, b"", 1)
    finally:
        timer.cancel()
        kernel_watch.clear()
    assert e.value.report.hang is HangKind.INTERRUPTED and time.perf_counter() - t0 < 10
    assert "interrupted (Ctrl-C)" in e.value.report.message


def test_launch_stats_count_the_waves(empty):
    gpu, k = empty
    cap = gpu.model.sm_count * gpu.model.max_blocks_per_sm
    stats = launch_grid(gpu, k, (3 * cap + 1, 1, 1), (1, 1, 1), 0, b"", 1)
    assert stats.waves == 4
