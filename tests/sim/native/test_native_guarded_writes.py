"""Guarded writes in native segments (emit.SegmentEmitter's second pass
under a guard: `@p st`, `@p atom`, an if body's store): the second pass
looks at the first pass's per-thread flags eight at a time and skips
groups where no thread writes. Any pattern of writers, any thread count
(groups cut short at the end), whole waves and selections (threads that
diverged first run the same code as a later, partial step), must write
the same memory, in the same order (atomics return the interpreter's old
values), as the interpreter."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from engines_pair import Out, run_both

HEAD = ".version 7.0\n.target sm_70\n.address_size 64\n"

# flag word per thread: bit 0 stores, bit 1 takes a ticket from an atomic
# counter, bit 2 goes round a detour first (its threads run the writes in
# a later step of their own, as a selection)
GUARDED = HEAD + """
.visible .entry guarded(.param .u64 flags, .param .u64 out, .param .u64 olds, .param .u64 ctr)
{
    .reg .pred %p<4>; .reg .b32 %r<12>; .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [flags];
    ld.param.u64 %rd2, [out];
    ld.param.u64 %rd3, [olds];
    ld.param.u64 %rd4, [ctr];
    mov.u32 %r1, %tid.x;
    mov.u32 %r9, %ctaid.x;
    mov.u32 %r10, %ntid.x;
    mad.lo.u32 %r1, %r9, %r10, %r1;
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd1, %rd5;
    ld.global.u32 %r2, [%rd6];
    and.b32 %r3, %r2, 4;
    setp.ne.u32 %p3, %r3, 0;
    @%p3 bra DETOUR;
WRITES:
    and.b32 %r4, %r2, 1;
    setp.ne.u32 %p1, %r4, 0;
    add.s64 %rd7, %rd2, %rd5;
    add.u32 %r5, %r1, 1000;
    @%p1 st.global.u32 [%rd7], %r5;
    and.b32 %r6, %r2, 2;
    setp.ne.u32 %p2, %r6, 0;
    mov.u32 %r7, 77;
    @%p2 atom.global.add.u32 %r7, [%rd4], 1;
    add.s64 %rd8, %rd3, %rd5;
    st.global.u32 [%rd8], %r7;
    ret;
DETOUR:
    and.b32 %r2, %r2, 3;
    bra.uni WRITES;
}
"""


def _run(flags: np.ndarray, grid: int, block: int) -> None:
    n = grid * block
    run_both(GUARDED, "guarded", (grid,), (block,),
             [flags, Out(n, np.uint32, 0xDEADBEEF), Out(n, np.uint32), Out(1, np.uint32)])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 70), st.data())
def test_any_writers_pattern_writes_what_the_interpreter_writes(grid, block, data):
    n = grid * block
    density = data.draw(st.sampled_from([0.0, 0.02, 0.3, 1.0]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    writes = (rng.random(n) < density).astype(np.uint32) | \
        ((rng.random(n) < density).astype(np.uint32) << 1)
    detour = data.draw(st.booleans())
    flags = writes | ((rng.random(n) < 0.5).astype(np.uint32) << 2 if detour else 0)
    _run(flags.astype(np.uint32), grid, block)


def test_a_lone_writer_past_many_silent_groups_and_one_in_a_short_last_group():
    flags = np.zeros(2 * 100, dtype=np.uint32)
    flags[[41, 199]] = 3          # one in the middle of a group, one in the 4-thread tail group
    _run(flags, 2, 100)
