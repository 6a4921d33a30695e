"""racecheck: data races in shared memory between threads of a block (as
compute-sanitizer's racecheck finds them) and, beyond it, in global memory
between threads of different blocks of one launch.

What it is: a happens-before detector over the instrumentation events
(sim/instrument.py). Shadows (race_shadow.Shadow: one for the shared
memory of the GPU's resident blocks, one per global allocation touched)
hold, per unit of bytes, the last write, the last two concurrent reads
and the last atomic as packed (stamp, thread). The one idea is the stamp:
a process-wide event clock that ticks once per memory instruction and
once per synchronization, so "ordered" is a comparison of integers
(race_order):

- shared memory: an earlier access by another thread of the block is
  ordered before the current one iff a CTA barrier completed in the block
  after it, or both threads are in one warp and a `bar.warp.sync`
  (__syncwarp) covering the warp's live lanes of its mask completed after
  it. Nothing else orders threads: since Volta there is no implicit warp
  synchrony, and shfl/vote/match/redux .sync exchange registers, not
  memory. Atomics never race with atomics; a thread never races with
  itself; lanes of one instruction writing the same byte race
  (write-after-write), lanes reading it do not. Each wave starts with
  every older stamp ordered, which resets the shadow without touching it.
- global memory (CheckConfig.racecheck_global): two accesses to the same
  bytes by threads of different blocks of the launch, at least one a
  plain write or one plain and the other atomic, race, whichever waves
  the blocks ran in (blocks of a grid are never ordered within a launch);
  accesses by one block are not judged. Stamps older than the launch's
  start are ignored, which resets the shadows at launch_begin for free.

Hazards are counted per access: one thread executing the second
instruction once that conflicts with the first instruction counts one
hazard, however many of its bytes overlap (and however many earlier
threads it conflicts with there). One Finding per (space, hazard kind,
first pc, second pc) per launch, emitted at launch_end in
compute-sanitizer's words, with an example pair of threads and the
address; sites are built when a pair is first seen, while its wave lives.
Every check works on whole arrays per instruction; a broadcast read (many
lanes on one word) is reduced to one lane per word first.

What it deliberately does not do: named barriers with a thread count and
bar.arrive order the whole block at completion (a race among threads a
partial barrier does not cover is missed, never invented); __syncwarp with
a partial mask orders the whole warp once every live lane of the mask has
arrived; global-memory message passing between blocks (fences plus
atomic flags, volatile or acquire/release accesses, grid syncs) is not
modelled, so such protocols are reported as races; races inside one
block in global memory, and between different launches, are not checked.
Launches running at once (on several GPUs, or concurrent kernels of one
GPU, each executed by its own thread) each get their own state, and a
launch that starts while another runs gets its own global shadows, so the
accesses of different launches are never judged against each other.
"""
from __future__ import annotations

import dataclasses
import enum
import itertools
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpudbg.sanitizer import sites
from gpudbg.sanitizer.config import CheckConfig
from gpudbg.sanitizer.findings import DeviceSite, Finding, Severity, ToolName
from gpudbg.sanitizer.race_order import GlobalOrder, LaunchState, SharedOrder, pick
from gpudbg.sanitizer.race_shadow import START_GRANULARITY, WHO_MASK, Scratch, Shadow
from gpudbg.sanitizer.report import Reporter
from gpudbg.sim.cluster import block_coords
from gpudbg.sim.instrument import Launch, MemoryAccess, Tool, WarpSync
from gpudbg.sim.memory.spaces import AccessType, Space
from gpudbg.sim.state import EXITED

WARP_SYNC_OP = "bar.warp.sync"          # the only warp-level instruction that orders memory
RECENT_ALLOCATIONS = 8                  # global shadows looked up by a linear scan
CLOCK_LIMIT = (1 << 31) - (1 << 26)     # restart the event clock past this, between launches
_LANE_BITS = (np.uint32(1) << np.arange(32, dtype=np.uint32)).astype(np.uint64)


class Hazard(enum.Enum):
    RAW = "raw"      # read after write
    WAR = "war"      # write after read
    WAW = "waw"      # write after write


class RaceSpace(enum.Enum):
    SHARED = "shared"
    GLOBAL = "global"


_WORD = {AccessType.READ: "Read", AccessType.WRITE: "Write", AccessType.ATOMIC: "Atomic"}


@dataclass
class Race:
    """One (space, hazard, first pc, second pc) of a launch: its count and
    the first example seen."""

    space: RaceSpace
    hazard: Hazard
    first_word: str
    second_word: str
    first: DeviceSite
    second: DeviceSite
    address: int
    size: int
    count: int = 0


class RacecheckTool(Tool):
    """--tool racecheck (see the module docstring)."""

    name = "racecheck"

    def __init__(self, config: CheckConfig, reporter: Reporter):
        self.config = config
        self.reporter = reporter
        self._clock = itertools.count(1)
        # per running launch: (GPU, the thread executing it); several grids
        # of one GPU run at once, each on its own engine thread
        self._states: dict[tuple[int, int], LaunchState] = {}
        self._global: dict[int, tuple[Any, Shadow]] = {}   # id(allocation) -> shadow
        # per GPU: temporaries, the shared-memory shadow and the recent
        # allocations (LaunchState.recent), kept from launch to launch (a
        # launch takes them; one running beside it starts its own)
        self._per_gpu: dict[int, tuple[Scratch, Shadow | None, list]] = {}
        self._host_sites: dict[tuple[int, int], list[str]] = {}

    # ---------------------------------------------------------------- launches
    def launch_enqueued(self, gpu: Any, grid_id: int, kernel: str) -> None:
        if len(self._host_sites) > 256:
            self._host_sites.clear()
        self._host_sites[(id(gpu), grid_id)] = sites.host_site()

    @staticmethod
    def _key(gpu: Any) -> tuple[int, int]:
        return id(gpu), threading.get_ident()

    def launch_begin(self, launch: Launch) -> None:
        key = id(launch.gpu)
        host = self._host_sites.pop((key, launch.grid_id), [])
        base = next(self._clock)
        if base > CLOCK_LIMIT and not self._states:
            # stamps must stay below 2**31 in the packed entries: start
            # again, forgetting every shadow (no launch is running)
            self._clock = itertools.count(1)
            self._global.clear()
            self._per_gpu.clear()
            base = next(self._clock)
        scratch, shared, recent = self._per_gpu.pop(key, None) or (Scratch(), None, [])
        st = LaunchState(launch, base, host, scratch, shared, recent)
        # alone: the shadows kept from launch to launch; beside another launch: its own
        st.shadows = self._global if not self._states else {}
        self._states[self._key(launch.gpu)] = st

    def wave_begin(self, X: Any) -> None:
        st = self._states.get(self._key(X.gpu))
        if st is not None:
            st.begin_wave(X, next(self._clock))

    def launch_end(self, launch: Launch, fault: BaseException | None) -> None:
        st = self._states.pop(self._key(launch.gpu), None)
        if st is None:
            return
        # a launch with its own shadows leaves no recent list pointing at them
        self._per_gpu[id(launch.gpu)] = (st.scratch, st.shared, st.recent if st.shadows is self._global else [])
        for race in st.races.values():
            self.reporter.add(self._finding(race, st))

    def freed(self, memory: Any, allocation: Any) -> None:
        self._global.pop(id(allocation), None)
        for st in list(self._states.values()):
            st.shadows.pop(id(allocation), None)
            st.recent = [e for e in st.recent if e[2] is not allocation]
        for key, (scratch, shared, recent) in list(self._per_gpu.items()):
            self._per_gpu[key] = (scratch, shared, [e for e in recent if e[2] is not allocation])

    # ---------------------------------------------------------------- synchronization
    def barrier_complete(self, X: Any, blocks: np.ndarray, barrier: int) -> None:
        st = self._states.get(self._key(X.gpu))
        if st is None:
            return
        stamp = next(self._clock)
        st.bar_stamp[blocks] = stamp
        if len(blocks) == len(st.bar_stamp):
            st.bar_uniform = st.bar_floor = stamp
        else:
            st.bar_uniform = None
            st.bar_floor = int(st.bar_stamp.min())

    def warp_sync(self, X: Any, sync: WarpSync) -> None:
        """__syncwarp: a warp's accesses before it are ordered before its
        accesses after it once every live lane of the mask has arrived."""
        if sync.op != WARP_SYNC_OP or not len(sync.slots):
            return
        st = self._states.get(self._key(X.gpu))
        if st is None:
            return
        slots = sync.slots
        warps, inv = np.unique(slots >> 5, return_inverse=True)
        arrived = np.zeros(len(warps), dtype=np.uint64)
        np.bitwise_or.at(arrived, inv, _LANE_BITS[slots & 31])
        mask = np.zeros(len(warps), dtype=np.uint64)
        mask[inv] = sync.masks.astype(np.uint64)
        sched = X.sched[: len(st.wsync) * 32].reshape(-1, 32)[warps]
        live = ((sched != EXITED) * _LANE_BITS).sum(axis=1).astype(np.uint64)
        got = st.pending[warps] | arrived
        done = ((mask & live) & ~got) == 0
        stamp = next(self._clock)
        st.wsync[warps[done]] = stamp
        st.pending[warps] = np.where(done, np.uint64(0), got)
        st.any_wsync = st.any_wsync or bool(done.any())

    # ---------------------------------------------------------------- accesses
    def memory(self, X: Any, access: MemoryAccess) -> None:
        space = access.space
        if space is Space.SHARED:
            pass
        elif space is not Space.GLOBAL or not self.config.racecheck_global:
            return
        if not len(access.slots):
            return
        st = self._states.get(self._key(X.gpu))
        if st is None:
            return
        stamp = next(self._clock)
        st.note_pc(stamp, access.pc)
        if space is Space.SHARED:
            self._shared(st, access, stamp)
        else:
            self._global_access(st, X, access, stamp)

    def _shared(self, st: LaunchState, acc: MemoryAccess, stamp: int) -> None:
        sh = st.shared
        need = len(st.bar_stamp) * st.stride
        if sh is None or len(sh.W) * sh.g < need:
            sh = st.shared = Shadow(need)
        slots = acc.slots
        scratch = st.scratch
        bases = st.shared_bases()
        if len(slots) != st.X.n:
            bases = scratch.take("base", bases, slots)
        offsets = np.add(bases, acc.addresses, out=scratch.get("off", len(slots), np.uint64))
        u, k = sh.units(offsets, acc.size, scratch)
        self._judge(st, acc, RaceSpace.SHARED, sh, u, k, slots, stamp,
                    SharedOrder(st, slots, k), None)

    def _global_access(self, st: LaunchState, X: Any, acc: MemoryAccess, stamp: int) -> None:
        addrs = acc.addresses
        size = acc.size
        first = int(addrs[0])
        recent = st.recent
        for entry in recent:
            base, end, alloc, sh = entry
            if base <= first < end:
                off = np.subtract(addrs, np.uint64(base),
                                  out=st.scratch.get("goff", len(addrs), np.uint64))
                if end - base >= size and bool((off <= np.uint64(end - base - size)).all()):
                    if entry is not recent[0]:
                        recent.remove(entry)
                        recent.insert(0, entry)
                    self._global_in(st, acc, alloc, sh, off, acc.slots, stamp)
                    return
                break
        a = X.gmem.find(first)
        if a is not None:
            off = addrs - np.uint64(a.base)
            if a.size >= size and bool((off <= np.uint64(a.size - size)).all()):
                self._global_in(st, acc, a, self._shadow_of(st, a, size), off, acc.slots, stamp)
                return
        arrays = X.gmem.sorted_arrays()          # (bases, ..., allocations): lanes in several
        bases, allocs = arrays[0], arrays[-1]
        if not len(bases):
            return
        which = np.searchsorted(bases, addrs, side="right").astype(np.int64) - 1
        for i in np.unique(which).tolist():
            if i < 0:
                continue
            a = allocs[i]
            sel = np.flatnonzero(which == i)
            off = addrs[sel] - np.uint64(a.base)
            inside = off <= np.uint64(max(a.size - size, 0))
            if not inside.all():
                sel, off = sel[inside], off[inside]
            if len(sel):
                self._global_in(st, acc, a, self._shadow_of(st, a, size), off, acc.slots[sel],
                                stamp)

    def _shadow_of(self, st: LaunchState, a: Any, size: int) -> Shadow:
        """The shadow of allocation `a` (made on its first access, with
        units no larger than that access or the base's alignment), now the
        most recent one."""
        shadows = st.shadows
        entry = shadows.get(id(a))
        if entry is None:
            g = min(START_GRANULARITY, a.base & -a.base or 1, size & -size)
            entry = shadows[id(a)] = (a, Shadow(a.size, g))
        st.recent[:] = [(a.base, a.base + a.size, a, entry[1])] + [
            e for e in st.recent if e[2] is not a][:RECENT_ALLOCATIONS - 1]
        return entry[1]

    def _global_in(self, st: LaunchState, acc: MemoryAccess, alloc: Any, sh: Shadow,
                   off: np.ndarray, slots: np.ndarray, stamp: int) -> None:
        u, k = sh.units(off, acc.size, st.scratch)
        gtid, gstart = st.global_ids()
        whole = len(slots) == st.X.n
        self._judge(st, acc, RaceSpace.GLOBAL, sh, u, k, pick(gtid, slots, whole), stamp,
                    GlobalOrder(st, pick(gstart, slots, whole), k), (alloc, slots))

    # ---------------------------------------------------------------- the judgement
    def _judge(self, st: LaunchState, acc: MemoryAccess, space: RaceSpace, sh: Shadow,
               u: np.ndarray, k: int, who: np.ndarray, stamp: int, order: Any, where: Any) -> None:
        """Check one instruction's units against the shadow, report its
        hazards, and record it. A field is read only if it may hold an
        entry newer than `order.floor` (the oldest barrier of the wave's
        blocks, or the launch's start): older ones are all ordered."""
        scratch = st.scratch
        p = np.bitwise_or(who, np.int64(stamp << 32), out=scratch.get("p", len(who), np.int64))
        if k > 1:
            p = np.repeat(p, k)
        kind = acc.kind
        floor = order.floor
        hits: list[tuple[Hazard, str, np.ndarray, np.ndarray]] = []
        on_write = Hazard.RAW if kind is AccessType.READ else Hazard.WAW
        w = None
        if sh.w_max >= floor:
            w = scratch.take("tw", sh.W, u)
            c = order.concurrent(w)
            if c is not None:
                hits.append((on_write, "Write", c, w))
        if kind is not AccessType.ATOMIC and sh.A is not None and sh.a_max >= floor:
            a = scratch.take("ta", sh.A, u)
            c = order.concurrent(a)
            if c is not None and w is not None:
                c &= a > w                   # atomics since the last write
            if c is not None and c.any():
                hits.append((on_write, "Atomic", c, a))
        if kind is AccessType.READ:
            rows = None
            bx = st.launch.block[0]
            if space is RaceSpace.SHARED and k == 1 and bx < st.tpb and len(u) == st.X.n:
                # a whole wave of 2-D blocks: rows may all read one row of a tile
                rows = (st.X.layout.slots_per_block, bx)
            self._reads(sh, u, p, stamp, order, scratch, rows)
        else:
            for name, field, newest in (("tr1", sh.R1, sh.r1_max), ("tr2", sh.R2, sh.r2_max)):
                if newest < floor:
                    continue
                r = scratch.take(name, field, u)
                c = order.concurrent(r)
                if c is not None and w is not None:
                    c &= r > w               # reads since the last write
                if c is not None and c.any():
                    hits.append((Hazard.WAR, "Read", c, r))
            if kind is AccessType.WRITE:
                lost = sh.store(sh.W, u, p, scratch)
                sh.w_max = stamp
                if lost is not None:     # lanes of one store writing one unit
                    self._same_instruction_writes(lost, sh.W, u, order, hits)
            else:
                sh.atomics()[u] = p          # atomics never race with atomics
                sh.a_max = stamp
        for hazard, first_word, c, others in hits:
            self._record(st, acc, space, hazard, first_word, np.flatnonzero(c), k, others, u, sh, where)

    @staticmethod
    def _reads(sh: Shadow, u: np.ndarray, p: np.ndarray, stamp: int, order: Any,
               scratch: Scratch, rows: tuple[int, int] | None) -> None:
        """Record a read in R1/R2, one unit at a time: lanes reading one
        unit (a broadcast) are first reduced to one lane that keeps R1 and
        one other lane for R2, so the rest costs per unit, not per lane."""
        dups = sh.dedupe(u, scratch, rows)
        if dups is None:
            rep = None
            ur, pr = u, p
        else:
            rep, first = dups
            ur, pr = u[rep], p[rep]
        if sh.r1_max >= order.floor:
            r1 = scratch.take("tr1", sh.R1, ur)
            keep = order.concurrent(r1, rep)
            if keep is not None:         # the previous reader stays known as the other one
                sh.R2[ur[keep]] = r1[keep]
                sh.r2_max = stamp
        sh.R1[ur] = pr
        sh.r1_max = stamp
        if dups is not None:
            other = first >= 0           # units read by more than one lane
            if other.any():
                f, r = first[other], rep[other]
                if order.one_thread_per_lane is False:
                    apart = order.apart(f, p[r])
                    f, r = f[apart], r[apart]
                sh.R2[u[r]] = p[f]
                sh.r2_max = stamp

    @staticmethod
    def _same_instruction_writes(lost: np.ndarray, W: np.ndarray, u: np.ndarray, order: Any,
                                 hits: list) -> None:
        """Lanes of one store writing the same units: each lane whose write
        another lane's overwrote races with it (write-after-write)."""
        winners = np.take(W, u[lost])
        if order.one_thread_per_lane is False:
            apart = order.apart(lost, winners)
            lost, winners = lost[apart], winners[apart]
        if len(lost):
            c = np.zeros(len(u), dtype=bool)
            c[lost] = True
            others = np.zeros(len(u), dtype=np.int64)
            others[lost] = winners
            hits.append((Hazard.WAW, "Write", c, others))

    def _record(self, st: LaunchState, acc: MemoryAccess, space: RaceSpace, hazard: Hazard,
                first_word: str, elems: np.ndarray, k: int, others: np.ndarray, u: np.ndarray,
                sh: Shadow, where: Any) -> None:
        """Count the hazards of elements `elems` (one per lane and other pc)
        and note a first example of each new pc pair."""
        ov = others[elems]
        lanes = elems // k
        opc = st.pcs[(ov >> 32) - st.base]
        key = (opc << 32) | lanes
        uniq, idx = np.unique(key, return_index=True)
        pcs_of = uniq >> 32
        bounds = np.flatnonzero(np.r_[True, pcs_of[1:] != pcs_of[:-1]])
        counts = np.diff(np.r_[bounds, len(uniq)])
        slots = acc.slots if where is None else where[1]
        for b, n in zip(bounds.tolist(), counts.tolist()):
            other_pc = int(pcs_of[b])
            rkey = (space, hazard, first_word, other_pc, acc.pc, _WORD[acc.kind])
            race = st.races.get(rkey)
            if race is None:
                e = int(idx[b])
                race = self._example(st, acc, space, hazard, first_word, other_pc,
                                     int(slots[lanes[e]]), int(ov[e] & WHO_MASK),
                                     int(u[elems[e]]) << sh.shift, where)
                st.races[rkey] = race
            race.count += n

    def _example(self, st: LaunchState, acc: MemoryAccess, space: RaceSpace, hazard: Hazard,
                 first_word: str, other_pc: int, slot: int, other: int, byte: int,
                 where: Any) -> Race:
        X = st.X
        second = sites.device_site(X, acc.pc, slot)
        if space is RaceSpace.SHARED:
            first = sites.device_site(X, other_pc, other)
            address = byte - int(X.layout.block_of[slot]) * st.stride
        else:
            first = sites.device_site(X, other_pc, None)
            L = st.launch
            b, t = divmod(other, st.tpb)
            bx, by, _ = L.block
            order = np.array([b])     # launch order: cluster order in a cluster launch (sim/cluster.py)
            block = tuple(int(v[0]) for v in block_coords(order, L.grid, X.plan.cluster))
            first = dataclasses.replace(
                first, block=block,
                thread=(t % bx, (t // bx) % by, t // (bx * by)))
            address = int(where[0].base) + byte
        return Race(space, hazard, first_word, _WORD[acc.kind], first, second, address, acc.size)

    # ---------------------------------------------------------------- reports
    def _finding(self, race: Race, st: LaunchState) -> Finding:
        n = race.count
        mem = (f"__shared__ offset 0x{race.address:x}" if race.space is RaceSpace.SHARED
               else f"__global__ address 0x{race.address:x}")
        details = [f"and {race.second_word} access at {race.second.where} "
                   f"[{n} hazard{'' if n == 1 else 's'}]",
                   f"e.g. {race.first_word} by {race.first.who} and {race.second_word} by "
                   f"{race.second.who}, {race.size} bytes at {mem}"]
        return Finding(tool=ToolName.RACECHECK, kind=f"{race.space.value}_race_{race.hazard.value}",
                       title=f"Error: Race reported between {race.first_word} access at "
                             f"{race.first.where}",
                       details=details, severity=Severity.ERROR, site=race.first,
                       other_site=race.second, address=race.address, size=race.size, count=n,
                       host_site=list(st.host_site),
                       extra={"space": race.space.value, "hazard": race.hazard.value,
                              "counted_per": "access"})
