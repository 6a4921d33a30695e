"""PTX the fuzz target fuzz/ptx.py found escaping the front end or the
loader as something other than a PTX error: a `.version` with thousands of
digits (ValueError from int()), a decimal float past .f64 (OverflowError in
the translator), an initialized global of gigabytes (the loader built the
whole image in host memory), and a huge text whose error is near its start
(lexed completely before the error was seen)."""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.ptx import PTXParseError, parse
from gpudbg.reader_error import ReaderError

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
KERNEL = ".visible .entry k(.param .u32 a)\n{\n.reg .b32 %r<3>;\nld.param.u32 %r1, [a];\n{op}\nret;\n}\n"


@pytest.mark.parametrize("version", ["9" * 5000 + ".0", "8." + "9" * 5000, "1" + "0" * 4300, "12345.0",
                                     "8.12345"])
def test_a_version_with_too_many_digits_is_a_ptx_error(version):
    with pytest.raises(PTXParseError) as ei:
        parse(f".version {version}\n.target sm_80\n", "v.ptx")
    e = ei.value
    assert isinstance(e, ReaderError) and (e.file, e.line, e.col) == ("v.ptx", 1, 10)
    assert "out of range" in e.message and len(e.message) < 120


@pytest.mark.parametrize("literal", ["1e999", "-1e999", "1.0e400", "9" * 400 + ".0"])
def test_a_decimal_float_past_f64_is_a_ptx_error(literal):
    text = HEAD + KERNEL.replace("{op}", f"add.s32 %r2, %r1, {literal};")
    with pytest.raises(PTXParseError, match="out of range for .f64") as ei:
        parse(text, "f.ptx")
    assert ei.value.line == 8


def test_the_largest_f64_still_parses():
    parse(HEAD + KERNEL.replace("{op}", "mov.f64 %fd1, 1.7976931348623157e308;").replace(
        ".reg .b32 %r<3>;", ".reg .b32 %r<3>;\n.reg .f64 %fd<2>;"), "f.ptx")


def test_the_first_error_is_found_without_lexing_the_rest():
    # a lexical error far below a syntax error: the syntax error is reported
    text = HEAD + "bogus\n" + "add.s32 %r1, %r1, 1;\n" * 50_000 + "/* never closed"
    with pytest.raises(PTXParseError) as ei:
        parse(text, "big.ptx")
    assert ei.value.line == 4 and "expected a directive at module level" in ei.value.message


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux's /proc to see the RSS")
def test_an_initialized_global_of_a_gigabyte_loads_without_building_it():
    from gpudbg.driver.engine import get_engine
    from gpudbg.driver.module import load_ir
    size = 1 << 30
    text = HEAD + f".global .align 4 .b8 big[{size}] = {{1, 2, 3}};\n.visible .entry k() {{ ret; }}\n"
    ctx = get_engine().current_context()
    before = _rss()
    m = load_ir(ctx, parse(text, "big.ptx"), "big.ptx")
    try:
        grown = _rss() - before
        base, nbytes = m.loaded.globals["big"]
        assert nbytes == size and grown < 256 << 20, f"loading grew the process by {grown >> 20} MiB"
        assert bytes(ctx.gpu.memory.read(base, 4)) == b"\x01\x02\x03\x00"
    finally:
        m.unload()


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["(", "-", "~", "!"]), st.integers(1, 5000), st.sampled_from(["1", "1.5", "0f3F800000"]))
def test_nested_operands_are_parsed_or_refused_with_a_place(prefix, depth, leaf):
    closing = ")" * depth if prefix == "(" else ""
    text = HEAD + KERNEL.replace("{op}", f"add.s32 %r2, %r1, {prefix * depth}{leaf}{closing};")
    try:
        parse(text, "n.ptx")
    except PTXParseError as e:
        assert e.line == 8 and e.col >= 1
