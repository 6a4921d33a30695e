"""Emitting a register's value again from its one definition (the
emitter's part of rematerialization; remat.py decides which registers
and where): a register every path defined before a segment is
recomputed where the segment first reads it, instead of loaded from its
array (a thread index after a barrier).

The one idea: the definition is pure (remat.py), so emitting its lowering
again anywhere after it ran gives the same bits.

What it deliberately does not do: recompute a store's address or value
in its second pass instead of recording them. Tried: saxpy's second pass
went from 16.1 to 19.6 ms per launch (the recorded rows stream; the
recomputation and its allocation lookup do not), and the reduction's
extra IR took its module past jit.QUICK_LINES.
"""
from __future__ import annotations

from llvmlite import ir as L


class Recompute:
    """Mixed into emit.SegmentEmitter: needs `program`, `values`,
    `current`, `function_ir`, `dirty`, `writes`, `reads`,
    `_block_writes`, `raw_floats`."""

    def _recompute(self, k: int, pc: int) -> L.Value:
        """Register k's value from its definition at pc, emitted where it is
        first read, with no trace in what the segment reads, writes or stores."""
        from gpudbg.sim.native.emit import lowering_of
        c = self.program.code[pc]
        saved = (self.current, self.function_ir, set(self.dirty), set(self.writes), set(self.reads),
                 set(self._block_writes), dict(self.raw_floats))
        self.current = c
        self.function_ir = self.program.functions[c.function].ir
        lowering_of(c.inst).fn(self, c.inst)
        raw = self.values[k]
        (self.current, self.function_ir, self.dirty, self.writes, self.reads,
         self._block_writes, self.raw_floats) = saved
        return raw
