"""Numeric literals and constant expressions, as seen in operands and
initializers."""
from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.ptx import PTXParseError, ir, parse

H = ".version 8.0\n.target sm_80\n.address_size 64\n"


def imm(text: str) -> ir.Immediate:
    mod = parse(H + f".entry k()\n{{\n\t.reg .b64 %rd1;\n\tmov.b64 %rd1, {text};\n}}\n")
    return mod.functions["k"].instructions[0].operands[1]


def init(text: str) -> list:
    return parse(H + f".global .b64 g[2] = {text};\n").globals["g"].initializer.items


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**64 - 1), st.sampled_from(["{:d}", "0x{:X}", "0x{:x}", "0{:o}",
                                                   "0b{:b}", "{:d}U", "0x{:x}U"]))
def test_integer_literals_are_exact(value, fmt):
    text = fmt.format(value)
    if text.startswith("00"):  # 0 in octal form is "00": still zero
        text = "0"
    assert imm(text) == ir.Immediate(value)
    assert init("{" + text + "}") == [value]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_f32_hex_floats_keep_their_bits(bits):
    got = imm(f"0f{bits:08X}")
    assert (got.bits, got.width) == (bits, 32)
    want = struct.unpack("<f", struct.pack("<I", bits))[0]
    assert got.value == want or (math.isnan(got.value) and math.isnan(want))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**64 - 1))
def test_f64_hex_floats_keep_their_bits(bits):
    got = imm(f"0d{bits:016x}")
    assert (got.bits, got.width) == (bits, 64)
    want = struct.unpack("<d", struct.pack("<Q", bits))[0]
    assert got.value == want or (math.isnan(got.value) and math.isnan(want))


@settings(max_examples=60, deadline=None)
@given(st.integers(-(2**31), 2**31), st.integers(-(2**31), 2**31))
def test_constant_expressions_match_python(a, b):
    assert imm(f"({a}+{b})") == ir.Immediate(a + b)
    assert imm(f"({a}*{b}-{b})") == ir.Immediate(a * b - b)
    assert imm(f"({a}&{b}|{b})") == ir.Immediate((a & b) | b)


@pytest.mark.parametrize("text,value", [
    ("-1", -1), ("~0", -1), ("(1<<40)", 1 << 40), ("(-7/2)", -3), ("(-7 % 2)", -1),
    ("(2+3*4)", 14), ("1.5", 1.5), ("-2.5e3", -2500.0), ("1e3", 1000.0),
])
def test_literal_forms(text, value):
    got = imm(text)
    assert got.value == value and type(got.value) is type(value)


def test_negated_hex_float_flips_the_sign_bit():
    assert imm("-0f3F800000") == ir.Immediate(-1.0, bits=0xBF800000, width=32)


@pytest.mark.parametrize("text,message", [
    ("(1<<64)", "shift count 64 out of range"),
    ("08", "malformed integer literal"),
    ("0x", "malformed number"),
    ("0d3FF0", "exactly 16 hex digits"),
    ("(((1)", "expected ')'"),
    ("(" * 100 + "1" + ")" * 100, "nested too deeply"),
    ("1" * 5000, "does not fit in 64 bits"),
    ("0x" + "F" * 17, "does not fit in 64 bits"),
    ("0x" + "0" * 30 + "1", None),
])
def test_bad_literals(text, message):
    if message is None:  # leading zeros do not count against the width
        assert imm(text) == ir.Immediate(1)
        return
    with pytest.raises(PTXParseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        imm(text)
