"""Allocation registry: placement, free, reuse, VMM, host-side accessors."""
from __future__ import annotations

import numpy as np
import pytest

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory.allocations import REDZONE
from gpudbg.sim.memory import (
    AccessFault, AllocationKind, GlobalMemory, InvalidFree, OutOfMemory, SHARED_WINDOW_BASE,
)

BASE = GlobalMemory.GLOBAL_BASE


def test_placement_is_deterministic_first_fit_and_aligned():
    gm = GlobalMemory()
    a = gm.alloc(100, label="a")
    b = gm.alloc(4096)
    c = gm.alloc(10, align=4096)
    # each allocation is followed by REDZONE guard bytes, then the next
    # alignment boundary
    assert REDZONE == 256
    assert (a.base, b.base, c.base) == (BASE, BASE + 512, BASE + 8192)
    assert a.data.dtype == np.uint8 and a.data.shape == (100,) and not a.data.any()
    assert [x.base for x in gm.allocations()] == [a.base, b.base, c.base]
    assert gm.find(a.base + 99) is a and gm.find(a.base + 100) is None
    assert GlobalMemory().alloc(100).base == BASE  # same sequence, same addresses


def test_free_then_reuse_first_fit():
    gm = GlobalMemory(quarantine_entries=0)      # no quarantine: a freed range is reused at once
    a = gm.alloc(256)
    b = gm.alloc(256)
    gm.free(a.base)
    assert gm.find(a.base) is None and a.freed
    assert "inside a freed 256-byte allocation" in gm.describe(a.base)
    c = gm.alloc(128)
    assert c.base == a.base
    assert "freed" not in gm.describe(a.base)
    assert gm.alloc(512).base == b.base + 256 + REDZONE


def test_zero_size_allocations_get_unique_addresses():
    gm = GlobalMemory()
    z1, z2 = gm.alloc(0), gm.alloc(0)
    assert z1.base != z2.base and z1.base % 256 == 0 and z2.base % 256 == 0
    assert z1.size == 0 and gm.find(z1.base) is None
    assert gm.free(z1.base) is z1


def test_invalid_frees_say_why():
    gm = GlobalMemory()
    a = gm.alloc(64)
    pinned = gm.alloc(64, AllocationKind.HOST_PINNED)
    with pytest.raises(InvalidFree) as e:
        gm.free(a.base + 16)
    assert e.value.reason == f"0x{a.base + 16:x} points inside the allocation at 0x{a.base:x} (offset 16)"
    with pytest.raises(InvalidFree, match=r"^0x1234 was not returned by this allocator$"):
        gm.free(0x1234)
    with pytest.raises(InvalidFree) as e:
        gm.free(pinned.base, AllocationKind.DEVICE)
    assert e.value.reason == (f"0x{pinned.base:x} is a pinned host allocation; "
                              f"free it with the host allocator")
    gm.free(pinned.base, {AllocationKind.HOST_PINNED})
    gm.free(a.base, AllocationKind.DEVICE)
    with pytest.raises(InvalidFree, match=f"^double free of 0x{a.base:x}$"):
        gm.free(a.base)
    assert gm.free(0) is None


def test_capacity_and_bad_arguments():
    gm = GlobalMemory(capacity=1 << 20)
    gm.alloc(1 << 19)
    with pytest.raises(OutOfMemory, match="out of memory: cannot allocate 1048576 bytes"):
        gm.alloc(1 << 20)
    gm.alloc(1 << 20, AllocationKind.HOST_PINNED)  # host RAM is not device capacity
    assert gm.used == 1 << 19
    with pytest.raises(ValueError, match="power of two"):
        gm.alloc(16, align=24)
    with pytest.raises(ValueError, match="non-negative"):
        gm.alloc(-1)
    with pytest.raises(ValueError, match="overlaps the shared and local windows"):
        GlobalMemory(base=SHARED_WINDOW_BASE - 4096)
    small = GlobalMemory(va_size=1 << 16)
    small.alloc(1 << 15)
    with pytest.raises(OutOfMemory, match="virtual address space"):
        small.alloc(1 << 15 + 1)


def test_reserve_map_unmap_release():
    gm = GlobalMemory()
    r = gm.reserve(4 << 20)
    assert r % (2 << 20) == 0
    assert gm.alloc(64).base >= r + (4 << 20)  # reservations hold their VA
    assert "reserved but unmapped 4194304-byte range" in gm.describe(r + 8)
    phys = np.zeros(2 << 20, dtype=np.uint8)
    m1 = gm.map(r, 2 << 20, phys, label="m1")
    m2 = gm.map(r + (2 << 20), 2 << 20, phys, label="alias")
    gm.write(r + 5, b"\x07")
    assert gm.read(r + (2 << 20) + 5, 1)[0] == 7  # two mappings, one physical buffer
    with pytest.raises(InvalidFree, match="unmap it"):
        gm.free(m1.base)
    with pytest.raises(ValueError, match="still has mappings"):
        gm.release(r)
    with pytest.raises(ValueError, match="overlaps"):
        gm.map(r, 16)
    gm.unmap(m1.base)
    gm.unmap(m2.base)
    gm.release(r)
    with pytest.raises(ValueError, match="not inside one reservation"):
        gm.map(r, 16)
    fixed = gm.reserve(1 << 21, address=BASE + (64 << 20))
    assert fixed == BASE + (64 << 20)
    with pytest.raises(OutOfMemory):
        gm.reserve(1 << 21, address=fixed)


def test_host_read_write_fill_copy_view():
    gm = GlobalMemory()
    a = gm.alloc(64, label="buf")
    gm.write(a.base, bytes(range(16)))
    gm.write(a.base + 16, np.arange(4, dtype=np.uint32))
    assert list(gm.read(a.base, 4)) == [0, 1, 2, 3]
    assert list(gm.read(a.base + 16, 8).view(np.uint32)) == [0, 1]
    gm.copy(a.base + 2, a.base, 8)  # overlapping: memmove semantics
    assert list(gm.read(a.base, 10)) == [0, 1, 0, 1, 2, 3, 4, 5, 6, 7]
    gm.fill(a.base + 32, 0xABCD, 2, 4)
    assert list(gm.read(a.base + 32, 8).view(np.uint16)) == [0xABCD] * 4
    v = gm.view(a.base + 60, 4)
    v[:] = 9
    assert (a.data[60:] == 9).all()
    const = gm.alloc(16, AllocationKind.MODULE_CONST, readonly=True)
    gm.write(const.base, b"\x01" * 16)  # the driver fills constant banks
    assert const.data.sum() == 16


def test_host_faults_have_lane_minus_one_and_precise_text():
    gm = GlobalMemory()
    a = gm.alloc(64, label="buf")
    with pytest.raises(AccessFault) as e:
        gm.read(a.base + 60, 8)
    f = e.value
    assert f.lane == -1 and f.kind is CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS
    assert f.message == (f"Invalid __global__ read of size 8 bytes: address 0x{a.base + 60:x} is 60 "
                         f"bytes inside the 64-byte allocation at 0x{a.base:x} (buf) and the 8-byte "
                         f"access runs 4 bytes past its end")
    with pytest.raises(AccessFault, match="misaligned"):
        gm.fill(a.base + 1, 0, 4, 2)
    with pytest.raises(AccessFault, match="Invalid __global__ write of size 4 bytes"):
        gm.write(a.base + 64, b"abcd")
    with pytest.raises(TypeError, match="bytes-like"):
        gm.write(a.base, 3.5)


def test_mapping_access_flags_backed_reservations_and_freed_mappings():
    from gpudbg.sim.memory.allocations import MapAccess
    gm = GlobalMemory(capacity=16 << 20)
    r = gm.reserve(4 << 20)
    m = gm.map(r, 1 << 20, np.zeros(1 << 20, np.uint8), access=MapAccess.NONE)
    assert gm.mapping_access(r + 5) is MapAccess.NONE and gm.mapping_access(r + (2 << 20)) is None
    addrs = np.array([r + 8, r + 16], dtype=np.uint64)
    with pytest.raises(AccessFault, match="mapped without access") as e:
        gm.load(addrs, np.uint32)
    assert e.value.lane == 0 and e.value.address == r + 8
    assert "without access" in gm.access_denied(r, 4, write=False)
    assert gm.set_access(r, 1 << 20, MapAccess.READ) == [m]
    assert list(gm.load(addrs, np.uint32)) == [0, 0]
    assert gm.access_denied(r, 4, write=False) is None and "read-only" in gm.access_denied(r, 4, True)
    with pytest.raises(AccessFault, match="read-only"):
        gm.store(addrs, 1, np.uint32)
    gm.set_access(r, 1 << 20, MapAccess.READ_WRITE)
    gm.store(addrs, 7, np.uint32)
    assert gm.access_denied(r, 4, True) is None
    with pytest.raises(ValueError, match="whole, contiguous mappings"):
        gm.set_access(r, 2 << 20, MapAccess.READ)
    with pytest.raises(AccessFault, match="reserved but unmapped"):
        gm.load(np.array([r + (1 << 20)], dtype=np.uint64), np.uint8)
    # a backed reservation is charged and mapped piecewise from its own memory
    used = gm.used
    b = gm.reserve(2 << 20, backed=True)
    assert gm.used == used + (2 << 20)
    blk = gm.map_backed(b + 256, 100)
    gm.write(b + 256, b"\x05")
    assert blk.data.base is not None and gm.used == used + (2 << 20)
    with pytest.raises(ValueError, match="backed reservation"):
        gm.map_backed(r + (2 << 20), 16)
    gm.unmap(b + 256, remember_freed=True)
    assert "is inside a freed 100-byte allocation" in gm.describe(b + 260)
    with pytest.raises(AccessFault, match="inside a freed"):
        gm.load(np.array([b + 256], dtype=np.uint64), np.uint8)
    again = gm.map_backed(b + 256, 100)
    assert gm.read(b + 256, 1)[0] == 5 and "freed" not in gm.describe(b + 256)   # same physical bytes
    gm.unmap(again.base)
    assert gm.mappings_in(b, 2 << 20) == []
    gm.release(b)
    assert gm.used == used
    gm.charge(1 << 20)
    assert gm.used == used + (1 << 20)
    gm.discharge(1 << 20)
    with pytest.raises(OutOfMemory):
        gm.charge(64 << 20)
