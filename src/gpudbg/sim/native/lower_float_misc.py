"""Native lowerings of the f32/f64 instructions that never round: min/max,
abs/neg, copysign, testp, and the comparisons setp/set with a float
operand (ordered and unordered, num/nan, .ftz, the .and/.or/.xor boolean
op and the p|q pair), mirroring sim/ops/compare.py and sim/arith/fbasic.py,
compare.py.

The one idea: these are decisions on IEEE classes and sign bits, so every
one is a handful of fcmp/bit operations; NaN results are the canonical
NaN, chosen on integer bits (fpbits.FP.canonical), and abs/neg/copysign
move bits so NaN payloads survive as in the interpreter.

`set` and `setp` also take their integer forms when the destination is a
float (set.lt.f32.s32): the lowering is found by any float type in the
instruction (emit.lowering_of). f16/f16x2 min/max/abs/neg go to
lower_half.py; setp/set compare f16/bf16 exactly in f64; the packed x2
comparisons stay interpreted.
"""
from __future__ import annotations

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim.native import lower_half as half
from gpudbg.sim.native import fp16
from gpudbg.sim.native.emit import BOOL, I16, I64, NotNative, lower, storage_type
from gpudbg.sim.native.fpbits import FP

_FLOATS = ("f32", "f64")


def _float_type(m, inst):
    t = m.one_type()
    m.finish()
    if t.name not in _FLOATS:
        raise NotNative(f"{inst.full_opcode}: {t.name} stays interpreted")
    return t


# ------------------------------------------------------------ min / max

@lower("min", "max", types="f")
def minmax(em, inst):
    if half.is_half(inst):
        return half.minmax(em, inst)
    m = em.mods(inst)
    ftz = m.flag("ftz")
    nan = m.flag("NaN")
    xorsign = m.flag("xorsign")
    abs_ = m.flag("abs")
    if abs_ != xorsign or m.take("relu"):
        raise NotNative(f"{inst.full_opcode}: .abs without .xorsign or .relu")
    t = _float_type(m, inst)
    fp = FP(em, t.dtype)
    b = em.b
    x, y = em.read(inst.operands[1], t.dtype), em.read(inst.operands[2], t.dtype)
    if ftz:
        x, y = fp.flush(x), fp.flush(y)
    sign_x = b.xor(fp.signbit(x), fp.signbit(y))
    if xorsign:
        x, y = fp.fabs(x), fp.fabs(y)
    xn, yn = fp.is_nan(x), fp.is_nan(y)
    sx, sy = fp.signbit(x), fp.signbit(y)
    eq = b.fcmp_ordered("==", x, y)
    if inst.opcode == "min":      # -0 orders below +0
        x_first = b.or_(b.fcmp_ordered("<", x, y), b.and_(eq, b.and_(sx, b.not_(sy))))
    else:
        x_first = b.or_(b.fcmp_ordered(">", x, y), b.and_(eq, b.and_(b.not_(sx), sy)))
    r = b.select(x_first, x, y)
    r = b.select(b.and_(xn, b.not_(yn)), y, b.select(b.and_(yn, b.not_(xn)), x, r))
    bad = b.or_(xn, yn) if nan else b.and_(xn, yn)
    if xorsign:
        mag = fp.fabs(r)
        r = b.select(sign_x, fp.neg(mag), mag)
    # a NaN result is the canonical NaN, picked on bits (fpbits.FP.canonical)
    r = fp.from_bits(b.select(bad, fp.it(fp.canon_bits), fp.bits(r)))
    if ftz:
        r = fp.flush(r)
    em.write(inst.operands[0], fp.canonical(r), t.dtype)


# ------------------------------------------------------------ sign bits

@lower("abs", "neg", types="f")
def abs_neg(em, inst):
    if half.is_half(inst):
        return half.abs_neg(em, inst)
    m = em.mods(inst)
    ftz = m.flag("ftz")
    t = _float_type(m, inst)
    fp = FP(em, t.dtype)
    x = em.read(inst.operands[1], t.dtype)
    if ftz:
        x = fp.flush(x)
    em.write(inst.operands[0], fp.fabs(x) if inst.opcode == "abs" else fp.neg(x), t.dtype)


@lower("copysign", types="f")
def copysign(em, inst):
    """copysign d, a, b: b's magnitude with a's sign (PTX operand order)."""
    m = em.mods(inst)
    t = _float_type(m, inst)
    fp = FP(em, t.dtype)
    b = em.b
    sign = b.and_(fp.bits(em.read(inst.operands[1], t.dtype)), fp.it(fp.sign_bit))
    mag = fp.bits(fp.fabs(em.read(inst.operands[2], t.dtype)))
    em.write(inst.operands[0], fp.from_bits(b.or_(sign, mag)), t.dtype)


@lower("testp", types="f")
def testp(em, inst):
    m = em.mods(inst)
    kind = m.take("finite", "infinite", "number", "notanumber", "normal", "subnormal")
    t = _float_type(m, inst)
    if kind is None:
        raise NotNative("testp without a test")
    fp = FP(em, t.dtype)
    b = em.b
    x = em.read(inst.operands[1], t.dtype)
    mag = fp.fabs(x)
    tiny = fp.const(fp.min_normal)
    r = {"finite": lambda: fp.is_finite(x),
         "infinite": lambda: fp.is_inf(x),
         "number": lambda: b.not_(fp.is_nan(x)),
         "notanumber": lambda: fp.is_nan(x),
         "normal": lambda: b.and_(fp.is_finite(x), b.fcmp_ordered(">=", mag, tiny)),
         "subnormal": lambda: b.and_(b.fcmp_ordered("<", mag, tiny),
                                     b.fcmp_ordered(">", mag, fp.const(0.0)))}[kind]()
    em.write(inst.operands[0], r, BOOL)


# ------------------------------------------------------------ comparisons

_CMP = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
        "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
_OP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_UNSIGNED = {"lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
_BOOL_OPS = ("and", "or", "xor")


def _compare(em, t, cmp: str, x, y, ftz: bool):
    """arith.compare.compare(x, y, cmp, t) as i1 (x, y read as t)."""
    b = em.b
    if t.name in fp16.FORMATS:           # compared exactly as f64 (bf16: no .ftz in the interpreter)
        if ftz and t.name == "bf16":
            raise NotNative("setp.ftz.bf16")
        fmt = fp16.FORMATS[t.name]
        x, y = (fp16.widen(b, fp16.bits_of(b, v), fmt) for v in (x, y))
        t = PTX_TYPES["f64"]
        if ftz:
            f64 = FP(em, t.dtype)
            tiny = f64.const(fmt.min_normal)
            x, y = (b.select(b.fcmp_ordered("<", f64.fabs(v), tiny),
                             f64.from_bits(b.and_(f64.bits(v), I64(1 << 63))), v) for v in (x, y))
            ftz = False
    if t.kind == "f":
        fp = FP(em, t.dtype)
        if ftz:
            x, y = fp.flush(x), fp.flush(y)
        if cmp == "num":
            return b.fcmp_ordered("ord", x, y)
        if cmp == "nan":
            return b.fcmp_unordered("uno", x, y)
        if cmp in _OP:
            return b.fcmp_ordered(_OP[cmp], x, y)
        if cmp.endswith("u") and cmp[:-1] in _OP:
            return b.fcmp_unordered(_OP[cmp[:-1]], x, y)
        raise NotNative(f"comparison {cmp} on {t.name}")
    if t.kind not in "usb" or (t.kind == "b" and cmp not in ("eq", "ne")):
        raise NotNative(f"comparison {cmp} on {t.name}")
    if cmp in _UNSIGNED:
        return b.icmp_unsigned(_UNSIGNED[cmp], x, y)
    if cmp not in _OP:
        raise NotNative(f"comparison {cmp} on {t.name}")
    if t.kind == "s":
        return b.icmp_signed(_OP[cmp], x, y)
    return b.icmp_unsigned(_OP[cmp], x, y)


def _comparison(em, inst, m, t, ftz):
    """(raw comparison, combine) as sim/ops/compare._comparison builds them."""
    if t.name not in _FLOATS + tuple(fp16.FORMATS) and t.kind not in "usb":
        raise NotNative(f"{inst.full_opcode}: {t.name} operands stay interpreted")
    cmp = m.take(*_CMP)
    bool_op = m.take(*_BOOL_OPS)
    m.finish()
    if cmp is None:
        raise NotNative("comparison without an operator")
    x, y = em.read(inst.operands[1], t.dtype), em.read(inst.operands[2], t.dtype)
    r = _compare(em, t, cmp, x, y, ftz and t.kind == "f")
    return r, em.predicate_combiner(inst, bool_op)


@lower("setp", types="f")
def setp(em, inst):
    m = em.mods(inst)
    ftz = m.flag("ftz")
    t = m.one_type()
    r, comb = _comparison(em, inst, m, t, ftz)
    dst = inst.operands[0]
    if isinstance(dst, ir.PredicatePair):
        nr = em.b.not_(r)
        em.write(dst.first, comb(r), BOOL)
        em.write(dst.second, comb(nr), BOOL)
        return
    em.write(dst, comb(r), BOOL)


@lower("set", types="f")
def set_(em, inst):
    m = em.mods(inst)
    ftz = m.flag("ftz")
    ts = [PTX_TYPES[x] for x in m.left if x in PTX_TYPES]
    if len(ts) != 2:
        raise NotNative("set needs a destination and a source type")
    dt, st = ts
    m.left.remove(dt.name)
    if st.name in m.left:
        m.left.remove(st.name)
    if dt.name not in _FLOATS + tuple(fp16.FORMATS) and dt.kind not in "usb":
        raise NotNative(f"set with a {dt.name} destination stays interpreted")
    r, comb = _comparison(em, inst, m, st, ftz)
    r = comb(r)
    # true: 1.0 for a float destination, all ones for an integer one
    if dt.name == "f16":
        one, zero = fp16.as_half(em.b, I16(0x3C00)), fp16.as_half(em.b, I16(0))
    elif dt.name == "bf16":                   # raw bits: 1.0 is 0x3F80
        one, zero = I16(0x3F80), I16(0)
    elif dt.kind == "f":
        fp = FP(em, dt.dtype)
        one, zero = fp.const(1.0), fp.const(0.0)
    else:
        ty = storage_type(dt.dtype)
        one, zero = ty(-1), ty(0)
    em.write(inst.operands[0], em.b.select(r, one, zero), dt.dtype)
