"""The waves of a launch, computed on demand, and the layout of one wave.

The one idea: a grid is never listed. A launch of n blocks with room for
`cap = sm_count * blocks_per_sm` resident blocks runs ceil(n / cap) waves,
and wave i is the range of linear block ids [i*cap, min((i+1)*cap, n)):
`WavePlan.waves` is a lazy sequence of `range`s (len, iteration and
indexing are O(1)), so a (2^31-1, 1, 1) grid costs the same host memory as
a one-wave grid. Inside a wave, the per-slot coordinates that do not depend
on which blocks are resident (thread index, lane, SM, warp slot) are built
once per geometry and shared read-only; the block coordinates (`%ctaid`,
`WaveLayout.block_ids`) are derived from the wave's first block id only
when something reads them (most kernels read x alone; an empty kernel none).

A launch with thread-block clusters numbers its blocks in cluster order
instead (sim/cluster.py), so that waves hold whole clusters.

What it does not do: pick another order, or
interleave blocks of several waves (a wave runs to completion before the
next is placed, as the executor's one-wave-at-a-time model requires).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gpudbg.sim import cluster as _cluster
from gpudbg.sim.device_model import occupancy
from gpudbg.sim.state import WaveLayout

WARP = 32


class WaveRanges(Sequence):
    """Wave i = range(i * cap, min((i + 1) * cap, nblocks)), on demand."""

    __slots__ = ("nblocks", "cap")

    def __init__(self, nblocks: int, cap: int):
        if cap <= 0:
            raise ValueError(f"a wave must hold at least one block, got {cap}")
        self.nblocks = int(nblocks)
        self.cap = int(cap)

    def __len__(self) -> int:
        return -(-self.nblocks // self.cap)

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            return [self[j] for j in range(n)[i]]
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"wave {i} out of range (the launch has {n})")
        start = i * self.cap
        return range(start, min(start + self.cap, self.nblocks))

    def __iter__(self):
        cap, n = self.cap, self.nblocks
        for start in range(0, n, cap):
            yield range(start, min(start + cap, n))

    def __repr__(self) -> str:
        return f"WaveRanges({self.nblocks} blocks, {self.cap} per wave, {len(self)} waves)"


@dataclass(frozen=True)
class WavePlan:
    """How a launch's blocks are dealt into waves; `waves` is lazy."""

    nblocks: int
    blocks_per_wave: int
    blocks_per_sm: int
    threads_per_block: int
    slots_per_block: int
    warps_per_block: int
    cluster: tuple[int, int, int] = (1, 1, 1)

    @property
    def waves(self) -> WaveRanges:
        return WaveRanges(self.nblocks, self.blocks_per_wave)

    @property
    def wave_count(self) -> int:
        return -(-self.nblocks // self.blocks_per_wave)

    @property
    def largest_wave(self) -> int:
        """Blocks in the fullest wave (the first)."""
        return min(self.nblocks, self.blocks_per_wave)


def build_waves(model, function, grid, block, shared_bytes, cluster=(1, 1, 1)) -> WavePlan:
    threads = block[0] * block[1] * block[2]
    nblocks = grid[0] * grid[1] * grid[2]
    per_sm = occupancy(model, threads, function.num_regs, function.static_shared + shared_bytes)
    per_sm = max(1, per_sm)
    wpb = (threads + WARP - 1) // WARP
    cluster = tuple(int(c) for c in cluster)
    cap = model.sm_count * per_sm
    if _cluster.size(cluster) > 1:
        cap = _cluster.clusters_per_wave(model.sm_count, per_sm, cluster) * _cluster.size(cluster)
        if cap == 0:
            raise ValueError(f"a cluster of {_cluster.size(cluster)} blocks does not fit in one GPC "
                             f"at {per_sm} blocks per SM")
    return WavePlan(nblocks, cap, per_sm, threads, wpb * WARP, wpb, cluster)


def block_array(wave_blocks) -> np.ndarray:
    """The linear block ids of a wave as int64 (a range without iterating it)."""
    if isinstance(wave_blocks, range):
        return np.arange(wave_blocks.start, wave_blocks.stop, wave_blocks.step, dtype=np.int64)
    return np.asarray(wave_blocks, dtype=np.int64)


class BlockAxes:
    """blockIdx per slot, expanded from per-block values only for the axes
    a kernel actually reads (most read x alone); the per-block values are
    themselves computed from the wave's linear block ids on first use."""

    def __init__(self, wave_blocks, grid, slots_per_block: int, cluster=(1, 1, 1)):
        self._blocks = wave_blocks
        self._grid = (int(grid[0]), int(grid[1]), int(grid[2]))
        self._spb = slots_per_block
        self._cluster = tuple(cluster)
        self._per_block: list = [None, None, None]
        self._slots: list = [None, None, None]

    def per_block(self, axis: int) -> np.ndarray:
        """blockIdx.{x,y,z}[axis] of each resident block (uint32)."""
        a = self._per_block[axis]
        if a is None:
            gx, gy, gz = self._grid
            if axis == 0 and gy * gz == 1 and isinstance(self._blocks, range) and self._cluster == (1, 1, 1):
                r = self._blocks
                a = np.arange(r.start, r.stop, r.step, dtype=np.uint32)
            else:
                a = _cluster.block_coords(block_array(self._blocks), self._grid, self._cluster)[axis]
                a = a.astype(np.uint32)
            self._per_block[axis] = a
        return a

    def __getitem__(self, axis: int) -> np.ndarray:
        a = self._slots[axis]
        if a is None:
            a = self._slots[axis] = np.repeat(self.per_block(axis), self._spb)
        return a

    def __len__(self) -> int:
        return 3

    def __iter__(self):
        return (self[i] for i in range(3))


class BlockIds(Sequence):
    """Resident block -> blockIdx (x, y, z), computed per lookup."""

    __slots__ = ("_blocks", "_grid", "_cluster")

    def __init__(self, wave_blocks, grid, cluster=(1, 1, 1)):
        self._blocks = wave_blocks
        self._grid = (int(grid[0]), int(grid[1]), int(grid[2]))
        self._cluster = tuple(cluster)

    def __len__(self) -> int:
        return len(self._blocks)

    def __getitem__(self, b):
        if isinstance(b, slice):
            return [self[i] for i in range(len(self))[b]]
        lin = int(self._blocks[int(b)])
        if self._cluster == (1, 1, 1):
            gx, gy = self._grid[0], self._grid[1]
            return (lin % gx, (lin // gx) % gy, lin // (gx * gy))
        return tuple(int(v[0]) for v in _cluster.block_coords(np.array([lin]), self._grid, self._cluster))

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __eq__(self, other) -> bool:
        return isinstance(other, (list, tuple, BlockIds)) and list(self) == list(other)


def wave_layout(model, plan: WavePlan, grid, block, wave_blocks) -> WaveLayout:
    """Per-slot coordinates of one wave: the block-independent arrays are
    shared by every wave (and launch) of the same geometry; only the block
    coordinates, lazily derived from `wave_blocks`, are the wave's own."""
    nb = len(wave_blocks)
    spb = plan.slots_per_block
    key = (nb, tuple(block), model.sm_count, spb, plan.cluster)
    base = _STATIC_LAYOUTS.get(key)
    if base is None:
        base = _static_layout(model, plan, block, nb)
        if len(_STATIC_LAYOUTS) >= 8:
            _STATIC_LAYOUTS.pop(next(iter(_STATIC_LAYOUTS)))
        _STATIC_LAYOUTS[key] = base
    return WaveLayout(base.nthreads, base.block_of, base.tid, BlockAxes(wave_blocks, grid, spb, plan.cluster),
                      base.sm, base.warp, base.lane, base.valid, BlockIds(wave_blocks, grid, plan.cluster),
                      base.block_sm,
                      base.threads_per_block, spb, base.linear_tid)


# The block-independent parts of a layout (read-only arrays), shared by
# every launch with the same geometry.
_STATIC_LAYOUTS: dict = {}


def _static_layout(model, plan: WavePlan, block, nb: int) -> WaveLayout:
    spb = plan.slots_per_block
    n = nb * spb
    t = np.arange(spb, dtype=np.int64)
    bx, by = block[0], block[1]
    pattern_valid = t < plan.threads_per_block
    tid = tuple(np.tile(a.astype(np.uint32), nb) for a in (t % bx, (t // bx) % by, t // (bx * by)))
    lane = np.tile((t % WARP).astype(np.uint32), nb)
    valid = np.tile(pattern_valid, nb)
    local_block = np.arange(nb)
    if _cluster.size(plan.cluster) > 1:   # whole clusters per GPC; warp slots in arrival order per SM
        block_sm = _cluster.block_sm(nb, model.sm_count, plan.cluster)
        order = np.argsort(block_sm, kind="stable")
        nth = np.empty(nb, dtype=np.int64)
        counts = np.bincount(block_sm, minlength=model.sm_count)
        nth[order] = np.arange(nb) - np.repeat(np.cumsum(counts) - counts, counts)
        warp_base = (nth * plan.warps_per_block).astype(np.uint32)
    else:
        block_sm = (local_block % model.sm_count).astype(np.uint32)
        warp_base = ((local_block // model.sm_count) * plan.warps_per_block).astype(np.uint32)
    block_of = np.repeat(local_block, spb)
    sm = np.repeat(block_sm, spb)
    warp = np.repeat(warp_base, spb) + np.tile((t // WARP).astype(np.uint32), nb)
    linear_tid = np.tile(t, nb)
    for a in (*tid, lane, valid, block_sm, block_of, sm, warp, linear_tid):
        a.flags.writeable = False
    return WaveLayout(n, block_of, tid, None, sm, warp, lane, valid, None, block_sm,
                      plan.threads_per_block, spb, linear_tid)
