"""Rounding float arithmetic (lower_float.py) under both engines: add, sub,
mul, fma/mad, div, rcp, sqrt, rsqrt.approx in every rounding mode the
lowering covers, with .ftz and .sat, on hypothesis-chosen bit patterns
(edge values: signed zeros, subnormals, infinities, NaNs with payloads)
and on explicit NaN pairs in both operand positions."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from float_forms import EDGE32, EDGE64, N, check_form, column

SETTINGS = settings(max_examples=3, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

BINARY = ["add.f32", "sub.f32", "mul.f32", "add.rz.f32", "sub.rm.f32", "add.rp.sat.f32",
          "add.rm.ftz.f32", "mul.rz.f32", "mul.rm.ftz.f32", "mul.rp.sat.f32", "mul.ftz.sat.f32",
          "div.rn.f32", "div.full.f32", "div.approx.f32", "div.approx.ftz.f32", "div.rz.f32",
          "div.rm.ftz.f32", "div.rp.f32",
          "add.f64", "sub.f64", "mul.f64", "add.rz.f64", "sub.rm.f64", "add.rp.sat.f64",
          "mul.rz.f64", "mul.rm.f64", "mul.rp.f64", "div.rn.f64", "div.rz.f64", "div.rm.f64",
          "div.rp.f64"]
TERNARY = ["fma.rn.f32", "mad.rn.f32", "fma.rn.ftz.f32", "fma.rn.sat.f32", "fma.rz.f32",
           "fma.rm.ftz.f32", "fma.rp.sat.f32", "fma.rn.f64", "fma.rn.sat.f64"]
UNARY = ["sqrt.rn.f32", "sqrt.approx.f32", "sqrt.rn.ftz.f32", "sqrt.rz.f32", "sqrt.rm.f32",
         "sqrt.rp.ftz.f32", "rcp.rn.f32", "rcp.approx.f32", "rcp.approx.ftz.f32", "rcp.rz.f32",
         "rcp.rm.f32", "rcp.rp.ftz.f32", "rsqrt.approx.f32", "rsqrt.approx.ftz.f32",
         "sqrt.rn.f64", "rcp.rn.f64", "rcp.approx.ftz.f64", "rsqrt.approx.f64", "sqrt.rz.f64",
         "sqrt.rp.f64", "rcp.rm.f64", "rcp.rz.f64"]


def _t(form: str) -> str:
    return form.rsplit(".", 1)[1]


@pytest.mark.parametrize("form", BINARY)
@SETTINGS
@given(data=column("f32"), other=column("f32"), data64=column("f64"), other64=column("f64"))
def test_binary_forms_match_the_interpreter(form, data, other, data64, other64):
    t = _t(form)
    cols = [data, other] if t == "f32" else [data64, other64]
    check_form(f"{form} {{d}}, {{a}}, {{b}};", [t, t], [t], cols)


@pytest.mark.parametrize("form", TERNARY)
@SETTINGS
@given(a=column("f32"), b=column("f32"), c=column("f32"), a64=column("f64"), b64=column("f64"),
       c64=column("f64"))
def test_fused_forms_match_the_interpreter(form, a, b, c, a64, b64, c64):
    t = _t(form)
    cols = [a, b, c] if t == "f32" else [a64, b64, c64]
    check_form(f"{form} {{d}}, {{a}}, {{b}}, {{c}};", [t, t, t], [t], cols)


@pytest.mark.parametrize("form", UNARY)
@SETTINGS
@given(a=column("f32"), a64=column("f64"))
def test_unary_forms_match_the_interpreter(form, a, a64):
    t = _t(form)
    check_form(f"{form} {{d}}, {{a}};", [t], [t], [a if t == "f32" else a64])


def _pairs(edges: list[int]) -> tuple[list[int], list[int]]:
    """N (x, y) pairs cycling through every ordered pair of edge values."""
    xs, ys = [], []
    for i in range(N):
        xs.append(edges[i % len(edges)])
        ys.append(edges[(i * 7 + i // len(edges)) % len(edges)])
    return xs, ys


NANS32 = [0x7FC00001, 0xFFA00002, 0x7F800003, 0xFFC12345, 0x3F800000, 0x7F800000]
NANS64 = [0x7FF8000000000001, 0xFFF4000000000002, 0x7FF0000000000003, 0x3FF0000000000000,
          0xFFF0000000000000]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div.rn", "add.rz", "mul.rm", "min", "max"])
@pytest.mark.parametrize("t", ["f32", "f64"])
def test_two_nan_payloads_in_both_positions_give_the_canonical_nan(op, t):
    edges = NANS32 if t == "f32" else NANS64
    xs = [edges[i % len(edges)] for i in range(N)]
    ys = [edges[(i // len(edges)) % len(edges)] for i in range(N)]
    got = check_form(f"{op}.{t} {{d}}, {{a}}, {{b}};", [t, t], [t], [xs, ys])[0]
    canon = 0x7FFFFFFF if t == "f32" else 0x7FFFFFFFFFFFFFFF
    fl = got.view(np.float32 if t == "f32" else np.float64)
    assert all(int(u) == canon for u, f in zip(got, fl) if np.isnan(f))


def test_fma_with_nan_payloads_everywhere():
    xs, ys = _pairs(NANS32)
    zs = list(reversed(xs))
    check_form("fma.rn.f32 {d}, {a}, {b}, {c};", ["f32"] * 3, ["f32"], [xs, ys, zs])


@pytest.mark.parametrize("form", ["add.rz.f32", "mul.rm.f32", "div.rp.f32", "add.rm.f64",
                                  "mul.rp.f64", "fma.rz.f32", "div.rm.f64", "div.rz.f64"])
def test_every_pair_of_edge_values(form):
    t = _t(form)
    edges = EDGE32 if t == "f32" else EDGE64
    xs, ys = _pairs(edges)
    if form.startswith("fma"):
        check_form(f"{form} {{d}}, {{a}}, {{b}}, {{c}};", [t] * 3, [t], [xs, ys, ys[::-1]])
    else:
        check_form(f"{form} {{d}}, {{a}}, {{b}};", [t, t], [t], [xs, ys])


@pytest.mark.parametrize("form", ["fma.rz.f64 {d}, {a}, {b}, {c};", "mad.rp.f64 {d}, {a}, {b}, {c};",
                                  "min.xorsign.abs.f16 {d}, {a}, {b};", "max.relu.f16 {d}, {a}, {b};"])
def test_forms_without_an_exact_lowering_stay_interpreted(form):
    from gpudbg.ptx import parse
    from gpudbg.sim.native.emit import probe
    from gpudbg.sim.native.segments import SegmentPlan
    from float_forms import form_kernel
    from gpudbg.sim.gpu import SimGPU
    from gpudbg.sim.loader import load_module
    t = "f16" if "f16" in form else ("f64" if "f64" in form else "f32")
    n = form.count("{") - 1
    program = load_module(SimGPU(), parse(form_kernel(form, [t] * n, [t]), "k.ptx")).program
    op = form.split()[0]
    (c,) = [c for c in program.code if c.inst.full_opcode == op]
    assert probe(program, c, SegmentPlan.empty()) is None
