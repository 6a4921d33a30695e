"""The asynchronous-copy unit of a wave: cp.async and cp.async.bulk copies
that are issued now and land later, and the deferred mbarrier arrivals
that track them.

The one idea: a copy reads its source when it is issued (so a bad source
address is a precise fault of the issuing instruction, reported at issue
time -- compute-sanitizer reports at completion, but the faulting thread
and instruction are the same) and keeps the bytes; its destination is
written only when the copy *completes*, at a point the simulator chooses
deterministically and as late as the program allows:

- cp.async: when the issuing thread waits for its group
  (cp.async.wait_group N / wait_all), or exits;
- bulk copies into shared memory (mbarrier::complete_tx::bytes): when a
  thread tests or waits on their mbarrier, which then receives the
  complete-tx of their bytes;
- bulk copies out of shared memory (.bulk_group): at
  cp.async.bulk.wait_group N (not .read, whose sources were read at issue)
  or when the issuing thread exits;
- cp.async.mbarrier.arrive: the arrive-on fires once every earlier cp.async
  of the thread completed, which the simulator does when a thread tests or
  waits on that mbarrier;
- anything left when every thread of the wave is blocked (the last moment
  hardware could finish it) -- only then is a wait that can never complete
  a deadlock.

So a read of the destination before the wait sees the old bytes, and
forgetting the wait is a bug one can see. The destination write is reported
to analysis tools when it happens, attributed to the issuing thread and
instruction (racecheck sees it race a read that did not wait); the source
read is reported at issue by the instruction itself.

What it does not model: bandwidth or latency (a copy never completes
"early" on its own), or the L1/L2 cache hints.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpudbg.sim import mbarrier
from gpudbg.sim.instrument import MemoryAccess
from gpudbg.sim.memory.spaces import AccessType, Space

U32 = np.dtype(np.uint32)
U64 = np.dtype(np.uint64)
CP_ASYNC, BULK_GROUP, BULK_MBAR = "cp.async", "bulk_group", "bulk_mbarrier"


@dataclass
class Copy:
    """One instruction's copies still in flight, one entry per thread."""

    pc: int
    family: str                  # CP_ASYNC, BULK_GROUP or BULK_MBAR
    slots: np.ndarray            # issuing threads (wave slots)
    stamp: np.ndarray            # per entry: issue order within the unit
    seq: np.ndarray | None       # per entry: commit group (CP_ASYNC, BULK_GROUP)
    to_shared: bool
    blocks: np.ndarray           # per entry: destination block (shared destinations)
    dst: np.ndarray              # per entry: shared offset or global address
    data: np.ndarray             # (entries, nbytes) uint8 read at issue
    mbar: np.ndarray | None = None   # per entry: mbarrier offset (BULK_MBAR)
    # a tensor store: (global addresses, element values) of one entry's
    # in-bounds elements, written instead of `data` at `dst`
    scatter: tuple[np.ndarray, np.ndarray] | None = None

    def take(self, keep: np.ndarray) -> None:
        for name in ("slots", "stamp", "seq", "blocks", "dst", "data", "mbar"):
            v = getattr(self, name)
            if v is not None:
                setattr(self, name, v[keep])


@dataclass
class Arrival:
    """cp.async.mbarrier.arrive still waiting for the thread's copies."""

    pc: int
    slots: np.ndarray
    stamp: np.ndarray
    blocks: np.ndarray
    mbar: np.ndarray

    def take(self, keep: np.ndarray) -> None:
        self.slots, self.stamp = self.slots[keep], self.stamp[keep]
        self.blocks, self.mbar = self.blocks[keep], self.mbar[keep]


class AsyncUnit:
    def __init__(self, X):
        n = X.n
        self.cp_committed = np.zeros(n, dtype=np.int64)    # cp.async groups committed per thread
        self.bulk_committed = np.zeros(n, dtype=np.int64)  # bulk groups committed per thread
        self.copies: list[Copy] = []
        self.arrivals: list[Arrival] = []
        self.waiters = mbarrier.Waiters(n)
        self._stamp = 0

    # ------------------------------------------------------------ issue
    def stamps(self, n: int) -> np.ndarray:
        s = np.arange(self._stamp, self._stamp + n, dtype=np.int64)
        self._stamp += n
        return s

    def issue(self, copy: Copy) -> None:
        if len(copy.slots):
            self.copies.append(copy)

    def defer_arrive(self, pc: int, slots: np.ndarray, blocks: np.ndarray, mbar: np.ndarray) -> None:
        if len(slots):
            self.arrivals.append(Arrival(pc, slots, self.stamps(len(slots)), blocks, mbar))

    # ------------------------------------------------------------ completion points
    def wait_group(self, X, slots: np.ndarray, allowed: int, family: str = CP_ASYNC) -> None:
        """The threads `slots` wait until at most `allowed` of their most
        recent committed groups are pending."""
        committed = self.cp_committed if family == CP_ASYNC else self.bulk_committed
        mine = self._mask(X, slots)
        self._complete(X, lambda c: (mine[c.slots] & (c.seq < committed[c.slots] - allowed))
                       if c.family == family else False)
        self._fire_ready(X)

    def threads_exit(self, X, slots: np.ndarray) -> None:
        """Exiting threads' own copies land (the copies outlive the thread
        on hardware; here they finish as it leaves)."""
        if not self.copies and not self.arrivals:
            return
        mine = self._mask(X, slots)
        self._complete(X, lambda c: mine[c.slots] if c.family != BULK_MBAR else False)
        self._fire_ready(X, mine)

    def before_wait(self, X, blocks: np.ndarray, offsets: np.ndarray) -> None:
        """A thread tests or waits on these mbarriers: the copies and
        deferred arrivals they track complete first."""
        if not self.copies and not self.arrivals:
            return
        keys = set(zip(np.asarray(blocks).tolist(), np.asarray(offsets).tolist()))

        def tracked(blocks_, mbar_):
            return np.array([(b, o) in keys for b, o in zip(blocks_.tolist(), mbar_.tolist())], dtype=bool)

        # the threads whose arrivals this wait needs complete their earlier cp.async
        needed = [(a, tracked(a.blocks, a.mbar)) for a in self.arrivals]
        if any(t.any() for _, t in needed):
            limit = np.full(X.n, -1, dtype=np.int64)
            for a, t in needed:
                np.maximum.at(limit, a.slots[t], a.stamp[t])
            self._complete(X, lambda c: (c.stamp < limit[c.slots]) if c.family == CP_ASYNC else False)
        self._complete(X, lambda c: tracked(c.blocks, c.mbar) if c.family == BULK_MBAR else False)
        self._fire_ready(X)

    def flush_stalled(self, X) -> bool:
        """Every thread is blocked: whatever is in flight completes now.
        True when anything did (some thread may be runnable again)."""
        if not self.copies and not self.arrivals:
            return False
        self._complete(X, lambda c: True)
        self._fire_ready(X)
        return True

    # ------------------------------------------------------------ mechanics
    @staticmethod
    def _mask(X, slots: np.ndarray) -> np.ndarray:
        m = np.zeros(X.n, dtype=bool)
        m[slots] = True
        return m

    def _complete(self, X, select) -> None:
        """Land the entries `select(copy)` picks (a mask, or one bool for
        all of a copy's entries)."""
        left = []
        for c in self.copies:
            done = np.broadcast_to(np.asarray(select(c), dtype=bool), c.slots.shape)
            if done.any():
                if done.all():
                    self._land(X, c)
                    continue
                part = Copy(c.pc, c.family, c.slots[done], c.stamp[done],
                            None if c.seq is None else c.seq[done], c.to_shared, c.blocks[done],
                            c.dst[done], c.data[done], None if c.mbar is None else c.mbar[done])
                c.take(~done)
                self._land(X, part)
            left.append(c)
        self.copies = left

    def _fire_ready(self, X, force: np.ndarray | None = None) -> None:
        """Deferred arrivals whose thread has no earlier cp.async in flight
        (or, with `force`, whose thread exits) arrive now."""
        if not self.arrivals:
            return
        oldest = np.full(X.n, np.iinfo(np.int64).max, dtype=np.int64)
        for c in self.copies:
            if c.family == CP_ASYNC:
                np.minimum.at(oldest, c.slots, c.stamp)
        left = []
        for a in self.arrivals:
            ready = oldest[a.slots] > a.stamp
            if force is not None:
                ready |= force[a.slots]
            if ready.any():
                upd = mbarrier.Update(X, a.blocks[ready], a.mbar[ready])
                for i in range(int(ready.sum())):
                    upd.arrive(i, 1)
                upd.finish()
                a.take(~ready)
            if len(a.slots):
                left.append(a)
        self.arrivals = left

    def _land(self, X, c: Copy) -> None:
        """Write one set of copies' destinations, 16 bytes at a time, and
        report each write; bulk copies into shared memory then complete
        their bytes on their mbarriers."""
        tap = X.tap if X.tap is not None and X.tap.observes_memory else None
        if c.scatter is not None:       # one thread's tensor store (never split: one entry)
            addrs, values = c.scatter
            if len(addrs):
                X.gmem.store(addrs, values, values.dtype)
                if tap is not None:
                    tap.memory(X, MemoryAccess(c.pc, np.repeat(c.slots, len(addrs)), Space.GLOBAL, addrs,
                                               values.dtype.itemsize, AccessType.WRITE))
            return
        nbytes = c.data.shape[1]
        words = np.ascontiguousarray(c.data).view(U32)
        for w0 in range(0, nbytes // 4, 4):
            cnt = min(4, nbytes // 4 - w0)
            v = words[:, w0:w0 + cnt] if cnt > 1 else np.ascontiguousarray(words[:, w0])
            at = c.dst + np.uint64(4 * w0)
            if c.to_shared:
                X.smem.store(c.blocks, at, v, U32, cnt)
            else:
                X.gmem.store(at, v, U32, cnt)
            if tap is not None:
                if c.to_shared:     # writes into a peer block of a cluster are not reported (as for ld/st)
                    own = c.blocks == X.layout.block_of[c.slots]
                    if own.any():
                        tap.memory(X, MemoryAccess(c.pc, c.slots[own], Space.SHARED, at[own], 4 * cnt,
                                                   AccessType.WRITE))
                else:
                    tap.memory(X, MemoryAccess(c.pc, c.slots, Space.GLOBAL, at, 4 * cnt, AccessType.WRITE))
        if c.family == BULK_MBAR:
            upd = mbarrier.Update(X, c.blocks, c.mbar)
            for i in range(len(c.slots)):
                upd.add_tx(i, -nbytes)
            upd.finish()

    # ------------------------------------------------------------ reports
    def deadlock_report_message(self, X, slot: int) -> str:
        b = int(X.layout.block_of[slot])
        off = int(self.waiters.offset[slot])
        parked = self.waiters.parked(X)
        here = parked[(X.layout.block_of[parked] == b) & (self.waiters.offset[parked] == off)]
        return (f"mbarrier deadlock: {len(here)} thread(s) of block {X.block_idx_of(slot)} wait in "
                f"mbarrier.try_wait for the phase of parity {int(self.waiters.parity[slot])} to complete, "
                f"but nothing left can complete it: {mbarrier.describe(X, b, off)}; "
                f"{int(X.plan.threads_per_block - X.block_live[b])} thread(s) of the block have exited")


def unit(X) -> AsyncUnit:
    """The wave's unit, made on first use."""
    u = X.async_unit
    if u is None:
        u = X.async_unit = AsyncUnit(X)
    return u
