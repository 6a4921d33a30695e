"""DebugInfo over real NVRTC `-G` output: functions, scopes, variables with
types and locations, and the line table, checked against the PTX itself."""
from __future__ import annotations

import re

import pytest

import gpudbg
from gpudbg.debug.dwarf import AddressSpace, DebugInfo, LocationKind, TypeKind
from gpudbg.ptx import ir, parse
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module

SOURCE = """\
struct Pair { int a; float b; };
__device__ __noinline__ float scale(float v, int k) {
  float r = v * k;
  return r + 1.0f;
}
extern "C" __global__ void kern(const float* in, float* out, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  Pair p;
  p.a = tid;
  p.b = 2.0f;
  float buf[4];
  for (int i = 0; i < n; i++) {
    acc += in[i] * p.b;
    buf[i & 3] = acc;
  }
  out[tid] = scale(acc, p.a) + buf[tid & 3];
}
"""
LOOP_BODY_LINE = 14


@pytest.fixture(scope="module")
def loaded():
    ptx = gpudbg.compile_ptx(SOURCE, ["-G"], name="dwarfk.cu")
    module = parse(ptx, "dwarfk.ptx")
    lm = load_module(SimGPU(), module)
    return lm.program, DebugInfo(lm.program)


def _pcs(program, fname):
    info = program.functions[fname]
    return range(info.entry_pc, info.end_pc)


def _loop_pc(program, di):
    """The first instruction of the loop body line (`acc += in[i] * p.b`)."""
    pcs = di.lines.pcs_for_line("dwarfk.cu", LOOP_BODY_LINE)
    assert len(pcs) == 1
    return pcs[0]


def _writers(program, fname, reg):
    """(pc, source line) of instructions in fname whose destination is reg."""
    out = []
    for pc in _pcs(program, fname):
        inst = program.code[pc].inst
        if inst.opcode in ("st", "bra", "ret", "call", "bar") or not inst.operands:
            continue
        dst = inst.operands[0]
        if isinstance(dst, ir.Register) and dst.name == reg:
            out.append((pc, inst.line_info.line if inst.line_info else None))
    return out


def test_subprograms_and_parameters(loaded):
    program, di = loaded
    assert di.has_variables
    kern = di.function("kern")
    scale = di.function("scale")
    assert scale.linkage_name == "_Z5scalefi" and di.function("_Z5scalefi") is scale
    assert (kern.decl_file, kern.decl_line) == ("dwarfk.cu", 6)
    assert str(kern.return_type) == "void" and str(scale.return_type) == "float"
    assert [(v.name, str(v.type)) for v in kern.parameters] == [
        ("in", "const float *"), ("out", "float *"), ("n", "int")]
    assert [(v.name, str(v.type)) for v in scale.parameters] == [("v", "float"), ("k", "int")]
    info = program.functions["kern"]
    assert kern.low_pc == program.code_address(info.entry_pc)
    assert kern.high_pc == program.code_address(info.end_pc)
    for pc in _pcs(program, "kern"):
        assert di.function_at(pc) is kern
    for pc in _pcs(program, "_Z5scalefi"):
        assert di.function_at(pc) is scale
    in_type = kern.parameters[0].type
    assert in_type.kind is TypeKind.POINTER and in_type.space is AddressSpace.GENERIC
    assert in_type.target.kind is TypeKind.CONST and in_type.target.strip().name == "float"


def test_variables_inside_the_loop(loaded):
    program, di = loaded
    pc = _loop_pc(program, di)
    seen = [(v.depth, v.name, str(v.variable.type)) for v in di.variables_at(pc)]
    assert seen == [
        (0, "i", "int"),
        (1, "p", "struct Pair"), (1, "buf", "float [4]"), (1, "tid", "int"), (1, "acc", "float"),
        (2, "in", "const float *"), (2, "out", "float *"), (2, "n", "int"),
    ]
    kinds = [s.kind for s in di.scopes_at(pc)]
    assert kinds == ["lexical_block", "lexical_block", "subprogram"]
    declared = set(program.module.functions["kern"].registers)
    for v in di.variables_at(pc):
        loc = v.location
        assert loc is not None, v.name
        if v.name in ("p", "buf"):
            assert loc.kind is LocationKind.MEMORY and loc.space is AddressSpace.LOCAL
            assert loc.symbol in program.module.functions["kern"].locals
        else:
            assert loc.kind is LocationKind.REGISTER and loc.name in declared, (v.name, loc)
    # the loop counter is the register the loop body indexes `in` with
    i_reg = di.lookup("i", pc).location.name
    body = program.code[pc].inst
    assert body.opcode == "cvt" and body.operands[1] == ir.Register(i_reg)


def test_struct_and_array_layout_match_the_local_depot(loaded):
    program, di = loaded
    pc = _loop_pc(program, di)
    p = di.lookup("p", pc)
    buf = di.lookup("buf", pc)
    pair = p.variable.type
    assert pair.kind is TypeKind.STRUCT and pair.byte_size == 8
    assert [(m.name, str(m.type), m.offset) for m in pair.members] == [("a", "int", 0), ("b", "float", 4)]
    assert buf.variable.type.dims == (4,) and buf.variable.type.byte_size == 16
    # `p.a = tid` and `p.b = 2.0f` store at %SP + offset of the member
    stores = {}
    for q in _pcs(program, "kern"):
        inst = program.code[q].inst
        if inst.opcode == "st" and isinstance(inst.operands[0], ir.Address) \
                and inst.operands[0].base == ir.Register("%SP"):
            stores[inst.line_info.line] = inst.operands[0].offset
    base = di.frame_offset(p.location, "kern")
    assert stores[10] == base + pair.members[0].offset
    assert stores[11] == base + pair.members[1].offset
    assert di.frame_offset(buf.location, "kern") == base + 8
    text = "\n".join(program.code[q].inst.text for q in _pcs(program, "kern"))
    assert re.search(r"add\.u64 %rd\d+, %SP, 8", text)  # &buf[0]
    with pytest.raises(ValueError, match="not a location in a function's local memory"):
        di.frame_offset(di.lookup("tid", pc).location, "kern")


def test_register_locations_hold_the_assigned_value(loaded):
    """The register a location names is written by an instruction on the
    line that assigns the variable in the source."""
    program, di = loaded
    kern = di.function("kern")
    scopes = [kern.scope]
    allvars = []
    while scopes:
        s = scopes.pop()
        allvars += [(v, s) for v in s.variables]
        scopes += s.children
    assigned = {"tid": {7}, "in": {6}, "out": {6}, "n": {6}, "acc": {8, 13, 14}, "i": {13}}
    checked = 0
    for v, _scope in allvars:
        if v.name not in assigned:
            continue
        locs = [v.location] if not v.ranges else [r.location for r in v.ranges]
        for loc in locs:
            assert loc.kind is LocationKind.REGISTER
            lines = {line for _pc, line in _writers(program, "kern", loc.name)}
            assert lines & assigned[v.name], (v.name, loc.name, lines)
            checked += 1
    assert checked >= 8
    scale = di.function("scale")
    r = scale.scope.children[0].variables[0]
    assert r.name == "r" and {line for _, line in _writers(program, "_Z5scalefi", r.location.name)} == {3}


def test_location_lists_follow_the_pc(loaded):
    program, di = loaded
    i = next(v for v in di.variables_at(_loop_pc(program, di)) if v.name == "i").variable
    assert len(i.ranges) >= 2
    for r in i.ranges:
        assert r.low < r.high
        assert i.location_at(r.low) == r.location
    before = program.code_address(program.functions["kern"].entry_pc)
    assert i.location_at(before) is None


def test_line_table_both_ways(loaded):
    program, di = loaded
    lines = di.lines
    assert lines.files == ["dwarfk.cu"]
    assert lines.lines_of("dwarfk.cu") == [2, 3, 4, 6, 7, 8, 10, 11, 13, 14, 15, 17, 18]
    # the for line has two code segments: the init/condition and the increment
    assert len(lines.pcs_for_line("dwarfk.cu", 13)) == 2
    for line in lines.lines_of("dwarfk.cu"):
        for pc in lines.pcs_for_line("dwarfk.cu", line):
            e = lines.at(pc)
            assert (e.file, e.line, e.is_stmt) == ("dwarfk.cu", line, True)
            assert program.code[pc].inst.line_info.line == line
    for pc in range(len(program.code)):
        e = lines.at(pc)
        if e is not None and e.is_stmt:
            assert pc in lines.pcs_for_line(e.file, e.line)
    assert lines.pcs_for_line("/some/dir/dwarfk.cu", 7) == lines.pcs_for_line("dwarfk.cu", 7)
    assert lines.pcs_for_line("dwarfk.cu", 9) == []  # `Pair p;` has no code
    assert lines.resolve_breakpoint("dwarfk.cu", 9) == (10, lines.pcs_for_line("dwarfk.cu", 10))
    with pytest.raises(ValueError, match="no line information for source file"):
        lines.pcs_for_line("other.cu", 3)
    with pytest.raises(ValueError, match="no code at or after"):
        lines.resolve_breakpoint("dwarfk.cu", 99)
    body = lines.function_body_pc("kern")
    assert lines.at(body).line == 7
    assert lines.next_stmt(body) == lines.pcs_for_line("dwarfk.cu", 8)[0]
    last = program.functions["kern"].end_pc - 1
    assert lines.next_stmt(last) is None


def test_lineinfo_only_module_has_lines_but_no_variables():
    ptx = gpudbg.compile_ptx(SOURCE, ["-lineinfo"], name="dwarfk.cu")
    lm = load_module(SimGPU(), parse(ptx, "dwarfk_O.ptx"))
    di = DebugInfo(lm.program)
    assert not di.has_variables
    assert di.variables_at(0) == [] and di.function_at(0) is None
    assert di.lines.pcs_for_line("dwarfk.cu", 14)
