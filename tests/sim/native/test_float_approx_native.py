"""The f32 transcendental approximations (lower_float_approx.py) under both
engines: ex2, lg2, sin, cos (with and without .ftz) and tanh, on
hypothesis-chosen values, and on lanes whose f64 value sits next to an
f32 rounding boundary (those fail their check natively and the
interpreter computes them: the outputs still agree)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from float_forms import N, check_form, column

SETTINGS = settings(max_examples=3, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FORMS = ["ex2.approx.ftz.f32", "ex2.approx.f32", "lg2.approx.ftz.f32", "lg2.approx.f32",
         "sin.approx.ftz.f32", "sin.approx.f32", "cos.approx.ftz.f32", "cos.approx.f32",
         "tanh.approx.f32"]
MODERATE = st.lists(st.floats(-160, 160, width=32).map(lambda v: int(np.float32(v).view(np.uint32))),
                    min_size=N, max_size=N)


@pytest.mark.parametrize("form", FORMS)
@SETTINGS
@given(bits=column("f32"), moderate=MODERATE)
def test_approximations_match_the_interpreter(form, bits, moderate):
    check_form(f"{form} {{d}}, {{a}};", ["f32"], ["f32"], [bits])
    check_form(f"{form} {{d}}, {{a}};", ["f32"], ["f32"], [moderate])


def test_values_next_to_an_f32_rounding_boundary_agree():
    # cos(2^-12) = 1 - 2^-25 + tiny: one f64 ulp from the midpoint between
    # 1 - 2^-24 and 1, so the native check hands these lanes back
    y = np.cos(np.float64(2.0 ** -12))
    low = int(np.array(y).view(np.uint64)) & ((1 << 29) - 1)
    assert abs(low - (1 << 28)) < 16
    vals = [2.0 ** -12, -2.0 ** -12, 0.5, 1.0, 3.0, -0.0]
    xs = [int(np.float32(vals[i % len(vals)]).view(np.uint32)) for i in range(N)]
    check_form("cos.approx.f32 {d}, {a};", ["f32"], ["f32"], [xs])
