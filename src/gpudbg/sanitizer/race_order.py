"""racecheck's notion of order: what it keeps of the launch running on a
GPU (the event clock's stamps of its start, of each block's last barrier
and of each warp's last __syncwarp) and, per instruction, which stored
accesses are concurrent with it.

The one idea: a stored access is a packed int64 `(stamp << 32) | who`,
and every "happens before" racecheck knows is "its stamp is older than a
synchronization's", so deciding concurrency is a few comparisons over
whole arrays of entries: in shared memory, an entry by another thread
(`who` = wave slot) is concurrent unless older than its block's last
completed CTA barrier, or the threads share a warp and the entry is older
than the warp's last completed __syncwarp; in global memory an entry of
this launch (not older than its start) by a thread of another block
(`who` = grid-linear thread id) is concurrent, whatever the waves.
Nothing here reads or writes a shadow.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gpudbg.sanitizer.race_shadow import WHO_MASK, Scratch, Shadow
from gpudbg.sim.instrument import Launch

SHARED_ALIGN = 16                       # per-block stride of the shared shadow


class LaunchState:
    """What racecheck keeps for the launch running on one GPU."""

    def __init__(self, launch: Launch, base: int, host_site: list[str], scratch: Scratch,
                 shared: Shadow | None, recent: list):
        self.launch = launch
        self.scratch = scratch
        self.shared = shared                # the shared-memory shadow, kept per GPU
        # (base, end, allocation, shadow) of the allocations accessed last, newest first
        self.recent: list[tuple[int, int, Any, Shadow]] = recent
        self.base = base                    # first stamp of the launch
        self.host_site = host_site
        self.pcs = np.zeros(1024, dtype=np.int64)   # stamp - base -> pc
        self.races: dict[tuple, Any] = {}    # racecheck.Race per (space, hazard, pcs)
        bx, by, bz = launch.block
        self.tpb = max(bx * by * bz, 1)
        # the wave
        self.X: Any = None
        self.stride = 0
        self.bar_stamp = np.zeros(0, dtype=np.int64)
        self.bar_uniform: int | None = 0    # every block's last barrier, when they agree
        self.bar_floor = 0                  # the oldest of them
        self.wsync = np.zeros(0, dtype=np.int64)
        self.pending = np.zeros(0, dtype=np.uint64)
        self.any_wsync = False
        self.slot_base: np.ndarray | None = None   # slot -> its block's offset in the shared shadow
        self.gtid: np.ndarray | None = None        # slot -> grid-linear thread id
        self.gstart: np.ndarray | None = None      # slot -> grid-linear id of its block's thread 0

    def note_pc(self, stamp: int, pc: int) -> None:
        i = stamp - self.base
        if i >= len(self.pcs):
            grown = np.zeros(max(2 * len(self.pcs), i + 1), dtype=np.int64)
            grown[:len(self.pcs)] = self.pcs
            self.pcs = grown
        self.pcs[i] = pc

    def begin_wave(self, X: Any, stamp: int) -> None:
        self.X = X
        nb = len(X._wave_blocks)
        self.stride = -(-max(int(X.shared_per_block), 1) // SHARED_ALIGN) * SHARED_ALIGN
        self.bar_stamp = np.full(nb, stamp, dtype=np.int64)
        self.bar_uniform = self.bar_floor = stamp
        nw = -(-X.n // 32)
        self.wsync = np.zeros(nw, dtype=np.int64)
        self.pending = np.zeros(nw, dtype=np.uint64)
        self.any_wsync = False
        self.slot_base = self.gtid = self.gstart = None

    def shared_bases(self) -> np.ndarray:
        if self.slot_base is None:
            self.slot_base = self.X.layout.block_of.astype(np.uint64) * np.uint64(self.stride)
        return self.slot_base

    def global_ids(self) -> tuple[np.ndarray, np.ndarray]:
        if self.gtid is None:
            L = self.X.layout
            self.gstart = np.asarray(self.X._wave_blocks, dtype=np.int64)[L.block_of] * self.tpb
            self.gtid = self.gstart + L.linear_tid.astype(np.int64)
        return self.gtid, self.gstart


def pick(a: np.ndarray, slots: np.ndarray, whole: bool) -> np.ndarray:
    return a if whole else a[slots]


class SharedOrder:
    """Which stored shared accesses are concurrent with one instruction's
    (per element: k units per lane)."""

    one_thread_per_lane = True    # two lanes of one instruction may always race

    def __init__(self, st: LaunchState, slots: np.ndarray, k: int):
        self.st, self.slots, self.k = st, slots, k
        self.floor = st.bar_floor
        self._slot = None
        u = st.bar_uniform
        if u is not None:
            self._bar = np.int64(u << 32)
        else:
            b = st.bar_stamp[st.X.layout.block_of[slots]] << 32
            self._bar = b if k == 1 else np.repeat(b, k)

    def slot(self) -> np.ndarray:
        if self._slot is None:
            self._slot = self.slots if self.k == 1 else np.repeat(self.slots, self.k)
        return self._slot

    def concurrent(self, v: np.ndarray, sub: np.ndarray | None = None) -> np.ndarray | None:
        """Per element (or per element `sub[i]`): whether the packed entry
        v is by another thread and not ordered before this access."""
        bar = self._bar
        if sub is not None and bar.ndim:
            bar = bar[sub]
        c = v >= bar
        if not c.any():
            return None
        me = self.slot() if sub is None else self.slot()[sub]
        o = v & WHO_MASK
        c &= o != me
        if self.st.any_wsync and c.any():
            ws = self.st.wsync[me >> 5] << 32
            c &= ~(((o >> 5) == (me >> 5)) & (v < ws))
        return c if c.any() else None


class GlobalOrder:
    """Which stored global accesses are concurrent with one instruction's:
    those of this launch by another block."""

    one_thread_per_lane = False   # lanes of one block never race here

    def __init__(self, st: LaunchState, start: np.ndarray, k: int):
        self.floor = st.base
        self._base = np.int64(st.base << 32)
        self.tpb = np.uint64(st.tpb)
        self.start = start if k == 1 else np.repeat(start, k)

    def concurrent(self, v: np.ndarray, sub: np.ndarray | None = None) -> np.ndarray | None:
        c = v >= self._base
        if not c.any():
            return None
        start = self.start if sub is None else self.start[sub]
        c &= ((v & WHO_MASK) - start).view(np.uint64) >= self.tpb
        return c if c.any() else None

    def apart(self, lost: np.ndarray, winners: np.ndarray) -> np.ndarray:
        """Which elements `lost` of this instruction may race with the
        packed entries `winners` of the same instruction: other blocks'."""
        return ((winners & WHO_MASK) - self.start[lost]).view(np.uint64) >= self.tpb
