"""A faulting access carries every faulting lane of the instruction
(AccessFault.lanes, in the caller's lane numbers), on the global fast and
slow paths, in shared and local memory and through generic addresses; the
complete mask is computed only once a fault is certain."""
from __future__ import annotations

import numpy as np
import pytest

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory import (
    LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, AccessFault, GenericAddressing, GlobalMemory,
    SegmentedMemory, Space,
)
from gpudbg.sim.memory.access import bad_lanes
from gpudbg.sim.memory.spaces import AccessType

MISALIGNED = CUDBGException.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS


def lanes(base: int, offsets) -> np.ndarray:
    return np.uint64(base) + np.asarray(offsets, dtype=np.uint64)


def test_the_fast_path_fault_carries_every_faulting_lane():
    gm = GlobalMemory()
    a = gm.alloc(4096)
    offs = np.arange(32) * 4
    offs[[3, 9, 30]] += 2                                     # three misaligned lanes
    with pytest.raises(AccessFault) as e:
        gm.load(lanes(a.base, offs), np.int32)
    assert e.value.kind is MISALIGNED and e.value.lane == 3
    assert e.value.lanes.tolist() == [3, 9, 30]


def test_the_slow_path_fault_carries_every_faulting_lane_of_every_kind():
    gm = GlobalMemory()
    a = gm.alloc(64)
    ro = gm.alloc(64, readonly=True)
    addrs = lanes(a.base, [0, 4, 64, 8, 2])                   # lane 2 past the end, lane 4 misaligned
    addrs = np.concatenate([addrs, lanes(ro.base, [0, 4])])  # lanes 5, 6: read-only
    with pytest.raises(AccessFault) as e:
        gm.store(addrs, 7, np.int32)
    assert e.value.lane == 2 and e.value.lanes.tolist() == [2, 4, 5, 6]
    assert (a.data == 0).all()                                # nothing was written
    with pytest.raises(AccessFault) as e:                     # reads of read-only memory are fine
        gm.load(addrs, np.int32)
    assert e.value.lanes.tolist() == [2, 4]


def test_faulting_lanes_are_given_in_the_callers_lane_numbers():
    gm = GlobalMemory()
    a = gm.alloc(64)
    from gpudbg.sim.memory import access
    with pytest.raises(AccessFault) as e:
        access.resolve(gm, lanes(a.base, [0, 128, 4, 256]), 4, AccessType.READ,
                       lanes=np.array([10, 11, 12, 13]))
    assert e.value.lane == 11 and e.value.lanes.tolist() == [11, 13]


def test_bad_lanes_is_the_complete_mask_and_silent_accesses_have_none():
    gm = GlobalMemory()
    a = gm.alloc(64)
    heap = gm.alloc(64)
    from gpudbg.sim.memory.allocations import _NoAccess
    heap.suballocator = _NoAccess(heap)                       # a mapping without access
    addrs = np.concatenate([lanes(a.base, [0, 60, 61]), lanes(heap.base, [0]),
                            np.array([1 << 40], dtype=np.uint64)])
    assert bad_lanes(gm, addrs, 4, AccessType.READ).tolist() == [False, False, True, True, True]
    ok = lanes(a.base, np.arange(16) * 4)
    assert not bad_lanes(gm, ok, 4, AccessType.WRITE).any()
    gm.store(ok, np.arange(16), np.int32)                     # and the access itself succeeds
    assert a.data.view(np.int32).tolist() == list(range(16))


def test_shared_and_local_faults_carry_every_faulting_lane():
    sh = SegmentedMemory(Space.SHARED, 2, 64)
    with pytest.raises(AccessFault) as e:
        sh.store(np.array([0, 1, 0, 1]), np.array([0, 64, 128, 4], dtype=np.uint64), 1, np.uint32)
    assert e.value.lane == 1 and e.value.lanes.tolist() == [1, 2]
    lo = SegmentedMemory(Space.LOCAL, 4, 16)
    with pytest.raises(AccessFault) as e:
        lo.load(np.arange(4), np.array([2, 0, 6, 8], dtype=np.uint64), np.uint32)
    assert e.value.kind is MISALIGNED and e.value.lanes.tolist() == [0, 2]


def test_generic_faults_gather_the_lanes_of_every_space():
    gm = GlobalMemory()
    a = gm.alloc(64)
    shared = SegmentedMemory(Space.SHARED, 1, 64)
    local = SegmentedMemory(Space.LOCAL, 6, 16)
    generic = GenericAddressing(gm, shared, local)
    addrs = np.array([a.base, SHARED_WINDOW_BASE + 128, a.base + 64, 16,
                      LOCAL_WINDOW_BASE + 4, SHARED_WINDOW_BASE], dtype=np.uint64)
    with pytest.raises(AccessFault) as e:         # lanes 1 (shared), 2 (global), 3 (no space)
        generic.load(addrs, np.uint32, np.zeros(6, dtype=np.int64), np.arange(6))
    assert e.value.lane == 1 and e.value.lanes.tolist() == [1, 2, 3]
