"""Float results before their NaN is made canonical (mixed into
emit.SegmentEmitter): a lowering writes a result with write_float, which
stores the canonical value as write() does and keeps the raw one beside
it; a consumer that returns NaN whenever an input is and makes its own
result canonical (round-to-nearest add, sub, mul, fma) reads with
read_float and gets the raw value.

The one idea: a NaN's payload is invisible to such a consumer, so a chain
of them (matmul's unrolled fma chain) tests and selects the canonical NaN
only where a value is kept: stored, read any other way, or stored as the
register at the segment's end, all of which read the canonical value.
Raw values are SSA values along the segment's one path; the emitter drops
them for a register written again (write) and after a guarded block
(_emit_guarded), where a raw value made inside does not dominate.

What it deliberately does not do: track raw values in loop regions (their
registers live in allocas across blocks: TRACKS_RAW_FLOATS is off there)
or through any consumer not known to propagate NaN-ness.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.ptx import ir


class RawFloats:
    """Needs the emitter's `raw_floats` dict, register(), write() and read()."""

    TRACKS_RAW_FLOATS = True

    def write_float(self, operand, raw: L.Value, canonical: L.Value, dtype) -> None:
        """Write `canonical`, a float result whose NaN was made the
        canonical NaN, and remember `raw`, the same value before that, for
        read_float: a NaN's payload is invisible to a consumer whose own
        result is NaN whenever an input is and is then made canonical, so
        a chain of fmas tests and selects only where a value is kept
        (stored, or read any other way)."""
        self.write(operand, canonical, dtype)
        if self.TRACKS_RAW_FLOATS and isinstance(operand, ir.Register):
            k, rd = self.register(operand)
            if rd == np.dtype(dtype):
                self.raw_floats[k] = (raw, rd)

    def read_float(self, operand, dtype) -> L.Value:
        """The operand as `dtype`, or its raw value (write_float) when it
        has one of that type: for consumers that propagate NaN-ness and make
        their result canonical (round-to-nearest add, sub, mul, fma)."""
        if isinstance(operand, ir.Register):
            k, _ = self.register(operand)
            got = self.raw_floats.get(k)
            if got is not None and got[1] == np.dtype(dtype):
                self.reads.add(k)
                return got[0]
        return self.read(operand, dtype)
