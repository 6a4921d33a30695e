"""One combined check for loads off one base register (sim/native/
window_checks.py): the same results and the same fault reports as the
interpreter, whether the group's span is inside the block's shared
memory or its last load (or the base's alignment) goes wrong."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engines_pair import Out, engine_choice, run, run_both

from gpudbg.sim.native import window_checks
from gpudbg.sim.native.segments import plan_segments

HEAD = ".version 7.0\n.target sm_70\n.address_size 64\n"


def sums(offsets: list[int], shared_bytes: int = 1024) -> str:
    """Each thread fills shared memory, then sums the words at base + offsets
    (base = 4 * tid * stride + shift, from the parameters)."""
    loads = "\n".join(f"    ld.shared.u32 %r{10 + j}, [%r4+{o}];\n    add.u32 %r9, %r9, %r{10 + j};"
                      for j, o in enumerate(offsets))
    regs = 10 + len(offsets)
    return HEAD + f"""
.visible .entry sums(.param .u64 out, .param .u32 stride, .param .u32 shift)
{{
    .reg .b32 %r<{regs}>; .reg .b64 %rd<6>;
    .shared .align 16 .b8 s[{shared_bytes}];
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r5, [stride];
    ld.param.u32 %r6, [shift];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, s;
    shl.b32 %r3, %r1, 2;
    add.u32 %r7, %r2, %r3;
    st.shared.u32 [%r7], %r1;
    bar.sync 0;
    mul.lo.u32 %r8, %r3, %r5;
    add.u32 %r8, %r8, %r6;
    add.u32 %r4, %r2, %r8;
    mov.u32 %r9, 0;
{loads}
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r9;
    ret;
}}
"""


def _grouped(result) -> int:
    program = result.module.program
    n = 0
    for p in plan_segments(program, if_convert=True)[0]:
        code = [program.code[pc] for pc in range(p.start, p.end)]
        n += len(window_checks.plan(program, code, p.last_write, p.if_branches))
    return n


def test_the_loads_of_a_group_share_one_check():
    ref, got = run_both(sums([0, 4, 8, 60]), "sums", (2,), (64,), [Out(64, np.uint32), 0, 0])
    assert _grouped(got) == 4
    assert got[0].tolist() == [0 + 1 + 2 + 15] * 64     # stride 0: every thread reads the words of threads 0, 1, 2, 15


def test_a_group_whose_last_load_runs_past_shared_memory_reports_what_the_interpreter_does():
    # thread t's base is 4t; offset 768 takes threads 64..  past 1024 bytes
    _, got = run_both(sums([0, 4, 768]), "sums", (1,), (128,), [Out(128, np.uint32), 1, 0], expect_fault=True)
    assert _grouped(got) == 3


def test_a_misaligned_base_reports_what_the_interpreter_does():
    run_both(sums([0, 4, 8]), "sums", (1,), (32,), [Out(32, np.uint32), 1, 2], expect_fault=True)


@settings(max_examples=12, deadline=None)
@given(offsets=st.lists(st.integers(0, 300).map(lambda k: 4 * k), min_size=2, max_size=6),
       stride=st.integers(0, 3), shift=st.sampled_from([0, 4, 64, 2]))
def test_any_group_matches_the_interpreter(offsets, stride, shift):
    shared = 1024
    base_max = 4 * 63 * stride + shift
    fault = base_max + max(offsets) + 4 > shared or shift % 4 != 0
    run_both(sums(offsets, shared), "sums", (1,), (64,), [Out(64, np.uint32), stride, shift],
             expect_fault=fault)
