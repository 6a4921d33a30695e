"""If bodies inside native segments (sim/native/if_bodies.py): `@p bra L`
over a short body runs in one native call with the interpreter's
results and the interpreter's count of work, steps and cycles."""
from __future__ import annotations

import numpy as np

from engines_pair import Out, engine_choice, if_plans, run, run_both, same_counts

from gpudbg.sim.native.engine import NativeSegment
from gpudbg.sim.native.segments import SegmentPlan

HEAD = ".version 7.0\n.target sm_70\n.address_size 64\n"

# one level of a shared-memory tree reduction: the body's store is its last instruction
TREE = HEAD + """
.visible .entry tree(.param .u64 out)
{
    .reg .pred %p<4>; .reg .b32 %r<10>; .reg .b64 %rd<6>;
    .shared .align 4 .b8 s[1024];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, s;
    add.u32 %r4, %r3, %r2;
    st.shared.u32 [%r4], %r1;
    bar.sync 0;
    setp.ge.u32 %p1, %r1, 64;
    @%p1 bra SKIP;
    ld.shared.u32 %r5, [%r4+256];
    ld.shared.u32 %r6, [%r4];
    add.u32 %r7, %r5, %r6;
    st.shared.u32 [%r4], %r7;
SKIP:
    bar.sync 0;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.shared.u32 %r8, [%r4];
    st.global.u32 [%rd3], %r8;
    ret;
}
"""

# a bounds check whose body writes a register the code after L reads:
# threads that skip keep the value from before the branch
GUARDED_VALUE = HEAD + """
.visible .entry after(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<3>; .reg .b32 %r<8>; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r5, [n];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 7;
    setp.ge.u32 %p1, %r1, %r5;
    @%p1 bra L;
    add.u32 %r2, %r1, 100;
    mul.lo.u32 %r2, %r2, 3;
L:
    add.u32 %r3, %r2, 1;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    ret;
}
"""


def test_a_tree_level_runs_its_if_body_natively():
    ref, got = run_both(TREE, "tree", (4,), (128,), [Out(128, np.uint32)])   # every block writes the same
    assert [p.if_branches[0][1] - p.if_branches[0][0] for p in if_plans(got)] == [5]
    t = np.arange(128)
    want = np.where(t < 64, 2 * t + 64, t)
    assert got[0].tolist() == want.tolist()
    same_counts(ref, got)


def test_threads_that_skip_keep_their_value_and_the_code_after_l_is_counted():
    for n in (0, 40, 128):       # no thread, some, every thread runs the body
        ref, got = run_both(GUARDED_VALUE, "after", (2,), (128,), [Out(128, np.uint32), n])
        t = np.arange(128)
        assert got[0].tolist() == np.where(t < n, 3 * (t + 100) + 1, 8).tolist()
        same_counts(ref, got)
    plans = if_plans(got)
    assert len(plans) == 1 and plans[0].end > plans[0].if_branches[0][1]    # the segment goes on past L


def test_the_debuggers_variant_converts_it_with_the_interpreters_registers(monkeypatch):
    """GPUDBG_DIFFERENTIAL=full compares every register of the FULL variant
    at exit with the interpreter's (a mismatch raises)."""
    from gpudbg.sim.native import differential
    monkeypatch.setenv(differential.ENV_DIFFERENTIAL, "full")
    monkeypatch.delenv("GPUDBG_ENGINE", raising=False)
    before = differential.stats.get("compared", 0)
    r = run(GUARDED_VALUE, "after", (2,), (64,), [Out(128, np.uint32), 40])
    assert differential.stats.get("compared", 0) == before + 1
    assert r.module.program.native_full_ready and if_plans(r)


def test_an_if_body_runs_only_for_the_whole_wave():
    """A partial step (divergent threads, a spinning warp) leaves the
    branch to the interpreter, whose steps the spin detection counts."""
    plan = SegmentPlan(start=10, end=20, if_branches=((12, 16),))
    seg = NativeSegment(None, plan)

    class Wave:
        folds_steps = True
    assert not seg.may_run(Wave, np.array([0, 1]))
    assert seg.may_run(Wave, None)
    assert NativeSegment(None, SegmentPlan(start=10, end=20)).may_run(Wave, np.array([0, 1]))
    Wave.folds_steps = False            # a random schedule
    assert not seg.may_run(Wave, None)
    assert (seg.length, seg.bodies) == (10 - 3, ((3, True),))


SPIN_FLAG = HEAD + """
.visible .entry spin(.param .u64 flag, .param .u64 out)
{
    .reg .pred %p<4>; .reg .b32 %r<8>; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [flag];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    mov.u32 %r5, 0;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra SET;
WAIT:
    ld.volatile.global.u32 %r3, [%rd1];
    setp.eq.u32 %p2, %r3, 0;
    @%p2 bra SKIP;
    add.u32 %r5, %r5, 1;
SKIP:
    setp.eq.u32 %p3, %r3, 0;
    @%p3 bra WAIT;
    bra.uni DONE;
SET:
    add.u32 %r4, %r2, 1;
    st.volatile.global.u32 [%rd1], %r4;
DONE:
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r5;
    ret;
}
"""


def test_a_warp_spinning_on_another_blocks_flag_counts_the_interpreters_work():
    """Block 0 spins on a flag that block 1 sets; the if body in the spin
    loop runs interpreted for the spinning warps' partial steps, so the
    spin detection backs off at the same step under both engines."""
    ref, got = run_both(SPIN_FLAG, "spin", (2,), (64,), [Out(1, np.uint32), Out(64, np.uint32)])
    same_counts(ref, got)



# two bounds checks in a row, as a reduction loads its two elements: one
# segment holds both bodies and returns both counts
TWO_CHECKS = HEAD + """
.visible .entry two(.param .u64 in, .param .u64 out, .param .u32 n)
{
    .reg .pred %p<3>; .reg .b32 %r<8>; .reg .f32 %f<6>; .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r6, [n];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    shl.b32 %r7, %r1, 6;
    add.s32 %r3, %r7, %r2;
    setp.ge.u32 %p1, %r3, %r6;
    mov.f32 %f1, 0f00000000;
    @%p1 bra L1;
    mul.wide.u32 %rd4, %r3, 4;
    add.s64 %rd5, %rd1, %rd4;
    ld.global.f32 %f1, [%rd5];
L1:
    add.s32 %r4, %r3, 64;
    setp.ge.u32 %p2, %r4, %r6;
    @%p2 bra L2;
    mul.wide.u32 %rd6, %r4, 4;
    add.s64 %rd7, %rd1, %rd6;
    ld.global.f32 %f2, [%rd7];
    add.f32 %f1, %f1, %f2;
L2:
    mul.wide.u32 %rd8, %r3, 4;
    add.s64 %rd9, %rd2, %rd8;
    st.global.f32 [%rd9], %f1;
    ret;
}
"""


def test_one_segment_runs_two_if_bodies_and_counts_each():
    data = (np.arange(256, dtype=np.float32) * 0.5 + 1).astype(np.float32)
    for n in (0, 10, 64, 100, 130, 256):      # neither body, the first only for some, both for all
        ref, got = run_both(TWO_CHECKS, "two", (2,), (64,), [data, Out(128, np.float32), n])
        same_counts(ref, got)
    plans = if_plans(got)
    assert len(plans) == 1 and len(plans[0].if_branches) == 2


def test_both_bodies_counts_come_back_in_their_own_fields():
    """Counts that fill more than the first field's low bits."""
    plan = SegmentPlan(start=0, end=30, if_branches=((5, 9), (12, 20)))
    seg = NativeSegment(None, plan)

    class Wave:
        thread_instructions = steps = cycles = 0
        native_taken = 70_000 | 3 << 31
    seg.account_body(Wave, 0)
    assert Wave.thread_instructions == 70_000 * 3 + 3 * 7
    assert Wave.steps == 2 + 2 and Wave.cycles == 3 + 7
    assert seg.length == 30 - 3 - 7
