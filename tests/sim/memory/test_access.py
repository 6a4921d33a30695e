"""Vectorized checked loads/stores: fast path, slow path, every fault kind."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory import AccessFault, AllocationKind, GlobalMemory

ILLEGAL = CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS
MISALIGNED = CUDBGException.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS


def lanes(base: int, offsets) -> np.ndarray:
    return np.uint64(base) + np.asarray(offsets, dtype=np.uint64)


@pytest.fixture
def gm():
    return GlobalMemory()


def test_fast_path_roundtrip_all_dtypes(gm):
    a = gm.alloc(4096)
    for dt in (np.uint8, np.int16, np.uint32, np.float32, np.int64, np.float64, np.float16):
        dt = np.dtype(dt)
        n = 4096 // dt.itemsize
        addrs = lanes(a.base, np.arange(n)[::-1] * dt.itemsize)
        vals = (np.arange(n) % 100).astype(dt)
        gm.store(addrs, vals, dt)
        np.testing.assert_array_equal(gm.load(addrs, dt), vals)
        np.testing.assert_array_equal(a.data.view(dt)[::-1], vals)


@pytest.mark.parametrize("dt,count", [(np.uint32, 2), (np.uint32, 4), (np.float64, 2),
                                      (np.uint16, 4), (np.uint8, 8)])
def test_vector_accesses(gm, dt, count):
    a = gm.alloc(1024)
    step = np.dtype(dt).itemsize * count
    addrs = lanes(a.base, np.arange(1024 // step) * step)
    vals = np.arange(addrs.shape[0] * count).reshape(-1, count).astype(dt)
    gm.store(addrs, vals, dt, count=count)
    out = gm.load(addrs, dt, count=count)
    assert out.shape == (addrs.shape[0], count)
    np.testing.assert_array_equal(out, vals)
    with pytest.raises(AccessFault) as e:
        gm.load(lanes(a.base, [0, step // 2]), dt, count=count)
    assert e.value.kind is MISALIGNED and e.value.lane == 1 and e.value.size == step


def test_odd_sized_allocation_tail_is_reachable(gm):
    a = gm.alloc(13)
    gm.store(lanes(a.base, [12]), [7], np.uint8)
    assert gm.load(lanes(a.base, [8]), np.uint32)[0] == 0
    assert a.data[12] == 7
    with pytest.raises(AccessFault, match="runs 3 bytes past its end"):
        gm.load(lanes(a.base, [12]), np.uint32)


def test_slow_path_spans_allocations_and_keeps_lane_order(gm):
    bufs = [gm.alloc(64, label=f"b{i}") for i in range(4)]
    for i, b in enumerate(bufs):
        b.data.view(np.uint32)[:] = np.arange(16) + 100 * i
    rng = np.random.default_rng(1)
    which = rng.integers(0, 4, 500)
    slot = rng.integers(0, 16, 500)
    addrs = np.array([bufs[w].base + 4 * s for w, s in zip(which, slot)], dtype=np.uint64)
    np.testing.assert_array_equal(gm.load(addrs, np.uint32), 100 * which + slot)
    gm.store(addrs, np.arange(500), np.uint32)
    for w, s in {(int(w), int(s)) for w, s in zip(which, slot)}:
        last = max(k for k in range(500) if which[k] == w and slot[k] == s)
        assert bufs[w].data.view(np.uint32)[s] == last


def test_colliding_stores_highest_lane_wins(gm):
    a = gm.alloc(64)
    gm.store(lanes(a.base, [8, 0, 8, 4, 0]), [1, 2, 3, 4, 5], np.uint32)
    assert list(a.data.view(np.uint32)[:3]) == [5, 4, 3]
    gm.store(lanes(a.base, [0, 0]), [[1, 2], [3, 4]], np.uint32, count=2)
    assert list(a.data.view(np.uint32)[:2]) == [3, 4]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 15), min_size=1, max_size=60), st.integers(0, 2))
def test_store_then_load_matches_dict_model(slots, shift):
    gm = GlobalMemory()
    a = gm.alloc(128)
    b = gm.alloc(128)
    dt = np.dtype([np.uint8, np.uint32, np.uint64][shift])
    addrs = np.array([(a if s % 2 else b).base + (s // 2) * dt.itemsize for s in slots], np.uint64)
    gm.store(addrs, np.arange(len(slots)), dt)
    model = {int(x): k for k, x in enumerate(addrs)}
    assert list(gm.load(addrs, dt)) == [model[int(x)] for x in addrs]


def test_out_of_bounds_messages_are_exact(gm):
    a = gm.alloc(4096, label="input")
    b = gm.alloc(4096)
    end = a.base + 4096
    with pytest.raises(AccessFault) as e:
        gm.load(lanes(b.base, [0, 4, 4096]), np.uint32)
    f = e.value
    assert (f.kind, f.lane, f.address, f.size) == (ILLEGAL, 2, b.base + 4096, 4)
    assert f.message == (f"Invalid __global__ read of size 4 bytes: address 0x{b.base + 4096:x} is 0 "
                         f"bytes past the end of the 4096-byte allocation at 0x{b.base:x}")
    with pytest.raises(AccessFault) as e:
        gm.store(lanes(a.base - 16, [0]), [1], np.uint32)
    assert e.value.message == (f"Invalid __global__ write of size 4 bytes: address 0x{a.base - 16:x} "
                               f"is 16 bytes before the start of the 4096-byte allocation at "
                               f"0x{a.base:x} (input)")
    with pytest.raises(AccessFault) as e:
        gm.load(np.array([0x40], dtype=np.uint64), np.uint64)
    assert e.value.message == ("Invalid __global__ read of size 8 bytes: address 0x40 is not near "
                               "any allocation")
    # the guard bytes after every allocation keep `end` out of `b`
    assert b.base > end
    assert gm.describe(end) == f"is 0 bytes past the end of the 4096-byte allocation at 0x{a.base:x} (input)"


def test_one_past_the_end_of_a_full_page_buffer_faults(gm):
    """Regression: allocations used to be packed back to back, so reading
    one element past a 4096-byte buffer silently read its neighbour."""
    a = gm.alloc(4096, label="first")
    gm.alloc(4096, label="second")
    with pytest.raises(AccessFault) as e:
        gm.load(lanes(a.base, [4092, 4096]), np.float32)
    assert e.value.lane == 1
    assert "0 bytes past the end of the 4096-byte allocation" in e.value.message
    assert "(first)" in e.value.message


def test_use_after_free_is_named(gm):
    a = gm.alloc(4096, label="tmp")
    gm.alloc(64)
    gm.free(a.base)
    with pytest.raises(AccessFault) as e:
        gm.load(lanes(a.base, [0, 128]), np.float32)
    assert e.value.lane == 0
    assert e.value.message == (f"Invalid __global__ read of size 4 bytes: address 0x{a.base:x} is "
                               f"inside a freed 4096-byte allocation at 0x{a.base:x} (tmp)")


def test_first_faulting_lane_wins_across_fault_kinds(gm):
    a = gm.alloc(64)
    with pytest.raises(AccessFault) as e:
        gm.load(lanes(a.base, [0, 4, 66, 4096]), np.uint32)
    assert e.value.lane == 2 and e.value.kind is MISALIGNED
    assert "misaligned" in e.value.message
    with pytest.raises(AccessFault) as e:
        gm.load(lanes(a.base, [0, 4096, 66]), np.uint32)
    assert e.value.lane == 1 and e.value.kind is ILLEGAL


def test_readonly_allocations_refuse_device_writes(gm):
    c = gm.alloc(64, AllocationKind.MODULE_CONST, readonly=True, label="lut")
    c.data[:4] = 5
    assert gm.load(lanes(c.base, [0]), np.uint32)[0] == 0x05050505
    with pytest.raises(AccessFault) as e:
        gm.store(lanes(c.base, [0]), [1], np.uint32)
    assert e.value.kind is ILLEGAL
    assert e.value.message == (f"Invalid __global__ write of size 4 bytes: address 0x{c.base:x} is a "
                               f"write to read-only memory in the 64-byte allocation at "
                               f"0x{c.base:x} (lut)")
    assert c.data[0] == 5


def test_faulting_store_writes_nothing(gm):
    a = gm.alloc(64)
    with pytest.raises(AccessFault):
        gm.store(lanes(a.base, [0, 4, 64]), [1, 2, 3], np.uint32)
    assert not a.data.any()


def test_space_name_and_input_forms(gm):
    a = gm.alloc(16)
    with pytest.raises(AccessFault, match=r"^Invalid __generic__ read of size 2 bytes"):
        gm.load([a.base + 16], np.uint16, space_name="__generic__")
    assert gm.load([a.base], np.uint8).shape == (1,)
    assert gm.load(np.array([a.base], dtype=np.int64), np.uint8).shape == (1,)
    assert gm.load(np.zeros(0, dtype=np.uint64), np.uint32).shape == (0,)
    with pytest.raises(ValueError, match="do not match"):
        gm.store([a.base, a.base + 4], [1, 2, 3], np.uint32)
    with pytest.raises(ValueError, match="vector count"):
        gm.load([a.base], np.uint32, count=3)
