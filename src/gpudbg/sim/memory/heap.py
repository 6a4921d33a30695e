"""The device malloc heap (in-kernel malloc/free), carved from global memory.

The one idea: the heap is one DEVICE_HEAP allocation whose `suballocator`
is this object, so the ordinary global access checks ask it, vectorized
(np.searchsorted on block starts), whether every lane lies inside a live
heap block; a stray access inside the heap is then reported against the
nearest heap block, freed blocks included, exactly like global allocations.

Allocation itself loops over the requesting lanes in lane order (device
malloc is rare); it is first fit with 16-byte alignment, like CUDA's.
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


class DeviceHeap:
    """Sub-allocator over one DEVICE_HEAP allocation."""

    def __init__(self, global_memory: GlobalMemory, size: int = DEFAULT_HEAP_SIZE,
                 label: str = "device malloc heap"):
        if size <= 0:
            raise ValueError(f"heap size must be positive, got {size}")
        self.gm = global_memory
        self.allocation = global_memory.alloc(size, AllocationKind.DEVICE_HEAP, label=label)
        self.allocation.suballocator = self
        self._blocks: list[HeapBlock] = []
        self._bases: list[int] = []
        self._freed: list[HeapBlock] = []
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def base(self) -> int:
        return self.allocation.base

    @property
    def size(self) -> int:
        return self.allocation.size

    def blocks(self) -> list[HeapBlock]:
        return list(self._blocks)

    def used(self) -> int:
        return sum(b.size for b in self._blocks)

    def _place(self, size: int) -> int | None:
        prev = self.base
        for b in self._blocks:
            cand = -(-prev // HEAP_ALIGN) * HEAP_ALIGN
            if cand + size <= b.base:
                return cand
            prev = b.base + max(b.size, 1)
        cand = -(-prev // HEAP_ALIGN) * HEAP_ALIGN
        return cand if cand + size <= self.allocation.end else None

    def malloc(self, sizes: Any) -> np.ndarray:
        """One block per lane in lane order; 0 where the heap is exhausted or
        the size is 0."""
        req = np.asarray(sizes).reshape(-1)
        if req.dtype.kind not in "iu":
            raise TypeError(f"malloc sizes must be integers, got {req.dtype}")
        out = np.zeros(req.shape[0], dtype=np.uint64)
        for lane in np.flatnonzero(req > 0):
            size = int(req[lane])
            at = self._place(size)
            if at is None:
                continue
            block = HeapBlock(at, size)
            i = bisect.bisect_left(self._bases, at)
            self._blocks.insert(i, block)
            self._bases.insert(i, at)
            self._freed = [f for f in self._freed if f.base + f.size <= at or f.base >= at + size]
            out[lane] = at
        self._arrays = None
        return out

    def free(self, addrs: Any) -> None:
        """Free each non-null pointer in lane order; a bad one raises
        InvalidFree naming its lane."""
        a = as_addresses(addrs)
        for lane in np.flatnonzero(a != 0):
            ptr = int(a[lane])
            i = bisect.bisect_left(self._bases, ptr)
            if i < len(self._bases) and self._bases[i] == ptr:
                self._freed.append(self._blocks.pop(i))
                del self._bases[i]
                self._arrays = None
                continue
            self._arrays = None
            if any(f.base == ptr for f in self._freed):
                raise InvalidFree(f"double free of 0x{ptr:x}", ptr, int(lane))
            j = bisect.bisect_right(self._bases, ptr) - 1
            if j >= 0 and ptr < self._blocks[j].base + self._blocks[j].size:
                blk = self._blocks[j]
                raise InvalidFree(f"0x{ptr:x} points inside the allocation at 0x{blk.base:x} "
                                  f"(offset {ptr - blk.base})", ptr, int(lane))
            raise InvalidFree(f"0x{ptr:x} was not returned by this allocator", ptr, int(lane))

    # ------------------------------------------------ hooks used by access checks

    def bad_mask(self, offsets: np.ndarray, size: int) -> np.ndarray:
        """Lanes (byte offsets into the heap allocation) not wholly inside a
        live block."""
        if self._arrays is None:
            self._arrays = (np.array([b.base - self.base for b in self._blocks], dtype=np.int64),
                            np.array([b.base - self.base + b.size for b in self._blocks],
                                     dtype=np.int64))
        starts, ends = self._arrays
        if starts.shape[0] == 0:
            return np.ones(offsets.shape[0], dtype=bool)
        i = np.searchsorted(starts, offsets, side="right") - 1
        ok = (i >= 0) & (offsets + size <= ends[np.maximum(i, 0)])
        return ~ok

    def describe(self, address: int, size: int) -> str:
        return describe_address(address, size, self._blocks, self._freed, (),
                                noun="device heap block")
