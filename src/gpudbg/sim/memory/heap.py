"""The device malloc heap (in-kernel malloc/free), carved from global memory.

The one idea: the heap is one DEVICE_HEAP allocation whose `suballocator`
is this object, so the ordinary global access checks ask it, vectorized
(np.searchsorted on block starts), whether every lane lies inside a live
heap block; a stray access inside the heap is then reported against the
nearest heap block, freed blocks included, exactly like global allocations.

Placement is first fit with 16-byte alignment, like CUDA's, and costs
O(log n) per call however many blocks are live: everything below `top`
(the end of the highest live block) that is not live is a coalesced hole,
found by address through two dicts (start -> length, end -> start) and
ranked by a sparse max-tree over 16-byte granules (`_FirstFit`), which
answers "the lowest hole of at least k granules" in one root-to-leaf walk.
Live blocks are kept as sorted numpy arrays updated in place (an
allocation at the top, the common case, is an append), so access checks
never rebuild anything. A batch of lanes that all land at the top (no hole
fits) is placed with one cumulative sum. `work` counts the elementary steps
(tree nodes visited, lanes placed) so tests can check the scaling without
timing anything.

What it does not do: model CUDA's real allocator's internal layout or its
per-allocation header; only placement order, alignment, exhaustion and
reuse of freed space are reproduced.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpudbg.sim.memory.allocations import GlobalMemory
from gpudbg.sim.memory.describe import describe_address
from gpudbg.sim.memory.spaces import AllocationKind, InvalidFree, as_addresses

DEFAULT_HEAP_SIZE = 8 << 20   # cudaLimitMallocHeapSize's default
HEAP_ALIGN = 16


@dataclass
class HeapBlock:
    base: int       # absolute device address
    size: int
    label: str = "device malloc"


def _footprint(size: int) -> int:
    """Bytes a block of `size` occupies: up to the next aligned start."""
    return -(-max(size, 1) // HEAP_ALIGN) * HEAP_ALIGN


class _FirstFit:
    """Lowest-addressed hole of at least k granules, in O(log n): a max
    segment tree over granule positions whose leaves are hole lengths,
    stored sparsely (only the nodes above some hole exist)."""

    def __init__(self, positions: int):
        self.leaf = 1 << max(1, (max(positions, 2) - 1).bit_length())
        self.tree: dict[int, int] = {}
        self.visits = 0

    def largest(self) -> int:
        return self.tree.get(1, 0)

    def set(self, pos: int, length: int) -> None:
        t = self.tree
        i = self.leaf + pos
        if length:
            t[i] = length
        else:
            t.pop(i, None)
        get = t.get
        while i > 1:
            self.visits += 1
            m, o = get(i, 0), get(i ^ 1, 0)
            if o > m:
                m = o
            i >>= 1
            if get(i, 0) == m:
                break                       # nothing above changes
            if m:
                t[i] = m
            else:
                t.pop(i, None)

    def first_at_least(self, length: int) -> int | None:
        t = self.tree
        if t.get(1, 0) < length:
            return None
        i = 1
        while i < self.leaf:
            self.visits += 1
            i <<= 1
            if t.get(i, 0) < length:
                i += 1
        return i - self.leaf


class DeviceHeap:
    """Sub-allocator over one DEVICE_HEAP allocation."""

    def __init__(self, global_memory: GlobalMemory, size: int = DEFAULT_HEAP_SIZE,
                 label: str = "device malloc heap"):
        if size <= 0:
            raise ValueError(f"heap size must be positive, got {size}")
        self.gm = global_memory
        self.allocation = global_memory.alloc(size, AllocationKind.DEVICE_HEAP, label=label)
        self.allocation.suballocator = self
        # live blocks: offsets from the heap base, sorted, first _n valid
        self._starts = np.zeros(16, dtype=np.int64)
        self._ends = np.zeros(16, dtype=np.int64)
        self._n = 0
        self._live: dict[int, int] = {}        # absolute base -> size
        self._used = 0
        self._top = 0                           # offset past the highest live block's footprint
        self._hole_at: dict[int, int] = {}      # hole start offset -> length (both granule-aligned)
        self._hole_end: dict[int, int] = {}     # hole end offset -> start offset
        self._fit = _FirstFit(-(-size // HEAP_ALIGN))
        self._freed: dict[int, int] = {}        # absolute base -> size, disjoint, never live
        self._freed_bases: list[int] = []       # sorted keys of _freed
        self.work = 0                           # elementary steps, for scaling tests

    @property
    def base(self) -> int:
        return self.allocation.base

    @property
    def size(self) -> int:
        return self.allocation.size

    def blocks(self) -> list[HeapBlock]:
        b = self.base
        return [HeapBlock(b + int(s), int(e - s)) for s, e in zip(self._starts[:self._n], self._ends[:self._n])]

    def used(self) -> int:
        return self._used

    # ------------------------------------------------ placement

    def malloc(self, sizes: Any) -> np.ndarray:
        """One block per lane in lane order; 0 where the heap is exhausted or
        the size is 0."""
        req = np.asarray(sizes).reshape(-1)
        if req.dtype.kind not in "iu":
            raise TypeError(f"malloc sizes must be integers, got {req.dtype}")
        out = np.zeros(req.shape[0], dtype=np.uint64)
        if req.shape[0] == 1:           # one lane (a loop in one thread): no array work
            size = int(req[0])
            if 0 < size <= self.size:
                at = self._alloc_one(size)
                if at is not None:
                    out[0] = self.base + at
            return out
        if req.dtype.kind == "i":
            lanes = np.flatnonzero(req > 0)
        else:
            lanes = np.flatnonzero(req)
        # a request larger than the heap fails without changing anything
        lanes = lanes[req[lanes] <= self.size]
        if not lanes.shape[0]:
            return out
        sz = req[lanes].astype(np.int64)
        done = self._bump_batch(lanes, sz, out)
        for k in range(done, lanes.shape[0]):
            at = self._alloc_one(int(sz[k]))
            if at is not None:
                out[lanes[k]] = self.base + at
        return out

    def _bump_batch(self, lanes: np.ndarray, sz: np.ndarray, out: np.ndarray) -> int:
        """Place the leading lanes that all go to the top (no hole can take
        the smallest of them) with one cumulative sum; returns how many."""
        if self._fit.largest() * HEAP_ALIGN >= int(sz.min()) or lanes.shape[0] < 2:
            return 0
        need = (sz + (HEAP_ALIGN - 1)) // HEAP_ALIGN * HEAP_ALIGN
        ends = self._top + np.cumsum(need)
        fits = ends - need + sz <= self.size
        k = lanes.shape[0] if fits.all() else int(np.argmin(fits))
        if k == 0:
            return 0
        starts = ends[:k] - need[:k]
        old_top, self._top = self._top, int(ends[k - 1])
        self._append(starts, starts + sz[:k])
        absolute = starts + self.base
        self._live.update(zip(absolute.tolist(), sz[:k].tolist()))
        self._used += int(sz[:k].sum())
        self._forget_freed(old_top, self._top)
        out[lanes[:k]] = absolute.astype(np.uint64)
        self.work += k
        return k

    def _alloc_one(self, size: int) -> int | None:
        """First fit for one block; its offset, or None when nothing fits."""
        self.work += 1
        need = _footprint(size)
        pos = self._fit.first_at_least(need // HEAP_ALIGN)
        if pos is not None:
            at = pos * HEAP_ALIGN
            self._take_hole(at, need)
        else:
            at = self._top
            if at + size > self.size:
                return None
            self._top = at + need
        self._insert(at, at + size)
        self._live[self.base + at] = size
        self._used += size
        self._forget_freed(at, at + size)
        return at

    def _take_hole(self, at: int, need: int) -> None:
        length = self._hole_at.pop(at)
        del self._hole_end[at + length]
        self._fit.set(at // HEAP_ALIGN, 0)
        if length > need:
            self._add_hole(at + need, length - need)

    def _add_hole(self, start: int, length: int) -> None:
        self._hole_at[start] = length
        self._hole_end[start + length] = start
        self._fit.set(start // HEAP_ALIGN, length // HEAP_ALIGN)

    def _release(self, start: int, length: int) -> None:
        """Return a footprint to free space, coalescing with its neighbours
        and lowering the top when it ends there."""
        nxt = self._hole_at.get(start + length)
        if nxt is not None:
            self._take_hole(start + length, nxt)
            length += nxt
        prev = self._hole_end.pop(start, None)
        if prev is not None:          # grow the hole below in place: one tree update
            length += start - prev
            start = prev
        if start + length >= self._top:
            self._top = start
            if prev is not None:
                del self._hole_at[prev]
                self._fit.set(prev // HEAP_ALIGN, 0)
        elif prev is not None:
            self._hole_at[prev] = length
            self._hole_end[prev + length] = prev
            self._fit.set(prev // HEAP_ALIGN, length // HEAP_ALIGN)
        else:
            self._add_hole(start, length)

    # ------------------------------------------------ the sorted live arrays

    def _grow(self, extra: int) -> None:
        need = self._n + extra
        if need <= self._starts.shape[0]:
            return
        cap = max(need, 2 * self._starts.shape[0])
        for name in ("_starts", "_ends"):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=np.int64)
            new[:self._n] = old[:self._n]
            setattr(self, name, new)

    def _append(self, starts: np.ndarray, ends: np.ndarray) -> None:
        self._grow(starts.shape[0])
        n, k = self._n, starts.shape[0]
        self._starts[n:n + k] = starts
        self._ends[n:n + k] = ends
        self._n = n + k

    def _insert(self, start: int, end: int) -> None:
        self._grow(1)
        n = self._n
        i = n if n == 0 or start > self._starts[n - 1] else int(np.searchsorted(self._starts[:n], start))
        if i < n:     # below the top: shift the blocks above (a memmove)
            self._starts[i + 1:n + 1] = self._starts[i:n].copy()
            self._ends[i + 1:n + 1] = self._ends[i:n].copy()
        self._starts[i] = start
        self._ends[i] = end
        self._n = n + 1

    def _remove(self, start: int) -> None:
        n = self._n
        if self._starts[n - 1] == start:     # the top block
            self._n = n - 1
            return
        i = int(np.searchsorted(self._starts[:n], start))
        self._starts[i:n - 1] = self._starts[i + 1:n].copy()
        self._ends[i:n - 1] = self._ends[i + 1:n].copy()
        self._n = n - 1

    # ------------------------------------------------ freed blocks (for messages)

    def _forget_freed(self, lo: int, hi: int) -> None:
        """Drop the freed-block records that overlap [lo, hi) (offsets): that
        memory is live again."""
        bases = self._freed_bases
        a, b = self.base + lo, self.base + hi
        i = bisect.bisect_left(bases, a)
        if i > 0 and bases[i - 1] + max(self._freed[bases[i - 1]], 1) > a:
            i -= 1
        j = bisect.bisect_left(bases, b, lo=i)
        if i < j:
            for base in bases[i:j]:
                del self._freed[base]
            del bases[i:j]

    # ------------------------------------------------ free

    def free(self, addrs: Any) -> None:
        """Free each non-null pointer in lane order; a bad one raises
        InvalidFree naming its lane (the lanes before it are freed)."""
        a = as_addresses(addrs)
        lanes = np.flatnonzero(a != 0)
        ptrs = a[lanes].tolist()
        live = self._live
        good: list[tuple[int, int]] = []
        bad = None
        for k, ptr in enumerate(ptrs):
            size = live.pop(ptr, None)
            if size is None:
                bad = k
                break
            good.append((ptr, size))
        self.work += len(good)
        if len(good) == 1:
            self._free_one(*good[0])
        elif good:
            self._free_many(good)
        if bad is not None:
            self._bad_free(ptrs[bad], int(lanes[bad]))

    def _free_one(self, ptr: int, size: int) -> None:
        off = ptr - self.base
        self._remove(off)
        self._used -= size
        self._freed[ptr] = size
        bisect.insort(self._freed_bases, ptr)
        self._release(off, _footprint(size))

    def _free_many(self, good: list[tuple[int, int]]) -> None:
        """Free a batch of live blocks: one compaction of the live arrays,
        and one release per run of adjacent blocks."""
        ptrs = np.array([p for p, _ in good], dtype=np.int64)
        sizes = np.array([s for _, s in good], dtype=np.int64)
        offs = ptrs - self.base
        n = self._n
        keep = np.ones(n, dtype=bool)
        keep[np.searchsorted(self._starts[:n], offs)] = False
        m = n - len(good)
        self._starts[:m] = self._starts[:n][keep]
        self._ends[:m] = self._ends[:n][keep]
        self._n = m
        self._used -= int(sizes.sum())
        self._freed.update(good)
        self._freed_bases = sorted(self._freed_bases + ptrs.tolist())
        order = np.argsort(offs, kind="stable")
        o = offs[order]
        e = o + (np.maximum(sizes[order], 1) + (HEAP_ALIGN - 1)) // HEAP_ALIGN * HEAP_ALIGN
        cut = np.flatnonzero(o[1:] != e[:-1]) + 1
        run_starts = o[np.concatenate(([0], cut))].tolist()
        run_ends = e[np.concatenate((cut - 1, [len(o) - 1]))].tolist()
        for s, t in zip(reversed(run_starts), reversed(run_ends)):
            self._release(s, t - s)

    def _bad_free(self, ptr: int, lane: int) -> None:
        if ptr in self._freed:
            raise InvalidFree(f"double free of 0x{ptr:x}", ptr, lane)
        off = ptr - self.base
        j = int(np.searchsorted(self._starts[:self._n], off, side="right")) - 1
        if j >= 0 and off < self._ends[j]:
            blk = self.base + int(self._starts[j])
            raise InvalidFree(f"0x{ptr:x} points inside the allocation at 0x{blk:x} "
                              f"(offset {ptr - blk})", ptr, lane)
        raise InvalidFree(f"0x{ptr:x} was not returned by this allocator", ptr, lane)

    # ------------------------------------------------ hooks used by access checks

    def bad_mask(self, offsets: np.ndarray, size: int) -> np.ndarray:
        """Lanes (byte offsets into the heap allocation) not wholly inside a
        live block."""
        n = self._n
        if n == 0:
            return np.ones(offsets.shape[0], dtype=bool)
        starts, ends = self._starts[:n], self._ends[:n]
        i = np.searchsorted(starts, offsets, side="right") - 1
        ok = (i >= 0) & (offsets + size <= ends[np.maximum(i, 0)])
        return ~ok

    def describe(self, address: int, size: int) -> str:
        freed = [HeapBlock(b, s) for b, s in self._freed.items()]
        return describe_address(address, size, self.blocks(), freed, (), noun="device heap block")
