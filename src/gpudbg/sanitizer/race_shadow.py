"""racecheck's shadow memory: for every unit of a byte range, the last
plain write, the last two concurrent reads and the last atomic, each as one
packed int64 `(stamp << 32) | who`.

`stamp` is racecheck's event clock (one tick per memory instruction and
per synchronization, monotonic for the whole process), so one comparison
says whether an access happened before a barrier, a __syncwarp or the
start of the launch; `who` names the thread (a wave slot for shared
memory, a grid-linear thread id for global memory). Zero means "never":
stamps start at 1, so a fresh `np.zeros` shadow (lazily paged by the OS)
needs no initialization and old entries never need resetting — a launch
or a wave simply ignores stamps older than its own start.

The one idea that keeps it cheap: a unit is `g` bytes (4 to begin with)
while every access covers whole units, which is exact — bytes of a unit
that are always accessed together always have the same history — and the
shadow splits to smaller units (`refine`) the first time an access does
not fit, so byte-granular kernels get byte-granular shadows and the usual
word-granular ones pay a quarter of the cost. It does not know about
threads or ordering: racecheck's tool decides what is concurrent.
"""
from __future__ import annotations

import numpy as np

WHO_MASK = np.int64(0xFFFFFFFF)
START_GRANULARITY = 4


class Shadow:
    """Access history of `nbytes` bytes, per unit of `g` bytes."""

    __slots__ = ("g", "shift", "W", "R1", "R2", "A")

    def __init__(self, nbytes: int, granularity: int = START_GRANULARITY):
        g = granularity
        while g > 1 and nbytes % g:
            g //= 2
        self.g = g
        self.shift = g.bit_length() - 1
        n = max(nbytes // g, 1)
        self.W = np.zeros(n, dtype=np.int64)     # last plain write
        self.R1 = np.zeros(n, dtype=np.int64)    # last read
        self.R2 = np.zeros(n, dtype=np.int64)    # a read concurrent with R1, by another thread
        self.A: np.ndarray | None = None         # last atomic, made on the first atomic

    def atomics(self) -> np.ndarray:
        if self.A is None:
            self.A = np.zeros_like(self.W)
        return self.A

    def refine(self, g: int) -> None:
        """Split every unit into units of `g` bytes (a power of two that
        divides the current unit size)."""
        factor = self.g // g
        self.W = np.repeat(self.W, factor)
        self.R1 = np.repeat(self.R1, factor)
        self.R2 = np.repeat(self.R2, factor)
        if self.A is not None:
            self.A = np.repeat(self.A, factor)
        self.g = g
        self.shift = g.bit_length() - 1

    def units(self, offsets: np.ndarray, size: int) -> tuple[np.ndarray, int]:
        """The units that accesses of `size` bytes at byte `offsets` cover:
        (unit indices, k) with k units per access, lane-major (access i
        covers elements i*k .. i*k+k-1). Refines the shadow first if an
        access does not cover whole units."""
        g = self.g
        if g > 1:
            low = size & (g - 1)
            if not low:
                low = int(np.bitwise_or.reduce(offsets & np.uint64(g - 1))) if len(offsets) else 0
            if low:
                m = g | size | low
                self.refine(m & -m)
        shift = self.shift
        u = (offsets >> np.uint64(shift)).astype(np.int64) if shift else offsets.astype(np.int64)
        k = max(size >> shift, 1)
        if k > 1:
            u = (u[:, None] + np.arange(k, dtype=np.int64)).ravel()
        return u, k


def runs(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """None when the unit indices `u` are all distinct; otherwise
    (order, starts, ends): a stable sort of `u` and, in it, where each run
    of equal units starts and ends (inclusive)."""
    n = len(u)
    if n < 2 or bool((u[1:] > u[:-1]).all()):
        return None
    order = np.argsort(u, kind="stable")
    us = u[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(us[1:], us[:-1], out=new[1:])
    if new.all():
        return None
    starts = np.flatnonzero(new)
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:] - 1
    ends[-1] = n - 1
    return order, starts, ends
