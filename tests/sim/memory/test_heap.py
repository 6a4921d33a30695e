"""Device malloc heap: placement, exhaustion, frees and block-precise checks."""
from __future__ import annotations

import numpy as np
import pytest

from gpudbg.sim.memory import AccessFault, AllocationKind, DeviceHeap, GlobalMemory, InvalidFree


def test_heap_is_one_allocation_and_blocks_are_16_byte_aligned():
    gm = GlobalMemory()
    heap = DeviceHeap(gm, 4096)
    assert heap.allocation.kind is AllocationKind.DEVICE_HEAP and gm.find(heap.base) is heap.allocation
    ptrs = heap.malloc(np.array([10, 0, 16, 1]))
    assert list(ptrs - np.uint64(heap.base) * (ptrs != 0)) == [0, 0, 16, 32]
    assert ptrs[1] == 0
    assert heap.used() == 27


def test_exhaustion_returns_null_and_free_allows_reuse():
    gm = GlobalMemory()
    heap = DeviceHeap(gm, 64)
    p = heap.malloc(np.array([32, 32, 16]))
    assert p[2] == 0 and p[0] and p[1]
    heap.free(p[[0, 2]])  # null pointers are ignored
    q = heap.malloc(np.array([16]))
    assert q[0] == p[0]


def test_accesses_are_checked_against_live_blocks():
    gm = GlobalMemory()
    heap = DeviceHeap(gm, 4096)
    p = heap.malloc(np.array([20, 16]))
    gm.store(p, [1, 2], np.uint32)
    assert list(gm.load(p, np.uint32)) == [1, 2]
    with pytest.raises(AccessFault) as e:
        gm.load(np.array([p[0], p[0] + 20]), np.uint32)
    assert e.value.lane == 1
    assert e.value.message == (f"Invalid __global__ read of size 4 bytes: address 0x{int(p[0]) + 20:x} "
                               f"is 0 bytes past the end of the 20-byte device heap block at "
                               f"0x{int(p[0]):x} (device malloc)")
    heap.free(p[1:])
    with pytest.raises(AccessFault, match="inside a freed 16-byte device heap block"):
        gm.atomic("add", p[1:], 1, np.uint32)
    # Mixed with an ordinary allocation (slow path) the heap check still applies.
    other = gm.alloc(64)
    with pytest.raises(AccessFault) as e:
        gm.store(np.array([other.base, int(p[0]) + 32], dtype=np.uint64), [0, 0], np.uint32)
    assert e.value.lane == 1 and "device heap block" in e.value.message


def test_invalid_device_frees_name_the_lane():
    gm = GlobalMemory()
    heap = DeviceHeap(gm, 4096)
    p = heap.malloc(np.array([32]))
    with pytest.raises(InvalidFree) as e:
        heap.free(np.array([0, int(p[0]) + 16], dtype=np.uint64))
    assert e.value.lane == 1 and "points inside the allocation" in e.value.reason
    heap.free(p)
    with pytest.raises(InvalidFree, match="double free"):
        heap.free(p)
    with pytest.raises(InvalidFree, match="was not returned by this allocator"):
        heap.free(np.array([heap.base + 4000], dtype=np.uint64))
    with pytest.raises(ValueError):
        DeviceHeap(gm, 0)
