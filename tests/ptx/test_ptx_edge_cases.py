"""The hand-written edge-case fixture: syntax NVRTC rarely or never emits."""
from __future__ import annotations

import pytest

from gpudbg.ptx import ir, parse

from ptx_fixtures import load


@pytest.fixture(scope="module")
def mod() -> ir.Module:
    return load("edge_cases.ptx")


def _ops(func: ir.Function, text: str) -> tuple:
    (ins,) = [i for i in func.instructions if i.text == text]
    return ins.operands


def test_module_header(mod):
    assert mod.version == (8, 7)
    assert mod.targets == ("sm_90a", "debug") and mod.debug
    assert mod.files == {1: "/src/edge.cu", 2: "/src/inc.h"}
    assert mod.pragmas == ["nounroll"]


def test_globals_and_initializers(mod):
    g = mod.globals
    assert g["dyn_sh"].linkage == "extern" and g["dyn_sh"].dims == (None,)
    assert g["ptrs"].initializer.items == [
        ir.Symbol("counter"), ir.GenericSymbol(ir.Symbol("counter", 4))]
    assert g["fconst"].initializer.items == [1.0, -1.5, 2]
    assert g["dconst"].initializer.items == [3.141592653589793]
    assert g["nested"].dims == (2, 3) and g["nested"].element_count == 6
    assert g["nested"].initializer.items == [1, -2, 16, 15, 5, 4294967295]
    assert g["wide"].initializer.items == [2**64 - 1]
    assert g["a1"].dims == () and g["a2"].dims == (4,) and g["a2"].align == 4
    assert g["vec4"].vector == 4 and g["vec4"].type == "f32"
    assert g["managed_var"].linkage == "visible"


def test_entry_header(mod):
    f = mod.functions["edge"]
    assert f.directives == {"maxntid": (256, 1, 1), "minnctapersm": 2, "maxnreg": 64}
    assert f.pragmas == ["nounroll"]
    p0, p1, p2 = f.params
    assert (p0.type, p0.ptr_space, p0.ptr_align) == ("u64", "global", 16)
    assert (p1.type, p1.align, p1.dims) == ("b8", 8, (16,))
    assert p2.type == "u32"
    assert f.registers["%v"].vector == 4 and f.registers["%f2"].type == "f32"
    assert f.locals["tile"].dims == (2, 64)


def test_operand_forms(mod):
    f = mod.functions["edge"]
    R = ir.Register
    assert _ops(f, "ld.param.u32 %r1, [edge_param_1+4]")[1] == ir.Address(
        ir.Symbol("edge_param_1"), 4)
    assert _ops(f, "mov.u32 %r3, %nctaid.z")[1] == ir.SpecialRegister("%nctaid", "z")
    assert _ops(f, "mov.u32 %r4, %envreg7")[1] == ir.SpecialRegister("%envreg7")
    assert _ops(f, "setp.ne.s32 %p1|%p2, %r2, -1") == (
        ir.PredicatePair(R("%p1"), R("%p2")), R("%r2"), ir.Immediate(-1))
    assert _ops(f, "ld.global.v4.f32 {%f1, _, %f2, %f1}, [%rd1+-8]") == (
        ir.Vector((R("%f1"), ir.Sink(), R("%f2"), R("%f1"))), ir.Address(R("%rd1"), -8))
    assert _ops(f, "ld.global.u32 %r1, [0x100]")[1] == ir.Address(None, 256)
    assert _ops(f, "mov.u64 %rd3, ptrs+8")[1] == ir.Symbol("ptrs", 8)
    assert _ops(f, "mov.f64 %rd3, 0d3FF0000000000000")[1] == ir.Immediate(
        1.0, bits=0x3FF0000000000000, width=64)
    assert _ops(f, "mov.f32 %f2, 1.5")[1] == ir.Immediate(1.5)
    big = _ops(f, "mov.u64 %rd3, -9223372036854775808")[1]
    assert big == ir.Immediate(-(2**63)) and type(big.value) is int
    assert _ops(f, "add.u32 %r1, %r1, (4*8+1)")[2] == ir.Immediate(33)
    assert _ops(f, "and.pred %p1, !%p2, %p1")[1] == ir.Negated(R("%p2"))
    (ld,) = [i for i in f.instructions if i.opcode == "ld" and "L1::evict_last" in i.modifiers]
    assert ld.modifiers == ("global", "L1::evict_last", "u32")


def test_guards_and_line_info(mod):
    f = mod.functions["edge"]
    bras = [i for i in f.instructions if i.opcode == "bra"]
    assert [(b.guard, b.guard_negated, b.modifiers) for b in bras] == [
        (ir.Register("%p1"), False, ()), (ir.Register("%p2"), True, ("uni",))]
    first = f.instructions[0]
    assert first.line_info == ir.LineInfo(1, 10, 3)
    assert bras[0].line_info == ir.LineInfo(
        2, 3, 1, inlined_at=ir.LineInfo(1, 11, 5), function_name="$L__info_string0+2")


def test_nested_scope_shadowing(mod):
    f = mod.functions["edge"]
    adds = [i for i in f.instructions if i.full_opcode == "add.u32"]
    assert [a.operands[0] for a in adds] == [
        ir.Register("%r1"), ir.Register("%r1$2"), ir.Register("%r1$1"), ir.Register("%r1")]
    mov5 = next(i for i in f.instructions if i.text == "mov.u32 %r1, 5")
    assert mov5.operands[0] == ir.Register("%r1$1")
    assert f.registers["%r1$1"].display_name == "%r1"
    assert f.registers["%r1$2"].display_name == "%r1"
    assert f.locals["param0$1"].display_name == "param0"
    (call,) = [i for i in f.instructions if i.opcode == "call"]
    assert call.operands[0] == ir.CallTarget((), ir.Symbol("helper"), (ir.Symbol("param0$1"),))


def test_branchtargets(mod):
    f = mod.functions["edge"]
    assert f.branchtargets == {"ts": ("$L__BB0_2", "$L__BB0_3")}
    brx = next(i for i in f.instructions if i.opcode == "brx")
    assert brx.modifiers == ("idx",)
    assert brx.operands == (ir.Register("%r1"), ir.LabelRef("ts"))


def test_calls_prototypes_and_calltargets(mod):
    h = mod.functions["helper"]
    assert h.directives == {"noreturn": True}
    calls = [i.operands[0] for i in h.instructions if i.opcode == "call"]
    assert calls[0] == ir.CallTarget((ir.Symbol("retval0$1"),), ir.Register("%rd1"),
                                     (ir.Symbol("param0$1"),), "prototype_7")
    assert calls[1] == ir.CallTarget((ir.Register("%r1"),), ir.Register("%rd1"),
                                     (ir.Register("%rd1"),), "Ftgt")
    assert calls[2] == ir.CallTarget((), ir.Symbol("helper"), ())
    proto = mod.callprototypes["prototype_7"]
    assert [p.type for p in proto.params] == ["b64"] and [r.type for r in proto.returns] == ["b32"]
    assert mod.calltargets == {"Ftgt": ("helper", "vprintf")}
    assert mod.functions["helper_decl"].linkage == "weak"
    assert mod.functions["helper_decl"].body is None


def test_debug_sections(mod):
    dstr, dinfo = mod.debug_sections
    assert dstr.name == ".debug_str"
    assert dstr.items == [ir.DebugItem(0, ["$L__info_string0"]), ir.DebugItem(1, [95, 90, 0]),
                          ir.DebugItem(1, [97, 98, 10])]
    assert dinfo.items == [
        ir.DebugItem(4, ["$L__func_end0-$L__func_begin0"]),
        ir.DebugItem(4, [".debug_abbrev"]),
        ir.DebugItem(4, [".debug_info+123"]),
        ir.DebugItem(8, [-1, 16, "$L__info_string0"]),
        ir.DebugItem(2, [7]),
    ]


HEADER = ".version 7.0\n.target sm_80\n.address_size 64\n"


def test_callprototype_label_clash_is_qualified():
    body = """
.visible .entry k{n}()
{{
	.reg .b64 %rd1;
	{{
	.param .b32 retval0;
	proto : .callprototype (.param .b{w} _) _ ();
	call (retval0), %rd1, (), proto;
	}}
}}
"""
    mod = parse(HEADER + body.format(n=1, w=32) + body.format(n=2, w=64) +
                body.format(n=3, w=32))
    assert set(mod.callprototypes) == {"proto", "proto$k2"}
    assert mod.callprototypes["proto$k2"].returns[0].type == "b64"
    protos = [mod.functions[f"k{n}"].instructions[0].operands[0].prototype for n in (1, 2, 3)]
    assert protos == ["proto", "proto$k2", "proto"]


def test_extern_then_definition_and_forward_use():
    mod = parse(HEADER + """
.extern .global .align 4 .u32 late;
.func use_later();
.entry k()
{
	.reg .b64 %rd1;
	mov.u64 %rd1, later_var;
	call.uni use_later;
	ret;
}
.func use_later() { ret; }
.global .align 4 .u32 late = 5;
.global .u32 later_var;
""")
    assert mod.globals["late"].initializer.items == [5]
    assert mod.functions["use_later"].body is not None
    assert list(mod.functions) == ["use_later", "k"]


def test_bare_register_names_and_address_bases():
    mod = parse(HEADER + """
.entry k()
{
	.reg .b64 %rd<2>;
	{
	.reg .b64 addr;
	.reg .pred q;
	cvta.to.global.u64 addr, %rd1;
	ld.global.u64 %rd0, [addr+8];
	setp.eq.u64 q, %rd0, 0;
	@q ret;
	}
}
""")
    f = mod.functions["k"]
    ld = f.instructions[1]
    assert ld.operands[1] == ir.Address(ir.Register("addr$1"), 8)
    assert f.instructions[3].guard == ir.Register("q$1")
    assert f.instructions[3].operands == ()


def test_cluster_directives_and_call_forms():
    mod = parse(HEADER + """
.func (.param .b32 r) f(.param .b32 a) { ret; }
.visible .entry k()
.reqntid 128
.explicitcluster
.reqnctapercluster 2, 2
.maxclusterrank 8
.blocksareclusters
.pragma "nounroll";
{
	.reg .b32 %r<2>;
	.param .b32 r;
	.param .b32 a;
	call.uni (r), f;
	call.uni (r), f, (a);
	call f, (a);
	mov.u32 %r1, %is_explicit_cluster;
	mov.u32 %r1, %cluster_ctaid.y;
	mov.u32 %r1, %reserved_smem_offset_begin;
	mov.u32 %r1, %pm3;
	ret;
}
""")
    k = mod.functions["k"]
    assert k.directives == {"reqntid": (128, 1, 1), "explicitcluster": True,
                            "reqnctapercluster": (2, 2, 1), "maxclusterrank": 8,
                            "blocksareclusters": True}
    assert k.pragmas == ["nounroll"]
    calls = [i.operands[0] for i in k.instructions if i.opcode == "call"]
    assert calls == [
        ir.CallTarget((ir.Symbol("r"),), ir.Symbol("f"), ()),
        ir.CallTarget((ir.Symbol("r"),), ir.Symbol("f"), (ir.Symbol("a"),)),
        ir.CallTarget((), ir.Symbol("f"), (ir.Symbol("a"),)),
    ]
    assert [i.modifiers for i in k.instructions if i.opcode == "call"] == [
        ("uni",), ("uni",), ()]
    specials = [i.operands[1] for i in k.instructions if i.opcode == "mov"]
    assert specials == [
        ir.SpecialRegister("%is_explicit_cluster"), ir.SpecialRegister("%cluster_ctaid", "y"),
        ir.SpecialRegister("%reserved_smem_offset_begin"), ir.SpecialRegister("%pm3")]
    assert mod.functions["f"].returns[0].name == "r"


def test_comments_inside_instructions_are_dropped_from_text():
    mod = parse(HEADER + ".entry k()\n{\n\t.reg .b32 %r1;\n\tmov.u32 /* x */ %r1, // y\n\t 1;\n}\n")
    assert mod.functions["k"].instructions[0].text == "mov.u32 %r1, 1"
