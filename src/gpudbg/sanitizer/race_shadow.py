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
launch) is not read at all; and per-access temporaries live in reused
`Scratch` buffers (a wave-sized temporary allocated afresh costs its page
faults every time). It does not know about threads or ordering:
racecheck's tool decides what is concurrent.
"""
from __future__ import annotations

import numpy as np

WHO_MASK = np.int64(0xFFFFFFFF)
START_GRANULARITY = 4


class Scratch:
    """Named temporaries reused from one access to the next (one set per
    GPU: a launch's events come from one thread)."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}
        self._ident = np.zeros(0, dtype=np.int64)

    def get(self, name: str, n: int, dtype: type) -> np.ndarray:
        a = self._arrays.get(name)
        if a is None or len(a) < n:
            a = self._arrays[name] = np.empty(max(n, 1024), dtype=dtype)
        return a[:n]

    def ident(self, n: int) -> np.ndarray:
        """np.arange(n), read-only."""
        if len(self._ident) < n:
            self._ident = np.arange(max(n, 1024), dtype=np.int64)
            self._ident.flags.writeable = False
        return self._ident[:n]

    def ident_reversed(self, n: int) -> np.ndarray:
        """np.arange(n)[::-1], contiguous and read-only."""
        r = self._arrays.get("ident_reversed")
        if r is None or len(r) != n:
            r = self._arrays["ident_reversed"] = np.ascontiguousarray(np.arange(n, dtype=np.int64)[::-1])
            r.flags.writeable = False
        return r

    def take(self, name: str, a: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """a[idx] into the buffer `name` (indices known to be in range)."""
        return np.take(a, idx, out=self.get(name, len(idx), a.dtype), mode="clip")


class Shadow:
    """Access history of `nbytes` bytes, per unit of `g` bytes."""

    __slots__ = ("g", "shift", "W", "R1", "R2", "A", "w_max", "r1_max", "r2_max", "a_max",
                 "_units")

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
        self._units: np.ndarray | None = None   # per unit, for finding lanes that share one

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
        self._units = None

    def units(self, offsets: np.ndarray, size: int, scratch: Scratch) -> tuple[np.ndarray, int]:
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
        u = scratch.get("u", len(offsets), np.uint64)
        np.right_shift(offsets, np.uint64(shift), out=u)
        u = u.view(np.int64)
        k = max(size >> shift, 1)
        if k > 1:
            u = (u[:, None] + np.arange(k, dtype=np.int64)).ravel()
        return u, k

    def store(self, field: np.ndarray, u: np.ndarray, p: np.ndarray,
              scratch: Scratch) -> np.ndarray | None:
        """field[u] = p; when lanes of the instruction share units, the
        elements that lost their unit to another lane (whose entry is then
        `field[u[i]]`), else None."""
        field[u] = p
        if distinct(u, scratch):
            return None
        lost = scratch.take("kept", field, u) != p
        return np.flatnonzero(lost) if lost.any() else None

    def dedupe(self, u: np.ndarray, scratch: Scratch,
               rows: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """None when the unit indices `u` are all distinct; otherwise
        (rep, first): one element per distinct unit (rep), and for each
        the element of another lane on the same unit (first, -1 when the
        unit has one lane). Elements in unit order (a row of lanes reading
        one word) cost two comparisons; so do blocks whose rows all read
        the same units (`rows` = (elements per block, elements per row):
        every row of a 2-D block reading one row of a tile); others two
        scatters and a gather."""
        n = len(u)
        if n < 2:
            return None
        a, b = u[1:], u[:-1]
        flag = scratch.get("flag", n - 1, np.bool_)
        if np.greater(a, b, out=flag).all():          # strictly increasing: distinct
            return None
        if rows is not None:
            same_rows = _same_rows(u, *rows)
            if same_rows is not None:
                return same_rows
        if np.greater_equal(a, b, out=flag).all():    # in order, with runs on one unit
            np.not_equal(a, b, out=flag)
            ends = np.empty(int(np.count_nonzero(flag)) + 1, dtype=np.int64)
            ends[:-1] = np.flatnonzero(flag)
            ends[-1] = n - 1
            starts = np.empty_like(ends)
            starts[0] = 0
            starts[1:] = ends[:-1] + 1
            return ends, np.where(ends > starts, starts, -1)
        sc = self._units
        if sc is None:
            sc = self._units = np.empty(len(self.W), dtype=np.int64)
        ident = scratch.ident(n)
        sc[u] = ident
        same = scratch.get("same", n, np.bool_)
        rep = np.flatnonzero(np.equal(scratch.take("kept", sc, u), ident, out=same))
        if len(rep) == n:
            return None
        ur = u[rep]
        backwards = scratch.get("back", n, np.int64)  # a contiguous copy scatters faster
        np.copyto(backwards, u[::-1])
        sc[backwards] = scratch.ident_reversed(n)
        first = np.take(sc, ur)                        # the other end of each unit
        return rep, np.where(first != rep, first, -1)


def _same_rows(u: np.ndarray, per_block: int, per_row: int) -> tuple[np.ndarray, np.ndarray] | None:
    """dedupe's answer when, in every block, each row of `per_row`
    elements reads the units of the block's first row, which are distinct
    and increasing: the last row keeps them, the first row is the other
    lane. None when the elements do not look like that."""
    n = len(u)
    if per_block <= per_row or n % per_block or per_block % per_row:
        return None
    blocks = u.reshape(n // per_block, per_block)
    if not np.array_equal(blocks[:, per_row:], blocks[:, :-per_row]):
        return None
    first_row = blocks[:, :per_row]
    if per_row > 1 and not (first_row[:, 1:] > first_row[:, :-1]).all():
        return None
    starts = (np.arange(n // per_block, dtype=np.int64) * per_block)[:, None] + \
        np.arange(per_row, dtype=np.int64)
    starts = starts.ravel()
    return starts + (per_block - per_row), starts


def distinct(u: np.ndarray, scratch: Scratch) -> bool:
    """Whether the unit indices are strictly increasing (so distinct)."""
    if len(u) < 2:
        return True
    return bool(np.greater(u[1:], u[:-1], out=scratch.get("flag", len(u) - 1, np.bool_)).all())
