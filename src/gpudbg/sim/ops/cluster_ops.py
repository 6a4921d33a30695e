"""Cluster instructions (sm_90): mapa, getctarank and barrier.cluster, and
the address resolution of distributed shared memory for ld/st/atom/red.

The cluster barrier is split like the hardware's: `barrier.cluster.arrive`
counts the thread in its cluster's current phase and never blocks;
`barrier.cluster.wait` lets a thread pass once the phase it arrived in has
completed (every thread of the cluster that has not exited arrived), and
parks it until then. Exits count toward completion, as they do for CTA
barriers. A thread that waits without having arrived passes (the PTX ISA
leaves it undefined). Remote shared accesses go to the peer block's
shared segment in the same wave (sim/cluster.py).
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim import cluster
from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory import SHARED_WINDOW_BASE, WINDOW_SIZE, AccessFault, Space
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op
from gpudbg.sim.state import PARKED

CLUSTER_BARRIER = cluster.CLUSTER_BARRIER

U32 = PTX_TYPES["u32"]


def _lanes(values, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(values).astype(np.uint64), (n,))


# ------------------------------------------------------------------ addresses
def resolve(X, idx, offsets, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(shared segment, offset) of `.shared::cluster` addresses; a rank
    outside the cluster is a precise CLUSTER_OUT_OF_RANGE_ADDRESS fault."""
    own = X.block_segments(idx)
    n = len(own) if np.ndim(own) else X.count(idx)
    rank1, off = cluster.split(_lanes(offsets, n))
    start = X.wave_blocks[0] if len(X.wave_blocks) else 0
    own_rank = cluster.ranks_of(own, start, X.cluster_dim)
    target = np.where(rank1 == 0, own_rank, rank1 - 1)
    bad = target >= cluster.size(X.cluster_dim)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        a = int(_lanes(offsets, n)[k])
        raise AccessFault(CUDBGException.CUDBG_EXCEPTION_CLUSTER_OUT_OF_RANGE_ADDRESS, Space.SHARED, k, a, size,
                          f"Invalid __shared__ access of size {size} bytes at 0x{a:x}: it names block rank "
                          f"{int(target[k])} of a cluster of {cluster.size(X.cluster_dim)} blocks",
                          lanes=np.flatnonzero(bad))
    return own - own_rank + target, off


def resolve_generic(X, idx, addrs, block_segments):
    """Generic addresses with rank bits in the shared window, turned into
    the peer block's plain shared-window address and segment."""
    a = np.asarray(addrs, dtype=np.uint64)
    shared = (a >= np.uint64(SHARED_WINDOW_BASE)) & (a < np.uint64(SHARED_WINDOW_BASE + WINDOW_SIZE))
    remote = shared & (((a - np.uint64(SHARED_WINDOW_BASE)) >> np.uint64(cluster.RANK_SHIFT)) != 0)
    if not remote.any():
        return a, block_segments
    seg, off = resolve(X, idx, np.where(shared, a - np.uint64(SHARED_WINDOW_BASE), np.uint64(0)), 1)
    bs = np.broadcast_to(np.asarray(block_segments), a.shape)
    return (np.where(remote, off + np.uint64(SHARED_WINDOW_BASE), a),
            np.where(remote, seg, bs).astype(np.asarray(bs).dtype))


# ------------------------------------------------------------------ mapa, getctarank
@op("mapa")
def build_mapa(inst, tc) -> Built:
    m = Mods(inst)
    space = "cluster" if m.flag("shared::cluster") else "generic"
    t = m.one_type()
    m.finish()
    if t.name not in ("u32", "u64") or (space == "generic" and t.name != "u64"):
        raise UnsupportedInstruction(f"mapa{'.shared::cluster' if space == 'cluster' else ''}.{t.name}: "
                                     f"the address type is .u32 or .u64 (.u64 for generic addresses)")
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], t)
    rank = tc.reader(inst.operands[2], U32)

    def run(X, idx):
        # like the hardware, mapa only computes: an access through the
        # address of a rank outside the cluster is what faults (resolve)
        n = X.count(idx)
        addr, r = _lanes(a(X, idx), n), _lanes(rank(X, idx), n) & np.uint64(0xFF)
        if space == "cluster":
            out = cluster.join(r, addr)
        else:
            out = cluster.join(r, addr - np.uint64(SHARED_WINDOW_BASE)) + np.uint64(SHARED_WINDOW_BASE)
        d(X, idx, out.astype(t.dtype))
    return Built(run)


@op("getctarank")
def build_getctarank(inst, tc) -> Built:
    m = Mods(inst)
    space = "cluster" if m.flag("shared::cluster") else "generic"
    t = m.one_type()
    m.finish()
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], t)

    def run(X, idx):
        addr = _lanes(a(X, idx), X.count(idx))
        if space == "generic":
            addr = addr - np.uint64(SHARED_WINDOW_BASE)
        rank1, _ = cluster.split(addr)
        d(X, idx, np.where(rank1 == 0, cluster.lane_ranks(X, idx), rank1 - 1).astype(np.uint32))
    return Built(run)


# ------------------------------------------------------------------ barrier.cluster
class ClusterBarrier:
    """Per resident cluster: arrivals in the current phase and the phase
    number; per thread: the phase it last arrived in (-1: none)."""

    def __init__(self, X):
        nclusters = max(1, len(X.block_live) // cluster.size(X.cluster_dim))
        self.arrivals = np.zeros(nclusters, dtype=np.int64)
        self.phase = np.zeros(nclusters, dtype=np.int64)
        self.arrived = np.full(X.n, -1, dtype=np.int64)

    @staticmethod
    def of(X) -> "ClusterBarrier":
        if X.cluster_barrier is None:
            X.cluster_barrier = ClusterBarrier(X)
        return X.cluster_barrier

    def _cluster_of(self, X, slots) -> np.ndarray:
        return X.layout.block_of[slots] // cluster.size(X.cluster_dim)

    def arrive(self, X, slots) -> None:
        c = self._cluster_of(X, slots)
        self.arrived[slots] = self.phase[c]
        self.arrivals += np.bincount(c, minlength=len(self.arrivals))
        self.release(X)

    def release(self, X) -> bool:
        """Complete the phases every live thread has arrived in; let their
        waiting threads go."""
        live = X.block_live.reshape(len(self.arrivals), -1).sum(axis=1)
        done = (self.arrivals > 0) & (self.arrivals >= live)
        if not done.any():
            return False
        self.phase[done] += 1
        self.arrivals[done] = 0
        if X.tap is not None:   # for the tools, a cluster barrier orders each of its blocks too
            X.tap.barrier_complete(X, np.flatnonzero(np.repeat(done, cluster.size(X.cluster_dim))),
                                   CLUSTER_BARRIER)
        waiting = (X.sched == PARKED) & (X.bar_wait == CLUSTER_BARRIER)
        slots = np.flatnonzero(waiting)
        go = slots[self.arrived[slots] < self.phase[self._cluster_of(X, slots)]]
        if len(go):
            X.sched[go] = X.park_pc[go]
            X.uniform_pc = None
            X.bar_wait[go] = -1
        return True

    def wait(self, X, slots, pc: int) -> None:
        passed = self.arrived[slots] < self.phase[self._cluster_of(X, slots)]
        go, stay = slots[passed], slots[~passed]
        X.sched[go] = pc + 1
        X.sched[stay] = PARKED
        X.uniform_pc = None
        X.park_pc[stay] = pc + 1
        X.bar_wait[stay] = CLUSTER_BARRIER


def build_cluster_barrier(inst, tc) -> Built:
    """barrier.cluster.arrive{.release|.relaxed}{.aligned} and
    barrier.cluster.wait{.acquire}{.aligned} (memory orders hold trivially
    in the simulator's sequentially consistent memory)."""
    mods = [m for m in inst.modifiers if m not in ("cluster", "aligned", "release", "relaxed", "acquire")]
    if mods not in (["arrive"], ["wait"]) or inst.operands:
        raise UnsupportedInstruction(f"barrier.cluster takes .arrive or .wait and no operands, "
                                     f"not .{'.'.join(inst.modifiers)}")
    arrive = mods == ["arrive"]

    def control(X, idx, pc):
        slots = X.all_slots if idx is None else np.asarray(idx)
        bar = ClusterBarrier.of(X)
        if arrive:
            X.sched[slots] = pc + 1
            X.uniform_pc = None
            bar.arrive(X, slots)
        else:
            bar.wait(X, slots, pc)
    return Built(control=control, kind="cluster_barrier", info={"cluster_barrier": "arrive" if arrive else "wait"})
