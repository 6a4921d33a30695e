"""The architectural state of one wave of resident blocks, as flat arrays.

Every thread slot resident on the simulated GPU is one element of every
array here: register files are `regs[k]` (one numpy array per PTX register,
one element per thread), program counters are `pc`, and the physical
coordinates (sm, warp slot, lane) and logical ones (block, thread) are
arrays too. Instructions operate on all threads selected for a step at once,
either the whole wave (`idx is None`) or an index array of thread slots.

Padding lanes (a block whose size is not a multiple of 32 leaves the tail of
its last warp empty) are allocated but start exited, so warp arithmetic is
plain `slot // 32`.

Only the wave's own blocks are ever described: the block coordinates
(`ctaid`, `block_ids`) are lazy views over the wave's range of linear block
ids (sim/wave_plan.py), so nothing here grows with the grid.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

EXITED = np.int64(1 << 40)  # pc value of a thread that has exited
PARKED = np.int64(1 << 39)  # scheduling pc of a thread waiting at a barrier


@dataclass
class WaveLayout:
    """Where each thread slot of a wave lives, physically and logically."""

    nthreads: int  # slots, including padding lanes
    block_of: np.ndarray  # slot -> index of the resident block in this wave
    tid: tuple[np.ndarray, np.ndarray, np.ndarray]  # uint32 each
    ctaid: Sequence[np.ndarray]  # blockIdx x/y/z per slot (wave_plan.BlockAxes: built on first read)
    sm: np.ndarray
    warp: np.ndarray  # warp slot on its SM
    lane: np.ndarray
    valid: np.ndarray  # bool: a real thread, not padding
    block_ids: Sequence[tuple[int, int, int]]  # resident block -> blockIdx (wave_plan.BlockIds)
    block_sm: np.ndarray  # resident block -> sm
    threads_per_block: int  # real threads per block
    slots_per_block: int  # threads rounded up to whole warps
    linear_tid: np.ndarray  # thread index within its block (x fastest)


@dataclass
class WaveState:
    """Mutable execution state of one wave."""

    layout: WaveLayout
    regs: list  # register index -> np.ndarray (length nthreads)
    pc: np.ndarray  # int64 instruction index per slot (EXITED when done)
    sched: np.ndarray  # pc for runnable threads, PARKED/EXITED otherwise
    depth: np.ndarray  # call depth per slot
    ret_stack: np.ndarray  # (max_depth, nthreads) return pcs
    sp: np.ndarray  # local-memory stack pointer (byte offset) per slot
    params: dict  # param-space variable name -> (nthreads, size) uint8
    carry: np.ndarray  # CC.CF per slot (uint32 0/1)
    barrier_id: np.ndarray  # barrier a parked thread waits on (-1 none)
    barrier_count: np.ndarray  # expected thread count (0: whole block)
    barrier_pred: np.ndarray  # bar.red predicate contribution
    block_live: np.ndarray  # per resident block: threads not exited
    shared_base: int = 0
    thread_instructions: int = 0
    steps: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.layout.nthreads

    def select(self, idx):
        """Map a step-relative lane index to the thread slot it names."""
        return idx
