"""What the global registry remembers of freed memory, so that a stale
pointer is reported as a use after free: AddressSanitizer's quarantine of
freed address ranges, and the freed allocation records that explain them.

The one idea: a freed range is not handed out again at once. It waits in a
FIFO (`Quarantine`) bounded in bytes of VA and in entries, and only the
oldest ranges over the bounds go back to first fit; VA is plentiful and no
backing is held (the registry releases the buffer at once), so the bounds
only cap bookkeeping. Each freed allocation's record (`FreedRecords`) stays
until a new occupant takes its range, at most FREED_RECORDS of them (the
oldest freed go first). Both are plain bookkeeping of address ranges: the
registry (allocations.py) decides what to quarantine and owns the VA map.
"""
from __future__ import annotations

import bisect
import collections

from gpudbg.sim.memory.spaces import Allocation

QUARANTINE_BYTES = 1 << 30     # VA (footprints plus red zones) kept out of reuse
QUARANTINE_ENTRIES = 4096      # freed ranges kept out of reuse
FREED_RECORDS = 4 * QUARANTINE_ENTRIES


def _extent(a: Allocation) -> int:
    return a.base + max(a.size, 1)


class Quarantine:
    """Freed VA ranges (base, bytes) kept out of reuse, oldest first."""

    def __init__(self, max_bytes: int = QUARANTINE_BYTES, max_entries: int = QUARANTINE_ENTRIES):
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.nbytes = 0
        self._ranges: collections.deque[tuple[int, int]] = collections.deque()

    def __bool__(self) -> bool:
        return bool(self._ranges)

    def ranges(self) -> list[tuple[int, int]]:
        return list(self._ranges)

    def add(self, base: int, nbytes: int) -> list[int]:
        """Quarantine a range; returns the bases of the oldest ranges that
        leave it to keep within the bounds (possibly this one)."""
        self._ranges.append((base, nbytes))
        self.nbytes += nbytes
        out = []
        while self._ranges and (self.nbytes > self.max_bytes or len(self._ranges) > self.max_entries):
            old, n = self._ranges.popleft()
            self.nbytes -= n
            out.append(old)
        return out

    def take(self, start: int, end: int) -> list[int]:
        """Release the ranges overlapping [start, end); returns their bases."""
        kept: collections.deque[tuple[int, int]] = collections.deque()
        out = []
        for base, n in self._ranges:
            if base < end and start < base + n:
                self.nbytes -= n
                out.append(base)
            else:
                kept.append((base, n))
        self._ranges = kept
        return out


class FreedRecords:
    """Freed allocations, sorted by base and disjoint (a new occupant of a
    range forgets the records in it), plus the order they were freed in."""

    def __init__(self) -> None:
        self._bases: list[int] = []
        self._records: list[Allocation] = []
        self._order: dict[int, Allocation] = {}      # id -> record, oldest freed first

    def __len__(self) -> int:
        return len(self._records)

    def all(self) -> list[Allocation]:
        return list(self._records)

    def remember(self, a: Allocation) -> None:
        i = bisect.bisect_left(self._bases, a.base)
        self._records.insert(i, a)
        self._bases.insert(i, a.base)
        self._order[id(a)] = a
        while len(self._order) > FREED_RECORDS:
            oldest = self._order[next(iter(self._order))]
            self.forget(oldest.base, _extent(oldest))

    def forget(self, start: int, end: int) -> None:
        """Drop the records overlapping [start, end): disjoint and sorted,
        so they are the ones just before bisect(end)."""
        i = bisect.bisect_left(self._bases, end)
        j = i
        while j > 0 and _extent(self._records[j - 1]) > start:
            j -= 1
        for f in self._records[j:i]:
            del self._order[id(f)]
        del self._records[j:i]
        del self._bases[j:i]

    def find(self, address: int) -> Allocation | None:
        """The record containing `address`, if any."""
        i = bisect.bisect_right(self._bases, address) - 1
        if i >= 0 and address < _extent(self._records[i]):
            return self._records[i]
        return None
