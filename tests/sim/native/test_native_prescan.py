"""Prescans of sparse if bodies (segments.prescan_branch, emit.py
_prescan): a segment whose one if body ends it first finds, in a loop of
its own, which threads run the body, then skips each group of eight
threads where none does. Results, registers the skipping threads leave
and the interpreter's counts must not change; where a prescan would
compute something twice with another result, the planner gives none."""
from __future__ import annotations

import numpy as np
import pytest

from engines_pair import Out, if_plans, run, run_both, same_counts
from test_native_if_bodies import GUARDED_VALUE, TREE

HEAD = ".version 7.0\n.target sm_70\n.address_size 64\n"

# The guard comes from data (so runs of skipped and of taken groups are
# irregular), the prefix writes %r3 and %p1, which the code after L
# reads for every thread, and the body's store ends the segment.
SPARSE = HEAD + """
.visible .entry sparse(.param .u64 data, .param .u64 out, .param .u64 seen)
{
    .reg .pred %p<3>; .reg .b32 %r<10>; .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [data];
    ld.param.u64 %rd2, [out];
    ld.param.u64 %rd3, [seen];
    mov.u32 %r0, %ctaid.x;
    mov.u32 %r9, %ntid.x;
    mov.u32 %r1, %tid.x;
    mad.lo.u32 %r1, %r0, %r9, %r1;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd2, %rd4;
    add.s64 %rd7, %rd3, %rd4;
    ld.global.u32 %r2, [%rd5];
    bar.sync 0;
    setp.eq.u32 %p1, %r2, 0;
    xor.b32 %r3, %r1, 5;
    @%p1 bra L;
    add.u32 %r4, %r2, %r3;
    st.global.u32 [%rd6], %r4;
L:
    bar.sync 0;
    selp.u32 %r5, 1000, 0, %p1;
    add.u32 %r6, %r5, %r3;
    st.global.u32 [%rd7], %r6;
    ret;
}
"""

# The prefix reads the register it writes (%r2 = %r2 + 1): computed once
# in a prescan and again for the threads that run the body it would add
# two, so the segment gets no prescan. (No memory access in the segment:
# it cannot fail, so %r2 has no scratch row that would rule it out too.)
SELF_UPDATE = HEAD + """
.visible .entry selfupdate(.param .u64 out, .param .u64 out2)
{
    .reg .pred %p<3>; .reg .b32 %r<10>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd4, [out2];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    add.s64 %rd5, %rd4, %rd2;
    mov.u32 %r2, %r1;
    mov.u32 %r4, 3;
    bar.sync 0;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, 20;
    @%p1 bra L;
    add.u32 %r4, %r2, 7;
L:
    bar.sync 0;
    st.global.u32 [%rd3], %r2;
    st.global.u32 [%rd5], %r4;
    ret;
}
"""

# The prefix loads from memory: a prescan would check (and could fault)
# before the body's checks, so the segment gets none.
PREFIX_LOAD = HEAD + """
.visible .entry prefixload(.param .u64 data, .param .u64 out)
{
    .reg .pred %p<3>; .reg .b32 %r<10>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [data];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd2, %rd4;
    bar.sync 0;
    ld.global.u32 %r2, [%rd5];
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra L;
    st.global.u32 [%rd6], %r2;
L:
    ret;
}
"""


def _data(threads: int, density: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.where(rng.random(threads) < density, rng.integers(1, 1 << 20, threads), 0).astype(np.uint32)


@pytest.mark.parametrize("density", [0.0, 0.03, 0.5, 1.0])
@pytest.mark.parametrize("grid,block", [((3,), (100,)), ((2,), (256,)), ((1,), (13,))])
def test_a_sparse_body_skips_groups_with_the_interpreters_results(density, grid, block):
    """Blocks of 100 and 13 threads: groups of eight straddle blocks and
    the last group is partial; every thread's %r3 and %p1 (written before
    the branch) reach the code after L, also those of skipped groups."""
    threads = grid[0] * block[0]
    data = _data(threads, density, seed=threads)
    ref, got = run_both(SPARSE, "sparse", grid, block,
                        [data, Out(threads, np.uint32, 7), Out(threads, np.uint32, 7)])
    (plan,) = if_plans(got)
    assert plan.prescan == plan.if_branches[0][0]
    t = np.arange(threads, dtype=np.uint32)
    assert got[1].tolist() == np.where(data != 0, data + (t ^ 5), 7).tolist()
    assert got[2].tolist() == ((t ^ 5) + np.where(data == 0, 1000, 0)).tolist()
    same_counts(ref, got)


def test_a_tree_reductions_levels_get_prescans():
    """Each level `if (t < k) s[t] += s[t + k]` of an unrolled tree."""
    ref, got = run_both(TREE, "tree", (4,), (128,), [Out(128, np.uint32)])
    (plan,) = if_plans(got)
    assert plan.prescan == plan.if_branches[0][0]
    same_counts(ref, got)


@pytest.mark.parametrize("ptx,kernel,args", [
    (SELF_UPDATE, "selfupdate", [Out(64, np.uint32, 9), Out(64, np.uint32, 9)]),
    (PREFIX_LOAD, "prefixload", [_data(64, 0.3, 1), Out(64, np.uint32, 9)]),
])
def test_no_prescan_where_computing_the_prefix_twice_could_differ(ptx, kernel, args):
    ref, got = run_both(ptx, kernel, (1,), (64,), args)
    (plan,) = if_plans(got)
    assert plan.prescan is None
    same_counts(ref, got)


def test_no_prescan_when_the_segment_goes_on_past_l():
    ref, got = run_both(GUARDED_VALUE, "after", (2,), (128,), [Out(128, np.uint32), 40])
    (plan,) = if_plans(got)
    assert plan.end > plan.if_branches[0][1] and plan.prescan is None


def test_the_debuggers_variant_with_a_prescan_keeps_every_register(monkeypatch):
    """GPUDBG_DIFFERENTIAL=full compares every register of the FULL variant
    at exit with the interpreter's (a mismatch raises): the FULL variant
    stores each register the prefix writes, for skipped groups too."""
    from gpudbg.sim.native import differential
    monkeypatch.setenv(differential.ENV_DIFFERENTIAL, "full")
    monkeypatch.delenv("GPUDBG_ENGINE", raising=False)
    before = differential.stats.get("compared", 0)
    data = _data(300, 0.05, seed=3)
    r = run(SPARSE, "sparse", (3,), (100,), [data, Out(300, np.uint32), Out(300, np.uint32)])
    assert differential.stats.get("compared", 0) == before + 1
    assert r.module.program.native_full_ready and if_plans(r)[0].prescan is not None


def test_two_host_threads_run_the_parts_without_a_prescan_and_agree(monkeypatch):
    """GPUDBG_THREADS=2 gives each host thread its part of the wave as an
    index array: the prescan runs only for the whole wave, so each part's
    main loop skips nothing and writes every thread's body flag and prefix
    registers itself."""
    from gpudbg.sim.native import parallel
    monkeypatch.setenv(parallel.ENV_THREADS, "2")
    threads = 64 * 100
    assert threads >= parallel.PARALLEL_MIN
    data = _data(threads, 0.03, seed=11)
    ref, got = run_both(SPARSE, "sparse", (64,), (100,),
                        [data, Out(threads, np.uint32, 7), Out(threads, np.uint32, 7)])
    (plan,) = if_plans(got)
    assert plan.prescan is not None
    t = np.arange(threads, dtype=np.uint32)
    assert got[1].tolist() == np.where(data != 0, data + (t ^ 5), 7).tolist()
    assert got[2].tolist() == ((t ^ 5) + np.where(data == 0, 1000, 0)).tolist()
    # (steps: each host thread's sub-wave counts its own, with or without a prescan)
    assert got.stats.thread_instructions == ref.stats.thread_instructions
    assert got.stats.cycles == ref.stats.cycles
