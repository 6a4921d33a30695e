"""Expressions nested past what Python's stack holds: the debugger's
evaluator overflowed the stack (RecursionError) at ~400 nested parentheses
and at a few hundred chained operators; now every shape deeper than
MAX_NESTING is an ExpressionError at a column, and everything up to it
evaluates with room to spare on the stack."""
from __future__ import annotations

import sys

import pytest
from evalfake import FakeContext
from hypothesis import given, settings, strategies as st

from gpudbg.cli.debugger.evaluate import ExpressionError, evaluate
from gpudbg.cli.debugger.expr import MAX_NESTING, parse

N = MAX_NESTING


def _shapes(n: int) -> dict[str, str]:
    """Expressions whose tree is about n levels deep."""
    return {
        "parens": "(" * n + "1" + ")" * n,
        "negations": "- " * n + "1",
        "sum": "+".join(["1"] * (n + 1)),
        "assignments": "=".join(["$a"] * n) + "=1",
        "conditionals": "1?" * n + "1" + ":1" * n,
        "casts": "(int)" * n + "1",
        "indexes": "$a" + "[0]" * n,
        "members": "$a" + ".x" * n,
        "mixed": "(-" * n + "1" + ")" * n,
    }


@pytest.mark.parametrize("shape", sorted(_shapes(1)))
@pytest.mark.parametrize("depth", [400, 5000])
def test_too_deep_is_an_expression_error_not_a_recursion_error(shape, depth):
    text = _shapes(depth)[shape]
    with pytest.raises(ExpressionError) as ei:
        parse(text)
    e = ei.value
    assert e.message == f"Expression nested too deeply (more than {N} levels)."
    assert e.column is not None and 0 <= e.column < len(text) and e.text == text


def _at_stack_depth(frames: int, f):
    return f() if frames == 0 else _at_stack_depth(frames - 1, f)


@pytest.mark.parametrize("shape", ["parens", "negations", "sum", "assignments", "conditionals", "casts",
                                   "mixed"])
def test_the_deepest_accepted_expression_evaluates_with_stack_to_spare(shape):
    """At the limit, with half of Python's stack already used by callers
    (the REPL, command scripts), an expression still evaluates."""
    # a "(-" level is two levels of the parser's recursion and one of the tree
    depth = {"conditionals": (N - 1) // 2, "mixed": 2 * N // 3 - 1}.get(shape, N - 1)
    text = _shapes(depth)[shape]
    ctx = FakeContext()
    value = _at_stack_depth(sys.getrecursionlimit() // 2, lambda: evaluate(text, ctx))
    assert value.to_python() == evaluate(text.replace("(int)", ""), ctx).to_python()
    assert value.to_python() == {"sum": N, "negations": (-1) ** (N - 1)}.get(shape, value.to_python())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["(", "-", "!", "~", "*", "&", "(int)", "+"]), min_size=1, max_size=2000),
       st.sampled_from(["1", "$a", "0x10"]))
def test_any_prefix_nesting_parses_or_is_an_expression_error(prefixes, leaf):
    text = "".join(prefixes) + leaf + ")" * sum(p == "(" for p in prefixes)
    try:
        evaluate(text, FakeContext())
    except ExpressionError as e:
        assert e.message
