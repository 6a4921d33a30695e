"""Liveness (sim/native/liveness.py): a lowered instruction's destination
is not a read, so a value used only inside a loop body is dead at the
body's end and its segment does not store it."""
from __future__ import annotations

import numpy as np

from engines_pair import Out, engine_choice, run, run_both

HEAD = ".version 7.0\n.target sm_70\n.address_size 64\n"

# the loop has a barrier, so it is no region: its body is one segment,
# and %r6 (loaded, added, rewritten next iteration) dies at its end
BARRIER_LOOP = HEAD + """
.visible .entry sums(.param .u64 src, .param .u64 dst, .param .u32 count)
{
    .reg .pred %p<3>; .reg .b32 %r<8>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    ld.param.u32 %r5, [count];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
    cvt.u64.u32 %rd3, %r1;
    shl.b64 %rd3, %rd3, 2;
    add.s64 %rd4, %rd1, %rd3;
LOOP:
    ld.global.u32 %r6, [%rd4];
    add.u32 %r3, %r3, %r6;
    add.u32 %r2, %r2, 1;
    bar.sync 0;
    setp.lt.u32 %p1, %r2, %r5;
    @%p1 bra LOOP;
    add.s64 %rd6, %rd2, %rd3;
    st.global.u32 [%rd6], %r3;
    ret;
}
"""


def test_a_loop_body_value_is_dead_after_its_segment():
    from gpudbg.sim.native.segments import plan_segments
    src = np.arange(64, dtype=np.uint32)
    with engine_choice("native"):
        r = run(BARRIER_LOOP, "sums", (1,), (64,), [src, Out(64, np.uint32), 5])
    program = r.module.program
    plans, _, _ = plan_segments(program)
    fn = program.code[0].function
    k = {name: program._reg_index[(fn, name)] for name in ("%r2", "%r3", "%r6")}
    body = next(p for p in plans if program.code[p.start].inst.opcode == "ld")
    assert k["%r6"] not in body.live_out
    assert {k["%r2"], k["%r3"]} <= body.live_out
    ref, got = run_both(BARRIER_LOOP, "sums", (1,), (64,), [src, Out(64, np.uint32), 5])
    assert np.array_equal(got.arrays[1], 5 * src)
