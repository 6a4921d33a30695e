"""Memory access for the warp-level matrix instructions (wmma.load/store,
ldmatrix, stmatrix): each thread moves several elements at addresses that
are not one contiguous vector, so accesses here take an (threads, elements)
address matrix.

The one idea: the matrix is flattened into one access of the memory object
(one checked gather or scatter, so every check runs before any byte moves),
and a fault, which names a position in the flattened array, is renamed to
the thread that made it (position // elements): the executor then reports
the faulting thread precisely, as for ld/st. The sanitizer sees the same
addresses through `probes()`, one declared access per element column.

What it deliberately does not do: coalescing or bank modelling, and local,
const or param spaces (the ISA allows none of them here).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory.spaces import AccessFault, AccessType, Space, fault_message

U64 = np.dtype(np.uint64)
SPACE_OF = {"global": Space.GLOBAL, "shared": Space.SHARED, "generic": Space.GENERIC}
_NAME = {"global": "__global__", "shared": "__shared__", "generic": "__generic__"}

AddressMatrix = Callable  # (X, idx) -> np.ndarray uint64 (threads, elements)


def space_of(modifier: str | None) -> str:
    """The state space named by an instruction's modifier (generic if none)."""
    if modifier in (None, "generic"):
        return "generic"
    if modifier in ("shared", "shared::cta"):
        return "shared"
    if modifier == "global":
        return "global"
    raise ValueError(f".{modifier} is not a state space these instructions accept")


def _rename(fault: AccessFault, per: int) -> AccessFault:
    lanes = fault.lanes if fault.lanes is not None else np.array([fault.lane])
    threads = np.unique(np.asarray(lanes, dtype=np.int64) // per)
    return AccessFault(fault.kind, fault.space, fault.lane // per, fault.address, fault.size, fault.message,
                       threads)


def _segments(X, idx, per: int, which: str):
    seg = X.block_segments(idx) if which == "block" else X.thread_segments(idx)
    return np.repeat(np.asarray(seg), per) if per > 1 else seg


def load(X, idx, space: str, addrs: np.ndarray, dtype) -> np.ndarray:
    """Elements at `addrs` (threads, elements) -> array of the same shape."""
    n, per = addrs.shape
    flat = np.ascontiguousarray(addrs, dtype=U64).reshape(-1)
    dtype = np.dtype(dtype)
    try:
        if space == "global":
            out = X.gmem.load(flat, dtype, 1, space_name="__global__")
        elif space == "shared":
            out = X.smem.load(_segments(X, idx, per, "block"), flat, dtype, 1)
        else:
            out = X.generic.load(flat, dtype, _segments(X, idx, per, "block"),
                                 _segments(X, idx, per, "thread"), 1)
    except AccessFault as f:
        raise _rename(f, per) from None
    return np.asarray(out).reshape(n, per)


def store(X, idx, space: str, addrs: np.ndarray, values: np.ndarray, dtype) -> None:
    """Store values (threads, elements) at addrs of the same shape."""
    n, per = addrs.shape
    flat = np.ascontiguousarray(addrs, dtype=U64).reshape(-1)
    dtype = np.dtype(dtype)
    v = np.ascontiguousarray(values, dtype=dtype).reshape(-1)
    try:
        if space == "global":
            X.gmem.store(flat, v, dtype, 1)
        elif space == "shared":
            X.smem.store(_segments(X, idx, per, "block"), flat, v, dtype, 1)
        else:
            X.generic.store(flat, v, dtype, _segments(X, idx, per, "block"),
                            _segments(X, idx, per, "thread"), 1)
    except AccessFault as f:
        raise _rename(f, per) from None


def check_aligned(space: str, addrs: np.ndarray, align: int, access: AccessType, size: int,
                  why: str, relevant: np.ndarray | None = None) -> None:
    """Fault (misaligned address, precise to the first thread) where an
    address of `addrs` (one per thread; only where `relevant`, if given) is
    not a multiple of `align`; `why` completes "is misaligned (...)"."""
    a = np.asarray(addrs, dtype=U64)
    bad = (a % np.uint64(align)) != 0
    if relevant is not None:
        bad &= relevant
    if not bad.any():
        return
    lanes = np.flatnonzero(bad)
    k = int(lanes[0])
    phrase = f"is misaligned ({why})"
    raise AccessFault(CUDBGException.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS, SPACE_OF[space], k,
                      int(a[k]), size, fault_message(_NAME[space], access, size, int(a[k]), phrase), lanes)


class ElementProbe:
    """One element column of an address matrix, in the shape the analysis
    tools read declared accesses (sim/instrument.probe_memory): `.space` and
    `.addresses(X, idx)`, one address per thread."""

    def __init__(self, space: str, matrix: AddressMatrix, column: int):
        self.space = space
        self.matrix = matrix
        self.column = column

    def addresses(self, X, idx) -> np.ndarray:
        return np.ascontiguousarray(self.matrix(X, idx)[:, self.column])


def probes(space: str, matrix: AddressMatrix, columns: int, kind: AccessType, size: int) -> tuple:
    """The Built.info["memory"] declaration of an access through `matrix`."""
    return tuple((ElementProbe(space, matrix, e), kind, size) for e in range(columns))
