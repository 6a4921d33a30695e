"""Evaluation against a fake focus: every operator with C's promotions and
conversions, pointers in address spaces, casts, qualifiers, lvalues and
assignment through the context, and gdb's error messages."""
from __future__ import annotations

import numpy as np
import pytest
from evalfake import FLOATS_AT, INTS_AT, FakeContext, MinimalContext
from hypothesis import given, settings, strategies as st

from gpudbg.cli.debugger.evaluate import ExpressionError, arithmetic_type, evaluate, promote, type_of
from gpudbg.cli.debugger.values import Lval, Value, base_type, type_name
from gpudbg.debug.backend import MemorySpace


@pytest.fixture
def ctx():
    return FakeContext()


def ev(text, ctx):
    return evaluate(text, ctx)


def py(text, ctx):
    return evaluate(text, ctx).to_python()


def tname(text, ctx):
    return type_name(evaluate(text, ctx).type)


@pytest.mark.parametrize("text,value,t", [
    ("1 + 2", 3, "int"), ("7 - 10", -3, "int"), ("6 * 7", 42, "int"), ("7 / 2", 3, "int"),
    ("-7 / 2", -3, "int"), ("7 % 3", 1, "int"), ("-7 % 3", -1, "int"), ("7 % -3", 1, "int"),
    ("1 << 4", 16, "int"), ("-16 >> 2", -4, "int"), ("0xf0 & 0x3c", 0x30, "int"),
    ("0xf0 | 0x0f", 0xFF, "int"), ("0xff ^ 0x0f", 0xF0, "int"), ("~0", -1, "int"), ("-(3)", -3, "int"),
    ("+'a'", 97, "int"), ("!0", 1, "int"), ("!7", 0, "int"),
    ("3 < 4", 1, "int"), ("3 > 4", 0, "int"), ("4 <= 4", 1, "int"), ("5 >= 6", 0, "int"),
    ("2 == 2", 1, "int"), ("2 != 2", 0, "int"), ("1 && 0", 0, "int"), ("0 || 3", 1, "int"),
    ("1 ? 10 : 20", 10, "int"), ("0 ? 10 : 20", 20, "int"), ("(1, 2)", 2, "int"),
    ("2147483647 + 1", -2147483648, "int"), ("1u - 2", 4294967295, "unsigned int"),
    ("-1 < 0u", 0, "int"), ("-1 < 0", 1, "int"), ("-1L < 0u", 1, "int"),
    ("1 << 31", -2147483648, "int"), ("1ul << 63", 1 << 63, "unsigned long"),
    ("'a' + 1", 98, "int"), ("(char)200 + 0", -56, "int"), ("(unsigned char)200 + 0", 200, "int"),
    ("(short)-1 + 0u", 4294967295, "unsigned int"), ("5000000000 + 1", 5000000001, "long"),
    ("10u / 3", 3, "unsigned int"), ("-1 / 2u", 2147483647, "unsigned int"),
    ("1 << 32", 0, "int"), ("-8 >> 40", -1, "int"),
])
def test_integer_arithmetic(ctx, text, value, t):
    assert py(text, ctx) == value
    assert tname(text, ctx) == t


@pytest.mark.parametrize("text,value,t", [
    ("1.5 + 1", 2.5, "double"), ("f * 2", 7.0, "float"), ("f / 0", float("inf"), "float"),
    ("1 / 2.0", 0.5, "double"), ("(float)1 / 3", float(np.float32(1) / np.float32(3)), "float"),
    ("f + dbl", 3.5 + 0.1, "double"), ("-f", -3.5, "float"), ("f > 3", 1, "int"),
    ("1.5f == 1.5", 1, "int"), ("!0.0", 1, "int"), ("2.5 ? 1 : 0", 1, "int"),
    ("1 ? 2 : 3.5", 2.0, "double"), ("(int)3.99", 3, "int"), ("(int)-3.99", -3, "int"),
    ("(unsigned)2.5", 2, "unsigned int"), ("(bool)0.5", True, "bool"), ("(float)0.1", float(np.float32(0.1)), "float"),
])
def test_float_arithmetic(ctx, text, value, t):
    assert py(text, ctx) == pytest.approx(value)
    assert tname(text, ctx) == t


def test_float_stays_single_precision(ctx):
    v = ev("0.1f + 0.2f", ctx)
    assert v.to_python() == float(np.float32(0.1) + np.float32(0.2))
    assert v.to_python() != 0.1 + 0.2


def test_variables_builtins_and_registers(ctx):
    assert py("i", ctx) == 42
    assert py("threadIdx.x + blockIdx.x * blockDim.x", ctx) == 65
    assert py("gridDim.x", ctx) == 4 and py("warpSize", ctx) == 32
    assert type_name(ev("threadIdx", ctx).type) == "struct uint3"
    assert py("$r1 + 1", ctx) == 8 and tname("$r1", ctx) == "unsigned int"
    assert py("$rd3", ctx) == 0x123456789
    assert py("$f2 * 2", ctx) == 3.0
    assert py("$p1", ctx) is True
    assert py("$pc", ctx) == 0x1010
    assert ev("$nothing", ctx).to_python() is None     # unset convenience is void


def test_pointer_deref_and_indexing_reads_the_pointers_space(ctx):
    assert py("*p", ctx) == 10 and py("p[3]", ctx) == 40 and py("*(p + 2)", ctx) == 30
    assert py("gp[2]", ctx) == 2.5 and py("*gp", ctx) == 0.0
    assert py("2[p]", ctx) == 30
    v = ev("gp[1]", ctx)
    assert v.address == FLOATS_AT + 4 and v.space is MemorySpace.GLOBAL
    v = ev("p[1]", ctx)
    assert v.space is MemorySpace.GENERIC
    assert py("*(@shared int *)4", ctx) == 99
    assert py("((@shared int *)0)[1]", ctx) == 99
    assert py("*(@local int *)0x14", ctx) == 2
    assert py("sp->a", ctx) == 7 and py("sp->b", ctx) == 0.5 and py("(*sp).a", ctx) == 7
    assert py("sp.a", ctx) == 7        # gdb lets '.' look through a pointer


def test_arrays(ctx):
    assert py("arr", ctx) == [1, 2, 3, 4]
    assert py("arr[2]", ctx) == 3 and py("*arr", ctx) == 1 and py("*(arr + 3)", ctx) == 4
    v = ev("arr[1]", ctx)
    assert v.address == 0x14 and v.space is MemorySpace.LOCAL
    assert py("arr[5]", ctx) == 0       # past the end: gdb reads memory there
    assert py("garr[7]", ctx) == 80
    assert py("sizeof arr / sizeof arr[0]", ctx) == 4
    assert py("rpair.a", ctx) == 5


def test_address_of_keeps_the_space(ctx):
    assert tname("&sh", ctx) == "@shared int *" and py("&sh", ctx) == 4
    assert tname("&arr[1]", ctx) == "@local int *" and py("&arr[1]", ctx) == 0x14
    assert tname("&arr", ctx) == "@local int (*)[4]"
    assert tname("&s.b", ctx) == "@local float *" and py("&s.b", ctx) == 0x44
    assert py("*&arr[2]", ctx) == 3
    assert py("&garr[0] == p", ctx) == 1


def test_pointer_arithmetic_is_scaled(ctx):
    assert py("p + 1", ctx) == INTS_AT + 4
    assert py("1 + p", ctx) == INTS_AT + 4
    assert py("p - 1", ctx) == INTS_AT - 4
    assert py("(char *)p + 1", ctx) == INTS_AT + 1
    assert py("(void *)p + 1", ctx) == INTS_AT + 1
    assert py("&garr[5] - &garr[1]", ctx) == 4 and tname("&garr[5] - &garr[1]", ctx) == "long"
    assert py("(long)(sp + 1)", ctx) == 0x48
    assert py("p > np", ctx) == 1 and py("np == 0", ctx) == 1 and py("!np", ctx) == 1
    assert tname("gp + 1", ctx) == "@global float *"


def test_casts(ctx):
    assert py("(char)321", ctx) == 65
    assert py("(unsigned char)-1", ctx) == 255
    assert py("(short)70000", ctx) == 4464
    assert py("(unsigned long long)-1", ctx) == (1 << 64) - 1
    assert py("(int)4294967295u", ctx) == -1
    assert py("(long)p", ctx) == INTS_AT
    assert tname("(float *)p", ctx) == "float *"
    assert tname("(float *)gp", ctx) == "@global float *"   # no qualifier: the space stays
    assert tname("(@generic float *)gp", ctx) == "float *"
    assert tname("(@shared float *)0x10", ctx) == "@shared float *"
    assert tname("(uint32_t)1", ctx) == "uint32_t" and py("(uint32_t)-1", ctx) == 0xFFFFFFFF
    assert py("*(struct Pair *)sp", ctx) == {"a": 7, "b": 0.5}
    assert py("((Pair *)sp)->b", ctx) == 0.5
    assert ev("(enum Color)2", ctx).to_python() == 2
    assert py("(bool)7", ctx) is True
    assert py("(int *)gp == (int *)0x700000002200", ctx) == 1
    assert py("(long)arr", ctx) == 0x10          # an array decays to its address


def test_space_qualifier_on_expressions(ctx):
    assert tname("@shared 16", ctx) == "@shared void *"
    assert tname("@local p", ctx) == "@local int *"
    with pytest.raises(ExpressionError, match="qualifier needs an address or a pointer"):
        ev("@shared 1.5", ctx)
    with pytest.raises(ExpressionError, match="needs a pointer type"):
        ev("(@shared int)1", ctx)


def test_sizeof(ctx):
    for text, size in [("sizeof(int)", 4), ("sizeof(char)", 1), ("sizeof(double)", 8), ("sizeof(long)", 8),
                       ("sizeof(int *)", 8), ("sizeof(struct Pair)", 8), ("sizeof s", 8), ("sizeof(arr)", 16),
                       ("sizeof(int[3])", 12), ("sizeof 1.5f", 4), ("sizeof *p", 4), ("sizeof(threadIdx)", 12)]:
        assert py(text, ctx) == size, text
    assert tname("sizeof(int)", ctx) == "unsigned long"
    assert py("sizeof(i = 9)", ctx) == 4 and py("i", ctx) == 42    # no side effect
    assert py("sizeof *(int *)0", ctx) == 4                          # no memory read


def test_artificial_arrays(ctx):
    assert py("*p@3", ctx) == [10, 20, 30]
    assert py("p[1]@2", ctx) == [20, 30]
    assert py("arr[1]@3", ctx) == [2, 3, 4]
    with pytest.raises(ExpressionError, match="Only values in memory can be extended with '@'."):
        ev("i@2", ctx)
    with pytest.raises(ExpressionError, match="Invalid number 0 of repetitions."):
        ev("*p@0", ctx)


def test_assignment_to_register_variable_goes_through_write_variable(ctx):
    assert py("i = 5", ctx) == 5
    assert py("i", ctx) == 5
    assert ctx.writes[-1] == ("variable", "i", (5).to_bytes(4, "little"))
    assert py("f = 2", ctx) == 2.0 and tname("f", ctx) == "float"
    assert py("rpair.b = 8", ctx) == 8.0
    assert py("rpair", ctx) == {"a": 5, "b": 8.0}


def test_assignment_to_memory_goes_through_write_memory(ctx):
    assert py("arr[0] = 77", ctx) == 77
    assert ctx.writes[-1] == ("memory", MemorySpace.LOCAL, 0x10, (77).to_bytes(4, "little"))
    assert py("arr", ctx) == [77, 2, 3, 4]
    assert py("*(@shared int *)4 = 5", ctx) == 5 and py("sh", ctx) == 5
    assert py("p[1] = 3.9", ctx) == 3 and py("garr[1]", ctx) == 3
    assert py("sp->b = 1", ctx) == 1.0 and py("s.b", ctx) == 1.0
    assert py("sh = 1 << 40", ctx) == 0    # converted to int
    assert py("s = rpair", ctx) == {"a": 5, "b": 2.0}


def test_bitfields_read_and_write(ctx):
    assert py("fl.lo", ctx) == 5 and py("fl.hi", ctx) == 22
    assert py("fl.hi = 3", ctx) == 3
    assert py("fl", ctx) == {"lo": 5, "hi": 3}
    assert py("fl.lo = 9", ctx) == 1     # 3 bits
    assert py("fl.hi", ctx) == 3
    with pytest.raises(ExpressionError, match="address of a bitfield"):
        ev("&fl.lo", ctx)


def test_register_and_convenience_assignment(ctx):
    assert py("$r1 = 9", ctx) == 9 and py("$r1", ctx) == 9
    name, reg, value = ctx.writes[-1]
    assert (name, reg, value.to_python(), type_name(value.type)) == ("register", "r1", 9, "unsigned int")
    assert py("$r1 = -1", ctx) == 0xFFFFFFFF
    assert py("$f2 = 7", ctx) == 7.0 and tname("$f2", ctx) == "float"
    assert py("$foo = 3 * 2", ctx) == 6 and py("$foo + 1", ctx) == 7
    assert py("$bar = 1.5", ctx) == 1.5 and tname("$bar", ctx) == "double"
    assert py("$foo += 4", ctx) == 10
    assert ctx.conv["foo"].to_python() == 10
    assert py("$a = arr", ctx) == [1, 2, 3, 4] and py("$a[2]", ctx) == 3
    assert py('$s = "xy"', ctx) == [120, 121, 0]


def test_increment_decrement_and_compound(ctx):
    assert py("i++", ctx) == 42 and py("i", ctx) == 43
    assert py("++i", ctx) == 44 and py("--i", ctx) == 43 and py("i--", ctx) == 43 and py("i", ctx) == 42
    assert py("i *= 2", ctx) == 84 and py("i -= 4", ctx) == 80 and py("i /= 3", ctx) == 26
    assert py("i %= 5", ctx) == 1 and py("i <<= 4", ctx) == 16 and py("i >>= 2", ctx) == 4
    assert py("i |= 3", ctx) == 7 and py("i &= 5", ctx) == 5 and py("i ^= 1", ctx) == 4
    assert py("p++", ctx) == INTS_AT and py("*p", ctx) == 20


def test_history_values(ctx):
    ctx.history = [Value.from_int(11, "int"), Value.from_int(22, "int")]
    assert py("$1 + $2", ctx) == 33
    assert py("$", ctx) == 22 and py("$$", ctx) == 11 and py("$$0", ctx) == 22
    with pytest.raises(ExpressionError, match=r"History has not yet reached \$5."):
        ev("$5", ctx)
    with pytest.raises(ExpressionError, match="not an lvalue"):
        ev("$1 = 4", ctx)


def test_short_circuit_skips_the_other_side(ctx):
    assert py("0 && *(int *)0", ctx) == 0
    assert py("1 || 5 / 0", ctx) == 1
    assert py("np && *np", ctx) == 0


def test_lvalue_kinds(ctx):
    assert ev("i", ctx).lval is Lval.VARIABLE
    assert ev("arr[1]", ctx).lval is Lval.MEMORY
    assert ev("$r1", ctx).lval is Lval.REGISTER
    assert ev("$zz", ctx).lval is Lval.CONVENIENCE
    assert ev("i + 1", ctx).lval is Lval.NONE
    assert ev("threadIdx", ctx).lval is Lval.NONE


@pytest.mark.parametrize("text,message", [
    ("foo", 'No symbol "foo" in current context.'),
    ("i + foo", 'No symbol "foo" in current context.'),
    ("5 / 0", "Division by zero"),
    ("5 % 0", "Division by zero"),
    ("i / (i - i)", "Division by zero"),
    ("*i", "Attempt to take contents of a non-pointer value."),
    ("*(void *)p", "Attempt to take contents of a non-pointer value."),
    ("&i", "Attempt to take address of value not located in memory."),
    ("&5", "Attempt to take address of value not located in memory."),
    ("i.x", "Attempt to extract a component of a value that is not a structure."),
    ("i->x", "Attempt to extract a component of a value that is not a structure pointer."),
    ("s.zz", "There is no member named zz."),
    ("p->a", "The -> operator needs a pointer to a structure or union, not `int *'."),
    ("i[0]", "cannot subscript something of type `int'"),
    ("5 = 3", "Left operand of assignment is not an lvalue."),
    ("i + 1 = 3", "Left operand of assignment is not an lvalue."),
    ("s + 1", "Argument to arithmetic operation not a number or boolean."),
    ("p + p", "Cannot add two pointers."),
    ("1.5 % 2", "Integer only operation %."),
    ("1.5 << 2", "Integer only operation <<."),
    ("~1.5", "Argument to complement operation not an integer, boolean."),
    ("s ? 1 : 2", "Cannot convert value of type `struct Pair' to a truth value."),
    ("(struct Nope *)p", "No struct type named Nope."),
    ("(int)s", "Invalid cast."),
    ("*(int *)0x10", "Cannot access memory at address 0x10"),
    ("gp[100000]", "Cannot access memory at address 0x700000063c80"),
    ("(short double)1", 'Invalid type "short double"'),
    ("p - (char *)p", "First argument of `-' is a pointer and second argument is neither\nan integer nor a pointer of the same type."),
])
def test_errors(ctx, text, message):
    with pytest.raises(ExpressionError) as info:
        ev(text, ctx)
    assert str(info.value).startswith(message)
    assert info.value.column is not None and 0 <= info.value.column <= len(text)


def test_error_points_at_the_unknown_name(ctx):
    with pytest.raises(ExpressionError) as info:
        ev("i + foo * 2", ctx)
    assert info.value.column == 4
    assert info.value.caret().splitlines()[1] == "    ^"


def test_memory_error_keeps_the_backend_detail(ctx):
    with pytest.raises(ExpressionError) as info:
        ev("*(@shared int *)0x1000", ctx)
    assert "Cannot access memory at address 0x1000" in str(info.value)
    assert "outside" in str(info.value)


def test_types_without_lookup_support():
    ctx = MinimalContext()
    assert py("(unsigned)-1", ctx) == 0xFFFFFFFF
    with pytest.raises(ExpressionError, match="No struct type named Pair."):
        ev("(struct Pair *)sp", ctx)


def test_type_of_does_not_read_or_write(ctx):
    assert str(type_of("sp->b", ctx)) == "float"
    assert str(type_of("*(int *)0", ctx)) == "int"
    assert str(type_of("unsigned long", ctx)) == "unsigned long"
    assert str(type_of("i = 3", ctx)) == "int" and py("i", ctx) == 42
    assert ctx.writes == []


def test_promotions_and_usual_conversions():
    t = lambda n: base_type(n)
    assert str(promote(t("char"))) == "int" and str(promote(t("unsigned short"))) == "int"
    assert str(promote(t("bool"))) == "int" and str(promote(t("unsigned int"))) == "unsigned int"
    assert str(arithmetic_type(t("int"), t("unsigned int"))) == "unsigned int"
    assert str(arithmetic_type(t("long"), t("unsigned int"))) == "long"
    assert str(arithmetic_type(t("unsigned long"), t("long"))) == "unsigned long"
    assert str(arithmetic_type(t("float"), t("long"))) == "float"
    assert str(arithmetic_type(t("float"), t("double"))) == "double"


# ---- C semantics against numpy's wrapping int32 / uint32 arithmetic

_OPS = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", ">", "<=", ">=", "==", "!="]


def _reference(op: str, a, b):
    """numpy computes in the C result type (int32 op int32 -> int32,
    int32 op uint32 -> uint32 here, since we cast both to the C type)."""
    with np.errstate(all="ignore"):
        if op in ("/", "%"):
            q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
            q = q * (1 if (a < 0) == (b < 0) else -1)
            if op == "/":
                return int(np.array(q).astype(a.dtype))
            return int(np.array(a.astype(np.int64) - q * b.astype(np.int64)).astype(a.dtype))
        if op in ("<<", ">>"):
            r = np.left_shift(a, b) if op == "<<" else np.right_shift(a, b)
            return int(np.array(r).astype(a.dtype))     # C: the type of the promoted left operand
        f = {"+": np.add, "-": np.subtract, "*": np.multiply, "&": np.bitwise_and, "|": np.bitwise_or,
             "^": np.bitwise_xor, "<": np.less, ">": np.greater, "<=": np.less_equal, ">=": np.greater_equal,
             "==": np.equal, "!=": np.not_equal}[op]
        return int(f(a, b))


@settings(max_examples=250, deadline=None)
@given(st.sampled_from(_OPS), st.integers(-(1 << 31), (1 << 31) - 1), st.integers(-(1 << 31), (1 << 31) - 1),
       st.sampled_from([("int", "int"), ("unsigned int", "unsigned int"), ("int", "unsigned int"),
                        ("unsigned int", "int")]))
def test_int32_uint32_arithmetic_matches_c(op, x, y, types):
    ta, tb = types
    ctx = FakeContext()
    ctx.reg_vars["a"] = Value.from_int(x, ta)
    ctx.reg_vars["b"] = Value.from_int(y, tb)
    unsigned = "unsigned int" in types
    dt = np.uint32 if unsigned else np.int32
    a = np.array(x).astype(np.int64).astype(np.uint32).astype(dt)[()]
    b = np.array(y).astype(np.int64).astype(np.uint32).astype(dt)[()]
    if op in ("<<", ">>"):
        b = dt(int(y) % 32)
        ctx.reg_vars["b"] = Value.from_int(int(b), tb)
        a = np.array(x).astype(np.int64).astype(np.uint32).astype(np.uint32 if ta != "int" else np.int32)[()]
    if op in ("/", "%") and b == 0:
        with pytest.raises(ExpressionError, match="Division by zero"):
            evaluate(f"a {op} b", ctx)
        return
    if op in ("/", "%") and not unsigned and a == -(1 << 31) and b == -1:
        expected = -(1 << 31) if op == "/" else 0     # wraps on the device too
    else:
        expected = _reference(op, a, b)
    got = evaluate(f"a {op} b", ctx)
    assert got.to_python() == expected, (x, op, y, types)
    result_type = "int" if op in ("<", ">", "<=", ">=", "==", "!=") else \
        (ta if op in ("<<", ">>") else ("unsigned int" if unsigned else "int"))
    assert type_name(got.type) == result_type


@settings(max_examples=150, deadline=None)
@given(st.integers(-(1 << 31), (1 << 31) - 1), st.sampled_from(["-", "~", "!"]))
def test_unary_int32_matches_c(x, op):
    ctx = FakeContext()
    ctx.reg_vars["a"] = Value.from_int(x, "int")
    with np.errstate(all="ignore"):
        expected = {"-": int(-np.int32(x)), "~": int(~np.int32(x)), "!": int(x == 0)}[op]
    assert evaluate(f"{op}a", ctx).to_python() == expected
