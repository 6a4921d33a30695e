"""A loop region pauses a thread that reached its instruction cap at the
next block start (regions.py), so every register read from a block start
of the loop on must be stored when a thread leaves there, not only those
live after the loop's exits. Here %rd2 is written in the loop's first
block and read in its second, and dead after the loop: a thread paused at
the second block must find it stored (the -G build of cooperative_groups'
tile barrier spins in such a loop; natively it read a null pointer)."""
from __future__ import annotations

import numpy as np
import pytest

from engines_pair import Out, run_both
from gpudbg.sim.native import engine

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
SPIN = HEAD + """
.visible .entry spin(.param .u64 src, .param .u64 dst, .param .u32 n)
{
    .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd3, [dst];
    ld.param.u32 %r4, [n];
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
LOOP:
    mov.b64 %rd2, %rd1;
    bra.uni NEXT;
NEXT:
    ld.global.u32 %r1, [%rd2];
    add.s32 %r3, %r3, %r1;
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, %r4;
    @%p1 bra LOOP;
    mov.u32 %r5, %tid.x;
    mul.wide.u32 %rd4, %r5, 4;
    add.s64 %rd5, %rd3, %rd4;
    st.global.u32 [%rd5], %r3;
    ret;
}
"""


@pytest.mark.parametrize("cap", range(64, 76))
def test_a_thread_paused_inside_a_loop_region_finds_what_it_reads_stored(cap, monkeypatch):
    threads = 64
    monkeypatch.setattr(engine.NativeRegion, "CALL_WORK", cap * threads)   # cap = CALL_WORK // threads
    ref, got = run_both(SPIN, "spin", (1,), (threads,), [np.array([3], np.int32), Out(threads, np.int32), 40])
    assert (got[1] == 120).all()
    assert got.module.program.native_regions > 0


# warp 1 spins on a flag warp 0 sets: a volatile load in the loop makes it
# no region (it could only leave at the call's cap, other warps not running)
FLAG = HEAD + """
.visible .entry flag(.param .u64 f, .param .u64 out)
{
    .reg .pred %p<3>; .reg .b32 %r<6>; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [f];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra SETTER;
    mov.u32 %r3, 0;
WAIT:
    ld.volatile.global.u32 %r2, [%rd1];
    add.s32 %r3, %r3, 1;
    setp.eq.u32 %p2, %r2, 0;
    @%p2 bra WAIT;
    bra.uni DONE;
SETTER:
    mov.u32 %r3, 7;
    st.volatile.global.u32 [%rd1], %r3;
DONE:
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r3;
    ret;
}
"""


def test_a_loop_spinning_on_a_volatile_load_is_no_region_and_counts_the_interpreters_work():
    ref, got = run_both(FLAG, "flag", (1,), (64,), [np.zeros(1, np.int32), Out(64, np.int32)])
    assert got.module.program.native_regions == 0
    assert ref.stats.thread_instructions == got.stats.thread_instructions
    assert (got[1][:32] == 7).all() and (got[1][32:] > 0).all()
