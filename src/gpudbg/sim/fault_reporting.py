"""Fault reports of a wave: turning a lane fault, a barrier deadlock or a
runaway into a FaultReport with exact coordinates, the PTX and source
location of the instruction, and a sentence saying what happened.

A mixin of WaveExecution (it reads the wave's layout, pcs and barrier
state); kept apart so the wave's execution mechanisms stay in one file and
its reporting in another.
"""
from __future__ import annotations

import numpy as np

from gpudbg.sim.faults import FAULTING_LANES_KEPT, CUDBGException, FaultReport, HangKind
from gpudbg.sim.cluster import CLUSTER_BARRIER
from gpudbg.sim.mbarrier import MBAR_WAIT
from gpudbg.sim.state import PARKED
from gpudbg.sim.warp_barrier import WARP_SYNC

# waits that are not CTA barriers (bar_wait < 0), as a report names them
_SPECIAL_WAITS = {CLUSTER_BARRIER: "barrier.cluster.wait", WARP_SYNC: "bar.warp.sync (__syncwarp)"}


class FaultReporting:
    def _report(self, kind, message, pc, slot, **extra) -> FaultReport:
        prog = self.program
        c = prog.code[pc] if 0 <= pc < len(prog.code) else None
        inst = c.inst if c else None
        li = inst.line_info if inst else None
        src_file = prog.module.files.get(li.file_index) if li else None
        L = self.layout
        coords = {}
        if slot is not None:
            coords = dict(block=self.block_idx_of(slot), thread=self.thread_idx_of(slot),
                          sm=int(L.sm[slot]), warp=int(L.warp[slot]), lane=int(L.lane[slot]))
        return FaultReport(
            kind=kind, message=message, kernel=self.function.name,
            function=c.function if c else self.function.name, pc=prog.code_address(pc),
            instruction=inst.text if inst else "", ptx_line=inst.loc.line if inst else None,
            ptx_file=inst.loc.file if inst else None, source_file=src_file,
            source_line=li.line if li else None, grid_id=self.grid_id, **coords, **extra)

    def fault_report(self, e, pc: int, sel) -> FaultReport:
        """The report of lane fault `e` raised by the instruction at `pc`
        run for the threads `sel` (None: the whole wave), with every
        faulting thread of that instruction (`e.lanes`) counted."""
        lane = max(int(getattr(e, "lane", 0) or 0), 0)
        slot = int(sel[lane]) if sel is not None and len(sel) else lane
        space = getattr(e, "space", None)
        report = self._report(e.kind, e.message, pc, slot, address=getattr(e, "address", None),
                              access_size=getattr(e, "size", None),
                              space=space.value if hasattr(space, "value") else space)
        lanes = getattr(e, "lanes", None)
        if lanes is None:
            slots = np.array([slot], dtype=np.int64)
        else:
            lanes = np.asarray(lanes, dtype=np.int64)
            slots = np.asarray(sel, dtype=np.int64)[lanes] if sel is not None and len(sel) else lanes
            slots = np.unique(slots)        # sorted: thread order within the wave
        self._add_faulting_threads(report, slots)
        return report

    def _add_faulting_threads(self, report: FaultReport, slots: np.ndarray) -> None:
        """faulting_count/lanes/blocks of `report` from the wave slots of
        every faulting thread (ascending)."""
        report.faulting_count = int(slots.shape[0])
        if report.block is None or not slots.shape[0]:
            return
        kept = slots[:FAULTING_LANES_KEPT]
        c, t = self.layout.ctaid, self.layout.tid
        blocks = np.stack([c[0][kept], c[1][kept], c[2][kept]], axis=1).tolist()
        threads = np.stack([t[0][kept], t[1][kept], t[2][kept]], axis=1).tolist()
        pairs = [(tuple(b), tuple(th)) for b, th in zip(blocks, threads)]
        first = (report.block, report.thread)
        if first in pairs:              # the reported thread leads
            pairs.remove(first)
        report.faulting_lanes = [first] + pairs[:FAULTING_LANES_KEPT - 1]
        linear = np.asarray(self._wave_blocks, dtype=np.int64)[self.layout.block_of[slots]]
        lo, hi = int(slots[int(np.argmin(linear))]), int(slots[int(np.argmax(linear))])
        report.faulting_blocks = (self.block_idx_of(lo), self.block_idx_of(hi))

    def current_pc(self, slot: int) -> int:
        s = int(self.sched[slot])
        return int(self.park_pc[slot]) if s == PARKED else s

    def deadlock_report(self) -> FaultReport:
        parked = np.flatnonzero(self.sched == PARKED)
        slot = int(parked[0])
        if self.async_unit is not None and int(self.bar_wait[slot]) == MBAR_WAIT:
            r = self._report(CUDBGException.CUDBG_EXCEPTION_NONE,
                             self.async_unit.deadlock_report_message(self, slot), int(self.park_pc[slot]) - 1, slot)
            r.hang = HangKind.BARRIER_DEADLOCK
            return r
        b = int(self.layout.block_of[slot])
        in_block = parked[self.layout.block_of[parked] == b]
        bid = int(self.bar_wait[slot])
        if bid in _SPECIAL_WAITS:     # barrier.cluster.wait, bar.warp.sync: not a CTA barrier's counters
            msg = (f"barrier deadlock: {len(parked)} thread(s) wait in {_SPECIAL_WAITS[bid]} (the first: "
                   f"thread {self.thread_idx_of(slot)} of block {self.block_idx_of(slot)}) for threads that "
                   f"cannot arrive: every other thread has exited or waits elsewhere")
            r = self._report(CUDBGException.CUDBG_EXCEPTION_NONE, msg, int(self.park_pc[slot]) - 1, slot)
            r.hang = HangKind.BARRIER_DEADLOCK
            return r
        pc = int(self.park_pc[slot]) - 1
        live = int(self.block_live[b])
        exp = int(self.bar_expected[b, bid]) or live
        arrived = int(self.bar_arrivals[b, bid])
        ids, counts = np.unique(self.bar_wait[in_block], return_counts=True)
        here = int(counts[ids == bid][0])
        others = [f"{int(c)} at barrier {int(i)}" for i, c in zip(ids, counts) if i != bid]
        elsewhere = live - len(in_block)
        msg = (f"barrier deadlock: {here} thread(s) of block {self.block_idx_of(slot)} wait at "
               f"barrier {bid}, which expects {exp} thread(s) but only {arrived} arrived; "
               + (f"other threads of the block wait at other barriers ({', '.join(others)}); " if others else "")
               + f"{self.plan.threads_per_block - live} thread(s) of the block have exited"
               + (f" and {elsewhere} are waiting elsewhere or cannot arrive" if elsewhere else ""))
        r = self._report(CUDBGException.CUDBG_EXCEPTION_NONE, msg, pc, slot)
        r.hang = HangKind.BARRIER_DEADLOCK
        return r

    def budget_report(self, pc: int) -> FaultReport:
        live = np.flatnonzero(self.sched < PARKED)
        slot = int(live[0]) if len(live) else None
        at = self.current_pc(slot) if slot is not None else pc
        msg = (f"kernel exceeded the instruction budget of {self.budget} thread-instructions "
               f"(runaway loop?); set GPUDBG_INSTRUCTION_BUDGET to raise it")
        r = self._report(CUDBGException.CUDBG_EXCEPTION_NONE, msg, at, slot)
        r.hang = HangKind.INSTRUCTION_BUDGET
        return r
