"""A float result whose NaN has not been made canonical yet (emit.write_float)
feeds the next round-to-nearest add, sub, mul or fma directly
(emit.read_float), which skips the NaN test and select between them; every
other reader (neg and abs, which keep a NaN's payload bits, mov.b32, a
store, a comparison, a directed rounding, the register stored at the
segment's end, a value merged after a guarded instruction) must still see
the canonical NaN. Operands are hypothesis-chosen among NaNs of several
payloads and signs, infinities, zeros, subnormals and normals, so invalid
operations (inf * 0, inf - inf) make NaNs in the middle of the chains."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engines_pair import Out, run_both

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"

# per thread: x, y, z in; ten 32-bit results out
CHAINS = HEAD + """
.visible .entry chains(.param .u64 in, .param .u64 out)
{
    .reg .pred %p<3>; .reg .b32 %r<4>; .reg .f32 %f<24>; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 12;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.f32 %f1, [%rd4];
    ld.global.f32 %f2, [%rd4+4];
    ld.global.f32 %f3, [%rd4+8];
    mul.wide.u32 %rd3, %r1, 44;
    add.s64 %rd5, %rd2, %rd3;
    fma.rn.f32 %f4, %f1, %f2, %f3;
    mul.f32 %f5, %f4, %f1;
    add.f32 %f6, %f5, %f2;
    sub.f32 %f7, %f6, %f3;
    fma.rn.f32 %f8, %f7, %f4, %f1;
    neg.f32 %f9, %f4;
    abs.f32 %f10, %f5;
    mov.b32 %r2, %f6;
    setp.gtu.f32 %p1, %f7, %f1;
    selp.f32 %f11, %f7, %f2, %p1;
    add.rz.f32 %f12, %f8, %f3;
    mul.ftz.f32 %f13, %f8, %f2;
    setp.lt.f32 %p2, %f1, %f2;
    @%p2 fma.rn.f32 %f8, %f4, %f4, %f5;
    add.f32 %f14, %f8, %f1;
    st.global.f32 [%rd5], %f8;
    st.global.f32 [%rd5+4], %f9;
    st.global.f32 [%rd5+8], %f10;
    st.global.u32 [%rd5+12], %r2;
    st.global.f32 [%rd5+16], %f11;
    st.global.f32 [%rd5+20], %f12;
    st.global.f32 [%rd5+24], %f13;
    st.global.f32 [%rd5+28], %f14;
    st.global.f32 [%rd5+32], %f7;
    sub.f32 %f15, %f14, %f14;
    st.global.f32 [%rd5+36], %f15;
    abs.f32 %f16, %f15;
    st.global.f32 [%rd5+40], %f16;
    ret;
}
"""

SPECIALS = [0x7FC00000, 0x7FC12345, 0xFFC00001, 0x7F800001, 0xFFBFFFFF, 0x7F800000, 0xFF800000,
            0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x3F800000, 0xBFC00000, 0x7F7FFFFF,
            0x40490FDB, 0xC2F6E979]
word = st.one_of(st.sampled_from(SPECIALS), st.integers(0, 0xFFFFFFFF))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(word, word, word), min_size=1, max_size=64))
def test_nan_payloads_do_not_leak_from_raw_chains(triples):
    n = len(triples)
    x = np.array(triples, dtype=np.uint32).reshape(-1).view(np.float32)
    run_both(CHAINS, "chains", (1,), (n,), [x, Out(11 * n, np.uint32)])


def test_invalid_operations_in_the_middle_of_a_chain():
    # inf * 0 and inf - inf make the x86 default NaN (negative), which only
    # the canonical select turns into 0x7FFFFFFF
    rows = [(0x7F800000, 0x00000000, 0x3F800000), (0x7F800000, 0x3F800000, 0x7F800000),
            (0xFFC00001, 0x3F800000, 0x40000000), (0x3F800000, 0x7FC12345, 0x00000000),
            (0x3F800000, 0x40000000, 0x40400000)]
    x = np.array(rows, dtype=np.uint32).reshape(-1).view(np.float32)
    ref, got = run_both(CHAINS, "chains", (1,), (len(rows),), [x, Out(11 * len(rows), np.uint32)])
    out = got[1].reshape(len(rows), 11)
    assert (out[0, 0] & 0x7FFFFFFF) > 0x7F800000       # the chain really carried a NaN
    assert out[0, 1] == 0xFFFFFFFF                       # neg of the canonical NaN
