"""Native lowerings of f32/f64 arithmetic that rounds: add, sub, mul,
fma/mad, div, sqrt, rcp and rsqrt.approx, with .ftz, .sat and the directed
roundings, each giving the bits the interpreter gives (sim/ops/arithmetic.py
over sim/arith/floating.py, fapprox.py).

The one idea: LLVM's fadd/fsub/fmul/fdiv, llvm.sqrt and llvm.fma (no
fast-math flags, so no contraction or reassociation) are the IEEE
round-to-nearest results numpy computes; a directed mode nudges that result
by the sign of its exact error, computed with the same error-free
operations as the interpreter (f32: in f64; f64: TwoSum, or an fma on
frexp-scaled operands where the interpreter sums Dekker's TwoProduct
exactly: the same sign); .ftz/.sat/NaN are fpbits.FP.finish. Every NaN
result is the canonical one, as in the interpreter.

f16/f16x2 forms go to lower_half.py. What stays interpreted: bf16 forms,
fma with a directed rounding on f64 (the interpreter's multi-term
oracle is not mirrored), and the transcendental approximations
ex2/lg2/sin/cos/tanh (numpy's libm-backed f64 functions cannot be
reproduced bit for bit).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.sim.native import lower_half as half
from gpudbg.sim.native.emit import F64, I32, NotNative, lower
from gpudbg.sim.native.fpbits import FP, all_of, two_sum

_DIRECTED = ("rz", "rm", "rp")
_F64 = np.dtype(np.float64)


def _form(em, inst, extra: tuple[str, ...] = ()):
    """(type, rounding, ftz, sat, extra modifier or None) of an f32/f64
    arithmetic instruction; anything else is NotNative."""
    m = em.mods(inst)
    mode = m.take(*extra) if extra else None
    rnd = m.rounding()
    ftz = m.flag("ftz")
    sat = m.flag("sat")
    t = m.one_type()
    m.finish()
    if t.name not in ("f32", "f64"):
        raise NotNative(f"{inst.full_opcode}: {t.name} stays interpreted")
    if rnd not in (None, "rn") + _DIRECTED:
        raise NotNative(f"{inst.full_opcode}: rounding {rnd}")
    if ftz and t.name == "f64":
        raise NotNative(f"{inst.full_opcode}: .ftz on f64 (an error in the interpreter)")
    return t, rnd, ftz, sat, mode


def _reads(em, inst, dtype, n):
    return [em.read(op, dtype) for op in inst.operands[1:1 + n]]


def _frexp(em, x: L.Value) -> tuple[L.Value, L.Value]:
    ty = L.LiteralStructType([F64, I32])
    fn = em.b.module.declare_intrinsic("llvm.frexp", [F64, I32], L.FunctionType(ty, [F64]))
    pair = em.b.call(fn, [x])
    return em.b.extract_value(pair, 0), em.b.extract_value(pair, 1)


def _ldexp(em, x: L.Value, e: L.Value) -> L.Value:
    fn = em.b.module.declare_intrinsic("llvm.ldexp", [F64, I32], L.FunctionType(F64, [F64, I32]))
    return em.b.call(fn, [x, e])


def _fma(fp: FP, a, b, c) -> L.Value:
    return fp.intrinsic("llvm.fma", a, b, c)


# ------------------------------------------------------------ add / sub / mul

def _add_error_sign(em, fp: FP, a, b, r) -> L.Value:
    """floating.add's es before masking: f32 in f64 (TwoSum, residual of
    the f32 result), f64 the TwoSum error."""
    bld = em.b
    if fp.ft is F64:
        _, e = two_sum(bld, a, b)
        return fp.sign(e)
    s, e = two_sum(bld, fp.widen(a), fp.widen(b))
    return fp.sign(bld.fadd(bld.fsub(s, fp.widen(r)), e), F64)


def _mul_error_sign(em, fp: FP, a, b, r) -> L.Value:
    """floating.mul's es before masking: f32 in f64 (the product is exact);
    f64 on frexp-scaled operands, where fma(ma, mb, -rr) has the sign of
    the exact ma*mb - rr (no underflow at that scale)."""
    bld = em.b
    if fp.ft is not F64:
        return fp.sign(bld.fsub(bld.fmul(fp.widen(a), fp.widen(b)), fp.widen(r)), F64)
    one, zero = fp.const(1.0), fp.const(0.0)
    ma, ea = _frexp(em, bld.select(fp.is_finite(a), a, one))
    mb, eb = _frexp(em, bld.select(fp.is_finite(b), b, one))
    rr = _ldexp(em, bld.select(fp.is_finite(r), r, zero), bld.neg(bld.add(ea, eb)))
    return fp.sign(_fma(fp, ma, mb, fp.neg(rr)))


@lower("add", "sub", "mul", types="f")
def binary(em, inst):
    if half.is_half(inst):
        return half.add_sub_mul(em, inst)
    t, rnd, ftz, sat, _ = _form(em, inst)
    fp = FP(em, t.dtype)
    bld = em.b
    op = {"add": bld.fadd, "sub": bld.fsub, "mul": bld.fmul}[inst.opcode]
    mode = rnd or "rn"
    if mode == "rn" and not ftz and not sat:    # NaN in, NaN out, made canonical: raw inputs serve
        a, b = (em.read_float(o, t.dtype) for o in inst.operands[1:3])
        r = op(a, b)
        em.write_float(inst.operands[0], r, fp.canonical(r), t.dtype)
        return
    a, b = _reads(em, inst, t.dtype, 2)
    is_mul = inst.opcode == "mul"
    if inst.opcode == "sub":
        b = fp.neg(b)                    # floating.sub is add(a, -b)
    if ftz:
        a, b = fp.flush(a), fp.flush(b)
    fin = bld.and_(fp.is_finite(a), fp.is_finite(b))
    r = bld.fmul(a, b) if is_mul else bld.fadd(a, b)
    if mode != "rn":
        es = (_mul_error_sign if is_mul else _add_error_sign)(em, fp, a, b, r)
        es = fp.masked_error_sign(es, fin, r)
        r = fp.nudge(r, es, mode)
        if not is_mul:
            exact_zero = all_of(bld, fin, bld.icmp_signed("==", es, I32(0)), fp.is_zero(r))
            r = fp.zero_sign_rm(r, exact_zero, a, b, mode)
    em.write(inst.operands[0], fp.finish(r, ftz, sat), t.dtype)


# ------------------------------------------------------------ fma / mad

@lower("fma", "mad", types="f")
def fma(em, inst):
    if half.is_half(inst):
        return half.fma(em, inst)
    t, rnd, ftz, sat, _ = _form(em, inst)
    mode = rnd or "rn"
    if mode != "rn" and t.name == "f64":
        raise NotNative("fma with a directed rounding on f64 stays interpreted")
    fp = FP(em, t.dtype)
    if mode == "rn":     # NaN in, NaN out, made canonical: raw inputs serve (emit.read_float)
        a, b, c = (em.read_float(o, t.dtype) for o in inst.operands[1:4])
    else:
        a, b, c = _reads(em, inst, t.dtype, 3)
    if ftz:
        a, b, c = fp.flush(a), fp.flush(b), fp.flush(c)
    r = _fma(fp, a, b, c)
    if mode != "rn":
        r = _directed_fma_f32(em, fp, a, b, c, r, mode)
    if mode == "rn" and not ftz and not sat:
        em.write_float(inst.operands[0], r, fp.canonical(r), t.dtype)
        return
    em.write(inst.operands[0], fp.finish(r, ftz, sat), t.dtype)


def _directed_fma_f32(em, fp: FP, a, b, c, r, mode) -> L.Value:
    """floating.fma's f32 path: the RN result nudged by the sign of
    (s - r) + e, TwoSum(a*b, c) = s + e in f64 (the product is exact),
    then its zero-sign rules."""
    bld = em.b
    f64 = FP(em, _F64)
    fin = all_of(bld, fp.is_finite(a), fp.is_finite(b), fp.is_finite(c))
    p = bld.fmul(fp.widen(a), fp.widen(b))
    c64 = fp.widen(c)
    s, e = two_sum(bld, p, c64)
    es = bld.select(fin, f64.sign(bld.fadd(bld.fsub(s, fp.widen(r)), e)), I32(0))
    r = fp.nudge(r, es, mode)
    exact_zero = bld.and_(fin, bld.fcmp_ordered("==", p, f64.neg(c64)))
    zero = fp.const(0.0)
    both_zero = all_of(bld, bld.or_(fp.is_zero(a), fp.is_zero(b)), bld.fcmp_ordered("==", c, zero),
                       fp.is_finite(a), fp.is_finite(b))
    r = bld.select(both_zero, bld.fadd(bld.fmul(a, b), c), r)
    return fp.zero_sign_rm(r, exact_zero, p, c64, mode, f64)


# ------------------------------------------------------------ div / rcp / sqrt

def _div_error_sign(em, fp: FP, a, b, r) -> L.Value:
    """floating._div_exact (f32): sign(a - r*b) * sign(b) in f64, zero for
    special operands (non-finite, b == 0)."""
    bld = em.b
    a64, b64 = fp.widen(a), fp.widen(b)
    es = bld.mul(fp.sign(bld.fsub(a64, bld.fmul(fp.widen(r), b64)), F64), fp.sign(b64, F64))
    special = bld.not_(all_of(bld, fp.is_finite(a), fp.is_finite(b), bld.not_(fp.is_zero(b))))
    return bld.select(special, I32(0), es)


def _div_error_sign_f64(em, fp: FP, a, b, r) -> L.Value:
    """floating._div_exact (f64): on frexp-scaled operands, the sign of
    ma*sign(mb) - rr*|mb| (rr: r scaled back), which one fma computes with
    the exact sign at that scale; -sign(r) on overflow, 0 when special."""
    bld = em.b
    one, zero = fp.const(1.0), fp.const(0.0)
    fa, fb = fp.is_finite(a), fp.is_finite(b)
    ma, ea = _frexp(em, bld.select(fa, a, one))
    mb, eb = _frexp(em, bld.select(fb, b, one))
    rr = _ldexp(em, bld.select(fp.is_finite(r), r, zero), bld.neg(bld.sub(ea, eb)))
    num = bld.select(fp.signbit(mb), fp.neg(ma), ma)
    es = fp.sign(_fma(fp, fp.neg(rr), fp.fabs(mb), num))
    special = bld.not_(all_of(bld, fa, fb, bld.not_(fp.is_zero(b))))
    es = bld.select(bld.and_(fp.is_inf(r), bld.not_(special)), bld.sub(I32(0), fp.sign(r)), es)
    return bld.select(special, I32(0), es)


def _sqrt_error_sign_f64(em, fp: FP, a, r) -> L.Value:
    """floating.sqrt (f64, directed): sign(mant - rr*rr) with a = mant*2^e,
    e made even, rr = r*2^(-e/2); zero unless a is finite and > 0."""
    bld = em.b
    one = fp.const(1.0)
    ok = bld.and_(fp.is_finite(a), bld.fcmp_ordered(">", a, fp.const(0.0)))
    mant, e = _frexp(em, bld.select(ok, a, one))
    odd = bld.icmp_unsigned("!=", bld.and_(e, I32(1)), I32(0))
    mant = bld.select(odd, bld.fmul(mant, fp.const(0.5)), mant)
    e = bld.select(odd, bld.add(e, I32(1)), e)
    rr = _ldexp(em, bld.select(ok, r, one), bld.neg(bld.ashr(e, I32(1))))
    es = fp.sign(_fma(fp, fp.neg(rr), rr, mant))
    return bld.select(ok, es, I32(0))


@lower("div", types="f")
def div(em, inst):
    t, rnd, ftz, sat, kind = _form(em, inst, ("approx", "full"))
    if sat:
        raise NotNative("div.sat")
    mode = kind or rnd or "rn"
    if t.name == "f64" and mode in ("approx", "full"):
        raise NotNative(f"div.{mode}.f64 (an error in the interpreter)")
    fp = FP(em, t.dtype)
    bld = em.b
    a, b = _reads(em, inst, t.dtype, 2)
    if ftz:
        a, b = fp.flush(a), fp.flush(b)
    if mode == "approx":      # a * rcp(b), the reciprocal rounded and flushed
        r = bld.fmul(a, fp.flush(bld.fdiv(fp.const(1.0), b)))
    else:
        r = bld.fdiv(a, b)
        if mode in _DIRECTED:
            sign_of = _div_error_sign_f64 if t.name == "f64" else _div_error_sign
            r = fp.nudge(r, sign_of(em, fp, a, b, r), mode)
    em.write(inst.operands[0], fp.finish(r, ftz, False), t.dtype)


def _unary_form(em, inst):
    m = em.mods(inst)
    kind = m.take("approx", "full")
    rnd = m.rounding()
    ftz = m.flag("ftz")
    t = m.one_type()
    m.finish()
    if t.name not in ("f32", "f64") or kind == "full" or rnd not in (None, "rn") + _DIRECTED:
        raise NotNative(f"{inst.full_opcode} stays interpreted")
    return t, kind or rnd or "rn", ftz


@lower("rcp", types="f")
def rcp(em, inst):
    t, mode, ftz = _unary_form(em, inst)
    fp = FP(em, t.dtype)
    bld = em.b
    a = em.read(inst.operands[1], t.dtype)
    one = fp.const(1.0)
    if t.name == "f64":
        if ftz and mode == "approx":        # rcp.approx.ftz.f64: flushed in and out
            r = fp.canonical(fp.flush(bld.fdiv(one, fp.flush(a))))
        elif mode in ("rn",) + _DIRECTED and not ftz:
            r = bld.fdiv(one, a)
            if mode != "rn":
                r = fp.nudge(r, _div_error_sign_f64(em, fp, one, a, r), mode)
            r = fp.canonical(r)
        else:
            raise NotNative(f"rcp.{mode}.f64 stays interpreted")
        em.write(inst.operands[0], r, t.dtype)
        return
    if ftz:
        a = fp.flush(a)
    r = bld.fdiv(one, a)
    if mode in _DIRECTED:
        r = fp.nudge(r, _div_error_sign(em, fp, one, a, r), mode)
    em.write(inst.operands[0], fp.finish(r, ftz, False), t.dtype)


@lower("sqrt", types="f")
def sqrt(em, inst):
    t, mode, ftz = _unary_form(em, inst)
    if t.name == "f64" and (mode == "approx" or ftz):
        raise NotNative(f"sqrt.{mode}.f64 (an error in the interpreter)")
    fp = FP(em, t.dtype)
    bld = em.b
    a = em.read(inst.operands[1], t.dtype)
    if ftz:
        a = fp.flush(a)
    r = fp.intrinsic("llvm.sqrt", a)
    if mode in _DIRECTED and t.name == "f64":
        r = fp.nudge(r, _sqrt_error_sign_f64(em, fp, a, r), mode)
    elif mode in _DIRECTED:     # f32: sign(a - r*r) in f64, where a is finite and > 0
        r64 = fp.widen(r)
        es = fp.sign(bld.fsub(fp.widen(a), bld.fmul(r64, r64)), F64)
        ok = bld.and_(fp.is_finite(a), bld.fcmp_ordered(">", a, fp.const(0.0)))
        r = fp.nudge(r, bld.select(ok, es, I32(0)), mode)
    em.write(inst.operands[0], fp.finish(r, ftz, False), t.dtype)


@lower("rsqrt", types="f")
def rsqrt(em, inst):
    t, mode, ftz = _unary_form(em, inst)
    if mode != "approx":
        raise NotNative("rsqrt without .approx")
    fp = FP(em, t.dtype)
    bld = em.b
    a = em.read(inst.operands[1], t.dtype)
    if ftz:
        a = fp.flush(a)
    # fapprox.rsqrt: 1 / sqrt(x) in f64, rounded once to the operand type
    f64 = FP(em, _F64)
    r64 = bld.fdiv(f64.const(1.0), f64.intrinsic("llvm.sqrt", fp.widen(a)))
    r = r64 if fp.ft is F64 else bld.fptrunc(r64, fp.ft)
    em.write(inst.operands[0], fp.finish(r, ftz, False), t.dtype)
