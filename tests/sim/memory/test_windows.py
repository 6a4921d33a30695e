"""Shared/local segmented memory and generic addressing dispatch."""
from __future__ import annotations

import numpy as np
import pytest

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory import (
    LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, AccessFault, AllocationKind, GenericAddressing,
    GenericSpace, GlobalMemory, SegmentedMemory, Space,
)

ILLEGAL = CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS


@pytest.fixture
def setup():
    gm = GlobalMemory()
    shared = SegmentedMemory(Space.SHARED, 4, 1024)
    local = SegmentedMemory(Space.LOCAL, 64, 256)
    return gm, shared, local, GenericAddressing(gm, shared, local)


def test_segments_are_isolated_and_limited():
    sh = SegmentedMemory(Space.SHARED, 3, 100)
    assert sh.stride == 128
    sh.limits[1] = 64
    segs = np.array([0, 1, 2, 0])
    sh.store(segs, np.array([0, 0, 0, 96], dtype=np.uint64), [1, 2, 3, 4], np.uint32)
    assert list(sh.load(segs, np.array([0, 0, 0, 96]), np.uint32)) == [1, 2, 3, 4]
    assert sh.read(1, 0, 4).view(np.uint32)[0] == 2
    with pytest.raises(AccessFault) as e:
        sh.load(np.array([0, 1]), np.array([0, 64]), np.uint32)
    f = e.value
    assert (f.kind, f.space, f.lane, f.address) == (ILLEGAL, Space.SHARED, 1, 64)
    assert f.message == ("Invalid __shared__ read of size 4 bytes: address 0x40 is an out-of-bounds "
                         "shared memory access (offset 0x40; the 64-byte shared memory of block "
                         "slot 1 ends at offset 0x40)")
    with pytest.raises(AccessFault) as e:
        sh.store(np.array([2]), np.array([98]), [0], np.uint32)
    assert "misaligned" in e.value.message
    with pytest.raises(IndexError):
        sh.load(np.array([3]), np.array([0]), np.uint8)
    sh.reset(0)
    assert not sh.read(0, 0, 100).any()
    sh.reset(2, zero=False, limit=8)
    assert sh.read(2, 0, 4).view(np.uint32)[0] == 3
    with pytest.raises(AccessFault, match="Invalid __shared__ read of size 8 bytes"):
        sh.read(2, 4, 8)
    with pytest.raises(ValueError, match="shared or local"):
        SegmentedMemory(Space.GLOBAL, 1, 16)


def test_shared_atomics_and_vector_accesses():
    sh = SegmentedMemory(Space.SHARED, 2, 256)
    n = 300
    segs = np.arange(n) % 2
    old = sh.atomic("add", segs, np.zeros(n, dtype=np.uint64), np.ones(n, np.uint32), np.uint32)
    assert list(old[:4]) == [0, 0, 1, 1]
    assert sh.read(0, 0, 4).view(np.uint32)[0] == 150
    sh.reduce("max", np.array([1, 1]), np.array([8, 8]), np.array([7, 3]), np.int32)
    assert sh.read(1, 8, 4).view(np.int32)[0] == 7
    sh.store(np.array([1]), np.array([16]), [[1.5, 2.5]], np.float64, count=2)
    np.testing.assert_array_equal(sh.load(np.array([1]), np.array([16]), np.float64, count=2),
                                  [[1.5, 2.5]])


def test_local_atomics_are_an_invalid_address_space():
    lo = SegmentedMemory(Space.LOCAL, 2, 64)
    with pytest.raises(AccessFault) as e:
        lo.atomic("add", np.array([0]), np.array([0]), 1, np.uint32)
    assert e.value.kind is CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_ADDRESS_SPACE


def test_classify_and_cvta(setup):
    gm, shared, local, g = setup
    a = gm.alloc(64)
    addrs = np.array([0, a.base, SHARED_WINDOW_BASE + 8, LOCAL_WINDOW_BASE + 4, 0xFFFF_0000_0000],
                     dtype=np.uint64)
    assert list(g.classify(addrs)) == [GenericSpace.NONE, GenericSpace.GLOBAL, GenericSpace.SHARED,
                                       GenericSpace.LOCAL, GenericSpace.NONE]
    assert list(g.is_space(addrs, Space.SHARED)) == [False, False, True, False, False]
    assert list(g.to_shared(addrs[2:3])) == [8]
    assert list(g.from_local(np.array([4]))) == [LOCAL_WINDOW_BASE + 4]
    assert list(g.to_local(g.from_local(np.array([12])))) == [12]
    assert list(g.to_global(addrs[1:2])) == [a.base]


def test_generic_dispatch_keeps_lane_order(setup):
    gm, shared, local, g = setup
    a = gm.alloc(256)
    n = 12
    kinds = np.arange(n) % 3
    addrs = np.where(kinds == 0, a.base + 4 * np.arange(n),
                     np.where(kinds == 1, SHARED_WINDOW_BASE + 4 * np.arange(n),
                              LOCAL_WINDOW_BASE + 4 * np.arange(n))).astype(np.uint64)
    shared_seg = np.full(n, 2)
    local_seg = np.arange(n) + 10
    g.store(addrs, np.arange(n) * 10, np.uint32, shared_seg, local_seg)
    np.testing.assert_array_equal(g.load(addrs, np.uint32, shared_seg, local_seg), np.arange(n) * 10)
    assert a.data.view(np.uint32)[3] == 30
    assert shared.read(2, 4, 4).view(np.uint32)[0] == 10
    assert local.read(15, 20, 4).view(np.uint32)[0] == 50
    # Atomics: shared and global lanes mix, collisions keep lane order per space.
    at = np.array([a.base, SHARED_WINDOW_BASE, a.base, SHARED_WINDOW_BASE], dtype=np.uint64)
    old = g.atomic("add", at, np.array([1, 2, 3, 4], np.uint32), np.uint32, 2, 0)
    assert list(old) == [0, 0, 1, 2]
    g.reduce("add", at, 1, np.uint32, 2, 0)
    assert a.data.view(np.uint32)[0] == 6 and shared.read(2, 0, 4).view(np.uint32)[0] == 8


def test_generic_reports_first_faulting_lane_of_the_original_array(setup):
    gm, shared, local, g = setup
    a = gm.alloc(64)
    addrs = np.array([a.base, LOCAL_WINDOW_BASE + 1000, SHARED_WINDOW_BASE + 2000, a.base + 64],
                     dtype=np.uint64)
    with pytest.raises(AccessFault) as e:
        g.load(addrs, np.uint32, 0, 0)
    f = e.value
    assert (f.lane, f.space, f.address) == (1, Space.LOCAL, LOCAL_WINDOW_BASE + 1000)
    assert f.message.startswith(f"Invalid __local__ read of size 4 bytes: address "
                                f"0x{LOCAL_WINDOW_BASE + 1000:x} is an out-of-bounds local memory")
    with pytest.raises(AccessFault) as e:
        g.store(addrs[[0, 3, 2]], [1, 2, 3], np.uint32, 0, 0)
    assert (e.value.lane, e.value.space) == (1, Space.GLOBAL)
    assert e.value.message.startswith("Invalid __global__ write of size 4 bytes")
    assert not a.data.any()  # nothing written when any lane faults
    with pytest.raises(AccessFault) as e:
        g.load(np.array([SHARED_WINDOW_BASE, 0x10], dtype=np.uint64), np.uint32, 0, 0)
    assert (e.value.lane, e.value.space, e.value.kind) == (1, Space.GENERIC, ILLEGAL)
    assert e.value.message == ("Invalid __generic__ read of size 4 bytes: address 0x10 does not map to "
                               "any memory space (it is outside the global, shared and local windows)")


def test_generic_atomics_refuse_local_and_constant(setup):
    gm, shared, local, g = setup
    c = gm.alloc(64, AllocationKind.MODULE_CONST, readonly=True)
    for addr in (LOCAL_WINDOW_BASE, c.base):
        with pytest.raises(AccessFault) as e:
            g.atomic("add", np.array([SHARED_WINDOW_BASE, addr], dtype=np.uint64), 1, np.uint32, 0, 0)
        assert e.value.kind is CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_ADDRESS_SPACE
        assert e.value.lane == 1
    assert not shared.read(0, 0, 4).any()
