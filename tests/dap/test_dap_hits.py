"""hitCondition: per-thread hit numbers tested as whole arrays."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from gpudbg.dap.hits import HitConditionError, HitCounter, parse

OPS = {"": lambda c, n: c == n, "==": lambda c, n: c == n, "=": lambda c, n: c == n, ">": lambda c, n: c > n,
       ">=": lambda c, n: c >= n, "<": lambda c, n: c < n, "<=": lambda c, n: c <= n,
       "%": lambda c, n: c % n == 0}


@given(st.sampled_from(sorted(OPS)), st.integers(1, 10_000), st.lists(st.integers(1, 20_000), max_size=40),
       st.sampled_from(["", " "]))
def test_parse_matches_the_scalar_meaning(op, n, counts, space):
    pred = parse(f"{op}{space}{n}")
    got = pred(np.array(counts, dtype=np.int64))
    assert got.tolist() == [bool(OPS[op](c, n)) for c in counts]


@given(st.lists(st.integers(0, 40), min_size=1, max_size=10), st.integers(1, 50))
def test_counter_numbers_threads_consecutively_across_calls(batches, n):
    c = HitCounter(f">={n}")
    picked = np.concatenate([c.take(b) for b in batches])
    total = sum(batches)
    assert picked.tolist() == [i >= n for i in range(1, total + 1)]
    assert c.count == total


def test_exactly_one_thread_matches_an_equality():
    c = HitCounter("300")
    hits = sum(int(c.take(32).sum()) for _ in range(20))
    assert hits == 1


@pytest.mark.parametrize("text", ["", "abc", ">= x", "%0", "1.5", "== -3", "> 3 4"])
def test_bad_hit_conditions_are_refused(text):
    with pytest.raises(HitConditionError):
        parse(text)
