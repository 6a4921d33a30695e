"""`set` writes 1.0 to a floating-point destination (f16, bf16, and each
half of f16x2/bf16x2) and all ones to an integer one, as the PTX ISA says;
found by the PTX corpus (cuda_fp16.h's hexp2 uses set.eq.f16.f16)."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg

PTX = r'''
.version 8.0
.target sm_80
.address_size 64
.visible .entry sets(.param .u64 out, .param .f32 a, .param .f32 b)
{
    .reg .f32 %fa, %fb;
    .reg .f16 %ha, %hb, %h;
    .reg .b16 %bf;
    .reg .b32 %r, %x2;
    .reg .b64 %o;
    ld.param.u64 %o, [out];
    ld.param.f32 %fa, [a];
    ld.param.f32 %fb, [b];
    cvt.rn.f16.f32 %ha, %fa;
    cvt.rn.f16.f32 %hb, %fb;
    set.eq.f16.f16 %h, %ha, %hb;
    st.global.b16 [%o], %h;
    set.eq.bf16.f32 %bf, %fa, %fb;
    st.global.b16 [%o+2], %bf;
    set.eq.u32.f32 %r, %fa, %fb;
    st.global.u32 [%o+4], %r;
    set.eq.f32.f32 %r, %fa, %fb;
    st.global.u32 [%o+8], %r;
    ret;
}
'''


@pytest.mark.parametrize("a, b, true", [(1.5, 1.5, True), (1.5, 2.5, False)])
def test_set_true_and_false_values(a, b, true):
    mod = gpudbg.Module.from_ptx(PTX, name="sets.ptx")
    out = gpudbg.to_device(np.zeros(3, np.uint32))
    mod.sets[1, 1](out, np.float32(a), np.float32(b))
    raw = out.to_host()
    halves = raw[:1].view(np.uint16)
    if true:
        assert halves.tolist() == [0x3C00, 0x3F80]       # 1.0 as f16, 1.0 as bf16
        assert raw[1] == 0xFFFFFFFF and raw[2:3].view(np.float32)[0] == 1.0
    else:
        assert halves.tolist() == [0, 0] and raw[1] == 0 and raw[2] == 0
