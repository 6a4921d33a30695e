"""Which instructions have a native lowering: the planner's question
(segments.py), answered by trial emission.

A lowering accepts or refuses an instruction's form only by emitting it
(emit.py: each raises NotNative for what it does not handle), and what it
reads and writes is what its emission read and wrote; so the only exact
answer is to emit the instruction. The one idea: emit it into one
throwaway function shared by every instruction of a planning pass, with
nothing around it. A whole segment function per instruction (thread loop,
first and second pass, register flush: what emit.probe builds) costs
about twice the instruction's own lowering and decides nothing more: the
decision, the registers read and the registers written come from the
lowering and its deferred second-pass actions alone, which run here
exactly as in a segment.

What it deliberately does not do: produce usable code. The function is
never finished, verified or compiled; it is dropped with the prober.
"""
from __future__ import annotations

from llvmlite import ir as L

from gpudbg.sim.native.emit import Lowering, NotNative, SegmentEmitter, lowering_of
from gpudbg.sim.ops.base import UnsupportedInstruction


class Prober:
    """Trial emission of single instructions of one program."""

    def __init__(self, program):
        from gpudbg.sim.native.segments import SegmentPlan
        self.program = program
        self._empty_plan = SegmentPlan.empty
        self.em = em = SegmentEmitter(L.Module(name="probe"), "probe", program, SegmentPlan.empty())
        em.fail_block = em.fn.append_basic_block("fail")
        # the thread loop's position and slot: any i64 serves a trial emission
        em.i = em.t = em.n_arg

    def __call__(self, compiled) -> tuple[Lowering, set[int], set[int]] | None:
        """(lowering, registers read, registers written) of the Compiled
        instruction, or None when it stays interpreted."""
        low = lowering_of(compiled.inst)
        if low is None:
            return None
        em = self.em
        # a fresh per-instruction state, as a new segment would have
        em.plan = self._empty_plan()
        em.values, em.dirty, em._block_writes, em.raw_floats = {}, set(), set(), {}
        em.reads, em.writes = set(), set()
        em.deferred, em._fail_sources, em.active = [], [], None
        em.__dict__.pop("_active_slot", None)
        em.current = compiled
        em.function_ir = self.program.functions[compiled.function].ir
        em.b.position_at_end(em.fn.append_basic_block("probe"))
        try:
            em._emit_guarded(compiled)
            for action in em.deferred:       # a store's second pass may refuse a form too
                action(em)
        except (NotNative, UnsupportedInstruction):
            return None
        return low, em.reads, em.writes
