"""Property tests: mutated or truncated real PTX either parses or raises
PTXParseError with a sane position, never any other exception."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudbg.ptx import PTXParseError, parse

from ptx_fixtures import FIXTURES

TEXTS = [(FIXTURES / n).read_text() for n in (
    "reduce_printf.sm80.ptx", "inline_asm.sm90.ptx", "indirect.sm80.ptx",
    "constants.sm90.ptx", "edge_cases.ptx", "lineinfo_mix.sm80.ptx")]
SNIPPETS = list("{}()[],;:+-!@|<>=*/~&^%._$ \n\t\"0123456789abcfdxU") + [
    "%r1", "%tid.x", ".reg", ".b32", "//", "/*", "*/", "0f", "0x", ".loc", "call",
    "bra", "@%p1", "<9>", ".param", "_", "generic(", "0d", "1e9", "9" * 30,
    ".section", ".b8", ".callprototype", "$L__BB0_2", "{ .reg .b32 %r1; }", "(1/0)",
    "<<70", "%laneid.y", "-0f3F800000", ".ptr.global.align", "inlined_at 1 2 3",
]

mutation = st.tuples(st.sampled_from(["delete", "insert", "truncate", "duplicate", "move"]),
                     st.floats(0, 1), st.integers(0, 60), st.sampled_from(SNIPPETS),
                     st.floats(0, 1))


def mutate(text: str, ops) -> str:
    for kind, where, length, snippet, other in ops:
        i = int(where * len(text))
        j = min(len(text), i + length)
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + snippet + text[i:]
        elif kind == "truncate":
            text = text[:i]
        elif kind == "duplicate":
            text = text[:i] + text[i:j] + text[i:]
        else:
            k = int(other * len(text))
            text = text[:k] + text[i:j] + text[k:]
    return text


def _check(text: str) -> None:
    try:
        parse(text, "fuzz.ptx")
    except PTXParseError as err:
        assert err.file == "fuzz.ptx"
        assert 1 <= err.line <= text.count("\n") + 1
        assert err.col >= 1
        assert str(err).startswith(f"fuzz.ptx:{err.line}:{err.col}: ")


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(TEXTS))), st.lists(mutation, min_size=1, max_size=4))
def test_mutated_ptx_parses_or_raises_parse_error(index, ops):
    _check(mutate(TEXTS[index], ops))


TOKENS = (".version 8.0 .target sm_80 .entry .func .visible .extern .param .reg .local "
          ".shared .global .const .align 8 .b8 .b32 .u64 .f32 .pred .v4 .ptr .attribute "
          ".loc .file .section .pragma .maxntid .noreturn .callprototype .calltargets "
          ".branchtargets k f x _ p $L1 %r1 %r<3> %tid.x %laneid %p1 { } ( ) [ ] , ; : + - "
          "! @ | < > = * 1 0 -1 0x10 0f3F800000 1.5 \"s\" mov.u32 bra call.uni call "
          "ld.param.u32 brx.idx generic function_name inlined_at").split()


@settings(max_examples=250, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=50), st.booleans())
def test_token_soup_in_a_body_parses_or_raises_parse_error(tokens, in_body):
    text = " ".join(tokens)
    if in_body:
        text = (".version 8.0\n.target sm_80\n.entry k(.param .u32 a)\n{\n"
                ".reg .b32 %r<4>;\n.reg .pred %p<3>;\n" + text + "\n}\n")
    _check(text)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 120))
def test_every_truncation_of_a_function_is_handled(cut_tenths):
    text = TEXTS[0]
    _check(text[: len(text) * cut_tenths // 120])
