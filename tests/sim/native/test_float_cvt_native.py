"""cvt with an f32/f64 side (lower_float_cvt.py) under both engines: float
to float in every rounding (incl. the integral ones), .ftz/.sat/.relu,
float to every integer width (saturation, NaN), and every integer width to
float in every rounding, on hypothesis-chosen bit patterns."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from float_forms import N, check_form, column

SETTINGS = settings(max_examples=3, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
INTS = ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"]
FLOAT_FORMS = [f"cvt{r}{f}.{d}.{s}" for d in ("f32", "f64") for s in ("f32", "f64")
               for r, f in (("", ""), (".rn", ""), (".rz", ""), (".rm", ".ftz"), (".rp", ".sat"),
                            (".rni", ""), (".rzi", ".ftz"), (".rmi", ".relu"), (".rpi", ".sat"),
                            ("", ".ftz"), (".rn", ".relu"))]
TO_INT = [f"cvt{r}.{i}.{s}" for s in ("f32", "f64")
          for i, r in zip(INTS, ("", ".rni", ".rmi", ".rpi", ".rzi.ftz", ".rni", ".rmi", ""))]
FROM_INT = [f"cvt{r}.{s}.{i}" for s in ("f32", "f64") for i in INTS
            for r in (("", ".rz", ".rm", ".rp") if i[1:] in ("32", "64") and (s, i[1:]) != ("f64", "32")
                      else ("", ".rm.sat"))]


def _types(form):
    d, s = form.split(".")[-2:]
    return d, s


@pytest.mark.parametrize("form", FLOAT_FORMS + TO_INT + FROM_INT)
@SETTINGS
@given(data=st.data())
def test_cvt_forms_match_the_interpreter(form, data):
    d, s = _types(form)
    col = data.draw(column(s))
    check_form(f"{form} {{d}}, {{a}};", [s], [d], [col])


@pytest.mark.parametrize("form", ["cvt.rz.f32.s64", "cvt.rp.f32.u64", "cvt.rm.f64.s64",
                                  "cvt.rz.f64.u64"])
def test_64_bit_integers_near_the_rounding_points(form):
    d, s = _types(form)
    base = [(1 << 53) + k for k in range(-3, 4)] + [(1 << 24) + k for k in range(-3, 4)]
    base += [(1 << 64) - k for k in range(1, 9)] + [(1 << 63) + k for k in range(-4, 4)]
    col = [(base[i % len(base)] * (1 if i < N // 2 else -1)) % (1 << 64) for i in range(N)]
    check_form(f"{form} {{d}}, {{a}};", [s], [d], [col])


def test_half_precision_cvt_stays_interpreted():
    from gpudbg.ptx import parse
    from gpudbg.sim.gpu import SimGPU
    from gpudbg.sim.loader import load_module
    from gpudbg.sim.native.emit import probe
    from gpudbg.sim.native.segments import SegmentPlan
    from float_forms import form_kernel
    program = load_module(SimGPU(), parse(form_kernel("cvt.rn.f16.f32 {d}, {a};", ["f32"], ["f16"]),
                                          "k.ptx")).program
    (c,) = [c for c in program.code if c.inst.opcode == "cvt"]
    assert probe(program, c, SegmentPlan.empty()) is None
