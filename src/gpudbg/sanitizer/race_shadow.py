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
word-granular ones pay a quarter of the cost. Each field also remembers
the newest stamp it holds, so a field whose every entry is ordered before
the current access (all of it older than the last barrier, or than the
launch) is not read at all. It does not know about threads or ordering:
racecheck's tool decides what is concurrent.
"""
from __future__ import annotations

import numpy as np

WHO_MASK = np.int64(0xFFFFFFFF)
START_GRANULARITY = 4


class Shadow:
    """Access history of `nbytes` bytes, per unit of `g` bytes."""

    __slots__ = ("g", "shift", "W", "R1", "R2", "A", "w_max", "r1_max", "r2_max", "a_max",
                 "_scratch")

    def __init__(self, nbytes: int, granularity: int = START_GRANULARITY):
        g = max(granularity, 1)
        self.g = g
        self.shift = g.bit_length() - 1
        n = max(-(-nbytes // g), 1)
        self.W = np.zeros(n, dtype=np.int64)     # last plain write
        self.R1 = np.zeros(n, dtype=np.int64)    # last read
        self.R2 = np.zeros(n, dtype=np.int64)    # a read concurrent with R1, by another thread
        self.A: np.ndarray | None = None         # last atomic, made on the first atomic
        # the newest stamp each field holds: a field whose newest entry is
        # ordered before the current access need not be read at all
        self.w_max = self.r1_max = self.r2_max = self.a_max = 0
        self._scratch: np.ndarray | None = None

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
        self._scratch = None

    def units(self, offsets: np.ndarray, size: int) -> tuple[np.ndarray, int]:
        """The units that accesses of `size` bytes at byte `offsets` cover:
        (unit indices, k) with k units per access, lane-major (access i
        covers elements i*k .. i*k+k-1). Refines the shadow first if an
        access does not cover whole units. The simulator faults every
        access that is not aligned to its (power-of-two) size, so an access
        at least a unit long starts on a unit boundary; only shorter ones
        (or odd sizes) need looking at."""
        g = self.g
        if g > 1 and (size < g or size & (size - 1)):
            low = size & (g - 1)
            if not low and len(offsets):
                low = int(np.bitwise_or.reduce(offsets)) & (g - 1)
            if low:
                m = g | size | low
                self.refine(m & -m)
        shift = self.shift
        u = (offsets >> np.uint64(shift)).view(np.int64) if shift else offsets.view(np.int64)
        k = max(size >> shift, 1)
        if k > 1:
            u = (u[:, None] + np.arange(k, dtype=np.int64)).ravel()
        return u, k

    def store(self, field: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray | None:
        """field[u] = p; when lanes of the instruction share units, the
        elements that lost their unit to another lane (whose entry is then
        `field[u[i]]`), else None."""
        field[u] = p
        if _distinct(u):
            return None
        lost = np.take(field, u) != p
        return np.flatnonzero(lost) if lost.any() else None

    def dedupe(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """None when the unit indices `u` are all distinct; otherwise
        (rep, first): one element per distinct unit (rep), and for each
        the element of another lane on the same unit (first, -1 when the
        unit has one lane). Elements in unit order (a row of lanes reading
        one word) cost one pass; others two scatters and a gather."""
        n = len(u)
        if n < 2:
            return None
        d = u[1:] - u[:-1]
        low = d.min()
        if low > 0:                      # strictly increasing: all distinct
            return None
        if low == 0:                     # in order, with runs of lanes on one unit
            starts = np.flatnonzero(np.concatenate(([1], d)))
            ends = np.empty_like(starts)
            ends[:-1] = starts[1:] - 1
            ends[-1] = n - 1
            return ends, np.where(ends > starts, starts, -1)
        sc = self._scratch
        if sc is None:
            sc = self._scratch = np.empty(len(self.W), dtype=np.int64)
        ident = np.arange(n, dtype=np.int64)
        sc[u] = ident
        rep = np.flatnonzero(np.take(sc, u) == ident)     # the lane each unit kept
        if len(rep) == n:
            return None
        ur = u[rep]
        sc[u[::-1]] = ident[::-1]
        first = np.take(sc, ur)                            # the other end of each unit
        return rep, np.where(first != rep, first, -1)


def _distinct(u: np.ndarray) -> bool:
    """Whether the unit indices are strictly increasing (so distinct)."""
    return len(u) < 2 or bool((u[1:] > u[:-1]).all())
