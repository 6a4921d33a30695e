"""Bad PTX: every error is a PTXParseError with a specific message and the
exact line and column."""
from __future__ import annotations

import pickle

import pytest

from gpudbg.ptx import PTXParseError, parse, parse_file

H = ".version 8.0\n.target sm_80\n.address_size 64\n"  # 3 lines


def kernel(body: str, params: str = ".param .u64 p") -> str:
    return H + f".visible .entry saxpy({params})\n{{\n{body}\n}}\n"


CASES = [
    # (source, message fragment, line, col)
    (kernel("\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [p;"),
     "expected ']' after memory operand", 7, 23),
    (kernel("\t.reg .b32 %r<3>;\n\tmov.u32 %r9, 1;"),
     "register %r9 used but not declared in function saxpy", 7, 10),
    (kernel("\t.reg .b32 %r<3>;\n\t@%p1 mov.u32 %r1, 1;"),
     "register %p1 used but not declared in function saxpy", 7, 3),
    (H + ".foo 1\n", "unknown directive .foo", 4, 1),
    (kernel("\t.bogus 3;"), "unknown directive .bogus", 6, 2),
    (kernel("\tbra $L__nowhere;"), "label $L__nowhere used but not defined in function saxpy",
     6, 6),
    (kernel("\t.reg .b64 %rd1;\n\tmov.u64 %rd1, nosuch;"),
     "symbol nosuch used but not declared", 7, 16),
    (kernel("\t.reg .b32 %r1;\n\tmov.u32 %r1, %laneid.x;"),
     "special register %laneid has no component .x", 7, 15),
    (kernel("\t.reg .b32 %r1;\n\t.reg .b32 %r1;"), "duplicate declaration of %r1", 7, 2),
    (kernel("L1:\nL1:\n\tret;"), "duplicate label L1", 7, 1),
    (kernel("\t.reg .f32 %f1;\n\tmov.f32 %f1, 0f3F8;"),
     "hex float literal 0f3F8 must have exactly 8 hex digits", 7, 15),
    (H + ".global .u64 x = 0x1FFFFFFFFFFFFFFFF;\n", "does not fit in 64 bits", 4, 18),
    (kernel("\t.reg .b32 %r1;\n\tmov.u32 %r1, (1/0);"), "division by zero", 7, 17),
    (kernel("\t.reg .b32 %r1;\n\tmov.u32 %r1, 12abc;"), "malformed number '12abc'", 7, 15),
    (kernel("\tret#;"), "unexpected character '#'", 6, 5),
    (H + "/* never closed\n", "unterminated /* comment", 4, 1),
    (H + '.file 1 "abc\n', "unterminated string literal", 4, 9),
    (H + ".entry k()\n{\n\tret;\n", "unterminated body of function k", 7, 1),
    (kernel("\t.reg .b32 %r<999999999>;"), "register range <999999999> out of range", 6, 15),
    (kernel("\t.reg .b32 %r1;\n\tmov.u32 %r1, 1"), "expected ',' or ';' after operand", 8, 1),
    (kernel("\t.reg .b32 %r1;\n\tadd.u32 %r1, , 1;"), "expected an operand", 7, 15),
    (kernel("\t.reg .b32 %r1;\n\tld.u32 %r1, [%r1+%r1];"), "expected an integer constant",
     7, 19),
    (kernel("\t.local .b32 x;\n\t@x bra L;\nL:\n\tret;"), "x is a variable, not a register",
     7, 3),
    (kernel("\t.reg .b64 %rd1;\n\tcall %rd1, (%rd1), nope;"),
     "call prototype nope is not declared", 7, 21),
    (kernel("\t.reg .b32 %r1;\n\tmov.u32 {%r1, %r1, 1;"), "expected '}' to close vector", 7, 22),
    (kernel("\t.reg .b32 %r1;\n\tmov.u32 %v.x, 1;"), "vector element access %v.x", 7, 10),
    (kernel("\t.reg .b32 %r1;\n\tld.u32 %r1, [%tid.x];"), "cannot be a memory base", 7, 15),
    (H + ".entry (.param .b32 r) k()\n{\n}\n", "an .entry cannot have return parameters",
     4, 8),
    (H + ".address_size 48\n", ".address_size must be 32 or 64", 4, 15),
    (H + ".global .b8 x[4] = {1, 2;\n", "expected '}' to close initializer", 4, 25),
    (H + ".global .b8 x[4] = {1, 2, y};\n", "symbol y used but not declared", 4, 27),
    (H + ".global .align 4 x;\n", "expected a type in .global declaration", 4, 18),
    (kernel("\t.loc 1 2 3, bogus 4"), "expected function_name or inlined_at in .loc", 6, 14),
    (H + ".section .debug_info\n{\n.b32 ;\n}\n", "expected a number, label or section name",
     6, 6),
    (H + ".func f() {ret;}\n.func f() {ret;}\n", "function f defined twice", 5, 7),
    (H + ".global .u32 g;\n.global .u32 g;\n", "duplicate definition of g", 5, 1),
    (H + "mov.u32 %r1, 1;\n", "expected a directive at module level", 4, 1),
    (kernel("\t.version 7.0"), "directive .version is not allowed in a function body", 6, 2),
]


@pytest.mark.parametrize("source,message,line,col", CASES,
                         ids=[c[1][:40] for c in CASES])
def test_error_message_and_position(source, message, line, col):
    with pytest.raises(PTXParseError) as info:
        parse(source, "bad.ptx")
    err = info.value
    assert message in err.message
    assert (err.file, err.line, err.col) == ("bad.ptx", line, col), str(err)
    text = str(err)
    head, src_line, caret = text.split("\n")
    assert head == f"bad.ptx:{line}:{col}: {err.message}"
    assert src_line.strip() == source.split("\n")[line - 1].strip()
    assert caret.index("^") == 4 + col - 1


def test_error_is_picklable_and_an_exception():
    with pytest.raises(PTXParseError) as info:
        parse(H + ".foo\n")
    err = pickle.loads(pickle.dumps(info.value))
    assert (err.file, err.line, err.col, err.message) == ("<ptx>", 4, 1, "unknown directive .foo")
    assert isinstance(err, Exception)


def test_parse_file_rejects_non_utf8(tmp_path):
    path = tmp_path / "bad.ptx"
    path.write_bytes(b".version 8.0\n.target sm_80\n\xff\n")
    with pytest.raises(PTXParseError) as info:
        parse_file(path)
    assert (info.value.line, info.value.col) == (3, 1)
    assert info.value.file == str(path)


def test_parse_file_names_the_file(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(H + ".entry k()\n{\n\tret;\n}\n")
    mod = parse_file(path)
    assert mod.filename == str(path)
    assert mod.functions["k"].instructions[0].loc.file == str(path)
