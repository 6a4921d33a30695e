"""synccheck: barriers and warp-synchronous instructions used against
their rules.

What it finds, worded as compute-sanitizer words it:

- "Barrier error detected. Divergent thread(s) in warp.": an aligned CTA
  barrier (bar.sync, bar.arrive, bar.red, barrier.*.aligned: every
  __syncthreads) reached by part of a warp while other lanes of that warp
  still have work to do and never reach the same barrier instruction before
  it completes (PTX: all threads of a warp must execute the same aligned
  barrier instruction), or lanes of one warp completing one barrier at
  different barrier instructions;
- "Barrier error detected. Invalid arguments.": a bar.sync/bar.arrive
  thread count that is not a positive multiple of the warp size, threads of
  one block giving different counts for the same barrier, or more threads
  arriving than the count; and a warp-synchronous instruction (bar.warp.sync
  = __syncwarp, shfl.sync, vote.sync, match.sync, redux.sync) whose member
  mask leaves out the executing lane, names a lane that has exited, names a
  live lane that is not executing it, or disagrees with the mask of a lane
  it names (PTX: all named threads must execute it with the same mask).

The one idea for divergence: the lowest-pc schedule runs every thread of
the wave waiting at one pc together, so a converged warp arrives at a
barrier in one event; lanes that arrive without live siblings are noted
with those siblings ("suspects"), and the verdict waits for the barrier to
complete: a suspect that arrived at the same instruction meanwhile (another
schedule may split a warp's arrival) is cleared, one that did not makes the
warp divergent. Threads that exited are not waited for (PTX), and neither
are lanes whose next instruction is the kernel's exit (a `ret`/`exit`, or
an unconditional branch to one): that is how `if (i >= n) return;` before
a __syncthreads compiles, and ptxas turns such a branch into a predicated
EXIT, so the barrier legally sees those threads as exited. A barrier inside
an `if` that half of a warp takes, while the other half goes on working, is
the error.

Findings are aggregated per pc and kind within a launch (count: the threads
involved) and reported at launch end. Cost: whole-wave arrivals and
full-mask warp operations executed by whole warps (converged code) return
after a length test; everything else is numpy over the warps involved.

What it deliberately does not do: check the non-aligned barrier.sync for
divergence (it allows it), cluster barriers, mbarrier objects, or
cooperative-groups grid sync.
"""
from __future__ import annotations

import enum
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpudbg.sanitizer import sites
from gpudbg.sanitizer.config import CheckConfig
from gpudbg.sanitizer.findings import DeviceSite, Finding, ToolName
from gpudbg.sanitizer.report import Reporter
from gpudbg.sim.instrument import BarrierArrival, Launch, Tool, WarpSync
from gpudbg.sim.state import EXITED

WARP = 32
NBARRIERS = 16
_LANE_BITS = np.uint64(1) << np.arange(WARP, dtype=np.uint64)
_FULL = np.uint32(0xFFFFFFFF)


class SyncError(enum.Enum):
    """Finding kinds, with compute-sanitizer's titles."""

    DIVERGENT_BARRIER = "divergent_barrier"
    BARRIER_INVALID_ARGUMENTS = "barrier_invalid_arguments"
    WARP_SYNC_INVALID_ARGUMENTS = "warp_sync_invalid_arguments"

    @property
    def title(self) -> str:
        if self is SyncError.DIVERGENT_BARRIER:
            return "Barrier error detected. Divergent thread(s) in warp."
        return "Barrier error detected. Invalid arguments."


@dataclass
class _Pending:
    site: DeviceSite
    count: int = 0
    reasons: dict[str, list] = field(default_factory=dict)   # reason -> [first text, threads]


def _exit_tables(prog: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per pc: whether the next thing it does is `exit` (or trap), and
    whether it is a `ret` (an exit at call depth 0), following
    unconditional branches."""
    code = prog.code
    n = len(code)
    is_exit = np.zeros(n, dtype=bool)
    is_ret = np.zeros(n, dtype=bool)
    for c in code:
        kind = c.built.kind
        if c.guard is None and kind == "exit":
            is_exit[c.pc] = True
        elif c.guard is None and kind == "ret":
            is_ret[c.pc] = True
    for c in code:
        if c.built.kind != "branch" or c.guard is not None:
            continue
        t, hops = c.built.info.get("target"), 0
        while t is not None and 0 <= t < n and hops < 8:
            tc = code[t]
            if tc.built.kind != "branch" or tc.guard is not None:
                break
            t, hops = tc.built.info.get("target"), hops + 1
        if t is not None and 0 <= t < n:
            is_exit[c.pc] |= is_exit[t]
            is_ret[c.pc] |= is_ret[t]
    return is_exit, is_ret


def _aligned(inst: Any) -> bool:
    """bar.* is always aligned; barrier.* only with .aligned."""
    return inst.opcode != "barrier" or "aligned" in inst.modifiers


class _Run:
    """One launch's state on its GPU's front-end thread: pending findings,
    and the current wave's arrays, made when first needed (a split
    arrival, a thread count) so that converged code never pays for them."""

    def __init__(self) -> None:
        self.pending: dict[tuple[int, SyncError], _Pending] = {}
        self.X: Any = None
        self.arr_pc: np.ndarray | None = None
        self.counted = False
        self.open = 0               # arrival or suspect state is recorded in this wave

    def new_wave(self, X: Any) -> None:
        self.X = X
        self.arr_pc = None
        self.counted = False
        self.open = 0

    def arrivals(self, X: Any) -> None:
        if self.arr_pc is None:
            n = X.n
            self.arr_pc = np.full(n, -1, dtype=np.int64)     # per slot: barrier pc it arrived at
            self.arr_bid = np.full(n, -1, dtype=np.int64)    # ... and its barrier id
            self.sus_pc = np.full(n, -1, dtype=np.int64)     # barrier pc a live sibling skipped
            self.sus_bid = np.full(n, -1, dtype=np.int64)

    def counts(self, X: Any) -> None:
        if not self.counted:
            nb = len(X.block_live)
            self.count = np.full((nb, NBARRIERS), -1, dtype=np.int64)    # thread count given
            self.count_pc = np.zeros((nb, NBARRIERS), dtype=np.int64)    # ... at this pc
            self.arrived = np.zeros((nb, NBARRIERS), dtype=np.int64)     # arrivals with a count
            self.counted = True


class SynccheckTool(Tool):
    """compute-sanitizer's synccheck over the instrumentation interface."""

    name = "synccheck"

    def __init__(self, config: CheckConfig | None = None, reporter: Reporter | None = None):
        self.config = config or CheckConfig(tool=ToolName.SYNCCHECK)
        self.reporter = reporter or Reporter()
        self._tables: dict[int, tuple[Any, np.ndarray, np.ndarray, np.ndarray]] = {}
        self._runs = threading.local()    # each GPU's front-end thread runs its own launch

    # ------------------------------------------------------------------ launches and waves

    def _run(self) -> _Run:
        r = getattr(self._runs, "run", None)
        if r is None:
            r = self._runs.run = _Run()
        return r

    def launch_begin(self, launch: Launch) -> None:
        self._runs.run = _Run()

    def wave_begin(self, X: Any) -> None:
        self._run().new_wave(X)

    def wave_end(self, X: Any) -> None:
        self._close_wave(X, self._run())

    def launch_end(self, launch: Launch, fault: BaseException | None) -> None:
        r = self._run()
        if r.X is not None:
            self._close_wave(r.X, r)
        self._runs.run = None
        for (pc, kind), p in r.pending.items():
            self._report(kind, p)

    def _close_wave(self, X: Any, r: _Run) -> None:
        """Suspects of barriers that never completed: divergent too."""
        if r.open:
            left = np.flatnonzero(r.sus_bid >= 0)
            if len(left):
                self._divergent_warps(X, left, r.sus_pc[left])
        r.open = 0
        r.X = None

    # ------------------------------------------------------------------ CTA barriers

    def _program_tables(self, X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        prog = X.program
        t = self._tables.get(id(prog))
        if t is None or t[0] is not prog:
            is_exit, is_ret = _exit_tables(prog)
            aligned = np.array([_aligned(c.inst) for c in prog.code], dtype=bool)
            t = self._tables[id(prog)] = (prog, is_exit, is_ret, aligned)
        return t[1], t[2], t[3]

    def _leaving(self, X: Any, warps: np.ndarray, sched: np.ndarray) -> np.ndarray:
        """(warps x 32) lanes whose next instruction is the kernel's exit:
        as good as exited (ptxas makes such a branch a predicated EXIT)."""
        is_exit, is_ret, _ = self._program_tables(X)
        valid = sched < len(is_exit)
        where = np.where(valid, sched, 0)
        depth = X.depth.reshape(-1, WARP)[warps]
        return valid & (is_exit[where] | (is_ret[where] & (depth == 0)))

    def barrier_arrival(self, X: Any, arrival: BarrierArrival) -> None:
        r = self._run()
        slots = arrival.slots
        if not len(slots):
            return
        if arrival.counts is not None:
            self._check_counts(X, arrival)
        if len(slots) == int(X.block_live.sum()):
            return          # every live thread of the wave arrives together: no warp is split
        if not self._program_tables(X)[2][arrival.pc]:
            return
        pc = arrival.pc
        r.arrivals(X)
        uw, wi = np.unique(slots >> 5, return_inverse=True)
        lanes = slots & 31
        arriving = np.zeros((len(uw), WARP), dtype=bool)
        arriving[wi, lanes] = True
        bid = np.zeros(len(uw), dtype=np.int64)
        bid[wi] = arrival.barrier_ids
        sched = X.sched.reshape(-1, WARP)[uw]
        arr_bid = r.arr_bid.reshape(-1, WARP)[uw]
        arr_pc = r.arr_pc.reshape(-1, WARP)[uw]
        before = arr_bid == bid[:, None]
        # lanes of these warps that completed their arrival at another instruction
        elsewhere = (before & (arr_pc != pc)).any(axis=1)
        siblings = (sched != EXITED) & ~arriving & ~before
        r.arr_pc[slots] = pc
        r.arr_bid[slots] = arrival.barrier_ids
        r.sus_bid[slots] = -1
        r.open += 1
        if elsewhere.any():
            first = slots[np.flatnonzero(elsewhere[wi])]
            self._divergent_warps(X, first, np.full(len(first), pc, dtype=np.int64))
        if not siblings.any():
            return
        suspects = siblings & ~self._leaving(X, uw, sched)
        if suspects.any():
            w, lane = np.nonzero(suspects)
            sus = uw[w] * WARP + lane
            r.sus_pc[sus] = pc
            r.sus_bid[sus] = bid[w]

    def barrier_complete(self, X: Any, blocks: np.ndarray, barrier: int) -> None:
        r = self._run()
        if r.open:
            in_blocks = np.zeros(len(X.block_live), dtype=bool)
            in_blocks[blocks] = True
            mine = in_blocks[X.layout.block_of]
            arrived = mine & (r.arr_bid == barrier)
            suspects = np.flatnonzero(mine & (r.sus_bid == barrier))
            if len(suspects):
                ok = arrived[suspects] & (r.arr_pc[suspects] == r.sus_pc[suspects])
                bad = suspects[~ok]
                if len(bad):
                    self._divergent_warps(X, bad, r.sus_pc[bad])
                r.sus_bid[suspects] = -1
                r.sus_pc[suspects] = -1
            r.arr_bid[arrived] = -1
            r.arr_pc[arrived] = -1
            if not (r.arr_bid >= 0).any() and not (r.sus_bid >= 0).any():
                r.open = 0
        if not r.counted:
            return
        given = r.count[blocks, barrier]
        if (given >= 0).any():
            over = (given >= 0) & (r.arrived[blocks, barrier] > given)
            if over.any():
                b = int(blocks[np.flatnonzero(over)[0]])
                slot = int(b * X.layout.slots_per_block)
                self._note(X, SyncError.BARRIER_INVALID_ARGUMENTS, int(r.count_pc[b, barrier]), slot,
                           "more threads than the count",
                           f"{int(r.arrived[b, barrier])} threads arrived at barrier {barrier} "
                           f"for a thread count of {int(given[np.flatnonzero(over)[0]])}",
                           int(r.arrived[blocks, barrier][over].sum()))
            r.count[blocks, barrier] = -1
            r.arrived[blocks, barrier] = 0

    def _check_counts(self, X: Any, arrival: BarrierArrival) -> None:
        r = self._run()
        slots, counts, ids = arrival.slots, arrival.counts, arrival.barrier_ids
        pc = arrival.pc
        r.counts(X)
        bad = (counts <= 0) | (counts % WARP != 0)
        if bad.any():
            i = np.flatnonzero(bad)
            self._note(X, SyncError.BARRIER_INVALID_ARGUMENTS, pc, int(slots[i[0]]), "count not warp multiple",
                       f"thread count {int(counts[i[0]])} is not a positive multiple of the warp size "
                       f"({WARP})", len(i))
        blocks = X.layout.block_of[slots]
        key = blocks * NBARRIERS + ids
        uk, first, inv = np.unique(key, return_index=True, return_inverse=True)
        kb, kid = uk // NBARRIERS, uk % NBARRIERS
        stored = r.count[kb, kid]
        ref = np.where(stored >= 0, stored, counts[first])
        differ = counts != ref[inv]
        if differ.any():
            i = np.flatnonzero(differ)
            self._note(X, SyncError.BARRIER_INVALID_ARGUMENTS, pc, int(slots[i[0]]), "counts differ",
                       f"threads of one block give barrier {int(ids[i[0]])} different thread counts "
                       f"({int(ref[inv][i[0]])} and {int(counts[i[0]])})", len(i))
        r.count[kb, kid] = ref
        r.count_pc[kb, kid] = pc
        np.add.at(r.arrived, (blocks, ids), 1)

    def _divergent_warps(self, X: Any, slots: np.ndarray, pcs: np.ndarray) -> None:
        """Warps of `slots` (lanes that skipped, or lanes that arrived
        elsewhere) were divergent at the barriers `pcs`: one finding per
        pc, counting the threads of those warps that arrived there."""
        r = self._run()
        warps = slots >> 5
        for pc in np.unique(pcs):
            ws = np.unique(warps[pcs == pc])
            lanes = (ws[:, None] * WARP + np.arange(WARP)).ravel()
            came = lanes[r.arr_pc[lanes] == pc] if len(lanes) else lanes
            first = int(came[0]) if len(came) else int(slots[pcs == pc][0])
            self._note(X, SyncError.DIVERGENT_BARRIER, int(pc), first, "divergent",
                       "part of a warp reached this barrier while other live lanes of the warp "
                       "went on elsewhere", max(len(came), 1))

    # ------------------------------------------------------------------ warp-synchronous instructions

    def warp_sync(self, X: Any, sync: WarpSync) -> None:
        slots, masks = sync.slots, sync.masks
        n = len(slots)
        if not n:
            return
        if (masks == _FULL).all() and n % WARP == 0:
            if n == X.n:
                return
            heads = slots[::WARP]
            if ((heads & 31) == 0).all() and (slots[WARP - 1::WARP] - heads == WARP - 1).all():
                return      # whole warps, full masks: converged code
        lanes = (slots & 31).astype(np.uint64)
        uw, wi = np.unique(slots >> 5, return_inverse=True)
        bits = np.uint64(1) << lanes
        executing = np.bincount(wi, weights=bits.astype(np.float64), minlength=len(uw)).astype(np.uint64)
        sched = X.sched.reshape(-1, WARP)[uw]
        gone = (sched == EXITED) | self._leaving(X, uw, sched)
        exited_w = (gone * _LANE_BITS).sum(axis=1).astype(np.uint64)
        m = masks.astype(np.uint64)
        ex, ex_exited = executing[wi], exited_w[wi]
        checks = [
            (((m >> lanes) & np.uint64(1)) == 0, "own lane", "does not include the executing lane"),
            ((m & ex_exited) != 0, "exited", "names lane(s) that have exited"),
            ((m & ~ex & ~ex_exited & np.uint64(0xFFFFFFFF)) != 0, "absent",
             "names live lane(s) that are not executing it"),
        ]
        key = (slots >> 5).astype(np.uint64) << np.uint64(32) | m
        _, ki = np.unique(key, return_inverse=True)
        same = np.bincount(ki, weights=bits.astype(np.float64)).astype(np.uint64)[ki]
        checks.append(((m & ex & ~same) != 0, "disagree",
                       "names lane(s) executing it with a different mask"))
        for bad, reason, why in checks:
            if bad.any():
                i = np.flatnonzero(bad)
                s = int(slots[i[0]])
                self._note(X, SyncError.WARP_SYNC_INVALID_ARGUMENTS, sync.pc, s, reason,
                           f"{sync.op} member mask 0x{int(masks[i[0]]):08x} of lane {s & 31} {why}",
                           len(i))

    # ------------------------------------------------------------------ findings

    def _note(self, X: Any, kind: SyncError, pc: int, slot: int, reason: str, text: str,
              threads: int) -> None:
        """Aggregate: one finding per (pc, kind), its first thread's site,
        each distinct reason worded once (its first occurrence) with the
        threads it covers."""
        key = (pc, kind)
        pending = self._run().pending
        p = pending.get(key)
        if p is None:
            p = pending[key] = _Pending(sites.device_site(X, pc, slot))
        p.count += threads
        r = p.reasons.get(reason)
        if r is None:
            p.reasons[reason] = [text, threads]
        else:
            r[1] += threads

    def _report(self, kind: SyncError, p: _Pending) -> None:
        details = [f"at {p.site.where}"]
        if p.site.who:
            details.append(f"by {p.site.who}")
        details += [f"{why} ({n} thread{'s' if n != 1 else ''})" for why, n in p.reasons.values()]
        self.reporter.add(Finding(tool=ToolName.SYNCCHECK, kind=kind.value, title=kind.title,
                                  details=details, site=p.site, count=max(p.count, 1)))
