"""Freed memory stays poisoned (the quarantine), and driver memory is out
of a kernel's reach while the driver's host-side views keep working."""
from __future__ import annotations

import numpy as np
import pytest

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory import AccessFault, AllocationKind, GlobalMemory, InvalidFree
from gpudbg.sim.memory.allocations import REDZONE

ILLEGAL = CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS


def lanes(base: int, offsets) -> np.ndarray:
    return np.uint64(base) + np.asarray(offsets, dtype=np.uint64)


# ---------------------------------------------------------------- quarantine

def test_a_freed_range_is_not_reused_under_reuse_pressure():
    gm = GlobalMemory()
    stale = gm.alloc(1024, label="buf")
    gm.free(stale.base)
    stale.free_site = "host.py:12"          # what the sanitizer's host checks record
    seen = set()
    for _ in range(500):                     # many alloc/free cycles of the same size
        a = gm.alloc(1024)
        seen.add(a.base)
        gm.free(a.base)
    assert stale.base not in seen
    with pytest.raises(AccessFault) as e:
        gm.load(lanes(stale.base, [0, 4]), np.int32)
    assert e.value.message == (f"Invalid __global__ read of size 4 bytes: address 0x{stale.base:x} is "
                               f"inside a freed 1024-byte allocation at 0x{stale.base:x} "
                               f"(buf, freed at host.py:12)")
    with pytest.raises(InvalidFree, match="double free"):     # still known as freed
        gm.free(stale.base)


def test_the_quarantine_is_fifo_and_bounded_by_entries():
    gm = GlobalMemory(quarantine_entries=3)
    freed = [gm.alloc(256) for _ in range(5)]
    keep = gm.alloc(256)                     # the freed ranges are not at the end of VA
    for a in freed:
        gm.free(a.base)
    assert [b for b, _n in gm.quarantined()] == [a.base for a in freed[2:]]
    assert gm.alloc(256).base == freed[0].base        # the oldest left first, first fit again
    assert gm.alloc(256).base == freed[1].base
    assert gm.alloc(256).base > keep.base             # the quarantined ones stay out of reach


def test_the_quarantine_is_bounded_in_bytes_of_va():
    gm = GlobalMemory(quarantine_bytes=4 * (4096 + REDZONE))
    a, b = gm.alloc(4096), gm.alloc(4096)
    c = gm.alloc(3 * 4096)
    gm.alloc(16)
    gm.free(a.base)
    gm.free(b.base)
    assert len(gm.quarantined()) == 2
    gm.free(c.base)                           # 5 pages and 3 red zones: over, a leaves
    assert [q for q, _n in gm.quarantined()] == [b.base, c.base]
    assert sum(n for _b, n in gm.quarantined()) <= 4 * (4096 + REDZONE)
    assert gm.alloc(4096).base == a.base


def test_freed_backing_is_released_at_once():
    gm = GlobalMemory(capacity=1 << 20)
    a = gm.alloc(1 << 19)
    gm.free(a.base)
    assert gm.used == 0 and a.data.shape == (0,)
    b = gm.alloc(1 << 20)                     # capacity is free again, at another address
    assert b.base != a.base


def test_driver_memory_skips_the_quarantine():
    gm = GlobalMemory()
    d = gm.alloc(64, AllocationKind.LAUNCH, label="launch k")
    gm.free(d.base)
    assert gm.quarantined() == []
    assert gm.alloc(64, AllocationKind.LAUNCH).base == d.base


def test_a_fixed_reservation_takes_back_a_quarantined_range():
    gm = GlobalMemory()
    a = gm.alloc(1 << 21, align=1 << 21)
    gm.free(a.base)
    assert gm.reserve(1 << 21, address=a.base) == a.base
    assert gm.quarantined() == []
    assert "freed" not in gm.describe(a.base)


def test_a_full_va_space_takes_back_the_quarantine():
    gm = GlobalMemory(va_size=1 << 20)
    a = gm.alloc((1 << 20) - REDZONE)
    gm.free(a.base)
    assert gm.alloc((1 << 20) - REDZONE).base == a.base


def test_freed_records_are_bounded(monkeypatch):
    from gpudbg.sim.memory import quarantine
    monkeypatch.setattr(quarantine, "FREED_RECORDS", 8)
    gm = GlobalMemory(quarantine_entries=100)
    blocks = [gm.alloc(64) for _ in range(20)]
    for a in blocks:
        gm.free(a.base)
    kept = gm.freed_allocations()
    assert len(kept) == 8 and kept == blocks[12:]          # the most recently freed, by address
    assert gm.freed_record(blocks[0].base) is None
    assert gm.freed_record(blocks[19].base + 10) is blocks[19]


def test_reuse_forgets_the_freed_record():
    gm = GlobalMemory(quarantine_entries=0)
    a = gm.alloc(512)
    gm.free(a.base)
    b = gm.alloc(128)
    assert b.base == a.base and gm.freed_record(a.base + 300) is None


# ---------------------------------------------------------------- driver memory

@pytest.mark.parametrize("kind,label,what", [
    (AllocationKind.LAUNCH, "launch saxpy", "launch parameters of saxpy"),
    (AllocationKind.RING, "ring stream 1", "command ring stream 1"),
    (AllocationKind.SEMAPHORE, "semaphore stream 1", "semaphore stream 1"),
    (AllocationKind.CODE, "code image", "the code image"),
    (AllocationKind.STAGING, "staging (host to device)", "staging (host to device)"),
])
def test_driver_memory_faults_for_kernels_only(kind, label, what):
    gm = GlobalMemory()
    user = gm.alloc(64)
    d = gm.alloc(64, kind, label=label)
    phrase = f"is inside driver memory ({what}) that kernels cannot access"
    for op in (lambda: gm.load(lanes(d.base, [0, 4]), np.int32),
               lambda: gm.store(lanes(d.base, [8]), 1, np.int32),
               lambda: gm.atomic("add", lanes(d.base, [0]), 1, np.uint32),
               lambda: gm.load(np.array([user.base, d.base + 4], dtype=np.uint64), np.int32)):
        with pytest.raises(AccessFault) as e:
            op()
        assert e.value.kind is ILLEGAL and phrase in e.value.message
    gm.write(d.base, np.arange(4, dtype=np.int32))           # the driver's host-side views work
    assert gm.read(d.base, 16).view(np.int32).tolist() == [0, 1, 2, 3]
    assert gm.load(lanes(user.base, [0]), np.int32).tolist() == [0]
