"""Native ld/st in every state space against the interpreter: local
(symbols relative to the stack pointer, register offsets), shared,
generic (each window), global with vectors, sub-word and predicate types
and the modifiers the interpreter ignores, const, kernel parameters
through a register, `.func` parameters, symbol addresses as values; and,
per space, an out-of-bounds and a misaligned access inside a native
segment reported exactly as the interpreter reports it."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines_pair import Out, Ptr, engine_choice, run, run_both
from native_cover import assert_native, assert_ran, native_calls

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# byte offsets added to a valid address: in bounds, misaligned, just past the end, far away, wrapping
OFFSETS = st.one_of(st.sampled_from([0, 4, 8, 60, 2, 1, 3, 62, 64, 68, 4096, 1 << 32, 1 << 40,
                                     (1 << 64) - 4, (1 << 63)]),
                    st.integers(0, 80))

LOCAL = HEAD + """
.visible .entry loc(.param .u64 dst, .param .u64 k)
{
    .local .align 8 .b8 buf[64];
    .reg .b32 %r<8>; .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd5, [k];
    mov.u32 %r1, %tid.x;
    st.local.u32 [buf], %r1;
    add.u32 %r2, %r1, 100;
    st.local.u32 [buf+4], %r2;
    mov.u64 %rd2, buf;
    cvta.local.u64 %rd3, %rd2;
    ld.u32 %r3, [%rd3+4];
    ld.local.u32 %r4, [%rd2];
    add.s64 %rd6, %rd2, %rd5;
    ld.local.u32 %r5, [%rd6];
    add.u32 %r3, %r3, %r4;
    add.u32 %r3, %r3, %r5;
    mul.wide.u32 %rd7, %r1, 4;
    add.s64 %rd8, %rd1, %rd7;
    st.global.u32 [%rd8], %r3;
    add.s64 %rd9, %rd3, %rd5;
    st.u32 [%rd9], %r1;
    ld.local.u32 %r6, [buf];
    st.global.u32 [%rd8+256], %r6;
    ret;
}
"""


@SETTINGS
@given(k=OFFSETS)
def test_local_memory_through_symbols_registers_and_generic_addresses(k):
    ref, got = run_both(LOCAL, "loc", (2,), (64,), [Out(128, np.uint32), k],
                        expect_fault=not (k % 4 == 0 and k <= 60))
    assert_native(got, "st.local.u32 [buf]", "ld.local.u32 %r5", "ld.u32 %r3", "mov.u64 %rd2, buf")


def test_local_results_are_each_threads_own():
    with native_calls() as calls:
        ref, got = run_both(LOCAL, "loc", (1,), (32,), [Out(128, np.uint32), 4])
    assert_ran(calls, got, "st.local.u32 [buf]", "ld.local.u32 %r5", "ld.u32 %r3", "st.u32 [%rd9]")
    t = np.arange(32, dtype=np.uint32)
    assert np.array_equal(got[0][:32], (t + 100) + t + (t + 100))


SHARED = HEAD + """
.visible .entry sh(.param .u64 dst, .param .u64 k)
{
    .shared .align 8 .b8 tile[256];
    .reg .b32 %r<8>; .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd5, [k];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    mov.u64 %rd3, tile;
    add.s64 %rd4, %rd3, %rd2;
    st.shared.u32 [%rd4], %r1;
    cvta.shared.u64 %rd6, %rd4;
    ld.u32 %r2, [%rd6];
    ld.shared.u32 %r3, [tile+4];
    add.s64 %rd7, %rd4, %rd5;
    ld.shared::cta.u32 %r4, [%rd7];
    add.u32 %r2, %r2, %r3;
    add.u32 %r2, %r2, %r4;
    add.s64 %rd8, %rd1, %rd2;
    st.global.u32 [%rd8], %r2;
    add.s64 %rd9, %rd6, %rd5;
    st.u32 [%rd9], %r2;
    ret;
}
"""


@SETTINGS
@given(k=OFFSETS)
def test_shared_memory_through_symbols_registers_and_generic_addresses(k):
    ok = k % 4 == 0 and k + 4 * 63 + 4 <= 256
    with native_calls() as calls:
        ref, got = run_both(SHARED, "sh", (2,), (64,), [Out(128, np.uint32), k], expect_fault=not ok)
    assert_native(got, "st.shared.u32", "ld.u32 %r2", "ld.shared::cta.u32", "mov.u64 %rd3, tile")
    if ok:
        assert_ran(calls, got, "st.shared.u32", "ld.u32 %r2", "ld.shared::cta.u32", "st.u32 [%rd9]")


GLOBAL_FORMS = HEAD + """
.global .align 8 .u32 table[4] = {11, 22, 33, 44};
.const .align 8 .u32 konst[4] = {5, 6, 7, 8};

.visible .entry forms(.param .u64 src, .param .u64 dst, .param .u64 k)
{
    .reg .pred %p<4>; .reg .b16 %h<4>; .reg .b32 %r<24>; .reg .b64 %rd<16>; .reg .f64 %fd<4>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    ld.param.u64 %rd15, [k];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 32;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.nc.v4.u32 {%r2, %r3, %r4, %r5}, [%rd4];
    ld.global.v2.u32 {%r6, _}, [%rd4+16];
    ldu.global.u32 %r7, [%rd4+20];
    ld.volatile.global.s8 %r8, [%rd4+3];
    ld.relaxed.gpu.global.u16 %r9, [%rd4+6];
    ld.global.b8 %h1, [%rd4+7];
    ld.global.s16 %rd6, [%rd4+10];
    ld.global.f64 %fd1, [%rd4+24];
    ld.global.u8 %p1, [%rd4+1];
    mov.u64 %rd7, table;
    ld.global.u32 %r10, [%rd7+8];
    ld.const.u32 %r11, [konst+12];
    mov.u64 %rd8, konst;
    ld.const.u32 %r12, [%rd8+4];
    add.u32 %r2, %r2, %r3;
    add.u32 %r2, %r2, %r4;
    add.u32 %r2, %r2, %r5;
    add.u32 %r2, %r2, %r6;
    add.u32 %r2, %r2, %r7;
    add.u32 %r2, %r2, %r8;
    add.u32 %r2, %r2, %r9;
    add.u32 %r2, %r2, %r10;
    add.u32 %r2, %r2, %r11;
    add.u32 %r2, %r2, %r12;
    cvt.u32.u16 %r13, %h1;
    add.u32 %r2, %r2, %r13;
    cvt.u32.u64 %r14, %rd6;
    add.u32 %r2, %r2, %r14;
    selp.u32 %r15, 1000, 0, %p1;
    add.u32 %r2, %r2, %r15;
    st.global.v4.u32 [%rd5], {%r2, %r8, %r9, %r14};
    st.global.f64 [%rd5+16], %fd1;
    st.global.u8 [%rd5+24], %r2;
    st.global.u16 [%rd5+26], %r8;
    st.global.pred [%rd5+28], %p1;
    add.s64 %rd9, %rd5, %rd15;
    st.global.v2.u32 [%rd9], {%r13, %r14};
    ret;
}
"""


@SETTINGS
@given(data=st.binary(min_size=32 * 64, max_size=32 * 64), k=OFFSETS)
def test_global_vectors_widths_predicates_and_ignored_modifiers(data, k):
    src = np.frombuffer(data, dtype=np.uint8).copy()
    ok = k % 8 == 0 and k + 8 <= 32
    with native_calls() as calls:
        ref, got = run_both(GLOBAL_FORMS, "forms", (1,), (64,), [src, Out(32 * 64, np.uint8), k],
                            expect_fault=not ok)
    if ok:
        assert_ran(calls, got, "ld.global.nc.v4.u32", "ld.global.u8 %p1", "ld.const.u32 %r12",
                   "st.global.pred", "st.global.v2.u32 [%rd9]")
    assert_native(got, "ld.global.nc.v4.u32", "ldu.global.u32", "ld.volatile.global.s8",
                  "ld.relaxed.gpu.global.u16", "ld.global.u8 %p1", "ld.const.u32 %r11",
                  "ld.global.u32 %r10, [%rd7+8]", "st.global.pred")


V8 = HEAD.replace("sm_80", "sm_100").replace("8.0", "8.8") + """
.visible .entry v8(.param .u64 src, .param .u64 dst)
{
    .reg .b32 %r<12>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 32;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.v8.u32 {%r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9}, [%rd4];
    st.global.v8.u32 [%rd5], {%r9, %r8, %r7, %r6, %r5, %r4, %r3, %r2};
    ret;
}
"""


def test_eight_element_vectors():
    src = np.arange(8 * 64, dtype=np.uint32)
    with native_calls() as calls:
        ref, got = run_both(V8, "v8", (1,), (64,), [src, Out(8 * 64, np.uint32)])
    assert_ran(calls, got, "ld.global.v8.u32", "st.global.v8.u32")
    assert np.array_equal(got[1].reshape(64, 8), src.reshape(64, 8)[:, ::-1])
    assert_native(got, "ld.global.v8.u32", "st.global.v8.u32")


PARAMS = HEAD + """
.visible .func (.param .b32 ret) twice(.param .b32 x, .param .b64 y)
{
    .reg .b32 %r<6>; .reg .b64 %rd<4>;
    ld.param.b32 %r1, [x];
    ld.param.b64 %rd1, [y];
    ld.param.b32 %r3, [y+4];
    cvt.u32.u64 %r4, %rd1;
    add.u32 %r2, %r1, %r1;
    add.u32 %r2, %r2, %r4;
    add.u32 %r2, %r2, %r3;
    st.param.b32 [ret], %r2;
    ret;
}

.visible .entry params(.param .u64 dst, .param .u32 a, .param .u32 b, .param .u64 k)
{
    .reg .b32 %r<8>; .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd9, [k];
    mov.u64 %rd2, a;
    add.s64 %rd3, %rd2, %rd9;
    ld.param.u32 %r1, [%rd3];
    ld.param.u32 %r2, [b];
    mov.u32 %r3, %tid.x;
    add.u32 %r4, %r3, %r1;
    cvt.u64.u32 %rd4, %r2;
    {
    .param .b32 px;
    .param .b64 py;
    .param .b32 pr;
    st.param.b32 [px], %r4;
    st.param.b64 [py], %rd4;
    call.uni (pr), twice, (px, py);
    ld.param.b32 %r5, [pr];
    }
    mul.wide.u32 %rd5, %r3, 4;
    add.s64 %rd6, %rd1, %rd5;
    st.global.u32 [%rd6], %r5;
    ret;
}
"""


@SETTINGS
@given(a=st.integers(0, 2**32 - 1), k=st.sampled_from([0, 4, 8, 12, 13, 17, 20, 21, 1 << 40,
                                                         (1 << 64) - 1]))
def test_kernel_parameters_through_a_register_and_func_parameters(a, k):
    # the kernel's parameters are 24 bytes (dst 8, a 4, b 4, k 8): reading 4 bytes at a+k is fine
    # while 8 + k + 4 <= 24, at any alignment (the interpreter reads parameter bytes where they are)
    ok = (8 + k) % 2**64 + 4 <= 24     # the address wraps like the interpreter's uint64
    with native_calls() as calls:
        ref, got = run_both(PARAMS, "params", (1,), (64,), [Out(64, np.uint32), a, 7, k],
                            expect_fault=not ok)
    if ok:
        assert_ran(calls, got, "ld.param.u32 %r1, [%rd3]", "ld.param.b32 %r1, [x]", "st.param.b32 [ret]")
    assert_native(got, "ld.param.u32 %r1, [%rd3]", "ld.param.b32 %r1, [x]", "ld.param.b32 %r3, [y+4]",
                  "st.param.b32 [ret]", "mov.u64 %rd2, a")


GENERIC = HEAD + """
.visible .entry gen(.param .u64 dst, .param .u64 p)
{
    .reg .b32 %r<4>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd2, [p];
    mov.u32 %r1, %tid.x;
    ld.u32 %r2, [%rd2];
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    st.global.u32 [%rd4], %r2;
    ret;
}
"""


def test_generic_addresses_outside_every_window_and_in_each_window():
    from gpudbg.sim.memory.spaces import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE
    # the kernel declares no shared or local memory: every window is empty
    for p in (0x10, SHARED_WINDOW_BASE, SHARED_WINDOW_BASE + 2, SHARED_WINDOW_BASE + WINDOW_SIZE - 4,
              LOCAL_WINDOW_BASE, LOCAL_WINDOW_BASE + 1, LOCAL_WINDOW_BASE + WINDOW_SIZE, (1 << 64) - 4):
        ref, got = run_both(GENERIC, "gen", (1,), (32,), [Out(32, np.uint32), Ptr(p)],
                            expect_fault=True)
    assert_native(got, "ld.u32 %r2, [%rd2]")


def test_a_generic_store_to_read_only_memory_faults_like_the_interpreter():
    prog = HEAD + """
.visible .entry w(.param .u64 dst)
{
    .reg .b32 %r<4>; .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    mov.u64 %rd1, dst;
    cvta.param.u64 %rd2, %rd1;
    ld.u32 %r2, [%rd2];
    add.u32 %r1, %r1, %r2;
    st.u32 [%rd2], %r1;
    ret;
}
"""
    ref, got = run_both(prog, "w", (1,), (32,), [Out(4, np.uint32)], expect_fault=True)
    assert "read-only" in str(got.fault)
    assert_native(got, "st.u32 [%rd2]")


CLUSTER = HEAD.replace("sm_80", "sm_90") + """
.visible .entry cl(.param .u64 dst) .reqnctapercluster 2, 1, 1
{
    .shared .align 4 .b8 s[128];
    .reg .b32 %r<4>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [dst];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    mov.u64 %rd3, s;
    add.s64 %rd3, %rd3, %rd2;
    st.shared.u32 [%rd3], %r1;
    cvta.shared.u64 %rd4, %rd3;
    ld.u32 %r2, [%rd4];
    add.s64 %rd5, %rd1, %rd2;
    st.global.u32 [%rd5], %r2;
    ret;
}
"""


def test_generic_accesses_of_a_cluster_launch_stay_with_the_interpreter():
    ref, got = run_both(CLUSTER, "cl", (2,), (32,), [Out(32, np.uint32)])
    assert np.array_equal(got[0], np.arange(32, dtype=np.uint32))
    with engine_choice("native"):
        again = run(CLUSTER, "cl", (2,), (32,), [Out(32, np.uint32)])
    assert again.module.program.native_segments > 0


ISSPACE = HEAD + """
.visible .entry isp(.param .u64 addrs, .param .u64 dst)
{
    .reg .pred %p<6>; .reg .b32 %r<8>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [addrs];
    ld.param.u64 %rd2, [dst];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u64 %rd5, [%rd4];
    isspacep.global %p1, %rd5;
    isspacep.shared %p2, %rd5;
    isspacep.local %p3, %rd5;
    isspacep.const %p4, %rd5;
    isspacep.param %p5, %rd5;
    selp.u32 %r2, 1, 0, %p1;
    selp.u32 %r3, 2, 0, %p2;
    selp.u32 %r4, 4, 0, %p3;
    selp.u32 %r5, 8, 0, %p4;
    selp.u32 %r6, 16, 0, %p5;
    or.b32 %r2, %r2, %r3;
    or.b32 %r2, %r2, %r4;
    or.b32 %r2, %r2, %r5;
    or.b32 %r2, %r2, %r6;
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd2, %rd6;
    st.global.u32 [%rd7], %r2;
    ret;
}
"""


@SETTINGS
@given(addrs=st.lists(st.one_of(st.integers(0, 2**64 - 1), st.sampled_from(
    [0, 0x7E00_0000_0000, 0x7E00_FFFF_FFFF, 0x7E01_0000_0000, 0x7DFF_FFFF_FFFF, 0x7F00_0000_0000,
     0x7F00_FFFF_FFFF, 0x7F01_0000_0000, 2**64 - 1])), min_size=32, max_size=32))
def test_isspacep_classifies_like_the_interpreter(addrs):
    with native_calls() as calls:
        ref, got = run_both(ISSPACE, "isp", (1,), (32,), [np.array(addrs, np.uint64), Out(32, np.uint32)])
    assert_ran(calls, got, "isspacep.global", "isspacep.shared", "isspacep.local", "isspacep.param")


CONST = HEAD + """
.const .align 8 .u32 konst[8] = {5, 6, 7, 8, 9, 10, 11, 12};
.visible .entry cst(.param .u64 dst, .param .u64 k)
{
    .reg .b32 %r<4>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd2, [k];
    mov.u32 %r1, %tid.x;
    mov.u64 %rd3, konst;
    add.s64 %rd4, %rd3, %rd2;
    ld.const.u32 %r2, [%rd4];
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd1, %rd5;
    st.global.u32 [%rd6], %r2;
    ret;
}
"""


@SETTINGS
@given(k=OFFSETS)
def test_const_memory_in_bounds_out_of_bounds_and_misaligned(k):
    ok = k % 4 == 0 and k + 4 <= 32
    with native_calls() as calls:
        ref, got = run_both(CONST, "cst", (1,), (32,), [Out(32, np.uint32), k], expect_fault=not ok)
    if ok:
        assert_ran(calls, got, "ld.const.u32")
    else:
        assert_native(got, "ld.const.u32")


CALLEE_LOCALS = HEAD + """
.func (.param .b32 ret) scratch(.param .b32 x, .param .b64 k)
{
    .local .align 4 .b8 buf[16];
    .reg .b32 %r<6>; .reg .b64 %rd<6>;
    ld.param.b32 %r1, [x];
    ld.param.b64 %rd1, [k];
    st.local.u32 [buf+4], %r1;
    mov.u64 %rd2, buf;
    add.s64 %rd3, %rd2, %rd1;
    ld.local.u32 %r2, [%rd3];
    cvt.u32.u64 %r3, %rd2;
    add.u32 %r2, %r2, %r3;
    st.param.b32 [ret], %r2;
    ret;
}

.visible .entry callee_locals(.param .u64 dst, .param .u64 k)
{
    .local .align 8 .b8 mine[24];
    .reg .b32 %r<6>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd5, [k];
    mov.u32 %r1, %tid.x;
    st.local.u32 [mine+20], %r1;
    {
    .param .b32 px;
    .param .b64 pk;
    .param .b32 pr;
    st.param.b32 [px], %r1;
    st.param.b64 [pk], %rd5;
    call.uni (pr), scratch, (px, pk);
    ld.param.b32 %r2, [pr];
    }
    ld.local.u32 %r3, [mine+20];
    add.u32 %r2, %r2, %r3;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}
"""


@pytest.mark.parametrize("k,ok", [(4, True), (0, True), (12, True), (2, False), (4096, False),
                                  (-8 & (2**64 - 1), True), (-4096 & (2**64 - 1), False)])
def test_a_callees_locals_are_relative_to_its_stack_pointer(k, ok):
    """The callee's frame sits above the caller's (sp moves with the call):
    its symbol's value and accesses through it use the thread's sp; just
    below its frame is the caller's, which a thread may read."""
    with native_calls() as calls:
        ref, got = run_both(CALLEE_LOCALS, "callee_locals", (1,), (64,), [Out(64, np.uint32), k],
                            expect_fault=not ok)
    if ok:
        assert_ran(calls, got, "st.local.u32 [buf+4]", "mov.u64 %rd2, buf", "ld.local.u32 %r2, [%rd3]",
                   "ld.local.u32 %r3, [mine+20]")


LOOP_LOADS = HEAD + """
.visible .entry loop_loads(.param .u64 src, .param .u64 dst, .param .u32 n, .param .u64 k)
{
    .local .align 4 .b8 lbuf[32];
    .shared .align 4 .b8 sbuf[512];
    .reg .pred %p<3>; .reg .b32 %r<12>; .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    ld.param.u32 %r9, [n];
    ld.param.u64 %rd12, [k];
    mov.u32 %r1, %tid.x;
    st.local.u32 [lbuf+8], %r1;
    mul.wide.u32 %rd3, %r1, 4;
    mov.u64 %rd4, sbuf;
    add.s64 %rd5, %rd4, %rd3;
    st.shared.u32 [%rd5], %r1;
    bar.sync 0;
    mov.u64 %rd6, lbuf;
    cvta.local.u64 %rd7, %rd6;
    cvta.shared.u64 %rd8, %rd4;
    add.s64 %rd13, %rd8, %rd12;
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
LOOP:
    ld.local.u32 %r4, [lbuf+8];
    ld.u32 %r5, [%rd7+8];
    and.b32 %r6, %r2, 127;
    mul.wide.u32 %rd9, %r6, 4;
    add.s64 %rd10, %rd13, %rd9;
    ld.u32 %r7, [%rd10];
    add.s64 %rd11, %rd1, %rd9;
    ld.global.u32 %r8, [%rd11];
    add.u32 %r3, %r3, %r4;
    add.u32 %r3, %r3, %r5;
    add.u32 %r3, %r3, %r7;
    add.u32 %r3, %r3, %r8;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, %r9;
    @%p1 bra LOOP;
    add.s64 %rd14, %rd2, %rd3;
    st.global.u32 [%rd14], %r3;
    ret;
}
"""


@pytest.mark.parametrize("k,ok", [(0, True), (2, False), (4 * 128, False)])
def test_loads_of_every_space_inside_a_native_loop_region(k, ok):
    """A loop that only loads (local, generic local and shared, global) runs
    as a compiled region; an access that fails mid-loop hands the region
    back to the interpreter, which reports it."""
    src = np.arange(128, dtype=np.uint32) * 3
    with native_calls() as calls:
        ref, got = run_both(LOOP_LOADS, "loop_loads", (2,), (128,), [src, Out(128, np.uint32), 40, k],
                            expect_fault=not ok)
    assert_native(got, "ld.local.u32 %r4", "ld.u32 %r5", "ld.u32 %r7", "ld.global.u32 %r8")
    regions = [c.region for c in got.module.program.code if getattr(c, "region", None) is not None]
    assert any(r.start <= c.pc < r.end for r in regions for c in got.module.program.code
               if c.inst.text.startswith("ld.u32 %r7")), "the loop did not become a region"
    if ok:
        assert_ran(calls, got, "ld.local.u32 %r4", "ld.u32 %r5", "ld.u32 %r7", "ld.global.u32 %r8")


FUNCTION_ADDRESS = HEAD + """
.func (.param .b32 r) seven()
{
    st.param.b32 [r], 7;
    ret;
}

.visible .entry fnaddr(.param .u64 dst)
{
    .reg .b32 %r<4>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [dst];
    mov.u32 %r1, %tid.x;
    mov.u64 %rd2, seven;
    add.s64 %rd3, %rd2, 16;
    mul.wide.u32 %rd4, %r1, 8;
    add.s64 %rd5, %rd1, %rd4;
    st.global.u64 [%rd5], %rd3;
    ret;
}
"""


def test_a_functions_address_as_a_value():
    with native_calls() as calls:
        ref, got = run_both(FUNCTION_ADDRESS, "fnaddr", (1,), (32,), [Out(32, np.uint64)])
    assert_ran(calls, got, "mov.u64 %rd2, seven")
    assert got[0][0] == got.module.program.function_address("seven") + 16


# Nine loads from a 62-byte buffer, the ninth its last byte, then a word
# at k: past the first eight, global access sites share caches
# (emit.SegmentEmitter.site_cache), and a cache holds its bound for one
# access size (the end less size - 1), so the word at 60, which ends two
# bytes past the buffer, must not hit the bound the byte left.
SHARED_SITE_SIZES = HEAD + """
.visible .entry sizes(.param .u64 src, .param .u64 dst, .param .u64 k)
{
    .reg .b32 %r<16>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    ld.param.u64 %rd3, [k];
    ld.global.u32 %r1, [%rd1];
    ld.global.u32 %r2, [%rd1+4];
    ld.global.u32 %r3, [%rd1+8];
    ld.global.u32 %r4, [%rd1+12];
    ld.global.u32 %r5, [%rd1+16];
    ld.global.u32 %r6, [%rd1+20];
    ld.global.u32 %r7, [%rd1+24];
    ld.global.u32 %r8, [%rd1+28];
    ld.global.u8 %r9, [%rd1+61];
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r10, [%rd4];
    add.u32 %r1, %r1, %r9;
    add.u32 %r1, %r1, %r10;
    st.global.u32 [%rd2], %r1;
    ret;
}
"""


@pytest.mark.parametrize("k", [52, 56, 60])
def test_shared_global_site_caches_keep_their_bound_per_access_size(k):
    src = np.arange(62, dtype=np.uint8)
    run_both(SHARED_SITE_SIZES, "sizes", (1,), (1,), [src, Out(4, np.uint32), k], expect_fault=k == 60)
