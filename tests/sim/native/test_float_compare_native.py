"""Non-rounding float instructions (lower_float_misc.py) under both engines:
min/max (.NaN, .xorsign.abs, .ftz, -0 < +0), abs/neg/copysign (NaN
payloads kept), testp, setp in every comparison with .ftz, the boolean op
and the p|q pair, set with float or integer destinations and sources."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from float_forms import check_form, column

SETTINGS = settings(max_examples=3, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CMPS = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")


@pytest.mark.parametrize("form", ["min.f32", "max.f32", "min.NaN.f32", "max.xorsign.abs.f32",
                                  "min.ftz.f32", "max.ftz.NaN.f32", "copysign.f32", "min.f64",
                                  "max.NaN.f64", "min.xorsign.abs.f64", "copysign.f64"])
@SETTINGS
@given(a=column("f32"), b=column("f32"), a64=column("f64"), b64=column("f64"))
def test_binary_sign_forms(form, a, b, a64, b64):
    t = form.rsplit(".", 1)[1]
    check_form(f"{form} {{d}}, {{a}}, {{b}};", [t, t], [t], [a, b] if t == "f32" else [a64, b64])


@pytest.mark.parametrize("form", ["abs.f32", "neg.f32", "abs.ftz.f32", "neg.ftz.f32", "abs.f64",
                                  "neg.f64"] + [f"testp.{k}.{t}" for t in ("f32", "f64") for k in
                                                ("finite", "infinite", "number", "notanumber",
                                                 "normal", "subnormal")])
@SETTINGS
@given(a=column("f32"), a64=column("f64"))
def test_unary_forms(form, a, a64):
    t = form.rsplit(".", 1)[1]
    out = "pred" if form.startswith("testp") else t
    check_form(f"{form} {{d}}, {{a}};", [t], [out], [a if t == "f32" else a64])


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("cmp", CMPS)
@SETTINGS
@given(a=column("f32"), b=column("f32"), a64=column("f64"), b64=column("f64"))
def test_setp_every_comparison(t, cmp, a, b, a64, b64):
    ftz = ".ftz" if t == "f32" and cmp in ("lt", "equ", "ne") else ""
    check_form(f"setp.{cmp}{ftz}.{t} {{d}}, {{a}}, {{b}};", [t, t], ["pred"],
               [a, b] if t == "f32" else [a64, b64])


@pytest.mark.parametrize("body", ["setp.ltu.and.{t} {{d}}|{{e}}, {{a}}, {{b}}, {{c}};",
                                  "setp.ge.xor.{t} {{d}}, {{a}}, {{b}}, !{{c}};",
                                  "setp.nan.or.{t} {{d}}|{{e}}, {{a}}, {{b}}, !{{c}};"])
@pytest.mark.parametrize("t", ["f32", "f64"])
@SETTINGS
@given(a=column("f32"), b=column("f32"), a64=column("f64"), b64=column("f64"), p=column("pred"))
def test_setp_boolean_ops_and_pairs(body, t, a, b, a64, b64, p):
    outs = ["pred", "pred"] if "|" in body else ["pred"]
    check_form(body.format(t=t), [t, t, "pred"], outs, ([a, b] if t == "f32" else [a64, b64]) + [p])


@pytest.mark.parametrize("form,src,dst", [("set.gtu.u32.f32", "f32", "u32"),
                                          ("set.le.f32.f32", "f32", "f32"),
                                          ("set.num.s32.f64", "f64", "s32"),
                                          ("set.eq.ftz.f64.f32", "f32", "f64"),
                                          ("set.lo.f32.s32", "s32", "f32"),
                                          ("set.lt.f64.s64", "s64", "f64"),
                                          ("set.ne.f32.u16", "u16", "f32")])
@SETTINGS
@given(a32=column("f32"), b32=column("f32"), a64=column("f64"), b64=column("f64"),
       ai=column("u32"), bi=column("u32"), al=column("u64"), bl=column("u64"),
       ah=column("u16"), bh=column("u16"))
def test_set_destinations(form, src, dst, a32, b32, a64, b64, ai, bi, al, bl, ah, bh):
    cols = {"f32": [a32, b32], "f64": [a64, b64], "s32": [ai, bi], "s64": [al, bl],
            "u16": [ah, bh]}[src]
    check_form(f"{form} {{d}}, {{a}}, {{b}};", [src, src], [dst], cols)


@pytest.mark.parametrize("form,regs,outs", [
    ("setp.lt.f16 {d}, {a}, {b};", ["f16", "f16"], ["pred"]),
    ("setp.neu.ftz.f16 {d}, {a}, {b};", ["f16", "f16"], ["pred"]),
    ("setp.geu.and.f16 {d}|{e}, {a}, {b}, {c};", ["f16", "f16", "pred"], ["pred", "pred"]),
    ("setp.nan.bf16 {d}, {a}, {b};", ["u16", "u16"], ["pred"]),
    ("setp.le.bf16 {d}, {a}, {b};", ["u16", "u16"], ["pred"]),
    ("set.gt.u32.f16 {d}, {a}, {b};", ["f16", "f16"], ["u32"]),
    ("set.ltu.f16.f16 {d}, {a}, {b};", ["f16", "f16"], ["f16"]),
    ("set.eq.bf16.bf16 {d}, {a}, {b};", ["u16", "u16"], ["u16"])])
@SETTINGS
@given(a=column("f16"), b=column("f16"), p=column("pred"))
def test_half_comparisons(form, regs, outs, a, b, p):
    check_form(form, regs, outs, [a, b, p][:len(regs)])


@pytest.mark.parametrize("t", ["f32", "f64"])
@SETTINGS
@given(a=column("f32"), b=column("f32"), a64=column("f64"), b64=column("f64"), p=column("pred"))
def test_selp_and_mov_keep_nan_payloads(t, a, b, a64, b64, p):
    # selp and mov are the generic lowerings: they move bits, NaN payloads included
    cols = ([a, b] if t == "f32" else [a64, b64]) + [p]
    check_form(f"selp.{t} {{d}}, {{a}}, {{b}}, {{c}};", [t, t, "pred"], [t], cols)
    imm = "0f7FC12345" if t == "f32" else "0dFFF4000000000123"
    check_form(f"mov.{t} {{d}}, {imm};", [t], [t], cols[:1])
