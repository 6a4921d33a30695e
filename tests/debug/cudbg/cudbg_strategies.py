"""Hypothesis strategies derived from the layout tables themselves, so every
struct gets a round-trip property without a hand-written generator."""
from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from gpudbg.debug.cudbg import layouts as L

_BITS = {"B": 8, "H": 16, "I": 32, "Q": 64}


def for_type(ftype: Any) -> st.SearchStrategy[Any]:
    if isinstance(ftype, L.Scalar):
        if ftype.enum is not None:
            return st.sampled_from(list(ftype.enum))
        return st.integers(0, (1 << _BITS[ftype.code]) - 1)
    if isinstance(ftype, L.Dim3):
        u32 = st.integers(0, 0xFFFFFFFF)
        return st.builds(L.CuDim3, u32, u32, u32)
    if isinstance(ftype, L.Array):
        return st.lists(for_type(ftype.elem), min_size=ftype.count, max_size=ftype.count).map(tuple)
    if isinstance(ftype, L.Chars):
        return st.binary(max_size=ftype.size - 1).map(lambda b: b.replace(b"\0", b"\1"))
    if isinstance(ftype, L.Nested):
        return for_layout(ftype.layout)
    raise TypeError(f"no strategy for {ftype!r}")


def for_layout(layout: L.Layout) -> st.SearchStrategy[Any]:
    parts = {name: for_type(ftype) for name, ftype in layout.fields if not isinstance(ftype, L.Pad)}
    return st.builds(layout.record, **parts)
