"""Handwritten PTX shared by the debugger tests (cudbg and zet facades).

``spin_ptx(name)`` stores ``3*tid`` to shared memory, counts ``%r4`` up to
the parameter ``n`` (held in ``%r5``) and finally writes ``shared + %r6``
(``%r6`` starts at 7) to ``out[tid]``: a tool that stops it can end the
loop by writing ``%r5`` and change the result through ``%r6``. LOOP is
instruction 9.
"""
from __future__ import annotations

SPIN_LOOP_PC = 9

_SPIN = r"""
.version 7.8
.target sm_80
.address_size 64

.visible .entry NAME(.param .u64 out, .param .u32 n)
{
    .reg .u32 %r<10>;
    .reg .u64 %rd<6>;
    .reg .pred %p<3>;
    .shared .align 4 .b8 buf[256];

    mov.u32 %r1, %tid.x;
    mul.lo.u32 %r2, %r1, 3;
    shl.b32 %r3, %r1, 2;
    mov.u32 %r9, buf;
    add.u32 %r9, %r9, %r3;
    st.shared.u32 [%r9], %r2;
    ld.param.u32 %r5, [n];
    mov.u32 %r6, 7;
    mov.u32 %r4, 0;
LOOP:
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p1, %r4, %r5;
    @%p1 bra LOOP;
    ld.shared.u32 %r7, [%r9];
    add.u32 %r8, %r7, %r6;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r8;
    ret;
}
"""


def spin_ptx(name: str) -> str:
    return _SPIN.replace("NAME", name)
