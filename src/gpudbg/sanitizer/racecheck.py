"""racecheck: data races in shared memory between threads of a block (as
compute-sanitizer's racecheck finds them) and, beyond it, in global memory
between threads of different blocks of one launch.

What it is: a happens-before detector over the instrumentation events
(sim/instrument.py) with one shadow (race_shadow.Shadow) per shared
segment of a wave and per global allocation touched, each unit holding
the last write, the last two concurrent reads and the last atomic as
packed (stamp, thread). The one idea is the stamp: a process-wide event
clock that ticks once per memory instruction and once per
synchronization, so "ordered" is a comparison of integers:

- shared memory: an earlier access by another thread of the block is
  ordered before the current one iff a CTA barrier completed in the block
  after it (`stamp < bar_stamp[block]`), or both threads are in one warp
  and a `bar.warp.sync` (__syncwarp) covering the warp's live mask
  completed after it (`stamp < wsync[warp]`). Nothing else orders
  threads: since Volta there is no implicit warp synchrony, and
  shfl/vote/match/redux .sync exchange registers, not memory. Atomics
  never race with atomics; a thread never races with itself; lanes of one
  instruction writing the same byte race (write-after-write), lanes
  reading it do not. The shadow of a wave's shared memory is the wave's:
  each wave starts with every older stamp ordered (`bar_stamp` = the
  wave's first stamp), which resets it without touching it.
- global memory (CheckConfig.racecheck_global): any two non-atomic-pair
  accesses to the same bytes by threads of different blocks of the launch
  with at least one a write race, whichever waves the blocks ran in
  (blocks of a grid are never ordered within a launch); accesses by one
  block are not judged. Stamps older than the launch's start are ignored,
  which resets the shadows at launch_begin for free.

Hazards are counted per access: one thread executing the second
instruction once that conflicts with the first instruction counts one
hazard, however many of its bytes overlap. One Finding per (space, hazard
kind, first pc, second pc) per launch, emitted at launch_end in
compute-sanitizer's words, with an example pair of threads and the
address; sites are built when a pair is first seen, while its wave lives.

What it deliberately does not do: named barriers with a thread count and
bar.arrive order the whole block at completion (a race among threads a
partial barrier does not cover is missed, never invented); __syncwarp with
a partial mask orders the whole warp once every live lane of the mask has
arrived; global-memory message passing between blocks (fences plus
atomic flags, volatile or acquire/release accesses, grid syncs) is not
modelled, so such protocols are reported as races; races inside one
block in global memory, and between different launches, are not checked.
"""
from __future__ import annotations

import dataclasses
import enum
import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpudbg.sanitizer import sites
from gpudbg.sanitizer.config import CheckConfig
from gpudbg.sanitizer.findings import DeviceSite, Finding, Severity, ToolName
from gpudbg.sanitizer.race_shadow import START_GRANULARITY, WHO_MASK, Scratch, Shadow
from gpudbg.sanitizer.report import Reporter
from gpudbg.sim.instrument import BarrierArrival, Launch, MemoryAccess, Tool, WarpSync  # noqa: F401
from gpudbg.sim.memory.spaces import AccessType, Space
from gpudbg.sim.state import EXITED

WARP_SYNC_OP = "bar.warp.sync"          # the only warp-level instruction that orders memory
SHARED_ALIGN = 16                       # per-block stride of the shared shadow
RECENT_ALLOCATIONS = 8                  # global shadows looked up by a linear scan
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


class _LaunchState:
    """What racecheck keeps for the launch running on one GPU."""

    def __init__(self, launch: Launch, base: int, host_site: list[str], scratch: Scratch,
                 shared: Shadow | None):
        self.launch = launch
        self.scratch = scratch
        self.shared = shared                # the shared-memory shadow, kept per GPU
        self.base = base                    # first stamp of the launch
        self.host_site = host_site
        self.pcs = np.zeros(1024, dtype=np.int64)   # stamp - base -> pc
        self.races: dict[tuple, Race] = {}
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


def _pick(a: np.ndarray, slots: np.ndarray, whole: bool) -> np.ndarray:
    return a if whole else a[slots]


class _SharedOrder:
    """Which stored shared accesses are concurrent with one instruction's
    (per element: k units per lane)."""

    one_thread_per_lane = True    # two lanes of one instruction may always race

    def __init__(self, st: _LaunchState, slots: np.ndarray, k: int):
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


class _GlobalOrder:
    """Which stored global accesses are concurrent with one instruction's:
    those of this launch by another block."""

    one_thread_per_lane = False   # lanes of one block never race here

    def __init__(self, st: _LaunchState, start: np.ndarray, k: int):
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


class RacecheckTool(Tool):
    """--tool racecheck (see the module docstring)."""

    name = "racecheck"

    def __init__(self, config: CheckConfig, reporter: Reporter):
        self.config = config
        self.reporter = reporter
        self._clock = itertools.count(1)
        self._states: dict[int, _LaunchState] = {}
        self._global: dict[int, tuple[Any, Shadow]] = {}   # id(allocation) -> shadow
        # (base, end, allocation, shadow) of the allocations accessed last, newest first
        self._recent: list[tuple[int, int, Any, Shadow]] = []
        # per GPU: temporaries and the shared-memory shadow, reused by every launch
        self._per_gpu: dict[int, tuple[Scratch, Shadow | None]] = {}
        self._host_sites: dict[tuple[int, int], list[str]] = {}

    # ---------------------------------------------------------------- launches
    def launch_enqueued(self, gpu: Any, grid_id: int, kernel: str) -> None:
        if len(self._host_sites) > 256:
            self._host_sites.clear()
        self._host_sites[(id(gpu), grid_id)] = sites.host_site()

    def launch_begin(self, launch: Launch) -> None:
        key = id(launch.gpu)
        host = self._host_sites.pop((key, launch.grid_id), [])
        scratch, shared = self._per_gpu.get(key) or (Scratch(), None)
        self._states[key] = _LaunchState(launch, next(self._clock), host, scratch, shared)

    def wave_begin(self, X: Any) -> None:
        st = self._states.get(id(X.gpu))
        if st is not None:
            st.begin_wave(X, next(self._clock))

    def launch_end(self, launch: Launch, fault: BaseException | None) -> None:
        st = self._states.pop(id(launch.gpu), None)
        if st is None:
            return
        self._per_gpu[id(launch.gpu)] = (st.scratch, st.shared)
        for race in st.races.values():
            self.reporter.add(self._finding(race, st))

    def freed(self, memory: Any, allocation: Any) -> None:
        self._global.pop(id(allocation), None)
        self._recent = [e for e in self._recent if e[2] is not allocation]

    # ---------------------------------------------------------------- synchronization
    def barrier_complete(self, X: Any, blocks: np.ndarray, barrier: int) -> None:
        st = self._states.get(id(X.gpu))
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
        st = self._states.get(id(X.gpu))
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
        st = self._states.get(id(X.gpu))
        if st is None:
            return
        stamp = next(self._clock)
        st.note_pc(stamp, access.pc)
        if space is Space.SHARED:
            self._shared(st, access, stamp)
        else:
            self._global_access(st, X, access, stamp)

    def _shared(self, st: _LaunchState, acc: MemoryAccess, stamp: int) -> None:
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
                    _SharedOrder(st, slots, k), None)

    def _global_access(self, st: _LaunchState, X: Any, acc: MemoryAccess, stamp: int) -> None:
        addrs = acc.addresses
        size = acc.size
        first = int(addrs[0])
        for entry in self._recent:
            base, end, alloc, sh = entry
            if base <= first < end:
                off = addrs - np.uint64(base)
                if end - base >= size and bool((off <= np.uint64(end - base - size)).all()):
                    if entry is not self._recent[0]:
                        self._recent.remove(entry)
                        self._recent.insert(0, entry)
                    self._global_in(st, acc, alloc, sh, off, acc.slots, stamp)
                    return
                break
        arrays = X.gmem.sorted_arrays()          # (bases, ..., allocations)
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
            if not len(sel):
                continue
            entry = self._global.get(id(a))
            if entry is None:    # units no larger than the base's alignment
                entry = self._global[id(a)] = (a, Shadow(a.size, min(START_GRANULARITY,
                                                                      a.base & -a.base or 1)))
            self._recent = [(a.base, a.base + a.size, a, entry[1])] + [
                e for e in self._recent if e[2] is not a][:RECENT_ALLOCATIONS - 1]
            self._global_in(st, acc, a, entry[1], off, acc.slots[sel], stamp)

    def _global_in(self, st: _LaunchState, acc: MemoryAccess, alloc: Any, sh: Shadow,
                   off: np.ndarray, slots: np.ndarray, stamp: int) -> None:
        u, k = sh.units(off, acc.size, st.scratch)
        gtid, gstart = st.global_ids()
        whole = len(slots) == st.X.n
        self._judge(st, acc, RaceSpace.GLOBAL, sh, u, k, _pick(gtid, slots, whole), stamp,
                    _GlobalOrder(st, _pick(gstart, slots, whole), k), (alloc, slots))

    # ---------------------------------------------------------------- the judgement
    def _judge(self, st: _LaunchState, acc: MemoryAccess, space: RaceSpace, sh: Shadow,
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
                sh.store(sh.atomics(), u, p, scratch)
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

    def _record(self, st: _LaunchState, acc: MemoryAccess, space: RaceSpace, hazard: Hazard,
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

    def _example(self, st: _LaunchState, acc: MemoryAccess, space: RaceSpace, hazard: Hazard,
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
            gx, gy, _ = L.grid
            bx, by, _ = L.block
            first = dataclasses.replace(
                first, block=(b % gx, (b // gx) % gy, b // (gx * gy)),
                thread=(t % bx, (t // bx) % by, t // (bx * by)))
            address = int(where[0].base) + byte
        return Race(space, hazard, first_word, _WORD[acc.kind], first, second, address, acc.size)

    # ---------------------------------------------------------------- reports
    def _finding(self, race: Race, st: _LaunchState) -> Finding:
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
