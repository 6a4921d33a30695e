"""Handwritten PTX and helpers for the zet facade tests: the test thread is
the tool, the kernel's host side runs on a background thread.

``spin`` is debug_kernels.spin_ptx (a loop a tool can end by writing
``%r5``); ``fault`` stores through a null-page pointer.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from debug_kernels import spin_ptx

SPIN_PTX = spin_ptx("spin")

FAULT_ADDRESS = 0x18

FAULT_PTX = r"""
.version 7.8
.target sm_80
.address_size 64

.visible .entry fault(.param .u32 v)
{
    .reg .u32 %r<3>;
    .reg .u64 %rd<2>;
    ld.param.u32 %r1, [v];
    mov.u64 %rd1, 0x18;
    st.global.u32 [%rd1], %r1;
    ret;
}
"""

TINY_PTX = r"""
.version 7.8
.target sm_80
.address_size 64

.visible .entry tiny(.param .u64 out)
{
    .reg .u64 %rd<3>;
    .reg .u32 %r<2>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, 42;
    st.global.u32 [%rd2], %r1;
    ret;
}
"""


class Background(threading.Thread):
    """Runs ``fn`` (a launch plus synchronize, or a module load) and keeps its outcome."""

    def __init__(self, fn: Callable[[], object]):
        super().__init__(daemon=True)
        self.fn = fn
        self.result: object = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.fn()
        except BaseException as e:  # reported by the test that joins
            self.error = e

# Warp 0 (tid < 32) waits at bar.sync 0 at once; warp 1 first counts %r4 up to n (%r5).
# The barrier comes before the loop in code order, so the simulator's lowest-pc-first
# scheduler lets warp 0 arrive (and park) while warp 1 counts.
BARRIER_PTX = r"""
.version 7.8
.target sm_80
.address_size 64

.visible .entry meet(.param .u32 n)
{
    .reg .u32 %r<8>;
    .reg .pred %p<3>;

    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 32;
    @%p1 bra COUNT;
WAIT:
    bar.sync 0;
    ret;
COUNT:
    ld.param.u32 %r5, [n];
    mov.u32 %r4, 0;
LOOP:
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, %r5;
    @%p2 bra LOOP;
    bra WAIT;
}
"""
