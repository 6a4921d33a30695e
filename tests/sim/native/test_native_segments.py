"""The native engine's framework on real kernels: results, fault reports
and the cases that make thread-by-thread execution delicate (a failed
check mid-selection, registers a segment reads and writes, guarded
stores, last-writer-wins stores)."""
from __future__ import annotations

import numpy as np
import pytest

from engines_pair import Out, Ptr, engine_choice, native_segments, run, run_both

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"

SAXPY = HEAD + """
.visible .entry saxpy(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)
{
    .reg .pred %p<2>; .reg .b32 %r<6>; .reg .f32 %f<5>; .reg .b64 %rd<8>;
    ld.param.u32 %r2, [n];
    ld.param.f32 %f1, [a];
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5;
    setp.ge.s32 %p1, %r1, %r2;
    @%p1 bra DONE;
    cvt.s64.s32 %rd5, %r1;
    shl.b64 %rd5, %rd5, 2;
    add.s64 %rd6, %rd1, %rd5;
    ld.global.f32 %f2, [%rd6];
    add.s64 %rd7, %rd2, %rd5;
    ld.global.f32 %f3, [%rd7];
    fma.rn.f32 %f4, %f2, %f1, %f3;
    st.global.f32 [%rd7], %f4;
DONE:
    ret;
}
"""


def test_saxpy_matches_the_interpreter():
    n = 1000
    x = np.linspace(-3, 7, n, dtype=np.float32)
    y = np.cos(np.arange(n, dtype=np.float32))
    ref, got = run_both(SAXPY, "saxpy", (4,), (256,), [n, 1.5, x, y])
    assert np.array_equal(got[3], np.float32(1.5) * x + y) or np.allclose(got[3], 1.5 * x + y)


def test_an_out_of_bounds_load_reports_what_the_interpreter_reports():
    n = 300
    x = np.ones(256, dtype=np.float32)          # 44 elements short
    y = np.zeros(n, dtype=np.float32)
    ref, got = run_both(SAXPY, "saxpy", (2,), (256,), [n, 2.0, x, y], expect_fault=True)
    assert got.fault is not None and "global" in str(got.fault).lower()


def test_a_wild_pointer_faults_the_same_way():
    run_both(SAXPY, "saxpy", (1,), (64,), [64, 2.0, Ptr(0x10), Out(64)], expect_fault=True)


# a loop whose counter and accumulator are live-in registers the loop body
# writes, with a load that faults on the last iteration for some threads
LOOP = HEAD + """
.visible .entry sums(.param .u64 src, .param .u64 dst, .param .u32 count)
{
    .reg .pred %p<3>; .reg .b32 %r<8>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    ld.param.u32 %r5, [count];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
LOOP:
    add.u32 %r4, %r1, %r2;
    cvt.u64.u32 %rd3, %r4;
    add.s64 %rd3, %rd3, %rd3;
    add.s64 %rd3, %rd3, %rd3;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r6, [%rd4];
    add.u32 %r3, %r3, %r6;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, %r5;
    @%p1 bra LOOP;
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd2, %rd5;
    st.global.u32 [%rd6], %r3;
    ret;
}
"""


def test_live_in_registers_survive_a_failed_check():
    from gpudbg.sim.native.segments import plan_segments
    src = np.arange(100, dtype=np.uint32)
    with engine_choice("native"):
        r = run(LOOP, "sums", (1,), (64,), [src, Out(64, np.uint32), 8])
    plans, _, _ = plan_segments(r.module.program)
    assert any(p.scratch_regs and p.can_fail for p in plans)   # %r2, %r3 go through scratch
    assert r.module.program.native_regions == 1                # the whole loop runs natively
    # 64 threads x 8 iterations reach index 70 < 100: fine; 40 iterations reach 103: fault
    run_both(LOOP, "sums", (1,), (64,), [src, Out(64, np.uint32), 8])
    ref, got = run_both(LOOP, "sums", (1,), (64,), [src, Out(64, np.uint32), 40], expect_fault=True)
    assert got.fault is not None


GUARDED = HEAD + """
.visible .entry guarded(.param .u64 dst)
{
    .reg .pred %p<3>; .reg .b32 %r<8>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [dst];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 3;
    setp.eq.u32 %p1, %r2, 0;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    @%p1 st.global.u32 [%rd3], %r1;
    @!%p1 mov.u32 %r1, 7;
    shr.u32 %r3, %r1, 2;
    mul.wide.u32 %rd4, %r3, 4;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd5, 64;
    st.global.u32 [%rd6], %r1;
    ret;
}
"""


def test_guarded_stores_and_last_writer_wins():
    ref, got = run_both(GUARDED, "guarded", (1,), (64,), [Out(64, np.uint32)])
    # threads 0,4,...,60 store their tid at index 0: the highest slot wins as in the interpreter
    assert got[0][0] == 60


def test_the_interp_choice_compiles_nothing():
    with engine_choice("interp"):
        r = run(SAXPY, "saxpy", (1,), (32,), [32, 1.0, np.ones(32, np.float32), Out(32)])
    assert native_segments(r) == 0


@pytest.mark.parametrize("bad", ["fast", "llvm", "1"])
def test_a_bad_engine_name_is_refused_with_the_variable_named(bad):
    from gpudbg.sim.native.engine import EngineError, chosen
    with engine_choice(bad), pytest.raises(EngineError, match="GPUDBG_ENGINE"):
        chosen()


def test_a_region_runs_each_thread_to_its_own_loop_exit():
    # threads run different trip counts (count + tid % 5): they leave the
    # region at different iterations and reconverge after it
    DIVERGENT = LOOP.replace("setp.lt.u32 %p1, %r2, %r5;", "and.b32 %r7, %r1, 3;\n    add.u32 %r7, %r7, %r5;\n"
                             "    setp.lt.u32 %p1, %r2, %r7;")
    src = np.arange(200, dtype=np.uint32) * 3
    ref, got = run_both(DIVERGENT, "sums", (2,), (64,), [src, Out(128, np.uint32), 9])
    assert got.module.program.native_regions == 1
    assert got.stats.thread_instructions == ref.stats.thread_instructions


def test_a_region_pauses_threads_past_its_work_cap_and_resumes_them(monkeypatch):
    from gpudbg.sim.native.engine import NativeRegion
    monkeypatch.setattr(NativeRegion, "CALL_WORK", 32 * 70)   # 70 instructions per thread per call
    src = np.arange(100, dtype=np.uint32)
    ref, got = run_both(LOOP, "sums", (1,), (32,), [src, Out(32, np.uint32), 30])
    assert got.stats.thread_instructions == ref.stats.thread_instructions
