"""f16/bf16 and f16x2/bf16x2 arithmetic (lower_half.py) under both engines: add, sub,
mul, fma in every rounding with .ftz/.sat, min/max (.NaN, .ftz), abs/neg,
on hypothesis-chosen halves (signed zeros, subnormals, infinities, NaNs
with payloads); packed registers carry two independent halves."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from float_forms import N, check_form, floats16

SETTINGS = settings(max_examples=3, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
HALVES = st.lists(floats16(), min_size=N, max_size=N)
PACKED = st.lists(st.tuples(floats16(), floats16()).map(lambda p: p[0] | p[1] << 16),
                  min_size=N, max_size=N)
BINARY = ["add", "sub.rz", "mul.rm", "add.rp.ftz", "mul.sat", "sub.rn.ftz.sat", "min", "max.NaN",
          "min.ftz"]
TERNARY = ["fma.rn", "fma.rz.ftz", "fma.rm.sat", "fma.rp"]
UNARY = ["abs", "neg", "abs.ftz", "neg.ftz"]


def _cols(t, draw, n):
    return [draw(PACKED if t.endswith("x2") else HALVES) for _ in range(n)]


@pytest.mark.parametrize("t", ["f16", "f16x2", "bf16", "bf16x2"])
@pytest.mark.parametrize("op", BINARY + TERNARY + UNARY)
@SETTINGS
@given(data=st.data())
def test_half_forms_match_the_interpreter(op, t, data):
    reg = {"f16": "f16", "bf16": "u16"}.get(t, "b32")
    n = 3 if op in TERNARY else 1 if op in UNARY else 2
    operands = ", ".join("{" + "abc"[k] + "}" for k in range(n))
    check_form(f"{op}.{t} {{d}}, {operands};", [reg] * n, [reg], _cols(t, data.draw, n))
