"""gdb's print shapes and formats, and x/NFU's lines, on the fake focus."""
from __future__ import annotations

import struct

import pytest
from evalfake import FLOATS_AT, HELLO_AT, INTS_AT, FakeContext, MinimalContext
from hypothesis import given, settings, strategies as st

from gpudbg.cli.debugger.evaluate import ExpressionError, evaluate
from gpudbg.cli.debugger.formatting import (
    ExamineState, examine, format_float, format_string, format_value, parse_examine_spec, parse_print_format,
)
from gpudbg.cli.debugger.values import Value, array_of, base_type, pointer_to
from gpudbg.debug.backend import MemorySpace
from gpudbg.debug.dwarf.model import Member, Type, TypeKind


@pytest.fixture
def ctx():
    return FakeContext()


def show(text, ctx, fmt=None):
    return format_value(evaluate(text, ctx), fmt, ctx)


@pytest.mark.parametrize("text,out", [
    ("42", "42"), ("-5", "-5"), ("i", "42"), ("u", "4000000000"), ("c", "65 'A'"), ("'\\n'", "10 '\\n'"),
    ("(char)0", "0 '\\000'"), ("(char)-1", "-1 '\\377'"), ("(unsigned char)200", "200 '\\310'"),
    ("'\\''", "39 '\\''"), ("'\\\\'", "92 '\\\\'"), ("(char)27", "27 '\\033'"),
    ("flag", "true"), ("(bool)0", "false"), ("color", "GREEN"), ("(enum Color)7", "7"),
    ("f", "3.5"), ("0.1f", "0.100000001"), ("0.1", "0.10000000000000001"), ("1.0", "1"), ("100.0", "100"),
    ("1e20", "1e+20"), ("1e-5f", "9.99999975e-06"), ("-2.5", "-2.5"), ("1.0/0", "inf"), ("-1.0/0", "-inf"),
    ("(float)1/3", "0.333333343"), ("1.0/3", "0.33333333333333331"),
    ("gp", "(@global float *) 0x700000002200"), ("p", "(int *) 0x700000002100"), ("np", "(int *) 0x0"),
    ("&sh", "(@shared int *) 0x4"), ("&arr[1]", "(@local int *) 0x14"), ("sp", "(@local struct Pair *) 0x40"),
    ("name", '0x700000002300 "hello"'), ("$pc", "(void (*)()) 0x1010"),
    ("arr", "{1, 2, 3, 4}"), ("garr", "{10, 20, 30, 40, 50, 60, 70, 80}"),
    ("zeros", "{0 <repeats 16 times>}"), ("s", "{a = 7, b = 0.5}"), ("*sp", "{a = 7, b = 0.5}"),
    ("threadIdx", "{x = 1, y = 0, z = 0}"), ("blockDim", "{x = 32, y = 1, z = 1}"),
    ("buf", '"hi\\000\\000\\000\\000\\000"'), ('"ab\\n"', '"ab\\n"'), ("$nothing", "void"),
    ("*p@3", "{10, 20, 30}"), ("fl", "{lo = 5, hi = 22}"),
])
def test_natural_shapes(ctx, text, out):
    assert show(text, ctx) == out


@pytest.mark.parametrize("text,fmt,out", [
    ("42", "x", "0x2a"), ("-1", "x", "0xffffffff"), ("(char)-1", "x", "0xff"), ("(short)-1", "x", "0xffff"),
    ("-1L", "x", "0xffffffffffffffff"), ("42", "z", "0x0000002a"),
    ("42", "o", "052"), ("0", "o", "0"), ("42", "t", "101010"), ("0", "t", "0"),
    ("-1", "d", "-1"), ("-1", "u", "4294967295"), ("u", "d", "-294967296"),
    ("65", "c", "65 'A'"), ("321", "c", "65 'A'"), ("3.9", "c", "3 '\\003'"),
    ("f", "x", "0x40600000"), ("1.0", "x", "0x3ff0000000000000"), ("f", "f", "3.5"),
    ("1065353216", "f", "1"), ("(char)5", "f", "5"), ("p", "x", "0x700000002100"), ("p", "d", str(INTS_AT)),
    ("p", "a", "0x700000002100"), ("flag", "x", "0x1"), ("color", "d", "1"),
    ("arr", "x", "{0x1, 0x2, 0x3, 0x4}"), ("s", "x", "{a = 0x7, b = 0x3f000000}"),
    ("threadIdx", "d", "{x = 1, y = 0, z = 0}"), ("buf", "x", "{0x68, 0x69, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0}"),
    ("zeros", "x", "{0x0 <repeats 16 times>}"), ("42", "s", "42"), ("buf", "s", '"hi\\000\\000\\000\\000\\000"'),
])
def test_print_formats(ctx, text, fmt, out):
    assert show(text, ctx, fmt) == out


def test_repeats_mix_with_single_elements():
    t = array_of(base_type("int"), 15)
    data = struct.pack("<15i", 1, 2, *([0] * 11), 3, 3)
    assert format_value(Value(t, data)) == "{1, 2, 0 <repeats 11 times>, 3, 3}"
    ten = struct.pack("<10i", *([7] * 10))                       # 10 is not more than the threshold
    assert format_value(Value(array_of(base_type("int"), 10), ten)) == "{" + ", ".join(["7"] * 10) + "}"


def test_print_elements_limit():
    t = array_of(base_type("int"), 250)
    v = Value(t, struct.pack("<250i", *range(250)))
    text = format_value(v)
    assert text.startswith("{0, 1, 2,") and text.endswith("198, 199...}")
    s = Value(array_of(base_type("char"), 300), b"a" * 5 + b"bc" * 147 + b"\0")
    assert format_value(s).endswith('"...')


def test_char_arrays_as_strings():
    t = lambda n: array_of(base_type("char"), n)
    assert format_value(Value(t(16), b"hi" + b"\0" * 14)) == "\"hi\", '\\000' <repeats 13 times>"
    assert format_value(Value(t(1), b"\0")) == '""'
    assert format_value(Value(t(3), b"abc")) == '"abc"'
    assert format_value(Value(t(4), b'a"b\0')) == '"a\\"b"'
    assert format_value(Value(t(14), b"x" * 12 + b"yz")) == "'x' <repeats 12 times>, \"yz\""


def test_multidimensional_arrays_and_nested_structs():
    i = base_type("int")
    grid = Type(TypeKind.ARRAY, target=i, dims=(2, 3))
    assert format_value(Value(grid, struct.pack("<6i", 1, 2, 3, 4, 5, 6))) == "{{1, 2, 3}, {4, 5, 6}}"
    inner = Type(TypeKind.STRUCT, name="In", size=4, members=[Member("v", i, 0)])
    anon = Type(TypeKind.UNION, name=None, size=4, members=[Member("w", i, 0), Member("f", base_type("float"), 0)])
    outer = Type(TypeKind.STRUCT, name="Out", size=16,
                 members=[Member("in", inner, 0), Member(None, anon, 4), Member("p", pointer_to(i), 8)])
    v = Value(outer, struct.pack("<iiQ", 3, 0, 0x1000))
    assert format_value(v) == "{in = {v = 3}, {w = 0, f = 0}, p = 0x1000}"
    assert format_value(Value(Type(TypeKind.STRUCT, name="E", size=0), b"")) == "{<No data fields>}"


def test_nan_and_float_digits():
    assert format_float(float("nan"), 4) == "nan(0x400000)"
    assert format_float(-float("nan"), 8) == "-nan(0x8000000000000)"
    assert format_float(struct.unpack("<f", struct.pack("<f", 0.1))[0], 4) == "0.100000001"
    assert format_float(123456789.0, 8) == "123456789"
    assert format_float(1.5, 2) == "1.5"


def test_char_pointer_reads_the_string_only_with_a_context(ctx):
    v = evaluate("name", ctx)
    assert format_value(v) == "(@global char *) 0x700000002300"
    assert format_value(v, ctx=ctx) == '0x700000002300 "hello"'
    bad = Value.from_int(0x10, pointer_to(base_type("char"), MemorySpace.GLOBAL))
    assert format_value(bad, ctx=ctx) == "0x10 <error: Cannot access memory at address 0x10 " \
                                         "(global address 0x10 is outside [0x700000002000, 0x700000003000))>"


def test_references_print_their_referent(ctx):
    ref = Type(TypeKind.REFERENCE, size=8, target=base_type("int"), space=None)
    v = Value.from_int(INTS_AT, ref)
    assert format_value(v, ctx=ctx) == "(int &) @0x700000002100: 10"
    assert format_value(v) == "(int &) @0x700000002100"
    assert evaluate("r + 1", _with(ctx, r=v)).to_python() == 11


def _with(ctx, **vars):
    ctx.reg_vars.update(vars)
    return ctx


def test_print_format_letters():
    assert parse_print_format("/x") == "x" and parse_print_format("") is None and parse_print_format("c") == "c"
    with pytest.raises(ExpressionError, match='Undefined output format "q".'):
        parse_print_format("q")
    with pytest.raises(ExpressionError, match="Size letters are meaningless"):
        parse_print_format("xw")
    with pytest.raises(ExpressionError, match="Item count other than 1"):
        parse_print_format("4x")
    with pytest.raises(ExpressionError, match='Undefined output format "q".'):
        format_value(Value.from_int(1), "q")


# ---------------------------------------------------------------- x

def test_examine_spec_parsing():
    assert parse_examine_spec("4xw") == (4, "x", "w")
    assert parse_examine_spec("/wx") == (1, "x", "w")
    assert parse_examine_spec("") == (1, None, None)
    assert parse_examine_spec("10i") == (10, "i", None)
    for bad, msg in [("4q", "Invalid format letter 'q'"), ("xx", "format letters"), ("bw", "size letters"),
                     ("0x", "Item count must be positive")]:
        with pytest.raises(ExpressionError, match=msg):
            parse_examine_spec(bad)


@pytest.mark.parametrize("spec,addr,lines", [
    ("4xw", "p", ["0x700000002100:\t0x0000000a\t0x00000014\t0x0000001e\t0x00000028"]),
    ("", "p", ["0x700000002100:\t0x0000000a"]),
    ("6dw", "p", ["0x700000002100:\t10\t20\t30\t40", "0x700000002110:\t50\t60"]),
    ("8xb", "p", ["0x700000002100:\t0x0a\t0x00\t0x00\t0x00\t0x14\t0x00\t0x00\t0x00"]),
    ("9xb", "p", ["0x700000002100:\t0x0a\t0x00\t0x00\t0x00\t0x14\t0x00\t0x00\t0x00", "0x700000002108:\t0x1e"]),
    ("3xg", "p", ["0x700000002100:\t0x000000140000000a\t0x000000280000001e", "0x700000002110:\t0x0000003c00000032"]),
    ("2xh", "p", ["0x700000002100:\t0x000a\t0x0000"]),
    ("2uw", "(unsigned *)p", ["0x700000002100:\t10\t20"]),
    ("2ow", "p", ["0x700000002100:\t012\t024"]),
    ("1tw", "p", ["0x700000002100:\t00000000000000000000000000001010"]),
    ("2tb", "p", ["0x700000002100:\t00001010\t00000000"]),
    ("4fw", "gp", ["0x700000002200:\t0\t1\t2.5\t-4"]),
    ("2fg", "(double *)p", ["0x700000002100:\t4.2439915824246103e-313\t8.4879831653432862e-313"]),
    ("2f", "p", ["0x700000002100:\t1.40129846e-44\t2.80259693e-44"]),      # gdb: f keeps the last size w
    ("4c", "name", ["0x700000002300:\t104 'h'\t101 'e'\t108 'l'\t108 'l'"]),
    ("s", "name", ['0x700000002300:\t"hello"']),
    ("2s", "name", ['0x700000002300:\t"hello"', '0x700000002306:\t"world"']),
    ("2a", "p", ["0x700000002100:\t0x140000000a\t0x280000001e"]),
    ("4dw", "(@shared int *)0", ["0x0:\t0\t99\t0\t0"]),
    ("4dw", "@local 0x10", ["0x10:\t1\t2\t3\t4"]),
    ("2dw", "arr", ["0x10:\t1\t2"]),
    ("2dw", "&arr[2]", ["0x18:\t3\t4"]),
    ("2x", "0x700000002100", ["0x700000002100:\t0x0000000a\t0x00000014"]),
    ("2xw", "0x700000002100 + 4 * 2", ["0x700000002108:\t0x0000001e\t0x00000028"]),
    ("3i", "$pc", ["=> 0x1010:\tmov.u32 %r0, 0;", "   0x1020:\tmov.u32 %r1, 1;", "   0x1030:\tmov.u32 %r2, 2;"]),
])
def test_examine_lines(ctx, spec, addr, lines):
    assert examine(ctx, spec, addr) == lines


def test_examine_remembers_format_size_and_next_address(ctx):
    state = ExamineState()
    assert examine(ctx, "2dw", "p", state) == ["0x700000002100:\t10\t20"]
    assert examine(ctx, "", "", state) == ["0x700000002108:\t30"]
    assert examine(ctx, "2", "", state) == ["0x70000000210c:\t40\t50"]
    assert examine(ctx, "xb", "", state) == ["0x700000002114:\t0x3c"]
    assert examine(ctx, "c", "name", state) == ["0x700000002300:\t104 'h'"]
    assert examine(ctx, "s", "", state) == ['0x700000002301:\t"ello"']
    assert examine(ctx, "x", "p", state) == ["0x700000002100:\t0x0a"]     # size b is remembered
    assert examine(ctx, "2dw", "(@shared int *)0", state) == ["0x0:\t0\t99"]
    assert examine(ctx, "", "", state) == ["0x8:\t0"]                       # still shared
    with pytest.raises(ExpressionError, match="Argument required"):
        examine(ctx, "x", "", ExamineState())


def test_examine_partial_read_reports_lines_so_far(ctx):
    with pytest.raises(ExpressionError) as info:
        examine(ctx, "8xw", "0x700000002ff8")
    assert str(info.value).startswith("Cannot access memory at address 0x700000003000")
    assert info.value.partial == ["0x700000002ff8:\t0x00000000\t0x00000000"]
    lines = examine(ctx, "s", "0x10")
    assert lines[0].startswith("0x10:\t<error: Cannot access memory at address 0x10")


def test_examine_errors(ctx):
    with pytest.raises(ExpressionError, match="Cannot use a value of type `float' as an address."):
        examine(ctx, "x", "f")
    with pytest.raises(ExpressionError, match="x/i needs a disassembler"):
        examine(MinimalContext(), "i", "$pc")
    with pytest.raises(ExpressionError, match='No symbol "nope" in current context.'):
        examine(ctx, "x", "nope")


def test_examine_string_longer_than_the_limit(ctx):
    g = ctx.memory[MemorySpace.GLOBAL][1]
    g[0x400:0x400 + 250] = b"z" * 250
    line = examine(ctx, "s", "0x700000002400")[0]
    assert line == "0x700000002400:\t'z' <repeats 200 times>..."


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(1 << 31), (1 << 31) - 1), min_size=1, max_size=12), st.sampled_from("xdu"))
def test_examine_words_agree_with_print(words, fmt):
    ctx = FakeContext()
    g = ctx.memory[MemorySpace.GLOBAL][1]
    struct.pack_into(f"<{len(words)}i", g, 0x500, *words)
    lines = examine(ctx, f"{len(words)}{fmt}w", "(int *)0x700000002500")
    items = [item for line in lines for item in line.split("\t")[1:]]
    assert len(lines) == (len(words) + 3) // 4
    for k, item in enumerate(items):
        v = evaluate(f"((int *)0x700000002500)[{k}]", ctx)
        printed = format_value(v, fmt)
        assert int(item, 16 if fmt == "x" else 10) == int(printed, 16 if fmt == "x" else 10)


def test_string_escapes_round_trip_bytes():
    assert format_string(b"a\tb\x01\x7f\"") == '"a\\tb\\001\\177\\""'
    assert format_string(b"") == '""'
    assert FLOATS_AT and HELLO_AT    # the fixture layout these tests rely on
