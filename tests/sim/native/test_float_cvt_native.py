"""cvt with an f32/f64 side (lower_float_cvt.py) under both engines: float
to float in every rounding (incl. the integral ones), .ftz/.sat/.relu,
float to every integer width (saturation, NaN), and every integer width to
float in every rounding, on hypothesis-chosen bit patterns."""
from __future__ import annotations

import numpy as np
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


HALF = ([f"cvt{r}{f}.f16.{s}" for s in ("f32", "f64") for r, f in
         ((".rn", ""), (".rz", ".relu"), (".rm", ""), (".rp", ".sat"), (".rni", ""))]
        + ["cvt.f32.f16", "cvt.f64.f16", "cvt.rmi.f32.f16", "cvt.rn.sat.f16.f16", "cvt.rzi.s32.f16",
           "cvt.rni.u16.f16", "cvt.rzi.s64.f16", "cvt.rn.f16.s32", "cvt.rz.f16.u32",
           "cvt.rm.f16.s64", "cvt.rp.f16.u16"]
        + ["cvt.rn.bf16.f32", "cvt.rz.relu.bf16.f32", "cvt.rm.bf16.f64", "cvt.rp.sat.bf16.f32",
           "cvt.f32.bf16", "cvt.f64.bf16", "cvt.rzi.s32.bf16", "cvt.rn.bf16.s64", "cvt.rz.bf16.u64",
           "cvt.rp.bf16.s32"]
        + ["cvt.rna.tf32.f32", "cvt.rna.ftz.tf32.f32", "cvt.rna.sat.tf32.f32", "cvt.rna.relu.tf32.f32"])


def _types(form):
    d, s = form.split(".")[-2:]
    regs = {"bf16": "u16", "tf32": "u32"}
    return regs.get(d, d), regs.get(s, s)


@pytest.mark.parametrize("form", FLOAT_FORMS + TO_INT + FROM_INT + HALF)
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


def test_f16_rounding_boundaries():
    # f32 values at and around f16 midpoints, the overflow edge and the subnormal range
    vals = [65519.0, 65520.0, 65504.0, 65536.0, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11,
            2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -24, 2.0 ** -14 - 2.0 ** -25, 6.1e-5, 1e-8]
    xs = [int(np.float32(vals[i % len(vals)] * (1 if i < N // 2 else -1)).view(np.uint32))
          for i in range(N)]
    for r in ("rn", "rz", "rm", "rp"):
        check_form(f"cvt.{r}.f16.f32 {{d}}, {{a}};", ["f32"], ["f16"], [xs])


def test_tf32_to_f32_cvt_stays_interpreted():
    from gpudbg.ptx import parse
    from gpudbg.sim.gpu import SimGPU
    from gpudbg.sim.loader import load_module
    from gpudbg.sim.native.emit import probe
    from gpudbg.sim.native.segments import SegmentPlan
    from float_forms import form_kernel
    program = load_module(SimGPU(), parse(form_kernel("cvt.f32.tf32 {d}, {a};", ["u32"], ["f32"]),
                                          "k.ptx")).program
    (c,) = [c for c in program.code if c.inst.opcode == "cvt"]
    assert probe(program, c, SegmentPlan.empty()) is None


@pytest.mark.parametrize("form", ["cvt.rn.f16x2.f32", "cvt.rz.relu.f16x2.f32", "cvt.rm.sat.f16x2.f32",
                                  "cvt.rn.bf16x2.f32", "cvt.rp.relu.bf16x2.f32"])
@SETTINGS
@given(a=column("f32"), b=column("f32"))
def test_two_source_packs(form, a, b):
    check_form(f"{form} {{d}}, {{a}}, {{b}};", ["f32", "f32"], ["b32"], [a, b])
