"""Native lowerings of integer arithmetic and register moves: add/sub (with
.sat and the carry chain), mul/mad in every half (.lo/.hi/.wide, .sat),
mul24/mad24, sad, div/rem, abs/neg, min/max (.relu), mov (scalars, vector
packing and unpacking), selp and integer cvt (with .sat).

Each lowering is the LLVM transcription of the interpreter's numpy code for
the same form (sim/ops/arithmetic.py, moves.py over sim/arith/integer.py,
convert.py), corner cases included: division by zero and INT_MIN / -1 give
what arith.integer.div gives, .sat clamps the exact sum. Forms the
interpreter rejects at run time (mad.lo.sat, 64-bit .wide, .relu other than
s32) and modifiers it ignores on integers (.ftz, .NaN, .abs) are refused
(NotNative), so they keep the interpreter's behaviour, whatever it is.
Bit-field, shift and count instructions live in lower_integer_bits.py,
comparisons in lower_integer_compare.py, the carry chain in
lower_integer_carry.py.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.ptx import ir
from gpudbg.ptx.types import unsigned_dtype
from gpudbg.sim.native import intmath as M
from gpudbg.sim.native.emit import _LOWERINGS, BOOL, I32, I64, NotNative, lower
from gpudbg.sim.memory import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE
from gpudbg.sim.native.lower_integer_carry import add_sub_cc, mad_cc

_INT_BINARY = {"add": "add", "sub": "sub", "and": "and_", "or": "or_", "xor": "xor"}


def _plain_int(em, inst, *modes: str):
    """(mode taken from `modes` or None, the one type): refuses anything else."""
    m = em.mods(inst)
    mode = m.take(*modes) if modes else None
    t = m.one_type()
    m.finish()
    if t.kind not in "usb":
        raise NotNative(f"{inst.full_opcode}: not an integer type")
    return mode, t


@lower("add", "sub", types="iub")
def add_sub(em, inst):
    m = em.mods(inst)
    cc = m.flag("cc")
    sat = m.flag("sat")
    t = m.one_type()
    m.finish()
    if cc:
        if sat:
            raise NotNative("add.cc.sat")        # the interpreter ignores .sat there
        add_sub_cc(em, inst, t, carry_in=False)
        return
    d, a, b = inst.operands
    x, y = em.read(a, t.dtype), em.read(b, t.dtype)
    if sat:                                      # arith.integer.add_sat / sub_sat: s32 only
        if t.name != "s32":
            raise NotNative(f"{inst.full_opcode}: .sat is defined for s32 only")
        wx, wy = em.b.sext(x, I64), em.b.sext(y, I64)
        wide = em.b.add(wx, wy) if inst.opcode == "add" else em.b.sub(wx, wy)
        em.write(d, M.clamp_s32(em.b, wide), t.dtype)
        return
    em.write(d, getattr(em.b, _INT_BINARY[inst.opcode])(x, y), t.dtype)


@lower("and", "or", "xor", types="ubp")
def logic(em, inst):
    m = em.mods(inst)
    t = m.one_type()
    m.finish()
    dt = BOOL if t.name == "pred" else t.dtype
    d, a, b = inst.operands
    em.write(d, getattr(em.b, _INT_BINARY[inst.opcode])(em.read(a, dt), em.read(b, dt)), dt)


@lower("not", types="ubp")
def not_(em, inst):
    m = em.mods(inst)
    t = m.one_type()
    m.finish()
    dt = BOOL if t.name == "pred" else t.dtype
    d, a = inst.operands
    em.write(d, em.b.not_(em.read(a, dt)), dt)


def _product(em, x, y, mode, dtype):
    """arith.integer.mul's lo and hi halves (.wide is the caller's)."""
    if mode in (None, "lo"):
        return em.b.mul(x, y)
    return M.mul_high(em.b, x, y, M.is_signed(dtype))


@lower("mul", types="iu")
def mul(em, inst):
    mode, t = _plain_int(em, inst, "lo", "hi", "wide")
    d, a, b = inst.operands
    x, y = em.read(a, t.dtype), em.read(b, t.dtype)
    if mode == "wide":
        wd = M.wide_dtype(t.dtype)
        bits, signed = M.bits_of(wd), M.is_signed(t.dtype)
        em.write(d, em.b.mul(M.extend(em.b, x, bits, signed), M.extend(em.b, y, bits, signed)), wd)
        return
    em.write(d, _product(em, x, y, mode, t.dtype), t.dtype)


@lower("mad", "madc", types="iu")
def mad(em, inst):
    m = em.mods(inst)
    mode = m.take("lo", "hi", "wide")
    cc = m.flag("cc")
    sat = m.flag("sat")
    t = m.one_type()
    m.finish()
    if inst.opcode == "madc" or cc:
        if sat:
            raise NotNative("mad.cc.sat")              # the interpreter ignores .sat there
        mad_cc(em, inst, t, mode or "lo", carry_in=inst.opcode == "madc", carry_out=cc)
        return
    d, a, b, c = inst.operands
    dt = t.dtype
    signed = M.is_signed(dt)
    if mode == "wide":
        if sat:
            raise NotNative("mad.wide.sat")            # arith.integer.mad raises at run time
        wd = M.wide_dtype(dt)
        bits = M.bits_of(wd)
        x, y = em.read(a, dt), em.read(b, dt)
        p = em.b.mul(M.extend(em.b, x, bits, signed), M.extend(em.b, y, bits, signed))
        em.write(d, em.b.add(p, em.read(c, wd)), wd)
        return
    if sat and not (mode == "hi" and t.name == "s32"):
        raise NotNative(f"{inst.full_opcode}: .sat only exists for mad.hi.sat.s32")
    x, y, z = em.read(a, dt), em.read(b, dt), em.read(c, dt)
    p = _product(em, x, y, mode, dt)
    if sat:
        em.write(d, M.clamp_s32(em.b, em.b.add(em.b.sext(p, I64), em.b.sext(z, I64))), dt)
        return
    em.write(d, em.b.add(p, z), dt)


def _mul24(em, x, y, mode: str, signed: bool):
    """arith.integer.mul24: the 48-bit product of the low 24 bits (sign-
    extended for .s32), bits 31..0 (.lo) or 47..16 (.hi)."""
    b = em.b
    i24 = L.IntType(24)
    ext = b.sext if signed else b.zext
    p = b.mul(ext(b.trunc(x, i24), I64), ext(b.trunc(y, i24), I64))
    if mode == "hi":
        p = b.ashr(p, I64(16))
    return b.trunc(p, I32)


@lower("mul24", "mad24", types="iu")
def mul24(em, inst):
    m = em.mods(inst)
    mode = m.take("lo", "hi") or "lo"
    sat = m.flag("sat")
    t = m.one_type()
    m.finish()
    if t.bits != 32:
        raise NotNative(f"{inst.full_opcode}: defined for 32-bit types only")
    dt = t.dtype
    signed = M.is_signed(dt)
    x, y = em.read(inst.operands[1], dt), em.read(inst.operands[2], dt)
    p = _mul24(em, x, y, mode, signed)
    if inst.opcode == "mul24":
        if sat:
            raise NotNative("mul24.sat")              # the interpreter ignores it
        em.write(inst.operands[0], p, dt)
        return
    if sat and not (mode == "hi" and t.name == "s32"):
        raise NotNative(f"{inst.full_opcode}: .sat only exists for mad24.hi.sat.s32")
    z = em.read(inst.operands[3], dt)
    if sat:
        r = M.clamp_s32(em.b, em.b.add(em.b.sext(p, I64), em.b.sext(z, I64)))
    else:
        r = em.b.add(p, z)
    em.write(inst.operands[0], r, dt)


@lower("sad", types="iu")
def sad(em, inst):
    _, t = _plain_int(em, inst)
    d, a, b, c = inst.operands
    dt = t.dtype
    x, y, z = em.read(a, dt), em.read(b, dt), em.read(c, dt)
    bb = em.b
    gt = bb.icmp_signed(">", x, y) if M.is_signed(dt) else bb.icmp_unsigned(">", x, y)
    em.write(d, bb.add(z, bb.select(gt, bb.sub(x, y), bb.sub(y, x))), dt)


@lower("div", "rem", types="iu")
def div_rem(em, inst):
    _, t = _plain_int(em, inst)
    d, a, b = inst.operands
    dt = t.dtype
    x, y = em.read(a, dt), em.read(b, dt)
    op = M.divide if inst.opcode == "div" else M.remainder
    em.write(d, op(em.b, x, y, M.is_signed(dt)), dt)


@lower("abs", "neg", types="i")
def abs_neg(em, inst):
    _, t = _plain_int(em, inst)                 # .ftz (ignored on integers) is refused
    d, a = inst.operands
    x = em.read(a, t.dtype)
    zero = L.Constant(x.type, 0)
    if inst.opcode == "neg":
        r = em.b.sub(zero, x)
    else:
        r = M.magnitude(em.b, x, True)
    em.write(d, r, t.dtype)


@lower("min", "max", types="iu")
def min_max(em, inst):
    m = em.mods(inst)
    relu = m.flag("relu")
    t = m.one_type()
    m.finish()                                  # .ftz/.NaN/.xorsign/.abs: ignored by the interpreter: refused
    if relu and t.name != "s32":
        raise NotNative(f"{inst.full_opcode}: .relu is defined for s32 only")
    d, a, b = inst.operands
    dt = t.dtype
    x, y = em.read(a, dt), em.read(b, dt)
    signed = M.is_signed(dt)
    if inst.opcode == "min":
        r = (M.smin if signed else M.umin)(em.b, x, y)
    else:
        r = (M.smax if signed else M.umax)(em.b, x, y)
    if relu:
        r = M.smax(em.b, r, L.Constant(r.type, 0))
    em.write(d, r, dt)


@lower("mov")
def mov(em, inst):
    m = em.mods(inst)
    t = m.one_type()
    m.finish()
    d, a = inst.operands
    if isinstance(a, ir.Vector):
        _pack(em, t, d, a)
        return
    if isinstance(d, ir.Vector):
        _unpack(em, t, d, a)
        return
    if not isinstance(d, ir.Register) or isinstance(a, ir.Address):
        raise NotNative("mov of an address")
    dt = BOOL if t.name == "pred" else t.dtype
    em.write(d, em.read(a, dt), dt)


def _parts(t, vec: ir.Vector) -> tuple[int, np.dtype, np.dtype]:
    """moves._pack/_unpack's element width and dtypes."""
    if t.kind == "pred" or t.bits > 64:
        raise NotNative(f"mov.{t.name} of a vector")
    n = len(vec.elements)
    part = t.bits // n
    if part * n != t.bits or part not in (8, 16, 32):
        raise NotNative(f"mov.{t.name} of {n} elements")
    return part, unsigned_dtype(part), unsigned_dtype(t.bits)


def _pack(em, t, dst, src: ir.Vector) -> None:
    """mov.b64 %rd, {%r1, %r2}: element i fills bits i*w.. of the result."""
    part, pdt, wdt = _parts(t, src)
    wide = L.IntType(t.bits)
    acc = None
    for i, e in enumerate(src.elements):
        v = em.b.zext(em.read(e, pdt), wide)
        if i:
            v = em.b.shl(v, L.Constant(wide, i * part))
        acc = v if acc is None else em.b.or_(acc, v)
    em.write(dst, acc, wdt)


def _unpack(em, t, dst: ir.Vector, src) -> None:
    """mov.b64 {%r1, %r2}, %rd: element i takes bits i*w.. of the source."""
    part, pdt, wdt = _parts(t, dst)
    v = em.read(src, wdt)
    narrow = L.IntType(part)
    pieces = [em.b.trunc(em.b.lshr(v, L.Constant(v.type, i * part)) if i else v, narrow)
              for i in range(len(dst.elements))]
    for e, piece in zip(dst.elements, pieces):
        em.write(e, piece, pdt)


@lower("selp")
def selp(em, inst):
    m = em.mods(inst)
    t = m.one_type()
    m.finish()
    d, a, b, c = inst.operands
    dt = t.dtype
    em.write(d, em.b.select(em.read(c, BOOL), em.read(a, dt), em.read(b, dt)), dt)


@lower("cvt", types="iub")
def cvt_int(em, inst):
    m = em.mods(inst)
    sat = m.flag("sat")
    ts = m.types()
    if len(ts) == 2 and any(t.kind == "f" for t in ts):
        # cvt.s32.f32 is keyed by its integer destination: the float module's
        # lowering (registered for cvt.f*) owns every form with a float side
        other = _LOWERINGS.get(("cvt", "f"))
        if other is None:
            raise NotNative("cvt with a floating-point side")
        other.fn(em, inst)
        return
    m.finish()                      # rounding, .ftz, .relu: refused
    if len(ts) != 2 or any(t.kind not in "usb" for t in ts) or len(inst.operands) != 2:
        raise NotNative("cvt between non-integer types")
    dt, st = ts
    d, a = inst.operands
    x = em.read(a, st.dtype)
    if not sat:                     # C casts: sign-extend signed sources, truncate
        em.write(d, em.convert(x, st.dtype, dt.dtype), dt.dtype)
        return
    em.write(d, _saturate(em, x, st, dt), dt.dtype)


def _saturate(em, x, st, dt):
    """convert._int_to_int with .sat: clamp to the destination's range
    (signed sources compared as int64, unsigned ones as uint64)."""
    b = em.b
    info = np.iinfo(dt.dtype)
    if st.kind == "s":
        lo, hi = max(int(info.min), -2**63), min(int(info.max), 2**63 - 1)
        v = M.smin(b, M.smax(b, M.extend(b, x, 64, True), I64(lo)), I64(hi))
    else:
        v = M.umin(b, M.extend(b, x, 64, False), I64(int(info.max)))
    return M.extend(b, v, dt.bits, False)


@lower("cvta", types="iub")
def cvta(em, inst):
    """memory_ops.build_cvta: global/const addresses are the same bits,
    shared/local ones move by their generic window's base. cvta.param
    (which allocates the wave's parameter copy on first use) stays
    interpreted."""
    m = em.mods(inst)
    to = m.flag("to")
    space = m.take("global", "shared", "local", "const", "param")
    t = m.one_type()
    m.finish()
    if space is None or space == "param":
        raise NotNative(f"{inst.full_opcode}")
    u64 = np.dtype(np.uint64)
    v = em.read(inst.operands[1], u64)
    if space in ("shared", "local"):
        base = I64(SHARED_WINDOW_BASE if space == "shared" else LOCAL_WINDOW_BASE)
        v = em.b.sub(v, base) if to else em.b.add(v, base)
    em.write(inst.operands[0], em.convert(v, u64, t.dtype), t.dtype)
