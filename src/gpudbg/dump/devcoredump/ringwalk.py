"""Recover command boundaries in a dumped ring buffer, for any command format.

A ring is a circular buffer of dwords and the dump says only where the
reader (rptr) and writer (wptr) are, not where commands start. Headers carry
their own length, so boundaries are rebuilt by scanning forward from a point
known to be a boundary: the ring start if the ring never wrapped (nothing
was dumped beyond wptr), else wptr itself (the end of the last submission;
what follows it is the previous lap). An undecodable dword is stepped over
one at a time, which resynchronises within a few packets. The history is the
packets that end at rptr (the scan stops there; a packet crossing rptr is
reported as straddling it); pending work is scanned afresh from rptr to wptr.
The walker is format-agnostic: callers pass a decoder for PM4 or for our
own ring commands. It does not follow indirect buffers; pm4.py does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, TypeVar

import numpy as np

T = TypeVar("T")

# decode(words, offset) -> (size in dwords, decoded item) or None if the dword
# at offset is not a valid header; it must read words modulo len(words).
Decoder = Callable[[np.ndarray, int], "tuple[int, T] | None"]


@dataclass
class Entry(Generic[T]):
    offset: int                 # dword index in the ring of the first dword
    size: int                   # dwords
    item: T | None              # None: a dword that is not a valid header
    words: tuple[int, ...] = ()


@dataclass
class RingWalk(Generic[T]):
    start: int                  # where the history scan began
    wrapped: bool
    history: list[Entry[T]]     # the last `count` entries ending at rptr, oldest first
    history_total: int          # entries found between start and rptr
    skipped_dwords: int         # undecodable dwords stepped over before rptr
    straddling: Entry[T] | None  # a packet that starts before rptr and ends after it
    pending: list[Entry[T]] = field(default_factory=list)
    pending_dwords: int = 0
    pending_truncated: bool = False  # the last pending packet runs past wptr


def _scan(words: np.ndarray, start: int, length: int, decode: Decoder) -> tuple[list[Entry], Entry | None]:
    size = len(words)
    out: list[Entry] = []
    d = 0
    while d < length:
        off = (start + d) % size
        got = decode(words, off)
        if got is None or got[0] <= 0:
            out.append(Entry(off, 1, None, (int(words[off]),)))
            d += 1
            continue
        n, item = got
        entry = Entry(off, n, item, tuple(int(words[(off + k) % size]) for k in range(min(n, 64))))
        if d + n > length:
            return out, entry
        out.append(entry)
        d += n
    return out, None


def _history(words: np.ndarray, start: int, rptr: int, wrapped: bool, decode: Decoder
             ) -> tuple[list[Entry], Entry | None]:
    size = len(words)
    length = (rptr - start) % size
    if wrapped and length == 0:        # idle ring that wrapped: a whole lap lies behind rptr
        length = size
    return _scan(words, start, length, decode)


def walk(words: np.ndarray, rptr: int, wptr: int, decode: Decoder, count: int = 16,
         dumped_dwords: int | None = None, start: int | None = None) -> RingWalk:
    """Walk a ring of len(words) dwords; `dumped_dwords` is how many the dump
    actually carried (decides whether the ring may have wrapped). Without an
    explicit `start`, both known boundaries (0, and wptr when data lies past
    it: a wrap, or stale data from before a ring reset) are tried, and the one
    that reaches rptr exactly with the fewest undecodable dwords wins."""
    size = len(words)
    if size == 0:
        raise ValueError("empty ring")
    if not (0 <= rptr < size and 0 <= wptr < size):
        raise ValueError(f"rptr {rptr} / wptr {wptr} outside a ring of {size} dwords")
    wrapped = dumped_dwords is not None and dumped_dwords > wptr
    if start is not None:
        candidates = [start]
    else:
        candidates = [0, wptr] if wrapped and wptr != 0 else [0]
    best: tuple[tuple[int, int], int, list[Entry], Entry | None] | None = None
    for cand in candidates:
        hist, straddle = _history(words, cand, rptr, wrapped and cand == wptr, decode)
        score = (straddle is not None, sum(1 for e in hist if e.item is None))
        if best is None or score < best[0]:
            best = (score, cand, hist, straddle)
    assert best is not None
    _, start, history, straddle = best
    skipped = sum(1 for e in history if e.item is None)
    pending_len = (wptr - rptr) % size
    # the CP's rptr may sit inside a packet it has fetched: pending work then
    # begins after that packet
    first = rptr
    if straddle is not None:
        first = (straddle.offset + straddle.size) % size
    scan_len = (wptr - first) % size if pending_len else 0
    if straddle is not None and (straddle.offset + straddle.size - rptr) > pending_len:
        scan_len = 0
    pending, over = _scan(words, first, scan_len, decode)
    if over is not None:
        pending.append(over)
    keep = history[-count:] if count > 0 else []
    return RingWalk(start, wrapped, keep, len(history), skipped, straddle, pending,
                    pending_len, over is not None)
