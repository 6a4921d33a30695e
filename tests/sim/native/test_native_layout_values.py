"""Thread and block indices native code computes from the slot number
(special.slot_block / tid.x / tid.y, environment._tid_masks) instead of
reading the layout's arrays: for every block shape (powers of two or not,
1-D to 3-D, padded to whole warps, clusters of waves) they equal the
interpreter's %tid, %ctaid and each block's own shared memory."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from engines_pair import Out, run_both
from gpudbg.sim.native.environment import _log2_or_none

HEAD = ".version 7.0\n.target sm_70\n.address_size 64\n"

# every thread writes (tid.x, tid.y, tid.z, ctaid.x, ctaid.y, ctaid.z) and
# what its block's shared word held before it added itself to it
INDICES = HEAD + """
.visible .entry indices(.param .u64 out)
{
    .reg .b32 %r<20>; .reg .b64 %rd<8>;
    .shared .align 4 .b8 s[4];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mov.u32 %r3, %tid.z;
    mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %ctaid.y;
    mov.u32 %r6, %ctaid.z;
    mov.u32 %r7, %ntid.x;
    mov.u32 %r8, %ntid.y;
    mov.u32 %r9, %ntid.z;
    mov.u32 %r10, %nctaid.x;
    mov.u32 %r11, %nctaid.y;
    mad.lo.u32 %r12, %r3, %r8, %r2;
    mad.lo.u32 %r12, %r12, %r7, %r1;
    mad.lo.u32 %r13, %r6, %r11, %r5;
    mad.lo.u32 %r13, %r13, %r10, %r4;
    mul.lo.u32 %r14, %r7, %r8;
    mul.lo.u32 %r14, %r14, %r9;
    mad.lo.u32 %r15, %r13, %r14, %r12;
    mul.wide.u32 %rd1, %r15, 32;
    ld.param.u64 %rd2, [out];
    add.s64 %rd3, %rd2, %rd1;
    st.global.v4.u32 [%rd3], {%r1, %r2, %r3, %r4};
    st.global.v2.u32 [%rd3+16], {%r5, %r6};
    atom.shared.add.u32 %r16, [s], %r13;
    st.global.u32 [%rd3+24], %r16;
    ret;
}
"""

dims = st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 32, 48, 64])


@settings(max_examples=40, deadline=None)
@given(st.tuples(dims, st.sampled_from([1, 2, 3, 4, 8]), st.sampled_from([1, 2, 3])).filter(
    lambda b: b[0] * b[1] * b[2] <= 256),
       st.tuples(st.integers(1, 3), st.integers(1, 2), st.integers(1, 2)))
def test_indices_and_each_blocks_shared_memory_match_the_interpreter(block, grid):
    n = int(np.prod(block)) * int(np.prod(grid))
    ref, got = run_both(INDICES, "indices", grid, block, [Out(n * 8, np.uint32)])
    rows = got[0].reshape(n, 8)
    assert rows[:, 0].max() == block[0] - 1 and rows[:, 3].max() == grid[0] - 1


def test_the_masks_hold_only_where_the_shape_allows():
    class X:
        class layout:
            slots_per_block = 64
        block_dim = (16, 4, 1)
    from gpudbg.sim.native.environment import _tid_masks
    assert _tid_masks(X) == (15, 4, 3)
    X.block_dim = (12, 4, 1)            # 48 threads in 64 slots: tid.x is not slot & mask
    assert _tid_masks(X)[0] == -1 and _tid_masks(X)[2] == -1
    X.block_dim = (16, 3, 1)
    assert _tid_masks(X) == (15, 0, -1)
    assert [_log2_or_none(v) for v in (1, 64, 96, 0)] == [0, 6, -1, -1]
