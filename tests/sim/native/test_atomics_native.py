"""Native atom/red against the interpreter: every operation and type the
native lowering takes, on global, shared and generic addresses, with
threads colliding on a few words (the old values each thread sees must
follow the interpreter's ascending-lane serialization), guarded atomics,
reductions, and fault reports (out of bounds, misaligned, local memory
through a generic address, read-only memory)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines_pair import Out, Ptr, run_both
from native_cover import assert_native, assert_ran, native_calls

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
N = 64                      # threads: two warps

_REG = {"f16": "b16", "u16": "b16", "b16": "b16", "u32": "b32", "s32": "b32", "b32": "b32", "u64": "b64",
        "s64": "b64", "b64": "b64", "f32": "f32", "f64": "f64"}
_NP = {"f16": np.float16, "u16": np.uint16, "b16": np.uint16, "u32": np.uint32, "s32": np.int32, "b32": np.uint32,
       "u64": np.uint64, "s64": np.int64, "b64": np.uint64, "f32": np.float32, "f64": np.float64}


def kernel(op: str, ty: str, space: str, red: bool = False, guarded: bool = False) -> str:
    """Thread t applies op with vals[t] (cas: compare cmps[t]) to word
    (t & mask) of `mem` (copied into shared memory and back for .shared),
    and stores the old value it saw to olds[t]."""
    size = np.dtype(_NP[ty]).itemsize
    form = "add.noftz" if (op, ty) == ("add", "f16") else op
    inst = f"{'red' if red else 'atom'}{'' if space == 'generic' else '.' + space}.{form}.{ty}"
    dst = "" if red else "%v3, "
    srcs = "%v1, %v2" if op == "cas" else "%v1"
    guard = "@%p1 " if guarded else ""
    shared_in = shared_out = ""
    addr = "%rd6"
    if space == "shared":
        shared_in = f"""
    mov.u64 %rd11, sm;
    mul.wide.u32 %rd12, %r1, {size};
    add.s64 %rd13, %rd11, %rd12;
    add.s64 %rd14, %rd1, %rd12;
    ld.global.{_REG[ty]} %v0, [%rd14];
    st.shared.{_REG[ty]} [%rd13], %v0;
    bar.sync 0;
    add.s64 %rd6, %rd11, %rd5;"""
        shared_out = f"""
    bar.sync 0;
    ld.shared.{_REG[ty]} %v0, [%rd13];
    st.global.{_REG[ty]} [%rd14], %v0;"""
    return HEAD + f"""
.visible .entry at(.param .u64 mem, .param .u64 vals, .param .u64 cmps, .param .u64 olds,
                   .param .u32 mask, .param .u64 skew)
{{
    .shared .align 8 .b8 sm[{size * N}];
    .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<16>; .reg .{_REG[ty]} %v<4>;
    ld.param.u64 %rd1, [mem];
    ld.param.u64 %rd2, [vals];
    ld.param.u64 %rd3, [cmps];
    ld.param.u64 %rd4, [olds];
    ld.param.u32 %r2, [mask];
    ld.param.u64 %rd15, [skew];
    mov.u32 %r1, %tid.x;
    and.b32 %r3, %r1, %r2;
    mul.wide.u32 %rd5, %r3, {size};
    add.s64 %rd5, %rd5, %rd15;
    add.s64 %rd6, %rd1, %rd5;{shared_in}
    mul.wide.u32 %rd7, %r1, {size};
    add.s64 %rd8, %rd2, %rd7;
    ld.global.{_REG[ty]} %v1, [%rd8];
    add.s64 %rd9, %rd3, %rd7;
    ld.global.{_REG[ty]} %v2, [%rd9];
    mov.{_REG[ty]} %v3, %v1;
    and.b32 %r4, %r1, 5;
    setp.ne.u32 %p1, %r4, 1;
    {guard}{inst} {dst}[{addr}], {srcs};
    add.s64 %rd10, %rd4, %rd7;
    st.global.{_REG[ty]} [%rd10], %v3;{shared_out}
    ret;
}}
"""


def _ints(ty: str):
    dt = np.dtype(_NP[ty])
    info = np.iinfo(dt)
    edge = [0, 1, 2, info.max, info.min, info.max - 1, -1 if info.min < 0 else info.max // 2]
    return st.one_of(st.sampled_from(edge), st.integers(int(info.min), int(info.max)))


def _f32():
    bits = st.one_of(st.sampled_from([0, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F800000,
                                      0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC01234, 0x7FA00005,
                                      0x7F7FFFFF, 0x3F800000, 0xBF800000]),
                     st.integers(0, 2**32 - 1))
    return bits


def _f16():
    return st.one_of(st.sampled_from([0, 0x8000, 0x0001, 0x83FF, 0x0400, 0x7C00, 0xFC00, 0x7E00,
                                      0x7C01, 0xFE12, 0x7BFF, 0x3C00, 0xBC00, 0x3555]),
                     st.integers(0, 2**16 - 1))


def _f64():
    return st.one_of(st.sampled_from([0, 1 << 63, 1, 0x000FFFFFFFFFFFFF, 0x7FF0000000000000,
                                      0xFFF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001,
                                      0xFFF8000000001234, 0x3FF0000000000000]),
                     st.integers(0, 2**64 - 1))


def _array(values, ty):
    dt = np.dtype(_NP[ty])
    if dt.kind == "f":
        return np.array(values, dtype={2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]).view(dt)
    return np.array(values, dtype=dt)


FORMS = [("add", "u32"), ("add", "s32"), ("add", "u64"), ("add", "s64"),
         ("min", "u32"), ("min", "s32"), ("max", "u64"), ("max", "s64"), ("min", "u16"),
         ("and", "b32"), ("or", "b64"), ("xor", "b32"), ("xor", "s32"),
         ("exch", "b32"), ("exch", "b64"), ("exch", "f32"), ("exch", "b16"),
         ("cas", "b32"), ("cas", "b64"), ("cas", "f32"), ("cas", "b16"),
         ("inc", "u32"), ("dec", "u32"), ("add", "f32"), ("add", "f64"), ("add", "f16"),
         ("exch", "f16"), ("cas", "f64"), ("min", "f32"), ("max", "f32"), ("min", "f64"),
         ("max", "f64")]


def _values(ty):
    if ty == "f16":
        return _f16()
    if ty == "f32":
        return _f32()
    if ty == "f64":
        return _f64()
    return _ints(ty)


def _run(op, ty, space, data, mask, red=False, guarded=False, skew=0, expect_fault=False,
         mem=None):
    init, vals, cmps = data
    mem = _array(init, ty) if mem is None else mem
    ref, got = run_both(kernel(op, ty, space, red, guarded), "at", (1,), (N,),
                        [mem, _array(vals, ty), _array(cmps, ty), Out(N, _NP[ty]), mask, skew],
                        expect_fault=expect_fault)
    return ref, got


def _data(ty):
    v = _values(ty)
    return st.tuples(st.lists(v, min_size=N, max_size=N), st.lists(v, min_size=N, max_size=N),
                     st.lists(v, min_size=N, max_size=N))


@pytest.mark.parametrize("op,ty", FORMS)
def test_global_atomics_match_the_interpreter(op, ty):
    @SETTINGS
    @given(data=_data(ty), mask=st.sampled_from([0, 1, 3, 7, 63]))
    def check(data, mask):
        init, vals, cmps = data
        if op == "cas":       # make some compares succeed: compare with what may be there
            cmps = [init[i & mask] if i % 3 else c for i, c in enumerate(cmps)]
        ref, got = _run(op, ty, "global", (init, vals, cmps), mask)
        assert_native(got, f"atom.global.{op}", f".{ty}")
    check()


@pytest.mark.parametrize("op,ty", [("add", "u32"), ("cas", "b32"), ("inc", "u32"), ("add", "f32"),
                                   ("max", "s32"), ("exch", "b64")])
@pytest.mark.parametrize("space", ["shared", "generic"])
def test_shared_and_generic_atomics_match_the_interpreter(op, ty, space):
    @SETTINGS
    @given(data=_data(ty), mask=st.sampled_from([0, 3, 63]))
    def check(data, mask):
        init, vals, cmps = data
        if op == "cas":
            cmps = [init[i & mask] if i % 2 else c for i, c in enumerate(cmps)]
        with native_calls() as calls:
            ref, got = _run(op, ty, space, (init, vals, cmps), mask)
        sp = "" if space == "generic" else "." + space
        if ty != "f32" or not np.isnan(_array(vals, ty)).any():
            assert_ran(calls, got, f"atom{sp}.{op}.{ty}")
    check()


@pytest.mark.parametrize("op,ty", [("add", "u32"), ("add", "f32"), ("min", "s64"), ("inc", "u32")])
def test_reductions_and_guarded_atomics(op, ty):
    @SETTINGS
    @given(data=_data(ty), mask=st.sampled_from([0, 1, 63]))
    def check(data, mask):
        nan = ty == "f32" and np.isnan(_array(data[1], ty)).any()
        with native_calls() as calls:
            ref, got = _run(op, ty, "global", data, mask, red=True)
            ref, got2 = _run(op, ty, "global", data, mask, guarded=True)
        if not nan:
            assert_ran(calls, got, f"red.global.{op}.{ty}")
            assert_ran(calls, got2, f"@%p1 atom.global.{op}.{ty}")
    check()


def test_inc_and_dec_wrap_at_their_bound():
    init = [0, 5, 6, 7, 2**32 - 1] + [3] * (N - 5)
    bound = [5] * N
    for op in ("inc", "dec"):
        for mask in (0, 1, 3):
            with native_calls() as calls:
                ref, got = _run(op, "u32", "global", (init, bound, bound), mask)
            assert_ran(calls, got, f"atom.global.{op}.u32")


def test_float_add_flushes_subnormals_and_quiets_a_nan_in_memory():
    sub, nan_a, big = 0x00000010, 0x7FA00001, 0x7F7FFFFF
    init = [sub, nan_a, 0x3F800000, 0x80000001] * (N // 4)
    vals = [sub, 0x3F800000, big, 0x00400000] * (N // 4)     # numbers: this runs natively
    for mask in (0, 3, 63):
        with native_calls() as calls:
            ref, got = _run("add", "f32", "global", (init, vals, vals), mask)
        assert_ran(calls, got, "atom.global.add.f32")
        # no collision: word 0 got subnormal + subnormal, flushed to +0 (old value: the unflushed word)
        assert got[3].view(np.uint32)[0] == sub
    assert got[0].view(np.uint32)[1] == nan_a | 0x00400000
    assert got[0].view(np.uint32)[0] == 0


@pytest.mark.parametrize("space", ["global", "shared", "generic"])
@pytest.mark.parametrize("skew,what", [(2, "misaligned"), (4 * N, "out of bounds"),
                                       (1 << 40, "far away")])
def test_atomic_faults_are_the_interpreters(space, skew, what):
    data = ([1] * N, [2] * N, [3] * N)
    ref, got = _run("add", "u32", space, data, 63, skew=skew, expect_fault=True)
    assert got.fault is not None
    assert_native(got, "atom")


def test_a_generic_atomic_on_local_memory_or_read_only_memory_faults():
    from gpudbg.sim.memory.spaces import LOCAL_WINDOW_BASE
    prog = HEAD + """
.visible .entry loc(.param .u64 p, .param .u64 dst)
{
    .local .align 4 .b8 buf[16];
    .reg .b32 %r<4>; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [dst];
    mov.u32 %r1, %tid.x;
    st.local.u32 [buf], %r1;
    atom.add.u32 %r2, [%rd1], 1;
    st.global.u32 [%rd2], %r2;
    ret;
}
"""
    ref, got = run_both(prog, "loc", (1,), (32,), [Ptr(LOCAL_WINDOW_BASE), Out(4, np.uint32)],
                        expect_fault=True)
    assert "local memory, which does not allow atomic" in str(got.fault)
    prog_ro = HEAD + """
.visible .entry ro(.param .u64 dst)
{
    .reg .b32 %r<4>; .reg .b64 %rd<6>;
    mov.u64 %rd1, dst;
    cvta.param.u64 %rd2, %rd1;
    atom.add.u32 %r2, [%rd2], 1;
    ret;
}
"""
    ref, got = run_both(prog_ro, "ro", (1,), (32,), [Out(4, np.uint32)], expect_fault=True)
    assert "read-only" in str(got.fault)
    assert_native(got, "atom.add.u32")


@SETTINGS
@given(data=st.lists(st.integers(0, 2**16 - 1).filter(lambda h: (h & 0x7C00) != 0x7C00 or h & 0x3FF == 0),
                     min_size=3 * N, max_size=3 * N),
       mask=st.sampled_from([0, 1, 63]))
def test_half_add_without_nan_operands_runs_natively(data, mask):
    """Finite, infinite and subnormal halves: inf + -inf makes a NaN in
    memory, which later adds must quiet and keep."""
    init, vals = data[:N], data[N:2 * N]
    with native_calls() as calls:
        ref, got = _run("add", "f16", "global", (init, vals, vals), mask)
    assert_ran(calls, got, "atom.global.add.noftz.f16")


@pytest.mark.parametrize("op,ty", [("min", "f32"), ("max", "f32"), ("min", "f64"), ("max", "f64")])
def test_float_min_max_order_signed_zeros_and_hand_back_nans(op, ty):
    @SETTINGS
    @given(init=st.lists(_values(ty), min_size=N, max_size=N),
           vals=st.lists(st.sampled_from([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, 1e-310, -1e-45]),
                         min_size=N, max_size=N),
           mask=st.sampled_from([0, 1, 63]))
    def check(init, vals, mask):
        dt = np.dtype(_NP[ty])
        bits = np.array(vals, dtype=dt).view({4: np.uint32, 8: np.uint64}[dt.itemsize]).tolist()
        with native_calls() as calls:
            ref, got = _run(op, ty, "global", (init, bits, bits), mask)
        words = np.array(init, dtype={4: np.uint32, 8: np.uint64}[dt.itemsize]).view(dt)
        if not np.isnan(words[:mask + 1]).any():      # a NaN in memory goes to the interpreter
            assert_ran(calls, got, f"atom.global.{op}.{ty}")
    check()


@pytest.mark.parametrize("nan", [0x7F800001, 0x7FC00000, 0xFFC00123])
def test_float_min_with_a_nan_in_memory_is_the_interpreters(nan):
    """numpy's fmin quiets a signaling NaN but skips a quiet one; either
    way the native first pass hands the selection back."""
    init = [nan] + [0x3F800000] * (N - 1)
    zeros = [0] * N
    for mask in (0, 1):
        _run("min", "f32", "global", (init, zeros, zeros), mask)
