"""Registers recomputed instead of loaded (sim/native/remat.py): which ones
qualify, that a segment after a barrier really stops loading them, and
that a register some path leaves undefined is still loaded, so native
runs read what the interpreter reads."""
from __future__ import annotations

import re

import numpy as np

from engines_pair import Out, engine_choice, run, run_both
from gpudbg.ptx.parser import parse
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module
from gpudbg.sim.native import engine
from gpudbg.sim.native.remat import Recomputable
from gpudbg.sim.native.segments import plan_segments

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
# one level of a shared-memory tree: out[block] = in[64 block] + in[64 block + 32]
TREE = HEAD + """
.visible .entry tree(.param .u64 in, .param .u64 out)
{
    .reg .pred %p<4>; .reg .b32 %r<10>; .reg .f32 %f<8>; .reg .b64 %rd<8>;
    .shared .align 4 .b8 part[256];
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    shl.b32 %r3, %r1, 6;
    add.s32 %r4, %r3, %r2;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.f32 %f1, [%rd4];
    shl.b32 %r5, %r2, 2;
    mov.u32 %r6, part;
    add.s32 %r7, %r6, %r5;
    st.shared.f32 [%r7], %f1;
    bar.sync 0;
    setp.gt.u32 %p1, %r2, 31;
    @%p1 bra L1;
    ld.shared.f32 %f2, [%r7];
    ld.shared.f32 %f3, [%r7+128];
    add.f32 %f4, %f2, %f3;
    st.shared.f32 [%r7], %f4;
L1:
    bar.sync 0;
    setp.ne.s32 %p2, %r2, 0;
    @%p2 bra L2;
    ld.shared.f32 %f5, [part];
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd2, %rd5;
    st.global.f32 [%rd6], %f5;
L2:
    ret;
}
"""

# %r3 is written only by threads 16 and up; the others read it undefined
MAYBE = HEAD + """
.visible .entry maybe(.param .u64 out)
{
    .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 bra SKIP;
    add.s32 %r3, %r1, 7;
SKIP:
    bar.sync 0;
    add.s32 %r4, %r3, 1000;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    ret;
}
"""


def _program(ptx: str):
    return load_module(SimGPU(), parse(ptx)).program


def _reg(program, name: str) -> int:
    return next(k for k, (_, n) in enumerate(program.reg_names) if n == name)


def _recomputable(program) -> tuple[Recomputable, list]:
    plans, lowered, _ = plan_segments(program, if_convert=True)
    return Recomputable(program, lowered), plans


def test_a_thread_index_and_its_shared_address_are_recomputed_after_the_barrier():
    program = _program(TREE)
    remat, plans = _recomputable(program)
    first_bar = next(c.pc for c in program.code if c.inst.opcode == "bar")
    later = [p for p in plans if p.start > first_bar]
    assert later
    names = {program.reg_names[k][1] for k in remat.at(later[0].start)}
    # the thread index, the block index, the shared address and the chain between
    assert {"%r1", "%r2", "%r3", "%r5", "%r6", "%r7"} <= names
    # loaded values and registers of loads are not (%r4 is: pure arithmetic)
    assert not names & {"%f1", "%rd1", "%rd4"}
    assert remat.at(0) == {}                    # nothing is defined at the entry


def test_a_register_one_path_leaves_undefined_is_not_recomputed():
    program = _program(MAYBE)
    remat, _ = _recomputable(program)
    after = next(c.pc for c in program.code if c.inst.opcode == "bar") + 1
    got = remat.at(after)
    assert _reg(program, "%r1") in got
    assert _reg(program, "%r3") not in got


def test_a_register_with_two_definitions_or_a_guard_is_not_a_candidate():
    ptx = HEAD + """
    .visible .entry two(.param .u64 out)
    {
        .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<4>;
        ld.param.u64 %rd1, [out];
        mov.u32 %r1, %tid.x;
        mov.u32 %r2, %ctaid.x;
        add.s32 %r2, %r2, 1;
        setp.lt.u32 %p1, %r1, 3;
        @%p1 mov.u32 %r3, %tid.x;
        bar.sync 0;
        add.s32 %r4, %r2, %r3;
        mul.wide.u32 %rd2, %r1, 4;
        add.s64 %rd3, %rd1, %rd2;
        st.global.u32 [%rd3], %r4;
        ret;
    }
    """
    program = _program(ptx)
    remat, _ = _recomputable(program)
    assert set(remat.defs) >= {_reg(program, "%r1")}
    assert not set(remat.defs) & {_reg(program, "%r2"), _reg(program, "%r3"), _reg(program, "%r4")}


def test_native_runs_read_an_undefined_register_as_the_interpreter_does():
    run_both(MAYBE, "maybe", (3,), (64,), [Out(64, np.uint32)])


def test_the_tree_gives_the_interpreters_sums():
    x = np.random.default_rng(5).random(64 * 40, dtype=np.float32)
    ref, got = run_both(TREE, "tree", (40,), (64,), [x, Out(40, np.float32)])
    pairs = x.reshape(40, 64)
    assert np.array_equal(got.arrays[1], pairs[:, 0] + pairs[:, 32])


def test_the_segment_after_the_barrier_loads_no_recomputed_register():
    with engine_choice("native"):
        r = run(TREE, "tree", (2,), (64,), [np.zeros(128, np.float32), Out(2, np.float32)])
    program = r.module.program
    _, ir_text = engine._emit(program, engine.PLAIN, "t_")
    first_bar = next(c.pc for c in program.code if c.inst.opcode == "bar")
    seg = next(p for p in plan_segments(program, if_convert=True)[0] if p.start > first_bar)
    body = ir_text.split(f'@"t_{seg.name}"(')[1].split("\n}\n")[0]
    # register k's array is the k-th entry of the segment's first argument
    indices = {int(k) for k in re.findall(r'getelementptr inbounds i64, i64\* %"\.1", i64 (\d+)', body)}
    assert not indices & {_reg(program, "%r2"), _reg(program, "%r7")}, indices


def test_a_program_too_large_for_the_bitsets_recomputes_nothing(monkeypatch):
    from gpudbg.sim.native import remat
    program = _program(TREE)
    monkeypatch.setattr(remat, "MAX_BITS", len(program.code) - 1)   # one candidate would need len(code) bits
    remat_, plans = _recomputable(program)
    assert remat_.defs == {} and all(remat_.at(p.start) == {} for p in plans)


def test_the_size_limit_counts_a_chain_the_same_from_any_starting_register():
    # c1 <- c2 <- ... <- c8, each reading the one before: c6 is six
    # instructions (kept), c7 seven (not), whichever is looked at first
    from gpudbg.sim.native.remat import MAX_INSTRUCTIONS, _closed
    assert MAX_INSTRUCTIONS == 6
    n = 8
    candidates = {k: (k, frozenset({k - 1}) if k > 1 else frozenset()) for k in range(n, 0, -1)}
    bit = {k: i for i, k in enumerate(candidates)}
    must = [(1 << n) - 1] * (n + 1)
    assert set(_closed(candidates, must, bit)) == {1, 2, 3, 4, 5, 6}
