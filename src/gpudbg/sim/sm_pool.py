"""The GPU-wide pool of SM capacity that concurrent grids share.

Every SM has a budget of warp slots, threads, block slots, registers and
shared memory (the device model's numbers). A resident block of a grid
takes, on one SM, its warps (specific warp slots), their threads, one block
slot, its registers (per warp, in allocation units) and its shared memory
(plus the per-block reservation, in allocation units): the same rules as
`device_model.occupancy`, so a grid alone on the GPU gets exactly
`occupancy()` blocks per SM. Each wave of a grid acquires the blocks it
can place now (`SMPool.acquire`), runs them, and releases them; a grid that
finds no room at all waits until another grid releases some, as hardware
does. So blocks of several grids are resident at once within the occupancy
limits, and a consumer kernel that leaves SMs free lets a producer kernel
of another stream run beside it.

The one idea: placement is computed with numpy over all SMs at once, and
when the pool is empty (the common case: one kernel at a time) the
placement is the default one the wave layout already has (block k on SM
k mod sm_count, warp slots in order), which `Placement.default` says, so
the executor needs no remapping; such a placement is written into the
pool's arrays only when a second grid arrives while it is held, so a lone
kernel pays a lock and a dict entry per wave. Otherwise blocks are dealt
round-robin over the SMs that have room, least loaded first (a second
grid spreads over idle SMs, as the hardware's block scheduler does), each
taking its SM's lowest free warp slots.

Counters (`resident_grids`, `peak_grids`, `peak_blocks`, `acquired`) let
tests and the debugger see concurrency. What it does not do: model the
order in which hardware picks waiting grids (waiters race for released
capacity), priorities between streams, or cluster placement.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

WARP = 32
WAIT_POLL_S = 0.05       # how often a waiting grid looks at its abort condition

# resource columns of SMPool.used
THREADS, BLOCKS, REGISTERS, SHARED = range(4)


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


@dataclass(frozen=True)
class BlockShape:
    """What one resident block of a grid takes on its SM."""

    warps: int
    need: tuple[int, int, int, int]     # threads, blocks, registers, shared bytes
    per_sm: int                         # the grid's occupancy: blocks per SM at most

    @classmethod
    def of(cls, model: Any, threads_per_block: int, regs_per_thread: int, shared_bytes: int,
           per_sm: int) -> "BlockShape":
        """The footprint of a block (clamped to one SM, so a block always fits an empty SM)."""
        key = (id(model), threads_per_block, regs_per_thread, shared_bytes, per_sm)
        got = _SHAPES.get(key)
        if got is not None and got[0] is model:
            return got[1]
        shape = cls._compute(model, int(threads_per_block), int(regs_per_thread), int(shared_bytes), per_sm)
        if len(_SHAPES) > 256:
            _SHAPES.clear()
        _SHAPES[key] = (model, shape)
        return shape

    @classmethod
    def _compute(cls, model: Any, threads_per_block: int, regs_per_thread: int, shared_bytes: int,
                 per_sm: int) -> "BlockShape":
        warps = max(1, -(-int(threads_per_block) // model.lanes))
        warps = min(warps, model.warp_slots_per_sm)
        threads = min(warps * model.lanes, model.max_threads_per_sm)
        regs = 0
        if regs_per_thread > 0:
            regs = _round_up(int(regs_per_thread) * model.lanes, model.register_allocation_unit) * warps
            regs = min(regs, model.registers_per_sm)
        shared = _round_up(int(shared_bytes) + model.reserved_shared_per_block, model.shared_allocation_unit)
        shared = min(shared, model.shared_per_sm)
        return cls(warps, (threads, 1, regs, shared), max(1, int(per_sm)))


_SHAPES: dict[tuple, tuple[Any, BlockShape]] = {}


class Placement:
    """Blocks of one wave placed on SMs: block k runs on SM `block_sm[k]`
    in warp slots `block_warps[k]`. A default placement (taken from an
    empty pool) is only written into the pool's arrays when another grid
    arrives while it is held (`applied`); until then its arrays are None
    (class defaults: a lone grid's placement sets four attributes)."""

    per_sm: np.ndarray | None = None       # (sm_count,) blocks placed on each SM
    block_sm: np.ndarray | None = None     # (nblocks,) uint32
    block_warps: np.ndarray | None = None  # (nblocks, warps) uint32
    applied = False
    released = False

    def __init__(self, owner: Any, shape: BlockShape, nblocks: int, default: bool,
                 per_sm: np.ndarray | None = None, block_sm: np.ndarray | None = None,
                 block_warps: np.ndarray | None = None, applied: bool = False):
        self.owner = owner
        self.shape = shape
        self.nblocks = nblocks
        self.default = default        # the layout's own placement: no remapping needed
        if not default:
            self.per_sm, self.block_sm, self.block_warps, self.applied = per_sm, block_sm, block_warps, applied

    @property
    def count(self) -> int:
        return self.nblocks

    def __repr__(self) -> str:
        return (f"Placement({self.nblocks} blocks, default={self.default}, applied={self.applied}, "
                f"released={self.released})")


class SMPool:
    """Free capacity of every SM of one GPU (thread-safe)."""

    def __init__(self, model: Any):
        self.model = model
        self.sm_count = int(model.sm_count)
        self.cap = np.array([model.max_threads_per_sm, model.max_blocks_per_sm, model.registers_per_sm,
                             model.shared_per_sm], dtype=np.int64)
        self.used = np.zeros((self.sm_count, 4), dtype=np.int64)
        self.free_warps = np.ones((self.sm_count, int(model.warp_slots_per_sm)), dtype=bool)
        # the condition's own lock, taken directly on the launch path (a
        # Condition's with-statement is a Python call each way); reentrant:
        # acquire() calls try_acquire holding it
        self._lock = threading.RLock()
        self.cv = threading.Condition(self._lock)
        self._leases: dict[int, Placement] = {}
        self._owners: dict[int, int] = {}          # id(owner) -> placements held
        # id(shape) -> (shape, blocks of it the empty GPU takes): a lone grid's test
        self._lone_capacity: dict[int, tuple[BlockShape, int]] = {}
        self.peak_grids = 0
        self.peak_blocks = 0
        self.acquired = 0                          # placements handed out, ever
        self.waits = 0                             # acquisitions that had to wait
        self._waiting = 0

    # ------------------------------------------------------------ counters
    @property
    def resident_grids(self) -> int:
        with self.cv:
            return len(self._owners)

    @property
    def resident_blocks(self) -> int:
        with self.cv:
            return sum(p.nblocks for p in self._leases.values())

    # ------------------------------------------------------------ placement
    def _empty_fit(self, shape: BlockShape) -> int:
        """Blocks of `shape` an empty SM takes (its occupancy)."""
        fit = min(shape.per_sm, self.free_warps.shape[1] // shape.warps)
        for r in range(4):
            if shape.need[r] > 0:
                fit = min(fit, int(self.cap[r]) // shape.need[r])
        return fit

    def _fit(self, shape: BlockShape) -> np.ndarray:
        """Blocks of `shape` each SM can take now."""
        room = self.cap - self.used
        fit = np.full(self.sm_count, shape.per_sm, dtype=np.int64)
        for r in range(4):
            if shape.need[r] > 0:
                np.minimum(fit, room[:, r] // shape.need[r], out=fit)
        np.minimum(fit, self.free_warps.sum(axis=1) // shape.warps, out=fit)
        return fit

    def try_acquire(self, owner: Any, shape: BlockShape, want: int) -> Placement | None:
        """Place up to `want` blocks now; None when not one fits."""
        want = int(want)
        if want <= 0:
            raise ValueError(f"a wave needs at least one block, got {want}")
        with self._lock:
            if not self._leases:
                lone = self._lone_capacity.get(id(shape))
                if lone is None or lone[0] is not shape:
                    if len(self._lone_capacity) >= 256:
                        self._lone_capacity.clear()
                    lone = self._lone_capacity[id(shape)] = (shape, self.sm_count * self._empty_fit(shape))
                if want <= lone[1]:     # the only grid: the default placement, written down lazily
                    p = Placement(owner, shape, want, True)
                    self._leases[id(p)] = p
                    self._owners[id(owner)] = 1
                    self.acquired += 1
                    if self.peak_grids < 1:
                        self.peak_grids = 1
                    if want > self.peak_blocks:
                        self.peak_blocks = want
                    return p
            for p in self._leases.values():
                if not p.applied:
                    self._apply_default(p)
            fit = self._fit(shape)
            if not fit.any():
                return None
            return self._lease(self._take(owner, shape, fit, want))

    @staticmethod
    def default_arrays(sm_count: int, shape: BlockShape, nblocks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(per_sm, block_sm, block_warps) of the default placement: block k
        on SM k mod sm_count, in warp slots (k // sm_count) * warps + i."""
        S, wpb = sm_count, shape.warps
        k = np.arange(nblocks)
        per_sm = np.full(S, nblocks // S, dtype=np.int64) + (np.arange(S) < nblocks % S)
        block_sm = (k % S).astype(np.uint32)
        block_warps = ((k // S)[:, None] * wpb + np.arange(wpb)[None, :]).astype(np.uint32)
        return per_sm, block_sm, block_warps

    def _apply_default(self, p: Placement) -> None:
        """Write a lazily taken default placement into the arrays (the pool
        was empty when it was taken, and only defaults are lazy, so only
        one is ever pending)."""
        n, p.block_sm, p.block_warps = self.default_arrays(self.sm_count, p.shape, p.nblocks)
        p.per_sm = n
        self.used += n[:, None] * np.array(p.shape.need, dtype=np.int64)[None, :]
        self.free_warps[np.arange(self.free_warps.shape[1])[None, :] < (n * p.shape.warps)[:, None]] = False
        p.applied = True

    def _take(self, owner: Any, shape: BlockShape, fit: np.ndarray, want: int) -> Placement:
        """Round-robin over the SMs with room, least loaded first (as the
        hardware's block scheduler spreads work): round r gives one block
        to every SM that still fits more than r, until `want` are placed."""
        want = min(want, int(fit.sum()))
        load = self.free_warps.shape[1] - self.free_warps.sum(axis=1)     # warp slots in use
        order_sm = np.argsort(load, kind="stable")
        level, placed = 0, 0
        while True:
            nxt = int(np.minimum(fit, level + 1).sum())
            if nxt >= want:
                break
            level, placed = level + 1, nxt
        n = np.minimum(fit, level)
        ranked = order_sm[fit[order_sm] > level]
        n[ranked[:want - placed]] += 1
        rounds = int(n.max())
        order = [order_sm[n[order_sm] > r] for r in range(rounds)]
        block_sm = np.concatenate(order).astype(np.uint32)
        block_round = np.concatenate([np.full(len(o), r) for r, o in enumerate(order)])
        index = np.full((rounds, self.sm_count), -1, dtype=np.int64)
        index[block_round, block_sm] = np.arange(len(block_sm))
        wpb = shape.warps
        rank = np.cumsum(self.free_warps, axis=1)
        take = self.free_warps & (rank <= (n * wpb)[:, None])
        rows, cols = np.nonzero(take)
        j = rank[rows, cols] - 1
        block_warps = np.empty((len(block_sm), wpb), dtype=np.uint32)
        block_warps[index[j // wpb, rows], j % wpb] = cols
        self.free_warps[rows, cols] = False
        self.used += n[:, None] * np.array(shape.need, dtype=np.int64)[None, :]
        return Placement(owner, shape, len(block_sm), False, n, block_sm, block_warps, applied=True)

    def _lease(self, p: Placement) -> Placement:
        self._leases[id(p)] = p
        self._owners[id(p.owner)] = self._owners.get(id(p.owner), 0) + 1
        self.acquired += 1
        if len(self._owners) > self.peak_grids:
            self.peak_grids = len(self._owners)
        blocks = sum(q.nblocks for q in self._leases.values()) if len(self._leases) > 1 else p.nblocks
        if blocks > self.peak_blocks:
            self.peak_blocks = blocks
        return p

    def acquire(self, owner: Any, shape: BlockShape, want: int,
                abort: Callable[[], None] | None = None) -> Placement:
        """Place up to `want` blocks, waiting while not one fits; `abort()`
        is called every WAIT_POLL_S while waiting and may raise to give up."""
        p = self.try_acquire(owner, shape, want)
        if p is not None:
            return p
        return self.wait_acquire(owner, shape, want, abort)

    def wait_acquire(self, owner: Any, shape: BlockShape, want: int,
                     abort: Callable[[], None] | None = None) -> Placement:
        """acquire() after its first try found no room (the executor tries
        first itself: a lone grid makes no abort callback)."""
        with self.cv:
            self.waits += 1
            self._waiting += 1
        try:
            while True:
                if abort is not None:
                    abort()
                with self.cv:
                    p = self.try_acquire(owner, shape, want)
                    if p is not None:
                        return p
                    self.cv.wait(WAIT_POLL_S)
        finally:
            with self.cv:
                self._waiting -= 1

    def release(self, p: Placement) -> None:
        """Return a placement's capacity (idempotent) and wake waiting grids."""
        with self._lock:
            if p.released:
                return
            p.released = True
            leases = self._leases
            leases.pop(id(p), None)
            if not leases:    # the last placement held: no owner holds any (a lone grid's release)
                self._owners.clear()
            else:
                left = self._owners.get(id(p.owner), 0) - 1
                if left > 0:
                    self._owners[id(p.owner)] = left
                else:
                    self._owners.pop(id(p.owner), None)
            if p.applied:
                self.used -= p.per_sm[:, None] * np.array(p.shape.need, dtype=np.int64)[None, :]
                rows = np.repeat(p.block_sm, p.shape.warps)
                self.free_warps[rows, p.block_warps.reshape(-1)] = True
            if self._waiting:
                self.cv.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """For tests: until no block is resident (False at the timeout)."""
        deadline = time.monotonic() + timeout
        with self.cv:
            self._waiting += 1
            try:
                while self._leases:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self.cv.wait(left)
                return True
            finally:
                self._waiting -= 1


def pool_for(gpu: Any) -> SMPool:
    """The GPU's pool, created on first use."""
    pool = getattr(gpu, "sm_pool", None)
    if pool is None:
        with _create_lock:
            pool = getattr(gpu, "sm_pool", None)
            if pool is None:
                pool = gpu.sm_pool = SMPool(gpu.model)
    return pool


_create_lock = threading.Lock()
