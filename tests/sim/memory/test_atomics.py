"""Atomics against a scalar model that applies lanes one by one in lane order."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory import AccessFault, AllocationKind, GlobalMemory

F32_TINY = np.finfo(np.float32).tiny


# ----------------------------------------------------------------- scalar model

def bf16_bits_to_float(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", (b & 0xFFFF) << 16))[0]


def float_to_bf16_bits(x: np.float32) -> int:
    u = struct.unpack("<I", struct.pack("<f", float(x)))[0]
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return ((u >> 16) | 0x40) & 0xFFFF
    lower = u & 0xFFFF
    up = u >> 16
    if lower > 0x8000 or (lower == 0x8000 and up & 1):
        up += 1
    return up & 0xFFFF


def bf16_add(a: int, b: int) -> int:
    return float_to_bf16_bits(np.float32(bf16_bits_to_float(a)) + np.float32(bf16_bits_to_float(b)))


def flush(x: np.float32) -> np.float32:
    return np.float32(np.copysign(0.0, x)) if x != 0 and abs(x) < F32_TINY else x


def model_step(op: str, kind: str, dtype: np.dtype, old, v, c):
    """One atomic on Python/numpy scalars; returns the new value."""
    if kind == "int":
        bits = dtype.itemsize * 8
        mask = (1 << bits) - 1
        signed = dtype.kind == "i"

        def wrap(x: int) -> int:
            x &= mask
            return x - (1 << bits) if signed and x >> (bits - 1) else x

        o, vv = int(old), int(v)
        return {"add": lambda: wrap(o + vv), "min": lambda: min(o, vv), "max": lambda: max(o, vv),
                "and": lambda: wrap(o & vv), "or": lambda: wrap(o | vv), "xor": lambda: wrap(o ^ vv),
                "exch": lambda: vv, "cas": lambda: vv if o == int(c) else o,
                "inc": lambda: 0 if o >= vv else o + 1,
                "dec": lambda: vv if (o == 0 or o > vv) else o - 1}[op]()
    if kind == "bf16":
        return bf16_add(int(old), int(v))
    t = dtype.type
    if op == "add":
        if dtype == np.float32:
            return flush(flush(t(old)) + flush(t(v)))
        return t(t(old) + t(v))
    a, b = t(old), t(v)
    if a == 0 and b == 0:  # PTX orders -0 below +0
        neg = (np.signbit(a) or np.signbit(b)) if op == "min" else (np.signbit(a) and np.signbit(b))
        return t(-0.0) if neg else t(0.0)
    return (np.fmin if op == "min" else np.fmax)(a, b)


def run_model(op, kind, dtype, init: dict, slots, vals, cmps):
    mem = dict(init)
    olds = []
    for k, s in enumerate(slots):
        olds.append(mem[s])
        mem[s] = model_step(op, kind, dtype, mem[s], vals[k], None if cmps is None else cmps[k])
    return olds, mem


# ----------------------------------------------------------------- strategies

INT_CASES = [(op, dt) for dt in (np.uint32, np.int32, np.uint64, np.int64)
             for op in ("add", "min", "max", "and", "or", "xor", "exch", "cas")] + \
            [("inc", np.uint32), ("dec", np.uint32)]
FLOAT_CASES = [("add", np.float16), ("add", np.float32), ("add", np.float64),
               ("min", np.float32), ("max", np.float64)]


def int_values(dtype):
    info = np.iinfo(dtype)
    return st.integers(int(info.min), int(info.max))


@st.composite
def lane_layout(draw, max_lanes=160):
    n = draw(st.integers(1, max_lanes))
    distinct = draw(st.sampled_from([1, 2, 3, n, max(1, n // 2)]))
    slots = draw(st.lists(st.integers(0, distinct - 1), min_size=n, max_size=n))
    return n, distinct, slots


def check(op, dtype, kind, slots, distinct, init_vals, vals, cmps, atomic_dtype=None):
    gm = GlobalMemory()
    dt = np.dtype(dtype)
    buf = gm.alloc(dt.itemsize * distinct)
    words = buf.data.view(dt)
    words[:] = np.array(init_vals, dtype=dt)
    addrs = np.uint64(buf.base) + np.array(slots, dtype=np.uint64) * np.uint64(dt.itemsize)
    exp_old, exp_mem = run_model(op, kind, dt, {s: words[s] for s in range(distinct)},
                                 slots, vals, cmps)
    old = gm.atomic(op, addrs, np.array(vals, dtype=dt), atomic_dtype or dt,
                    None if cmps is None else np.array(cmps, dtype=dt))
    assert old.dtype == dt
    np.testing.assert_array_equal(old.view(f"u{dt.itemsize}"),
                                  np.array(exp_old, dtype=dt).view(f"u{dt.itemsize}"))
    np.testing.assert_array_equal(words.view(f"u{dt.itemsize}"),
                                  np.array([exp_mem[s] for s in range(distinct)], dtype=dt)
                                  .view(f"u{dt.itemsize}"))
    return gm, buf, addrs


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(INT_CASES), lane_layout(), st.data())
def test_integer_atomics_match_sequential_model(case, layout, data):
    op, dtype = case
    n, distinct, slots = layout
    if op in ("inc", "dec"):
        bound = st.sampled_from([0, 1, 2, 5, 0xFFFFFFFF]) | st.integers(0, 10)
        init = data.draw(st.lists(st.integers(0, 12) | st.just(0xFFFFFFFF),
                                  min_size=distinct, max_size=distinct))
        uniform = data.draw(st.booleans())
        if uniform:
            b = data.draw(bound)
            vals = [b] * n
        else:
            vals = data.draw(st.lists(bound, min_size=n, max_size=n))
    else:
        init = data.draw(st.lists(int_values(dtype), min_size=distinct, max_size=distinct))
        small = data.draw(st.booleans())
        vstrat = st.integers(0, 3) if small else int_values(dtype)
        vals = data.draw(st.lists(vstrat, min_size=n, max_size=n))
    cmps = None
    if op == "cas":
        cmps = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        init = [x % 4 for x in init]
        vals = [v % 4 for v in vals]
    check(op, dtype, "int", slots, distinct, init, vals, cmps)


def float_values(dtype):
    width = np.dtype(dtype).itemsize * 8
    return st.floats(width=width, allow_nan=False, allow_infinity=False,
                     min_value=-1024.0 if width == 16 else -2.0**100,
                     max_value=1024.0 if width == 16 else 2.0**100)


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(FLOAT_CASES), lane_layout(), st.data())
def test_float_atomics_match_sequential_model(case, layout, data):
    op, dtype = case
    n, distinct, slots = layout
    init = data.draw(st.lists(float_values(dtype), min_size=distinct, max_size=distinct))
    vals = data.draw(st.lists(float_values(dtype) | st.sampled_from([0.1, 1e-3, 3.0, -0.0]),
                              min_size=n, max_size=n))
    check(op, dtype, "float", slots, distinct, init, vals, None)


@settings(max_examples=30, deadline=None)
@given(lane_layout(), st.data())
def test_bf16_add_matches_sequential_model(layout, data):
    n, distinct, slots = layout
    bits = st.integers(0, 0xFFFF).filter(lambda b: (b & 0x7F80) != 0x7F80)  # no inf/nan
    small = st.sampled_from([0x3F80, 0x3DCD, 0xBF00, 0x4040, 0x0000, 0x8000])
    init = data.draw(st.lists(small, min_size=distinct, max_size=distinct))
    vals = data.draw(st.lists(small | bits, min_size=n, max_size=n))
    check("add", np.uint16, "bf16", slots, distinct, init, vals, None, atomic_dtype="bf16")


def test_f32_add_flushes_subnormals_like_ptx():
    gm = GlobalMemory()
    buf = gm.alloc(4)
    sub = np.float32(F32_TINY) / np.float32(4)
    old = gm.atomic("add", np.full(3, buf.base, dtype=np.uint64), np.array([sub, 1.0, sub], np.float32),
                    np.float32)
    np.testing.assert_array_equal(old, np.array([0, 0, 1], dtype=np.float32))
    gm2 = GlobalMemory()
    b2 = gm2.alloc(4)
    gm2.atomic("add", np.array([b2.base]), np.array([sub], np.float32), np.float32, ftz=False)
    assert b2.data.view(np.float32)[0] == sub


def test_float_add_large_group_is_a_sequential_sum():
    gm = GlobalMemory()
    buf = gm.alloc(8)
    vals = np.array([1e8] + [1.0] * 999, dtype=np.float32)  # 1e8 + 1 rounds back to 1e8
    old = gm.atomic("add", np.full(1000, buf.base, dtype=np.uint64), vals, np.float32)
    assert buf.data.view(np.float32)[0] == np.float32(1e8)
    assert old[0] == 0 and old[1] == np.float32(1e8)


def test_f16x2_add_adds_each_half():
    gm = GlobalMemory()
    buf = gm.alloc(4)
    one_two = np.array([1.0, 2.0], dtype=np.float16).view(np.uint32)
    addrs = np.full(40, buf.base, dtype=np.uint64)
    gm.atomic("add", addrs, np.repeat(one_two, 40), "f16x2")
    np.testing.assert_array_equal(buf.data.view(np.float16), np.array([40.0, 80.0], np.float16))


def test_cas_spin_lock_pattern_only_first_lane_wins():
    gm = GlobalMemory()
    buf = gm.alloc(4)
    n = 5000
    old = gm.atomic("cas", np.full(n, buf.base, dtype=np.uint64), np.ones(n, np.uint32),
                    np.uint32, compare=np.zeros(n, np.uint32))
    assert old[0] == 0 and (old[1:] == 1).all()


def test_reduce_matches_atomic_effect():
    rng = np.random.default_rng(3)
    for op, dt in (("add", np.uint32), ("add", np.float32), ("add", np.float64), ("min", np.int32),
                   ("max", np.uint64), ("xor", np.uint32), ("inc", np.uint32)):
        g1, g2 = GlobalMemory(), GlobalMemory()
        b1, b2 = g1.alloc(64), g2.alloc(64)
        slots = rng.integers(0, 64 // np.dtype(dt).itemsize, 3000)
        vals = (rng.integers(1, 100, 3000) if np.dtype(dt).kind != "f"
                else rng.standard_normal(3000)).astype(dt)
        a1 = np.uint64(b1.base) + slots.astype(np.uint64) * np.uint64(np.dtype(dt).itemsize)
        a2 = a1 - np.uint64(b1.base) + np.uint64(b2.base)
        g1.atomic(op, a1, vals, dt)
        g2.reduce(op, a2, vals, dt)
        np.testing.assert_array_equal(b1.data, b2.data)


def test_atomics_are_checked():
    gm = GlobalMemory()
    buf = gm.alloc(16)
    const = gm.alloc(16, AllocationKind.MODULE_CONST, readonly=True, label="c")
    ro = gm.alloc(16, readonly=True, label="read-only")
    with pytest.raises(AccessFault) as e:
        gm.atomic("add", np.array([buf.base, buf.base + 2]), 1, np.uint32)
    assert e.value.kind is CUDBGException.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS and e.value.lane == 1
    with pytest.raises(AccessFault) as e:
        gm.atomic("add", np.array([buf.base + 16]), 1, np.uint32)
    assert e.value.message.startswith("Invalid __global__ atomic of size 4 bytes")
    with pytest.raises(AccessFault) as e:
        gm.atomic("add", np.array([const.base]), 1, np.uint32)
    assert e.value.kind is CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_ADDRESS_SPACE
    with pytest.raises(AccessFault) as e:
        gm.reduce("add", np.array([ro.base]), 1, np.uint32)
    assert "write to read-only" in e.value.message
    assert (buf.data == 0).all()


def test_bad_op_and_type_combinations_are_refused():
    gm = GlobalMemory()
    buf = gm.alloc(16)
    a = np.array([buf.base])
    with pytest.raises(ValueError, match="unknown atomic operation"):
        gm.atomic("mul", a, 1, np.uint32)
    with pytest.raises(TypeError, match="u32 only"):
        gm.atomic("inc", a, 1, np.uint64)
    with pytest.raises(TypeError, match="not defined for f32"):
        gm.atomic("xor", a, 1, np.float32)
    with pytest.raises(ValueError, match="compare"):
        gm.atomic("cas", a, 1, np.uint32)


def test_flushing_float_add_returns_the_unflushed_old_value_to_the_first_lane():
    """Regression (found by the property test above): with a subnormal in
    memory and a large colliding group, the per-group accumulate path
    returned the flushed value as the first lane's old value."""
    gm = GlobalMemory()
    a = gm.alloc(4)
    sub = np.array([3.0433400048206377e-41], dtype=np.float32)
    gm.write(a.base, sub)
    addrs = np.full(33, a.base, dtype=np.uint64)
    old = gm.atomic("add", addrs, np.zeros(33, dtype=np.float32), np.float32)
    assert old.view(np.uint32)[0] == sub.view(np.uint32)[0]
    assert (old.view(np.uint32)[1:] == 0).all()
    assert gm.read(a.base, 4).view(np.uint32)[0] == 0
