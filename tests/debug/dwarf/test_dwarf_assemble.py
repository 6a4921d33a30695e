"""The DWARF assembler, register-name encoding, location decoding and type
spelling, on hand-made inputs and with property tests."""
from __future__ import annotations

import glob
import os

import pytest
from elftools.dwarf.dwarf_expr import DWARFExprParser
from elftools.dwarf.structs import DWARFStructs
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.debug.dwarf import (AddressSpace, DebugInfo, DwarfAssemblyError, LocationKind, Type, TypeKind,
                                assemble, register_name, register_number)
from gpudbg.debug.dwarf.assemble import SYMBOLIC_BASE, Symbols, encode, evaluate
from gpudbg.debug.dwarf.locations import decode
from gpudbg.ptx import ir, parse
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.loader import load_module

LOC = ir.SourceLoc("t.ptx", 1, 1)
STRUCTS = DWARFStructs(little_endian=True, dwarf_format=32, address_size=8)


def _module(*sections: tuple[str, list[ir.DebugItem]]) -> ir.Module:
    m = ir.Module("t.ptx")
    m.debug_sections = [ir.DebugSection(name, items, LOC) for name, items in sections]
    return m


def test_labels_sections_and_code_addresses_resolve():
    m = _module(
        (".debug_abbrev", [ir.DebugItem(1, [1, 2]), ir.DebugItem(0, ["$L__abbrev_x"]), ir.DebugItem(1, [3])]),
        (".debug_info", [ir.DebugItem(4, [".debug_abbrev", "$L__abbrev_x", ".debug_line"]),
                         ir.DebugItem(8, ["$L__func_begin0", "$L__func_end0-$L__func_begin0"]),
                         ir.DebugItem(4, [".debug_abbrev+2", "-1"]),
                         ir.DebugItem(8, ["__local_depot0+8", "gvar+4"]),
                         ir.DebugItem(2, [258])]),
    )
    syms = Symbols({"$L__func_begin0": 0x1000, "$L__func_end0": 0x1040}, {"gvar": 0x5000}, {"__local_depot0"})
    a = assemble(m, syms)
    assert a.sections[".debug_abbrev"] == bytes([1, 2, 3])
    assert a.data_labels["$L__abbrev_x"] == (".debug_abbrev", 2)
    info = a.sections[".debug_info"]
    words = [int.from_bytes(info[i:i + 4], "little") for i in (0, 4, 8)]
    assert words == [0, 2, 0]
    assert int.from_bytes(info[12:20], "little") == 0x1000
    assert int.from_bytes(info[20:28], "little") == 0x40
    assert info[28:32] == (2).to_bytes(4, "little") and info[32:36] == b"\xff\xff\xff\xff"
    depot = int.from_bytes(info[36:44], "little")
    assert depot >= SYMBOLIC_BASE and a.symbol_at(depot) == ("__local_depot0", 8)
    assert int.from_bytes(info[44:52], "little") == 0x5004 and a.symbol_at(0x5004) is None
    assert info[52:] == bytes([2, 1])


@pytest.mark.parametrize("items, message", [
    ([ir.DebugItem(8, ["$L__nowhere"])], r"unknown symbol \$L__nowhere"),
    ([ir.DebugItem(1, [256])], "does not fit in 1 bytes"),
    ([ir.DebugItem(2, [-40000])], "does not fit in 2 bytes"),
    ([ir.DebugItem(3, [1])], "is not 1, 2, 4 or 8"),
    ([ir.DebugItem(4, ["(1+2"])], "unbalanced|ends early"),
    ([ir.DebugItem(4, ["4/0"])], "division by zero"),
    ([ir.DebugItem(0, ["$L__a"]), ir.DebugItem(0, ["$L__a"])], r"label \$L__a defined twice"),
])
def test_bad_values_fail_with_a_clear_error(items, message):
    with pytest.raises(DwarfAssemblyError, match=message):
        assemble(_module((".debug_info", items)), Symbols({}, {}, set()))


def test_a_section_twice_is_an_error():
    m = _module((".debug_info", []), (".debug_info", []))
    with pytest.raises(DwarfAssemblyError, match="appears twice"):
        assemble(m, Symbols({}, {}, set()))


_leaf = st.integers(-1000, 1000).map(str)
_expr = st.recursive(_leaf, lambda sub: st.tuples(sub, st.sampled_from(["+", "-", "*", "&", "|", "^"]), sub)
                     .map(lambda t: f"({t[0]}{t[1]}{t[2]})"), max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(_expr)
def test_expressions_evaluate_like_c(expr):
    assert evaluate(expr, lambda n: 0) == eval(expr)  # noqa: S307 - integer literals and operators only


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=5), st.data())
def test_names_resolve_inside_expressions(names, data):
    values = {"a": 7, "b": 1 << 40, "c": 3}
    ops = [data.draw(st.sampled_from(["+", "-"])) for _ in names[1:]]
    text = names[0] + "".join(o + n for o, n in zip(ops, names[1:]))
    assert evaluate(text, values.__getitem__) == eval(text, {}, dict(values))  # noqa: S307


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([1, 2, 4, 8]), st.data())
def test_encode_round_trips(width, data):
    v = data.draw(st.integers(-(1 << (8 * width - 1)), (1 << (8 * width)) - 1))
    raw = encode(v, width)
    assert len(raw) == width and int.from_bytes(raw, "little") == v % (1 << (8 * width))


def test_register_names_are_big_endian_ascii():
    # NVRTC -G writes `n` (%r1) as DW_OP_regx 177 228 149 1 (ULEB128 of 0x257231)
    assert register_number("%r1") == 0x257231
    assert register_name(0x257231) == "%r1"
    uleb = [177, 228, 149, 1]
    number = sum((b & 0x7F) << (7 * k) for k, b in enumerate(uleb))
    assert register_name(number) == "%r1"
    for bad in (0, -5, 0x41, 0x2500):
        with pytest.raises(ValueError, match="does not encode a PTX register name"):
            register_name(bad)
    with pytest.raises(ValueError, match="is not a PTX register name"):
        register_number("r1")


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["%r", "%rd", "%f", "%fd", "%p", "%rs", "%h"]), st.integers(0, 99999))
def test_register_name_round_trips(prefix, n):
    name = f"{prefix}{n}"
    assert register_name(register_number(name)) == name


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=24))
def test_decoding_any_bytes_gives_a_location(raw):
    loc = decode(raw, DWARFExprParser(STRUCTS), None, lambda a: None, lambda n: n)
    assert loc.kind in set(LocationKind)
    if loc.kind is LocationKind.UNSUPPORTED:
        assert loc.detail


def _uleb(n: int) -> list[int]:
    out = []
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return out


def test_decode_register_memory_and_value_forms():
    parser = DWARFExprParser(STRUCTS)
    declared = {"%r5": "%r5"}
    reg = decode([0x90] + _uleb(register_number("%r5")), parser, None, lambda a: None, declared.get)
    assert (reg.kind, reg.name, reg.space) == (LocationKind.REGISTER, "%r5", AddressSpace.REG)
    missing = decode([0x90] + _uleb(register_number("%r9")), parser, None, lambda a: None, declared.get)
    assert missing.kind is LocationKind.UNSUPPORTED and "%r9 is not declared" in missing.detail
    addr = SYMBOLIC_BASE + 5
    mem = decode([0x03] + list(addr.to_bytes(8, "little")) + [0x23, 8], parser, AddressSpace.LOCAL,
                 lambda a: ("__local_depot3", a - SYMBOLIC_BASE), declared.get)
    assert (mem.kind, mem.space, mem.symbol, mem.offset, mem.address) == (
        LocationKind.MEMORY, AddressSpace.LOCAL, "__local_depot3", 13, None)
    glob_ = decode([0x03] + list((0x7000).to_bytes(8, "little")), parser, AddressSpace.GLOBAL,
                   lambda a: ("g", a - 0x7000), declared.get)
    assert (glob_.symbol, glob_.address) == ("g", 0x7000)
    val = decode([0x10, 42, 0x9F], parser, None, lambda a: None, declared.get)
    assert (val.kind, val.value) == (LocationKind.VALUE, 42)
    assert decode([], parser, None, lambda a: None, declared.get).kind is LocationKind.UNSUPPORTED


def test_address_classes_follow_nvidia_numbering():
    assert AddressSpace.from_dwarf(2) is AddressSpace.REG
    assert AddressSpace.from_dwarf(6) is AddressSpace.LOCAL
    assert AddressSpace.from_dwarf(8) is AddressSpace.SHARED
    assert AddressSpace.from_dwarf(12) is AddressSpace.GENERIC
    with pytest.raises(ValueError, match="not a PTX address class"):
        AddressSpace.from_dwarf(13)


def test_type_spelling():
    f = Type(TypeKind.BASE, "float", 4)
    cf = Type(TypeKind.CONST, target=f)
    assert str(Type(TypeKind.POINTER, target=cf, size=8)) == "const float *"
    assert str(Type(TypeKind.CONST, target=Type(TypeKind.POINTER, target=f))) == "float *const"
    arr = Type(TypeKind.ARRAY, target=f, dims=(4, 2))
    assert str(arr) == "float [4][2]" and arr.byte_size == 32
    assert str(Type(TypeKind.POINTER, target=arr)) == "float (*)[4][2]"
    node = Type(TypeKind.STRUCT, "Node", 16)
    node.members = []
    assert str(Type(TypeKind.POINTER, target=node)) == "struct Node *"
    assert Type(TypeKind.TYPEDEF, "real", target=cf).strip() is f


KERNELS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "..", "sim", "kernels", "*.G.ptx")))


@pytest.mark.parametrize("path", KERNELS, ids=os.path.basename)
def test_every_location_in_the_repository_kernels_decodes(path):
    with open(path) as fh:
        module = parse(fh.read(), path)
    program = load_module(SimGPU(), module).program
    di = DebugInfo(program)
    assert di.subprograms
    for sp in di.subprograms:
        assert sp.linkage_name in module.functions and sp.low_pc < sp.high_pc
        declared = module.functions[sp.linkage_name].registers
        todo = [sp.scope]
        while todo:
            s = todo.pop()
            todo += s.children
            for lo, hi in s.ranges:
                assert sp.low_pc <= lo <= hi <= sp.high_pc
            for v in s.variables:
                for loc in [v.location] if not v.ranges else [r.location for r in v.ranges]:
                    assert loc is not None and loc.kind is not LocationKind.UNSUPPORTED, (v.name, loc)
                    if loc.kind is LocationKind.REGISTER:
                        assert loc.name in declared
                    else:
                        assert loc.symbol in module.functions[sp.linkage_name].locals or loc.address

