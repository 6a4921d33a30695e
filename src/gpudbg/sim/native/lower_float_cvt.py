"""Native lowering of cvt with an f32/f64 operand: float to float (with
.rn/.rz/.rm/.rp or the integral roundings .rni/.rzi/.rmi/.rpi, .ftz, .sat,
.relu), float to integer (saturating, NaN to 0) and integer to float,
bit for bit as sim/arith/convert.cvt computes them.

The one idea: the interpreter makes every source exact in f64, rounds once
to the destination and post-processes; here LLVM's fptrunc/sitofp/uitofp
give the round-to-nearest result and a directed mode nudges it by the sign
of the exact error (the f64 residual for f64 -> f32 and <= 32-bit
integers; an exact integer comparison for 64-bit integers); the integral
roundings are llvm.roundeven/trunc/floor/ceil on the f64 value, as numpy's
rint/trunc/floor/ceil are.

f16 and bf16 travel as bits (sim/native/fp16.py); f32 -> tf32 with .rna
is a bit operation; the two-source f16x2/bf16x2 packs are two such
conversions. What stays interpreted: other tf32 forms, fp8 types, .ftz on
the packs (ignored by the interpreter), .satfinite, and forms the
interpreter rejects at run time (a float rounding on float -> int, an
integral one on int -> float).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.sim.native.emit import F64, I32, I64, NotNative, lower, storage_type
from gpudbg.sim.native import fp16
from gpudbg.sim.native.fpbits import FP

_FLOATS = ("f16", "bf16", "f32", "f64")
_DIRECTED = ("rn", "rz", "rm", "rp")
_INTEGRAL = {"rni": "llvm.roundeven", "rzi": "llvm.trunc", "rmi": "llvm.floor", "rpi": "llvm.ceil"}
_F64 = np.dtype(np.float64)


@lower("cvt", types="f")
def cvt(em, inst):
    m = em.mods(inst)
    rnd = m.rounding()
    ftz = m.flag("ftz")
    sat = m.flag("sat")
    relu = m.flag("relu")
    ts = m.types()
    m.finish()                       # .satfinite and the rest stay interpreted
    if len(ts) == 2 and len(inst.operands) == 3 and ts[0].name in ("f16x2", "bf16x2") \
            and ts[1].name == "f32" and not ftz and rnd in (None, "rn", "rz", "rm", "rp"):
        _pack(em, inst, ts[0].name[:-2], rnd or "rn", sat, relu)
        return
    if len(ts) != 2 or len(inst.operands) != 2:
        raise NotNative("cvt needs a destination and a source type")
    dt, st = ts
    if dt.name == "tf32" and st.name == "f32" and rnd in (None, "rna"):
        em.write(inst.operands[0], _to_tf32_rna(em, em.read(inst.operands[1], st.dtype), ftz, sat, relu),
                 dt.dtype)
        return
    for t in (dt, st):
        if t.kind == "f" and t.name not in _FLOATS or t.kind not in "usbf":
            raise NotNative(f"cvt with {t.name} stays interpreted")
    d, a = inst.operands
    if dt.name == st.name and rnd is None and not (ftz or sat or relu):
        em.write(d, em.read(a, st.dtype), dt.dtype)     # a plain copy, NaN payloads kept
        return
    x = em.read(a, st.dtype)
    if st.kind == "f" and dt.kind == "f":
        r = _float_to_float(em, x, dt, st, rnd, ftz, sat, relu)
    elif st.kind == "f":
        if rnd is not None and rnd not in _INTEGRAL:
            raise NotNative(f"cvt.{rnd} from float to integer (an error in the interpreter)")
        r = _float_to_int(em, x, dt, st, rnd or "rzi", ftz)
    else:
        if rnd is not None and rnd not in _DIRECTED:
            raise NotNative(f"cvt.{rnd} from integer to float (an error in the interpreter)")
        r = _int_to_float(em, x, dt, st, rnd or "rn", sat, relu)
    em.write(d, r, dt.dtype)


def _pack(em, inst, name, mode, sat, relu):
    """convert.cvt_pack: cvt.rnd{.relu}{.sat}.{f16x2,bf16x2}.f32 d, a, b
    puts a's conversion in the upper half of d and b's in the lower."""
    b = em.b
    f32 = np.dtype(np.float32)
    halves = []
    for op in inst.operands[1:]:
        v = FP(em, f32).widen(em.read(op, f32))
        halves.append(fp16.bits_of(b, _to_half(em, v, mode, sat, relu, name)))
    hi, lo = (b.zext(h, I32) for h in halves)
    em.write(inst.operands[0], b.or_(b.shl(hi, I32(16)), lo), np.dtype(np.uint32))


def _source_f64(em, x, st, ftz):
    """convert._float_to_f64: .ftz flushes an f32 source, then exact in f64."""
    if st.name in fp16.FORMATS:
        return fp16.widen(em.b, fp16.bits_of(em.b, x), fp16.FORMATS[st.name])
    fp = FP(em, st.dtype)
    if ftz and st.name == "f32":
        x = fp.flush(x)
    return fp.widen(x)


def _integral(em, v, rnd):
    return FP(em, _F64).intrinsic(_INTEGRAL[rnd], v)


def _post(em, fp: FP, r, ftz, sat, relu):
    """convert._float_post then the encoding's canonical NaN: .ftz only for
    an f32 destination, .relu (negative to +0), .sat."""
    b = em.b
    if ftz and fp.ft is not F64:
        r = fp.flush(r)
    if relu:
        r = b.select(b.fcmp_ordered("<", r, fp.const(0.0)), fp.const(0.0), r)
    if sat:
        r = fp.saturate(r)
    return fp.canonical(r)


def _float_to_float(em, x, dt, st, rnd, ftz, sat, relu):
    b = em.b
    v = _source_f64(em, x, st, ftz)
    mode = rnd or "rn"
    if rnd in _INTEGRAL:
        v = _integral(em, v, rnd)
        mode = "rn"
    if dt.name in fp16.FORMATS:
        return _to_half(em, v, mode, sat, relu, dt.name)
    fp = FP(em, dt.dtype)
    if fp.ft is F64:
        return _post(em, fp, v, ftz, sat, relu)     # every source is exact in f64
    r = b.fptrunc(v, fp.ft)
    if mode != "rn":
        f64 = FP(em, _F64)
        es = b.select(f64.is_finite(v), f64.sign(b.fsub(v, b.fpext(r, F64))), I32(0))
        r = fp.nudge(r, es, mode)
    return _post(em, fp, r, ftz, sat, relu)


def _to_half(em, v, mode, sat, relu, name):
    """round_f64(v, F16/BF16, mode) then _float_post on the rounded value
    (.ftz applies to f32 destinations only) and the encoding (f16 as a
    half value, bf16 as its bits, as the registers hold them)."""
    b = em.b
    fmt = fp16.FORMATS[name]
    u = fp16.round_to(b, v, mode, fmt)
    if sat or relu:
        w = fp16.widen(b, u, fmt)
        f64 = FP(em, _F64)
        if relu:
            w = b.select(b.fcmp_ordered("<", w, f64.const(0.0)), f64.const(0.0), w)
        if sat:
            w = f64.saturate(w)
        u = fp16.round_to(b, w, "rn", fmt)     # exact: w is a value of the format, 0 or 1
    return fp16.as_half(b, u) if name == "f16" else u


def _to_tf32_rna(em, x, ftz, sat, relu):
    """convert._to_tf32 with .rna: the f32 bits rounded half away from zero
    to 10 fraction bits by adding 0x1000 (a carry reaches the exponent, up
    to inf); inf kept, NaN -> 0x7FFFFFFF; tf32 is held as u32 bits."""
    b = em.b
    fp = FP(em, np.dtype(np.float32))
    if ftz:
        x = fp.flush(x)
    if relu:
        x = b.select(b.fcmp_ordered("<", x, fp.const(0.0)), fp.const(0.0), x)
    if sat:
        x = fp.saturate(x)
    u = fp.bits(x)
    r = b.and_(b.add(u, I32(0x1000)), I32(0xFFFFE000))
    r = b.select(fp.is_finite(x), r, u)
    return b.select(fp.is_nan(x), I32(0x7FFFFFFF), r)


def _float_to_int(em, x, dt, st, rnd, ftz):
    """convert._to_int: NaN -> 0, out of range -> the nearest limit."""
    b = em.b
    v = _integral(em, _source_f64(em, x, st, ftz), rnd)
    bits = dt.bits
    signed = dt.kind == "s"
    lo = -(2.0 ** (bits - 1)) if signed else 0.0
    hi = 2.0 ** (bits - 1) if signed else 2.0 ** bits       # exclusive
    ity = storage_type(dt.dtype)
    nan = b.fcmp_unordered("uno", v, v)
    over = b.fcmp_ordered(">=", v, L.Constant(F64, hi))
    under = b.fcmp_ordered("<", v, L.Constant(F64, lo))
    safe = b.select(b.or_(nan, b.or_(over, under)), L.Constant(F64, 0.0), v)
    r = b.fptosi(safe, ity) if signed else b.fptoui(safe, ity)
    mx = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    mn = -(1 << (bits - 1)) if signed else 0
    r = b.select(over, ity(mx), r)
    r = b.select(under, ity(mn), r)
    return b.select(nan, ity(0), r)


def _int_to_float(em, x, dt, st, mode, sat, relu):
    b = em.b
    signed = st.kind == "s"
    if dt.name in fp16.FORMATS:
        v = b.sitofp(x, F64) if signed else b.uitofp(x, F64)
        if st.bits > 32:     # round to odd: exact enough for one more rounding to 8 or 11 bits
            f64 = FP(em, _F64)
            es = _int64_error_sign(em, f64, x, v, signed)
            even = b.icmp_unsigned("==", b.and_(f64.bits(v), I64(1)), I64(0))
            odd = b.select(b.icmp_signed(">", es, I32(0)), f64.next_after(v, True), f64.next_after(v, False))
            v = b.select(b.and_(even, b.icmp_signed("!=", es, I32(0))), odd, v)
        return _to_half(em, v, mode, sat, relu, dt.name)
    fp = FP(em, dt.dtype)
    if st.bits <= 32:
        v = b.sitofp(x, F64) if signed else b.uitofp(x, F64)       # exact
        if fp.ft is F64:
            return _post(em, fp, v, False, sat, relu)
        r = b.fptrunc(v, fp.ft)
        if mode != "rn":
            es = FP(em, _F64).sign(b.fsub(v, b.fpext(r, F64)))
            r = fp.nudge(r, es, mode)
        return _post(em, fp, r, False, sat, relu)
    r = b.sitofp(x, fp.ft) if signed else b.uitofp(x, fp.ft)       # correctly rounded
    if mode != "rn":
        r = fp.nudge(r, _int64_error_sign(em, fp, x, r, signed), mode)
    return _post(em, fp, r, False, sat, relu)


def _int64_error_sign(em, fp: FP, x, r, signed):
    """sign(x - r) exactly, for a 64-bit integer x and its nearest float r
    (integral; at most 2^63 signed, 2^64 unsigned, which exceed every x)."""
    b = em.b
    i64 = x.type
    top = L.Constant(fp.ft, 2.0 ** 63 if signed else 2.0 ** 64)
    beyond = b.fcmp_ordered(">=", r, top)
    safe = b.select(beyond, L.Constant(fp.ft, 0.0), r)
    ri = b.fptosi(safe, i64) if signed else b.fptoui(safe, i64)
    if signed:
        gt, lt = b.icmp_signed(">", x, ri), b.icmp_signed("<", x, ri)
    else:
        gt, lt = b.icmp_unsigned(">", x, ri), b.icmp_unsigned("<", x, ri)
    es = b.sub(b.zext(gt, I32), b.zext(lt, I32))
    return b.select(beyond, I32(-1), es)
