"""printf's format parsing and C conversions, on the fake focus."""
from __future__ import annotations

import pytest
from evalfake import FakeContext
from hypothesis import given, settings, strategies as st

from gpudbg.cli.debugger.commands import CommandError
from gpudbg.cli.debugger.printf import parse_printf, render, split_arguments


@pytest.fixture
def ctx():
    return FakeContext()


def printf(text, ctx):
    pieces, args = parse_printf(text)
    return render(pieces, args, ctx)


@pytest.mark.parametrize("text,out", [
    ('"i=%d\\n", i', "i=42\n"),
    ('"%5d|%-5d|%05d", i, i, i', "   42|42   |00042"),
    ('"%x %X %#x %o %#o", 255, 255, 255, 8, 8', "ff FF 0xff 10 010"),
    ('"%#x %#o", 0, 0', "0 0"),
    ('"%u", -1', "4294967295"),
    ('"%lu %ld", -1, -1', "18446744073709551615 -1"),
    ('"%hhd %hd", 300, 70000', "44 4464"),
    ('"%d", u', "-294967296"),                       # unsigned 4000000000 as a C int
    ('"%+d % d %+u", 5, 5, 5', "+5  5 5"),
    ('"%.3d|%.0d|", 7, 0', "007||"),
    ('"%c%c", c, 66', "AB"),
    ('"%f %.2f %e %g", 1.5, 2.0, 1000.0, 0.0001', "1.500000 2.00 1.000000e+03 0.0001"),
    ('"%s and %s", name, "lit"', "hello and lit"),
    ('"%.3s|%-6s|", name, "ab"', "hel|ab    |"),
    ('"%%d %d", 1', "%d 1"),
    ('"tab\\there \\101\\x42"', "tab\there AB"),
    ('"%p", name', "0x700000002300"),
    ('"%d", (i + 1) * 2', "86"),
])
def test_conversions(text, out, ctx):
    assert printf(text, ctx) == out


@pytest.mark.parametrize("text,message", [
    ('"%d"', "Wrong number of arguments"),
    ('"%d", 1, 2', "Wrong number of arguments"),
    ("no quote", "Bad format string, missing '\"'"),
    ('"open', "non-terminated"),
    ('"%n", 1', "Format specifier `n' not supported"),
    ('"%y", 1', "Unrecognized format specifier 'y'"),
    ('"%d" 1', "Invalid argument syntax"),
    ('"%d", ', "an argument is empty"),
    ('"%d", 1 +', "A syntax error in expression"),
])
def test_errors_are_gdbs(text, message, ctx):
    with pytest.raises(Exception) as e:
        printf(text, ctx)
    assert message in (getattr(e.value, "message", None) or str(e.value))


def test_a_float_for_an_integer_conversion_is_refused(ctx):
    with pytest.raises(CommandError, match="can't be converted to integer for %d"):
        printf('"%d", 1.5', ctx)


def test_arguments_split_at_top_level_commas_only():
    assert split_arguments(' f(a, b), x[1,2], "a,b", \',\'') == ["f(a, b)", "x[1,2]", '"a,b"', "','"]
    assert split_arguments("") == []


@settings(max_examples=300, deadline=None)
@given(n=st.integers(-(1 << 63), (1 << 63) - 1), conv=st.sampled_from("dixX"),
       length=st.sampled_from(["", "hh", "h", "l", "ll"]), flags=st.sampled_from(["", "-", "0", "+", " "]),
       width=st.integers(0, 25))
def test_integers_match_c_semantics(n, conv, length, flags, width):
    """%d/%x of any value equals C's: the value wrapped to the length
    modifier's width (signed for d/i), then Python's % (which agrees with C
    for these flags)."""
    bits = {"": 32, "hh": 8, "h": 16, "l": 64, "ll": 64}[length]
    v = n % (1 << bits)
    if conv in "di" and v >= 1 << (bits - 1):
        v -= 1 << bits
    if conv in "xX" and flags in ("+", " "):
        flags = ""                                     # sign flags are for signed conversions
    expected = f"%{flags}{width or ''}{'d' if conv == 'i' else conv}" % v
    got = printf(f'"%{flags}{width or ""}{length}{conv}", {n}', FakeContext())
    assert got == expected
