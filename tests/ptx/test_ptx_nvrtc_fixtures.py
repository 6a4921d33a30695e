"""Structure of the NVRTC-generated fixtures (compute_80 and compute_90)."""
from __future__ import annotations

import struct

import pytest

from gpudbg.ptx import ir

from ptx_fixtures import FIXTURES, load

ALL_PTX = sorted(p.name for p in FIXTURES.glob("*.ptx"))


def _instr(func: ir.Function, full_opcode: str) -> list[ir.Instruction]:
    return [i for i in func.instructions if i.full_opcode == full_opcode]


@pytest.mark.parametrize("name", ALL_PTX)
def test_every_fixture_parses(name):
    mod = load(name)
    assert mod.version is not None and mod.version >= (7, 0)
    assert mod.address_size == 64
    assert mod.functions
    for func in mod.functions.values():
        for ins in func.instructions:
            assert ins.loc.line > 0 and ins.loc.col > 0
            assert ins.text and not ins.text.endswith(";")
            words = ins.text.split()
            head = words[1] if words[0].startswith("@") else words[0]
            assert head == ins.full_opcode
            assert words[0].startswith("@") == (ins.guard is not None)


def test_saxpy_structure(arch):
    mod = load("saxpy", arch)
    assert mod.targets == (f"sm_{arch[2:]}",)
    f = mod.functions["saxpy"]
    assert f.kind == "entry" and f.linkage == "visible"
    assert [(p.name, p.type, p.space) for p in f.params] == [
        ("saxpy_param_0", "u32", "param"), ("saxpy_param_1", "f32", "param"),
        ("saxpy_param_2", "u64", "param"), ("saxpy_param_3", "u64", "param")]
    # `.reg .b32 %r<6>;` expands to %r0..%r5
    assert [r for r in f.registers if r.startswith("%r") and not r.startswith("%rd")] == [
        f"%r{i}" for i in range(6)]
    assert f.registers["%p1"].type == "pred"
    ld = f.instructions[0]
    assert (ld.opcode, ld.modifiers) == ("ld", ("param", "u32"))
    assert ld.operands == (ir.Register("%r2"), ir.Address(ir.Symbol("saxpy_param_0"), 0))
    assert ld.text == "ld.param.u32 %r2, [saxpy_param_0]"
    movs = _instr(f, "mov.u32")
    assert [m.operands[1] for m in movs] == [
        ir.SpecialRegister("%ctaid", "x"), ir.SpecialRegister("%ntid", "x"),
        ir.SpecialRegister("%tid", "x")]
    bra = next(i for i in f.instructions if i.opcode == "bra")
    assert bra.guard == ir.Register("%p1") and not bra.guard_negated
    assert bra.operands == (ir.LabelRef("$L__BB0_2"),)
    assert bra.text == "@%p1 bra $L__BB0_2"
    assert bra.loc.col == 2  # the guard, after the tab
    labels = [s.name for s in f.body if isinstance(s, ir.Label)]
    assert labels == ["$L__BB0_2"]
    fma = _instr(f, "fma.rn.f32")[0]
    assert fma.operands == (ir.Register("%f4"), ir.Register("%f2"), ir.Register("%f1"),
                            ir.Register("%f3"))


def test_reduce_printf_call_sequence(arch):
    mod = load("reduce_printf", arch)
    vprintf = mod.functions["vprintf"]
    assert vprintf.body is None and vprintf.linkage == "extern"
    assert [r.name for r in vprintf.returns] == ["func_retval0"]
    assert [p.type for p in vprintf.params] == ["b64", "b64"]
    fmt = mod.globals["$str"]
    assert fmt.space == "global" and fmt.align == 1
    assert bytes(fmt.initializer.items) == b"block %d sum %f\n"
    assert fmt.dims == (len(b"block %d sum %f\n") + 1,)
    f = mod.functions["reduce"]
    shared = [v for v in f.locals.values() if v.space == "shared"]
    assert len(shared) == 1 and shared[0].dims == (1024,) and shared[0].align == 4
    depot = [v for v in f.locals.values() if v.name.startswith("__local_depot")]
    assert depot and depot[0].space == "local"
    (call,) = [i for i in f.instructions if i.opcode == "call"]
    assert call.modifiers == ("uni",)
    (target,) = call.operands
    scoped = {v.display_name: v.name for v in f.locals.values() if v.display_name}
    assert set(scoped) == {"param0", "param1", "retval0"}
    assert scoped["param0"].startswith("param0$")
    assert target == ir.CallTarget(
        returns=(ir.Symbol(scoped["retval0"]),), target=ir.Symbol("vprintf"),
        args=(ir.Symbol(scoped["param0"]), ir.Symbol(scoped["param1"])))
    assert call.text == "call.uni (retval0), vprintf, (param0, param1)"
    st = [i for i in f.instructions if i.full_opcode == "st.param.b64"]
    assert st[0].operands[0] == ir.Address(ir.Symbol(scoped["param0"]), 0)
    # the scope's bare-named register is renamed too
    assert any(r.display_name == "temp_param_reg" for r in f.registers.values())
    assert "temp_param_reg" not in f.registers


def test_atomics(arch):
    f = load("atomics", arch).functions["atomics"]
    atoms = {i.full_opcode: i for i in f.instructions if i.opcode in ("atom", "red")}
    assert "atom.global.cas.b32" in atoms
    cas = atoms["atom.global.cas.b32"]
    assert len(cas.operands) == 4 and isinstance(cas.operands[1], ir.Address)
    fadd = next(i for i in f.instructions if i.modifiers[-2:] == ("add", "f32"))
    assert fadd.operands[-1] == ir.Immediate(0.5, bits=0x3F000000, width=32)
    wide = next(i for i in f.instructions if i.modifiers[-2:] == ("add", "u64"))
    assert wide.operands[-1] == ir.Immediate(0x100000001)


def test_warp_shuffles_and_votes(arch):
    f = load("warp", arch).functions["warp_ops"]
    shfl = [i for i in f.instructions if i.opcode == "shfl"]
    assert {i.modifiers[1] for i in shfl} == {"down", "bfly", "up", "idx"}
    for i in shfl:
        assert isinstance(i.operands[0], ir.PredicatePair)
        assert isinstance(i.operands[0].second, ir.Register)
        assert i.operands[0].second.name.startswith("%p")
    votes = {i.modifiers[1] for i in f.instructions if i.opcode == "vote"}
    assert votes == {"ballot", "all", "any"}
    act = next(i for i in f.instructions if i.opcode == "activemask")
    assert act.modifiers == ("b32",) and isinstance(act.operands[0], ir.Register)


def test_noinline_device_functions(arch):
    mod = load("noinline", arch)
    sq = mod.functions["_Z11square_plusii"]
    assert sq.kind == "func" and sq.body is not None and sq.linkage is None
    assert [(r.name, r.type) for r in sq.returns] == [("func_retval0", "b32")]
    pair = mod.functions["_Z9make_pairif"]
    (ret,) = pair.returns
    assert (ret.type, ret.dims, ret.align) == ("b8", (16,), 8)
    st = [i for i in pair.instructions if i.opcode == "st"]
    assert st[-1].operands[0] == ir.Address(ir.Symbol("func_retval0"), 8)
    k = mod.functions["use_noinline"]
    targets = [i.operands[0].target for i in k.instructions if i.opcode == "call"]
    assert targets == [ir.Symbol("_Z11square_plusii"), ir.Symbol("_Z9make_pairif")]


def test_indirect_call_prototype(arch):
    mod = load("indirect", arch)
    proto = mod.callprototypes["prototype_0"]
    assert [p.type for p in proto.params] == ["b32", "b32"]
    assert [r.type for r in proto.returns] == ["b32"]
    assert proto.body is None
    f = mod.functions["apply"]
    (call,) = [i for i in f.instructions if i.opcode == "call"]
    ct = call.operands[0]
    assert isinstance(ct.target, ir.Register) and ct.target.name.startswith("%rd")
    assert ct.prototype == "prototype_0" and len(ct.args) == 2
    table = mod.globals["table"]
    assert table.initializer.items == [
        ir.Symbol("_Z6op_addii"), ir.Symbol("_Z6op_mulii"), ir.Symbol("_Z6op_subii")]
    assert (table.dims, table.type, table.linkage) == ((3,), "u64", "visible")


def test_dynamic_shared(arch):
    mod = load("dynshared", arch)
    buf = mod.globals["buf"]
    assert (buf.space, buf.linkage, buf.dims, buf.align) == ("shared", "extern", (None,), 16)
    assert buf.element_count is None


def test_constant_initializers(arch):
    g = load("constants", arch).globals
    coeffs = g["coeffs"]
    assert coeffs.space == "const" and coeffs.type == "b8"
    assert bytes(coeffs.initializer.items) == struct.pack("<4f", 1.0, 0.5, -2.25, 3.0e10)
    ints = bytes(g["ints"].initializer.items).ljust(24, b"\0")
    assert struct.unpack("<6i", ints) == (1, -2, 3, 0x7FFFFFFF, -2147483648, 42)
    assert bytes(g["dcoef"].initializer.items) == struct.pack("<2d", 3.141592653589793, -0.1)
    assert g["counter"].initializer.items == [7]
    assert g["counter_ptr"].initializer.items == [ir.GenericSymbol(ir.Symbol("counter"))]
    assert g["msg"].dims == (3,) and g["msg"].initializer.items == [104, 105]


def test_inline_asm_scopes(arch):
    f = load("inline_asm", arch).functions["asm_temps"]
    scoped = {r.name: r.display_name for r in f.registers.values() if r.display_name}
    assert scoped == {"p$1": "p", "p$2": "p", "tmp$2": "tmp"}
    setp = [i for i in f.instructions if i.opcode == "setp"]
    assert setp[0].operands[0] == ir.Register("p$1")
    assert setp[1].operands[0] == ir.Register("p$2")
    guarded = [i for i in f.instructions if i.guard is not None]
    assert [(i.opcode, i.guard, i.guard_negated) for i in guarded] == [
        ("add", ir.Register("p$2"), False), ("mov", ir.Register("p$2"), True)]
    assert guarded[0].operands[0] == ir.Register("tmp$2")
    assert guarded[1].text == "@!p mov.u32 tmp, 7"
    lane = next(i for i in f.instructions if ir.SpecialRegister("%laneid") in i.operands)
    assert lane.opcode == "mov"


def test_debug_build(arch):
    mod = load("debug_mix", arch)
    assert mod.debug and mod.targets == (f"sm_{arch[2:]}", "debug")
    assert mod.files[1].endswith("debug_mix.cu")
    names = [s.name for s in mod.debug_sections]
    assert names[:3] == [".debug_loc", ".debug_abbrev", ".debug_info"]
    info = mod.debug_sections[2]
    assert info.items[0].width == 4 and isinstance(info.items[0].values[0], int)
    values = [v for it in info.items for v in it.values]
    assert ".debug_abbrev" in values and ".debug_line" in values
    assert any(isinstance(v, str) and v.startswith(".debug_loc+") for v in values)
    assert "$L__func_begin0" in values
    abbrev = mod.debug_sections[1]
    assert all(it.width == 1 for it in abbrev.items)
    k = mod.functions["debug_kernel"]
    assert k.instructions[0].line_info.file_index == 1
    lines = {i.line_info.line for i in k.instructions if i.line_info}
    assert {19, 20, 21, 22, 23, 24, 25} <= lines
    labels = {s.name for s in k.body if isinstance(s, ir.Label)}
    assert "$L__func_begin1" in labels
    calls = [i.operands[0] for i in k.instructions if i.opcode == "call"]
    assert [c.target.name for c in calls] == ["_Z5scalefi", "vprintf"]
    # two callseq scopes: their param0 declarations get distinct names
    p0 = [c.args[0].name for c in calls]
    assert len(set(p0)) == 2 and all(n.startswith("param0$") for n in p0)
    assert all(k.locals[n].display_name == "param0" for n in p0)
    tmp = [r for r in k.registers.values() if r.display_name == "%tmp"]
    assert tmp and all(r.name.startswith("%tmp$") for r in tmp)
    scale = mod.functions["_Z5scalefi"]
    assert any(v.name == "__local_depot0" for v in scale.locals.values())


def test_lineinfo_inlined_at(arch):
    mod = load("lineinfo_mix", arch)
    assert not mod.debug
    k = mod.functions["debug_kernel"]
    inlined = [i for i in k.instructions if i.line_info and i.line_info.inlined_at]
    assert inlined
    li = inlined[0].line_info
    assert (li.file_index, li.line, li.col) == (1, 12, 5)
    assert li.function_name == "$L__info_string0"
    assert li.inlined_at == ir.LineInfo(1, 19, 5)
    (dstr,) = [s for s in mod.debug_sections if s.name == ".debug_str"]
    assert dstr.items[0] == ir.DebugItem(0, ["$L__info_string0"])
    assert bytes(dstr.items[1].values) == b"_Z6clampiiii\0"


def test_archs_agree():
    for stem in ("saxpy", "reduce_printf", "warp", "indirect", "debug_mix"):
        a, b = load(stem, "sm80"), load(stem, "sm90")
        assert list(a.functions) == list(b.functions)
        assert list(a.globals) == list(b.globals)
