"""Moving fragments between the per-thread register files and per-warp
matrices, for the warp-collective matrix instructions.

The one idea: the executing threads' warps are listed once (`Warps`), every
operand register is read for all 32 lanes of those warps (sources can be
other lanes, as for shfl), unpacked into elements, and placed into a
(warps, rows, cols) matrix by the fragment's (lane, element) -> (row, col)
table (fragments.py); results go the other way and are written only to the
executing threads. Packing is low element in the low bits, as the ISA's
"elements (low to high)" says.

What it deliberately does not do: check convergence. Threads of a warp
that do not execute the instruction (undefined behaviour for .aligned
instructions; synccheck reports it) supply whatever their registers hold.
"""
from __future__ import annotations

import numpy as np

from gpudbg.sim.ops.fragments import WARP, Layout

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class Warps:
    """The warps of a selection: `slots` (warps, 32) and where each
    selected thread sits in that grid (`pos`, flat index)."""

    def __init__(self, X, idx):
        if idx is None:
            nw = X.n // WARP
            self.ids = np.arange(nw, dtype=np.int64)
            self.pos = None
        else:
            sel = np.asarray(idx, dtype=np.int64)
            self.ids = np.unique(sel >> 5)
            self.pos = np.searchsorted(self.ids, sel >> 5) * WARP + (sel & 31)
        self.slots = self.ids[:, None] * WARP + np.arange(WARP, dtype=np.int64)[None, :]

    def of_selected(self, values: np.ndarray) -> np.ndarray:
        """Per-warp-lane values (warps, 32, ...) -> one row per selected thread."""
        flat = values.reshape((-1,) + values.shape[2:])
        return flat if self.pos is None else flat[self.pos]


def read_bits(X, readers, width: int) -> list[np.ndarray]:
    """The full register arrays of `readers` (width-byte unsigned views)."""
    out = []
    for r in readers:
        v = np.asarray(r(X, None))
        if v.ndim == 0:
            v = np.full(X.n, v)
        out.append(v.astype(_UINT[width], copy=False) if v.dtype.kind in "ui" else v.view(_UINT[width]))
    return out


def unpack(regs: list[np.ndarray], layout: Layout) -> np.ndarray:
    """Register values (each (...,)) -> element bits (..., elements)."""
    eb = layout.elem_bytes
    if layout.per_reg == 1:
        return np.stack([r.astype(_UINT[eb]) for r in regs], axis=-1)
    shift = 8 * eb
    mask = (1 << shift) - 1
    parts = []
    for r in regs:
        r = r.astype(np.uint64)
        for p in range(layout.per_reg):
            parts.append(((r >> np.uint64(shift * p)) & np.uint64(mask)).astype(_UINT[eb]))
    return np.stack(parts, axis=-1)


def pack(elements: np.ndarray, layout: Layout) -> list[np.ndarray]:
    """Element bits (..., elements) -> one array per register."""
    eb, per = layout.elem_bytes, layout.per_reg
    if per == 1:
        return [np.ascontiguousarray(elements[..., j]) for j in range(layout.regs)]
    shift = 8 * eb
    out = []
    for j in range(layout.regs):
        acc = np.zeros(elements.shape[:-1], dtype=np.uint64)
        for p in range(per):
            acc |= elements[..., j * per + p].astype(np.uint64) << np.uint64(shift * p)
        out.append(acc.astype(np.uint32))
    return out


def gather_matrix(warps: Warps, regs: list[np.ndarray], layout: Layout) -> np.ndarray:
    """Element bits of each warp's matrix: (warps, rows, cols), from the
    first (distinct) copy of every element."""
    lanes = [r[warps.slots] for r in regs]                  # (warps, 32) each
    el = unpack(lanes, layout)[:, :, : layout.distinct]      # (warps, 32, distinct)
    out = np.zeros((len(warps.ids), layout.rows, layout.cols), dtype=el.dtype)
    d = layout.distinct
    out[:, layout.row[:, :d], layout.col[:, :d]] = el
    return out


def scatter_matrix(matrix: np.ndarray, layout: Layout) -> np.ndarray:
    """(warps, rows, cols) -> each lane's fragment elements (warps, 32, elements)."""
    return matrix[:, layout.row, layout.col]
