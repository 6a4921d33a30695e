"""`bar.warp.sync` (__syncwarp) as a barrier of the lanes in its mask.

Under the lowest-pc schedule a converged warp runs as one group, so a
warp-wide sync is free; but lanes of one warp reach a __syncwarp at
different times when they diverged (a -G build of cooperative_groups'
tile collectives calls it from different call sites), and the ISA says
each lane waits there until every lane of its member mask has executed a
bar.warp.sync with the same mask. The one idea: an arriving lane parks with
its mask, and the lanes whose whole mask has arrived (parked here, or
exited) are released together; lanes of one warp are the 32 consecutive
wave slots `w * 32 ...` (a block's slots are padded to whole warps).

It does not check that the masks of the lanes released together agree
(mismatched masks are undefined behaviour, which synccheck reports).
"""
from __future__ import annotations

import numpy as np

from gpudbg.sim.state import EXITED, PARKED

WARP = 32
WARP_SYNC = -4               # bar_wait of lanes parked at bar.warp.sync (CTA barriers are 0..15)
_BITS = np.uint32(1) << np.arange(WARP, dtype=np.uint32)


def arrive(X, idx, pc: int, masks) -> None:
    """Lanes `idx` (None: the wave) execute bar.warp.sync at `pc`."""
    slots = X.all_slots if idx is None else np.asarray(idx)
    m = np.broadcast_to(np.asarray(masks, dtype=np.uint32), slots.shape)
    if X.warp_sync_mask is None:
        X.warp_sync_mask = np.zeros(X.n, dtype=np.uint32)
    X.warp_sync_mask[slots] = m
    X.sched[slots] = PARKED
    X.uniform_pc = None
    X.park_pc[slots] = pc + 1
    X.bar_wait[slots] = WARP_SYNC
    X.warp_sync_parked += len(slots)
    release(X, np.unique(slots // WARP))


def release(X, warps=None) -> bool:
    """Let go every parked lane (of `warps`, None: all) whose mask has
    fully arrived; True if any went."""
    if not X.warp_sync_parked:
        return False
    if warps is None:
        warps = np.unique(np.flatnonzero(X.bar_wait == WARP_SYNC) // WARP)
    lanes = (np.asarray(warps, dtype=np.int64)[:, None] * WARP + np.arange(WARP)).ravel()
    lanes = lanes[lanes < X.n]
    sched = X.sched[lanes]
    waiting = (sched == PARKED) & (X.bar_wait[lanes] == WARP_SYNC)
    arrived = waiting | (sched >= EXITED)
    lane_in_warp = (lanes % WARP).astype(np.uint32)
    warp_of = lanes // WARP
    # per warp: the bit set of arrived lanes
    bits = np.zeros(int(warp_of.max()) + 1 if len(lanes) else 0, dtype=np.uint32)
    np.bitwise_or.at(bits, warp_of[arrived], _BITS[lane_in_warp[arrived]])
    need = X.warp_sync_mask[lanes]
    go = waiting & ((need & ~bits[warp_of]) == 0)
    if not go.any():
        return False
    slots = lanes[go]
    X.sched[slots] = X.park_pc[slots]
    X.uniform_pc = None
    X.bar_wait[slots] = -1
    X.warp_sync_parked -= len(slots)
    return True
