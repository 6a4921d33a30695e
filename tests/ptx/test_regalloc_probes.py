"""The register allocator's models of what ptxas does, each on small PTX
like the probe kernels that showed it (ptxas -arch=sm_80 -v and the SASS
of CUDA 13.0's ptxas, figures in the comments): f16 wmma fragments whose
eight PTX registers hold four distinct values, tensor-core accumulation
in place, the lane addresses a wmma load expands to, S2R issued early,
and loads moved above stores they provably do not alias."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpudbg.ptx import ir
from gpudbg.ptx.parser import parse
from gpudbg.ptx.ptxas_schedule import LOAD_ISSUE_DISTANCE, _may_alias, schedule_block, split_operands
from gpudbg.ptx.ptxas_ifconvert import IFCONV_MAX_INSTRUCTIONS, if_converted
from gpudbg.ptx.ptxas_unroll import UNROLL_FACTOR, unrolled
from gpudbg.ptx.regalloc import WMMA_ADDRESS_PAIRS, function_pressures, register_count

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def module(body: str, regs: str, params: str = ".param .u64 a, .param .u64 o, .param .u32 ld"):
    return parse(HEAD + f".visible .entry k({params})\n{{\n{regs}\n{body}\n}}\n", "t.ptx")


def pressure(body: str, regs: str) -> int:
    return function_pressures(module(body, regs))["k"].pressure


def _fragment_kernel(frag_type: str, shape: str, n: int) -> tuple[str, str]:
    """Load an A fragment and keep every register live to the end: the
    pressure counts the registers the fragment really occupies."""
    frag = ", ".join(f"%x{i}" for i in range(n))
    body = f"""ld.param.u64 %rd1, [a];
ld.param.u64 %rd2, [o];
cvta.to.global.u64 %rd3, %rd2;
ld.param.u32 %r1, [ld];
wmma.load.a.sync.aligned.row.{shape}.global.{frag_type} {{{frag}}}, [%rd1], %r1;
bar.sync 0;
""" + "\n".join(f"st.global.b32 [%rd3+{4 * i}], %x{i};" for i in range(n)) + "\nret;"
    return body, f".reg .b32 %r<2>;\n.reg .b64 %rd<4>;\n.reg .b32 %x<{n}>;"


def test_an_f16_m16n16k16_fragment_holds_four_distinct_registers():
    # ptxas: four LDGs fill it, x[i+4] is stored from x[i]'s register
    f16 = pressure(*_fragment_kernel("f16", "m16n16k16", 8))
    bf16 = pressure(*_fragment_kernel("bf16", "m16n16k16", 4))     # bf16's PTX fragment has no duplicates
    assert f16 == bf16


def test_an_f16_m8n32k16_a_fragment_holds_two():
    # ptxas: two LDGs, x[i] stored from x[i % 2]'s register
    narrow = pressure(*_fragment_kernel("f16", "m8n32k16", 8))
    wide = pressure(*_fragment_kernel("f16", "m16n16k16", 8))
    assert wide - narrow == 2


def test_a_fragment_register_defined_twice_is_not_merged():
    body, regs = _fragment_kernel("f16", "m16n16k16", 8)
    body = body.replace("bar.sync 0;", "bar.sync 0;\nadd.s32 %x7, %x7, 1;")
    assert pressure(body, regs) > pressure(*_fragment_kernel("f16", "m16n16k16", 8))


_MMA = """ld.param.u64 %rd1, [a];
ld.param.u64 %rd2, [o];
ld.param.u32 %r1, [ld];
wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, [%rd1], %r1;
wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {%b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7}, [%rd1+512], %r1;
wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}, [%rd2], %r1;
wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7}, {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, {%b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7}, {%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7};
OP
wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd2], {%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7}, %r1;
ret;"""
_MMA_REGS = ".reg .b32 %r<2>;\n.reg .b64 %rd<3>;\n.reg .b32 %a<8>;\n.reg .b32 %b<8>;\n.reg .f32 %c<8>;\n.reg .f32 %d<8>;"


def test_the_accumulator_is_written_in_place():
    """After an ordinary instruction ptxas holds the registers its dying
    operands free for a couple of instructions; an mma writes its result
    over its dying accumulator at once (SASS of a wmma GEMM loop:
    HMMA.16816.F32 R4, R12, R20, R4). With A and B live on after the mma,
    only C dies there and D takes its registers: the peak is the mma's own
    A 4 + B 4 + C 8 + the base address pair, 18 words; holding C's eight
    freed registers as an ordinary instruction's would make it 26."""
    keep = _MMA.replace("OP", "st.global.b32 [%rd2+64], %a0;\nst.global.b32 [%rd2+68], %b0;")
    assert pressure(keep, _MMA_REGS) == 18


def test_wmma_loads_need_their_lane_addresses():
    """A tf32 m16n16k8 fragment is four loads from four computed addresses
    (ptxas: four address pairs in the LDGs), an f64 m8n8k4 one load from
    one; the pairs are live while the load issues."""
    assert WMMA_ADDRESS_PAIRS[("a", "tf32", "m16n16k8")] == 4
    assert WMMA_ADDRESS_PAIRS[("a", "f64", "m8n8k4")] == 1

    def one_load(frag_type: str, shape: str, regs: str, n: int) -> int:
        frag = ", ".join(f"%x{i}" for i in range(n))
        body = (f"ld.param.u64 %rd1, [a];\nld.param.u32 %r1, [ld];\n"
                f"wmma.load.a.sync.aligned.row.{shape}.global.{frag_type} {{{frag}}}, [%rd1], %r1;\n"
                + "\n".join(f"st.global.b32 [%rd1+{4 * i}], %x{i};" for i in range(n)) + "\nret;")
        return pressure(body, f".reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n.reg .{regs} %x<{n}>;")

    tf32 = one_load("tf32", "m16n16k8", "b32", 4)
    bf16 = one_load("bf16", "m16n16k16", "b32", 4)   # two address pairs (ptxas), the same fragment size
    assert tf32 - bf16 == 2 * (4 - 2)


def test_special_register_reads_are_issued_first():
    """ptxas issues S2R (variable latency) at the top of the block: the
    laneid read the PTX does last is scheduled before the arithmetic."""
    m = module("""ld.param.u64 %rd1, [a];
cvta.to.global.u64 %rd2, %rd1;
mov.u32 %r1, %tid.x;
mul.lo.s32 %r2, %r1, 3;
add.s32 %r3, %r2, 7;
st.global.u32 [%rd2], %r3;
mov.u32 %r4, %laneid;
st.global.u32 [%rd2+4], %r4;
ret;""", ".reg .b32 %r<5>;\n.reg .b64 %rd<3>;")
    order = [i.text for i in schedule_block(list(m.functions["k"].instructions), 16)]
    lane = next(n for n, t in enumerate(order) if "%laneid" in t)
    mul = next(n for n, t in enumerate(order) if t.startswith("mul.lo"))
    assert lane < mul


def _copy_block(second_base: str) -> list[str]:
    m = module(f"""ld.param.u64 %rd1, [a];
ld.param.u64 %rd5, [o];
cvta.to.global.u64 %rd2, %rd1;
cvta.to.global.u64 %rd3, %rd5;
ld.global.f32 %f1, [%rd2];
st.global.f32 [%rd2], %f1;
ld.global.f32 %f2, [{second_base}+4];
st.global.f32 [%rd2+4], %f2;
ret;""", ".reg .f32 %f<3>;\n.reg .b64 %rd<6>;")
    return [i.text for i in schedule_block(list(m.functions["k"].instructions), 16)]


def test_a_load_moves_above_a_store_to_other_bytes_of_the_same_base():
    """ptxas disambiguates [%rd] from [%rd+4] (probe: four ld/st pairs on
    one base issue all four LDGs first: 14 registers, 8 in PTX order)."""
    order = _copy_block("%rd2")
    assert order.index("ld.global.f32 %f2, [%rd2+4]") < order.index("st.global.f32 [%rd2], %f1")


def test_a_load_through_another_base_stays_below_the_store():
    order = _copy_block("%rd3")
    assert order.index("ld.global.f32 %f2, [%rd3+4]") > order.index("st.global.f32 [%rd2], %f1")


@given(st.integers(-64, 64), st.integers(1, 16), st.integers(-64, 64), st.integers(1, 16))
def test_same_base_accesses_alias_exactly_when_their_bytes_overlap(a, na, b, nb):
    overlap = not (a + na <= b or b + nb <= a)
    assert _may_alias(("%rd1", 3, a, na), ("%rd1", 3, b, nb)) == overlap
    # another definition of the base register, or another register: unknown, so they may alias
    assert _may_alias(("%rd1", 3, a, na), ("%rd1", 5, b, nb))
    assert _may_alias(("%rd1", 3, a, na), ("%rd2", 3, b, nb))
    # two different variables never alias
    assert not _may_alias(("tile_a", None, a, na), ("tile_b", None, b, nb))


def test_the_corpus_wmma_kernel_counts():
    """The corpus's single-wmma kernel (sim tensor tests' wmma_load_at:
    an f16 A fragment, a constant B, a zero accumulator): ptxas reports
    14; the model gives 17 (25% is the issue's bound)."""
    m = module("""ld.param.u64 %rd1, [a];
ld.param.u32 %r1, [ld];
ld.param.u64 %rd2, [o];
cvta.to.global.u64 %rd3, %rd2;
mov.f32 %f1, 0f3F800000;
cvta.to.global.u64 %rd4, %rd1;
cvt.rn.f16.f32 %rs1, %f1;
mov.b32 %r2, {%rs1, %rs1};
mul.wide.s32 %rd5, %r1, 2;
add.s64 %rd6, %rd4, %rd5;
mov.u32 %r3, 16;
wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11}, [%rd6], %r3;
mov.f32 %f2, 0f00000000;
wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f3, %f4, %f5, %f6, %f7, %f8, %f9, %f10}, {%r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11}, {%r2, %r2, %r2, %r2, %r2, %r2, %r2, %r2}, {%f2, %f2, %f2, %f2, %f2, %f2, %f2, %f2};
wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd3], {%f3, %f4, %f5, %f6, %f7, %f8, %f9, %f10}, %r3;
ret;""", ".reg .b16 %rs<2>;\n.reg .f32 %f<11>;\n.reg .b32 %r<12>;\n.reg .b64 %rd<7>;",
               params=".param .u64 a, .param .u32 ld, .param .u64 o")
    assert register_count(m, "k") == 17


def _copy_loop(step: str, pragma: str = "") -> str:
    """A loop copying global memory to shared, `step` added to the index
    each iteration (an immediate, or a runtime value from a parameter)."""
    return HEAD + """.shared .align 4 .b8 sbuf[4096];
.visible .entry k(.param .u64 a, .param .u32 n)
{
.reg .pred %p<2>;
.reg .f32 %f<2>;
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [a];
ld.param.u32 %r1, [n];
ld.param.u32 %r7, [n];
cvta.to.global.u64 %rd3, %rd1;
mov.u32 %r2, %tid.x;
mul.wide.s32 %rd5, %r2, 4;
add.s64 %rd6, %rd3, %rd5;
shl.b32 %r3, %r2, 2;
mov.u32 %r4, sbuf;
add.s32 %r5, %r4, %r3;
mov.u32 %r6, %r2;
$Lloop:
""" + pragma + """
ld.global.f32 %f1, [%rd6];
st.shared.f32 [%r5], %f1;
add.s64 %rd6, %rd6, 128;
add.s32 %r5, %r5, 128;
add.s32 %r6, %r6, STEP;
setp.lt.s32 %p1, %r6, %r1;
@%p1 bra $Lloop;
ret;
}
""".replace("STEP", step)


def test_a_counted_loop_is_unrolled_four_times():
    """ptxas -v: 18 registers for this loop (its main loop holds four
    iterations' loads, issued before their stores), 8 with
    `.pragma "nounroll"`. The model: 12 and 10 (the loads of the four
    copies are live together; it does not model ptxas spreading values
    over the free registers of a small kernel)."""
    assert register_count(parse(_copy_loop("32"), "t.ptx"), "k") == 12
    assert register_count(parse(_copy_loop("32", '.pragma "nounroll";'), "t.ptx"), "k") == 10


def test_a_loop_without_a_known_trip_count_is_not_unrolled():
    """With a runtime step (a grid-stride loop) ptxas keeps one copy per
    iteration, as with the pragma (ptxas -v: 8 registers either way)."""
    runtime = register_count(parse(_copy_loop("%r7"), "t.ptx"), "k")
    kept = register_count(parse(_copy_loop("%r7", '.pragma "nounroll";'), "t.ptx"), "k")
    assert runtime == kept


def test_the_parser_records_where_a_pragma_stands():
    fn = parse(_copy_loop("32", '.pragma "nounroll";'), "t.ptx").functions["k"]
    (at, text), = fn.pragma_at
    assert text == "nounroll"
    assert isinstance(fn.body[at], ir.Instruction) and fn.body[at].text.startswith("ld.global.f32")
    assert isinstance(fn.body[at - 1], ir.Label) and fn.body[at - 1].name == "$Lloop"


def test_unrolled_copies_are_renamed_and_the_inner_exits_dropped():
    fn = parse(_copy_loop("32"), "t.ptx").functions["k"]
    start = next(n for n, s in enumerate(fn.body) if isinstance(s, ir.Label))
    block = [s for s in fn.body[start + 1:] if isinstance(s, ir.Instruction)][:-1]     # the loop, without ret
    words: dict[str, int] = {"%f1": 1, "%rd6": 2, "%r5": 1, "%r6": 1}
    out = unrolled(block, ["$Lloop"], words, nounroll=False)
    assert len(out) == UNROLL_FACTOR * (len(block) - 1) + 1
    assert [i.opcode for i in out].count("bra") == 1 and out[-1].opcode == "bra"
    loads = [i for i in out if i.opcode == "ld"]
    assert [split_operands(i)[0][0] for i in loads] == ["%f1~u0", "%f1~u1", "%f1~u2", "%f1"]
    # the second copy loads through the first copy's incremented address
    assert split_operands(loads[1])[1] == ["%rd6~u0"]
    assert words["%rd6~u2"] == 2
    assert unrolled(block, ["$Lloop"], words, nounroll=True) == block


def _guarded_regions(k: int, content: str = "load", between: str = "") -> str:
    """k regions, each skipped by its own forward branch, like a tile
    copy's bounds checks; `between` goes after each region's label."""
    body = ["ld.param.u64 %rd1, [p0];", "ld.param.u32 %r1, [p1];", "cvta.to.global.u64 %rd3, %rd1;",
            "mov.u32 %r2, %tid.x;", "shl.b32 %r3, %r2, 2;", "mov.u32 %r4, sbuf;", "add.s32 %r5, %r4, %r3;"]
    for g in range(k):
        body += [f"add.s32 %r{10 + g}, %r2, {g * 8};", f"setp.ge.s32 %p{g}, %r{10 + g}, %r1;", f"@%p{g} bra $L{g};",
                 f"mad.lo.s32 %r{30 + g}, %r{10 + g}, %r1, %r2;", f"mul.wide.s32 %rd{10 + g}, %r{30 + g}, 4;",
                 f"add.s64 %rd{30 + g}, %rd3, %rd{10 + g};"]
        if content == "load":
            body += [f"ld.global.f32 %f{g}, [%rd{30 + g}];", f"st.shared.f32 [%r5+{128 * g}], %f{g};"]
        else:
            body += [f"st.global.u32 [%rd{30 + g}], %r2;"]
        body += [f"$L{g}:"] + ([between] if between else [])
    body += ["bar.sync 0;", "ret;"]
    return (HEAD + ".shared .align 4 .b8 sbuf[4096];\n.visible .entry k(.param .u64 p0, .param .u32 p1)\n{\n"
            ".reg .b32 %r<64>;\n.reg .b64 %rd<64>;\n.reg .f32 %f<16>;\n.reg .pred %p<16>;\n" + "\n".join(body) + "\n}\n")


def _converted(ptx: str) -> list[ir.Statement]:
    return [s for _, s in if_converted(parse(ptx, "t.ptx").functions["k"].body)]


def _branches(ptx: str) -> int:
    return sum(1 for s in _converted(ptx) if isinstance(s, ir.Instruction) and s.opcode == "bra")


def test_a_run_of_guarded_regions_is_predicated():
    """ptxas: four guarded ld.global/st.shared regions become predicated
    code, no conditional branch left (ptxas -v 18 registers, the loads in
    flight together; the model 13)."""
    out = _converted(_guarded_regions(4))
    assert not any(isinstance(s, ir.Label) for s in out)
    assert [s.opcode for s in out].count("bra") == 0
    loads = [s for s in out if s.opcode == "ld" and "global" in s.modifiers]
    assert [(s.guard.name, s.guard_negated) for s in loads] == [(f"%p{g}", True) for g in range(4)]
    assert register_count(parse(_guarded_regions(4), "t.ptx"), "k") == 13


def test_a_lone_guarded_load_keeps_its_branch_and_a_lone_store_does_not():
    """ptxas: one guarded region with a load stays a branch (nothing to
    overlap it with), one guarded store is predicated."""
    assert _branches(_guarded_regions(1)) == 1
    assert _branches(_guarded_regions(1, "store")) == 0


def test_regions_apart_or_too_long_or_before_a_return_keep_their_branches():
    # a barrier between two regions: no run
    assert _branches(_guarded_regions(2, between="bar.sync 0;")) == 2
    # a region longer than ptxas predicates (25 instructions were not): its
    # neighbour, a load alone now, keeps its branch too
    long = _guarded_regions(2).replace("st.shared.f32 [%r5+0], %f0;",
                                       "\n".join(["mul.f32 %f0, %f0, 0f3F800001;"] * IFCONV_MAX_INSTRUCTIONS)
                                       + "\nst.shared.f32 [%r5+0], %f0;")
    assert _branches(long) == 2
    # a guarded store right before the return: ptxas exits early instead
    early = _guarded_regions(1, "store").replace("$L0:\nbar.sync 0;", "$L0:")
    assert _branches(early) == 1


def test_a_register_defined_only_under_a_guard_is_not_live_before_it():
    """Where the guard is false the register has no older value to keep,
    so it is not live back to the kernel's start."""
    body = """ld.param.u64 %rd1, [a];
cvta.to.global.u64 %rd2, %rd1;
mov.u32 %r1, %tid.x;
ld.global.u32 %r2, [%rd2];
ld.global.u32 %r3, [%rd2+4];
ld.global.u32 %r4, [%rd2+8];
add.s32 %r5, %r2, %r3;
add.s32 %r6, %r5, %r4;
st.global.u32 [%rd2+12], %r6;
setp.eq.s32 %p1, %r1, 0;
@%p1 add.s32 %r7, %r1, 5;
@%p1 st.global.u32 [%rd2], %r7;
ret;"""
    regs = ".reg .pred %p<2>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<3>;"
    unguarded = pressure(body.replace("@%p1 add.s32", "add.s32"), regs)
    assert pressure(body, regs) == unguarded


def test_a_predicated_load_moves_up_with_its_predicate():
    m = parse(_guarded_regions(2), "t.ptx")
    converted = [s for _, s in if_converted(m.functions["k"].body) if isinstance(s, ir.Instruction)]
    order = [i.text for i in schedule_block(converted[:-1], 1 << 20)]
    second_load = next(n for n, t in enumerate(order) if t.startswith("ld.global.f32 %f1"))
    first_store = next(n for n, t in enumerate(order) if t.startswith("st.shared.f32 [%r5+0]"))
    assert second_load < first_store


def test_below_full_occupancy_a_load_waits_for_its_address():
    """Eight independent address -> load chains: ptxas issues each LDG 3,
    3, 3, 4, 4, 4, 3, 2 instructions after the IMAD.WIDE computing its
    address, the next chains' arithmetic in between; with
    LOAD_ISSUE_DISTANCE the schedule does the same (the last load has no
    more work to wait behind)."""
    body = ["ld.param.u64 %rd1, [a];", "ld.param.u32 %r1, [ld];", "cvta.to.global.u64 %rd3, %rd1;", "mov.u32 %r2, %tid.x;"]
    for g in range(8):
        body += [f"mad.lo.s32 %r{10 + g}, %r2, %r1, {g * 7};", f"mul.wide.s32 %rd{10 + g}, %r{10 + g}, 4;",
                 f"add.s64 %rd{30 + g}, %rd3, %rd{10 + g};", f"ld.global.f32 %f{g}, [%rd{30 + g}];"]
    acc = "%f0"
    for g in range(1, 8):
        body.append(f"add.f32 %f{50 + g}, {acc}, %f{g};")
        acc = f"%f{50 + g}"
    body += [f"st.global.f32 [%rd3], {acc};", "ret;"]
    m = module("\n".join(body), ".reg .b32 %r<64>;\n.reg .b64 %rd<64>;\n.reg .f32 %f<64>;")
    insts = list(m.functions["k"].instructions)
    order = schedule_block(insts, 1 << 20, issue_distance=LOAD_ISSUE_DISTANCE)
    gaps = []
    for j, inst in enumerate(order):
        if inst.opcode == "ld" and "global" in inst.modifiers:
            base = inst.operands[1].base.name
            gaps.append(j - max(i for i in range(j) if base in split_operands(order[i])[0]))
    assert gaps[:-1] == [LOAD_ISSUE_DISTANCE] * 7
    assert all(g == 1 for g in _gaps_without_distance(insts))


def _gaps_without_distance(insts: list[ir.Instruction]) -> list[int]:
    order = schedule_block(insts, 1 << 20)
    return [j - max(i for i in range(j) if inst.operands[1].base.name in split_operands(order[i])[0])
            for j, inst in enumerate(order) if inst.opcode == "ld" and "global" in inst.modifiers]


def test_warp_reductions_and_matches_are_issued_early_votes_are_not():
    """Probe SASS: REDUX and MATCH right after the LDG they read, above
    the stores before them in the PTX; VOTE stays among the stores."""
    m = module("""ld.param.u64 %rd1, [a];
cvta.to.global.u64 %rd3, %rd1;
mov.u32 %r2, %tid.x;
mul.wide.s32 %rd5, %r2, 4;
add.s64 %rd6, %rd3, %rd5;
ld.global.u32 %r3, [%rd6];
mul.lo.s32 %r4, %r3, 3;
st.global.u32 [%rd6+128], %r4;
setp.gt.u32 %p1, %r3, 7;
vote.sync.ballot.b32 %r7, %p1, -1;
st.global.u32 [%rd6+512], %r7;
match.any.sync.b32 %r9, %r3, -1;
st.global.u32 [%rd6+768], %r9;
redux.sync.max.u32 %r11, %r3, -1;
st.global.u32 [%rd6+1024], %r11;
ret;""", ".reg .b32 %r<12>;\n.reg .b64 %rd<8>;\n.reg .pred %p<2>;")
    order = [i.opcode for i in schedule_block(list(m.functions["k"].instructions), 1 << 20)]
    first_store = order.index("st")
    assert order.index("redux") < first_store and order.index("match") < first_store
    assert order.index("vote") > first_store


def test_a_load_through_a_redefined_base_stays_below_the_store():
    """[%rd2+4] after `%rd2 = %rd2 - 4` is the byte the store wrote: the
    same register, another value, so no disambiguation."""
    m = module("""ld.param.u64 %rd1, [a];
cvta.to.global.u64 %rd2, %rd1;
ld.global.f32 %f1, [%rd2];
st.global.f32 [%rd2], %f1;
add.s64 %rd2, %rd2, -4;
ld.global.f32 %f2, [%rd2+4];
st.global.f32 [%rd2+8], %f2;
ret;""", ".reg .f32 %f<3>;\n.reg .b64 %rd<3>;")
    order = [i.text for i in schedule_block(list(m.functions["k"].instructions), 16)]
    assert order.index("ld.global.f32 %f2, [%rd2+4]") > order.index("st.global.f32 [%rd2], %f1")


_UNDEFINED = """ld.param.u64 %rd1, [a];
cvta.to.global.u64 %rd2, %rd1;
ld.global.u32 %r1, [%rd2];
ld.global.u32 %r2, [%rd2+4];
ld.global.u32 %r3, [%rd2+8];
ld.global.u32 %r4, [%rd2+12];
add.s32 %r6, %r1, %r2;
add.s32 %r7, %r6, %r3;
add.s32 %r8, %r7, %r4;
st.global.u32 [%rd2+16], %r8;
INIT
$Lloop:
st.global.u32 [%rd2+20], %r5;
ld.global.u32 %r5, [%rd2+24];
setp.ne.s32 %p1, %r5, 0;
@%p1 bra $Lloop;
ret;"""


def test_a_value_undefined_on_every_path_so_far_takes_no_register():
    """The loop stores %r5 before loading it: on entry it holds nothing
    (cub's unloaded items of a partial tile are such values), so it is not
    live through the loads before the loop, as if set right before it."""
    regs = ".reg .pred %p<2>;\n.reg .b32 %r<9>;\n.reg .b64 %rd<3>;"
    undefined = pressure(_UNDEFINED.replace("INIT\n", ""), regs)
    set_late = pressure(_UNDEFINED.replace("INIT", "add.s32 %r5, %r8, 1;"), regs)
    assert undefined == set_late
