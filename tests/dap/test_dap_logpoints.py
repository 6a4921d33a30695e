"""Logpoint templates: parsed once, rendered per lane."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from gpudbg.dap.logpoints import TemplateError, check, parse, render

literal = st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=10)
expr = st.from_regex(r"[a-z][a-z0-9_]{0,5}( [+*] [0-9]{1,2})?", fullmatch=True)


@given(st.lists(st.tuples(literal, expr), max_size=5), literal)
def test_render_substitutes_each_expression(pieces, tail):
    text = "".join(f"{lit}{{{e}}}" for lit, e in pieces) + tail
    got = render(parse(text), lambda e: f"<{e}>")
    assert got == "".join(f"{lit}<{e}>" for lit, e in pieces) + tail


def test_doubled_braces_are_literal():
    assert render(parse("{{x}} = {x}"), lambda e: "7") == "{x} = 7"


def test_an_expression_that_fails_does_not_lose_the_line():
    def value(e):
        raise ValueError("No symbol")
    assert render(parse("a={a} b"), value) == "a=<error: No symbol> b"


@pytest.mark.parametrize("text, words", [("v={v", "never closed"), ("x}", "unmatched"), ("{ }", "empty")])
def test_malformed_templates_are_refused(text, words):
    with pytest.raises(TemplateError, match=words):
        parse(text)


def test_expressions_are_checked_with_the_evaluators_grammar():
    check(parse("t={threadIdx.x * 2} v={tile[t]}"))
    with pytest.raises(TemplateError, match=r"\{a \+\}"):
        check(parse("{a +}"))
