"""The expression lexer and parser: precedence, casts vs parentheses,
cuda-gdb qualifiers, literal typing, and gdb's error messages."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.cli.debugger import expr as ast
from gpudbg.cli.debugger.expr import ExpressionError, parse, parse_type, tokenize


def test_precedence_follows_c():
    e = parse("1 + 2 * 3")
    assert isinstance(e, ast.Binary) and e.op == "+"
    assert isinstance(e.right, ast.Binary) and e.right.op == "*"
    e = parse("a || b && c | d ^ e & f == g < h << i + j * k")
    ops = []
    while isinstance(e, ast.Binary):
        ops.append(e.op)
        e = e.right
    assert ops == ["||", "&&", "|", "^", "&", "==", "<", "<<", "+", "*"]


def test_left_associativity_and_right_associative_assignment():
    e = parse("a - b - c")
    assert e.op == "-" and isinstance(e.left, ast.Binary) and e.left.op == "-"
    e = parse("a = b = 3")
    assert isinstance(e, ast.Assign) and isinstance(e.value, ast.Assign)
    e = parse("x += 2")
    assert isinstance(e, ast.Assign) and e.op == "+"
    e = parse("x <<= 2")
    assert e.op == "<<"


def test_conditional_and_comma():
    e = parse("a ? b : c ? d : e")
    assert isinstance(e, ast.Conditional) and isinstance(e.otherwise, ast.Conditional)
    e = parse("a = 1, b")
    assert isinstance(e, ast.Comma) and isinstance(e.left, ast.Assign)


def test_unary_postfix_and_member_chain():
    e = parse("-*p->next[2].x++")
    assert isinstance(e, ast.Unary) and e.op == "-"
    inner = e.operand
    assert isinstance(inner, ast.Unary) and inner.op == "*"
    post = inner.operand
    assert isinstance(post, ast.Postfix)
    mem = post.operand
    assert isinstance(mem, ast.Member) and mem.name == "x" and not mem.arrow
    idx = mem.base
    assert isinstance(idx, ast.Index)
    assert isinstance(idx.base, ast.Member) and idx.base.arrow and idx.base.name == "next"


def test_casts_versus_parentheses():
    e = parse("(int)x")
    assert isinstance(e, ast.Cast) and e.type.words == ("int",)
    e = parse("(unsigned long long)x")
    assert e.type.words == ("unsigned", "long", "long")
    e = parse("(a)-b")
    assert isinstance(e, ast.Binary) and e.op == "-"
    e = parse("(T)-b", is_type_name=lambda n: n == "T")
    assert isinstance(e, ast.Cast) and e.type.words == ("T",)
    e = parse("(float *)p")
    assert e.type.pointers == 1
    e = parse("(struct Pair **)p")
    assert e.type.words == ("struct", "Pair") and e.type.pointers == 2
    e = parse("(uint32_t)x")
    assert isinstance(e, ast.Cast)
    e = parse("(const char *)s")
    assert e.type.words == ("char",) and e.type.pointers == 1
    e = parse("(int)x[1]")    # cast binds looser than postfix
    assert isinstance(e, ast.Cast) and isinstance(e.operand, ast.Index)


def test_cuda_space_qualifiers():
    e = parse("(@global int *)p")
    assert isinstance(e, ast.Cast) and e.type.space == "global" and e.type.pointers == 1
    e = parse("*(@shared int *)4")
    assert isinstance(e, ast.Unary) and e.operand.type.space == "shared"
    e = parse("@shared 16")
    assert isinstance(e, ast.SpaceQualified) and e.space == "shared"
    e = parse("(@local 0x10)")
    assert isinstance(e, ast.SpaceQualified)
    with pytest.raises(ExpressionError, match="Unknown address space \"bogus\""):
        parse("@bogus 4")


def test_artificial_array_binds_between_shift_and_additive():
    e = parse("*p@n+1")
    assert isinstance(e, ast.Binary) and e.op == "@" and isinstance(e.right, ast.Binary)
    e = parse("a@2 << 1")
    assert e.op == "<<" and e.left.op == "@"


def test_sizeof_forms():
    assert isinstance(parse("sizeof(int)").operand, ast.TypeName)
    assert isinstance(parse("sizeof x").operand, ast.Name)
    assert isinstance(parse("sizeof(x)").operand, ast.Name)
    assert isinstance(parse("sizeof(struct Pair)").operand, ast.TypeName)


@pytest.mark.parametrize("text,value,tname", [
    ("42", 42, "int"), ("2147483647", 2147483647, "int"), ("2147483648", 2147483648, "long"),
    ("0xffffffff", 0xFFFFFFFF, "unsigned int"), ("0x7fffffff", 0x7FFFFFFF, "int"),
    ("017", 15, "int"), ("10u", 10, "unsigned int"), ("10UL", 10, "unsigned long"),
    ("10l", 10, "long"), ("10ll", 10, "long long"), ("10ull", 10, "unsigned long long"),
    ("0x8000000000000000", 1 << 63, "unsigned long"), ("0b101", 5, "int"), ("0", 0, "int"),
])
def test_integer_literal_types(text, value, tname):
    e = parse(text)
    assert isinstance(e, ast.IntLit) and e.value == value and e.type_name == tname


@pytest.mark.parametrize("text,value,tname", [
    ("1.5", 1.5, "double"), ("1.5f", 1.5, "float"), (".5", 0.5, "double"), ("1e3", 1000.0, "double"),
    ("2.5e-1F", 0.25, "float"), ("1E+2", 100.0, "double"),
])
def test_float_literals(text, value, tname):
    e = parse(text)
    assert isinstance(e, ast.FloatLit) and e.value == value and e.type_name == tname


@pytest.mark.parametrize("text,code", [("'A'", 65), ("'\\n'", 10), ("'\\0'", 0), ("'\\x41'", 65),
                                       ("'\\101'", 65), ("'\\\\'", 92), ("'\\''", 39), ("'\"'", 34)])
def test_char_literals(text, code):
    e = parse(text)
    assert isinstance(e, ast.CharLit) and e.value == code


def test_string_literal_and_dollar_names():
    assert parse('"a\\tb"').value == b"a\tb"
    assert parse("$r1").name == "r1"
    assert parse("$").name == ""
    assert parse("$$").name == "$"
    assert parse("$$3").name == "$3"
    assert parse("$1").name == "1"
    assert parse("true").value is True


def test_bare_type_names():
    assert isinstance(parse("unsigned int"), ast.TypeExpr)
    assert str(parse_type("@shared float *")) == "@shared float *"
    assert parse_type("x + 1") is None
    assert parse_type("Pair", lambda n: n == "Pair").words == ("Pair",)


@pytest.mark.parametrize("text,message,column", [
    ("1 +", "A syntax error in expression, near `'.", 3),
    ("(1 + 2", "A syntax error in expression, near `'.", 6),
    ("1 + )", "A syntax error in expression, near `)'.", 4),
    ("a # b", "Invalid character '#' in expression.", 2),
    ('"abc', "Unterminated string in expression.", 0),
    ("'a", "Unmatched single quote.", 0),
    ("''", "Empty character constant.", 0),
    ("09", "Invalid number \"09\".", 0),
    ("1.2.3", "Invalid number \"1.2.3\".", 0),
    ("12uu", "Invalid number \"12uu\".", 0),
    ("0x10000000000000000", "Numeric constant too large.", 0),
    ("", "Empty expression.", 0),
    ("a.", "A syntax error in expression, near `'.", 2),
    ("(int", "A syntax error in expression, near `'.", 4),
])
def test_errors_name_the_column(text, message, column):
    with pytest.raises(ExpressionError) as info:
        parse(text)
    assert str(info.value) == message
    assert info.value.column == column
    caret = info.value.caret().splitlines()
    assert caret[0] == text and caret[1] == " " * column + "^"


def test_tokens_record_positions():
    toks = tokenize("a <<= 0x1f")
    assert [(t.kind, t.text, t.pos) for t in toks] == [
        ("ident", "a", 0), ("op", "<<=", 2), ("int", "0x1f", 6), ("end", "", 10)]


_ALPHABET = st.sampled_from(list("abxyz019_$@()[]{}.,;:?!~*&%^|+-/<>='\"\\ \t") +
                            ["0x", "1.5e", "sizeof", "int", "(int *)", "@shared", "->", "<<=", "unsigned"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_ALPHABET, max_size=14).map("".join))
def test_parser_only_raises_expression_error(text):
    try:
        parse(text)
    except ExpressionError as e:
        assert e.column is None or 0 <= e.column <= len(text)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=20))
def test_parser_survives_arbitrary_unicode(text):
    try:
        parse(text)
    except ExpressionError:
        pass
