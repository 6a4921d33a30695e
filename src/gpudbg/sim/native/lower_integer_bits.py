"""Native lowerings of shifts, bit counts and bit fields: shl/shr, popc, clz,
brev, bfind, bfe, bfi, prmt (every mode), shf (.l/.r, .wrap/.clamp),
lop3 and cnot.

Each is the LLVM transcription of sim/arith/bits.py for the same form; the
interpreter's rules at the edges are kept literally: shift amounts are read
as u32 and clamp at the width (so no LLVM shift by the width or more,
which would be poison, is ever emitted), bfe/bfi take position and length
mod 256 and do their work in 64 bits as the numpy code does. lop3 with a
truth table in a register (which the interpreter cannot run either) and
shf/prmt on anything but 32-bit types stay interpreted.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.ptx import ir
from gpudbg.sim.native import intmath as M
from gpudbg.sim.native.emit import I32, I64, NotNative, lower
from gpudbg.sim.ops.base import immediate_value

U32 = np.dtype(np.uint32)


def _one_int_type(em, inst, *flags: str):
    m = em.mods(inst)
    got = {f: m.flag(f) for f in flags}
    t = m.one_type()
    m.finish()
    if t.kind not in "usb":
        raise NotNative(f"{inst.full_opcode}: not an integer type")
    return t, got


@lower("shl", "shr", types="iub")
def shift(em, inst):
    t, _ = _one_int_type(em, inst)
    d, a, n = inst.operands
    x = em.read(a, t.dtype)
    k = em.read(n, U32)                         # the amount is a u32 operand
    b = em.b
    w = t.bits
    past = b.icmp_unsigned(">=", k, I32(w))
    if inst.opcode == "shr" and t.kind == "s":  # sign fill: amounts clamp at w - 1
        r = b.ashr(x, M.extend(b, M.umin(b, k, I32(w - 1)), w, False))
    else:
        safe = M.extend(b, M.umin(b, k, I32(w - 1)), w, False)
        r = b.shl(x, safe) if inst.opcode == "shl" else b.lshr(x, safe)
        r = b.select(past, L.Constant(x.type, 0), r)
    em.write(d, r, t.dtype)


@lower("popc", "clz", "brev", types="iub")
def count(em, inst):
    t, _ = _one_int_type(em, inst)
    d, a = inst.operands
    x = em.read(a, t.dtype)
    b = em.b
    if inst.opcode == "brev":
        em.write(d, b.bitreverse(x), t.dtype)
        return
    r = b.ctpop(x) if inst.opcode == "popc" else b.ctlz(x, L.Constant(L.IntType(1), 0))
    em.write(d, M.extend(b, r, 32, False), U32)     # both give u32


@lower("bfind", types="iu")
def bfind(em, inst):
    t, flags = _one_int_type(em, inst, "shiftamt")
    d, a = inst.operands
    x = em.read(a, t.dtype)
    b = em.b
    zero = L.Constant(x.type, 0)
    u = x
    if t.kind == "s":                           # the highest bit that differs from the sign
        u = b.select(b.icmp_signed("<", x, zero), b.not_(x), x)
    lz = M.extend(b, b.ctlz(u, L.Constant(L.IntType(1), 0)), 32, False)
    pos = lz if flags["shiftamt"] else b.sub(I32(t.bits - 1), lz)
    em.write(d, b.select(b.icmp_unsigned("==", u, zero), I32(0xFFFFFFFF), pos), U32)


def _field_operand(em, operand):
    """bfe/bfi position or length: u32 & 0xff, as i64."""
    return em.b.zext(em.b.and_(em.read(operand, U32), I32(0xFF)), I64)


@lower("bfe", types="iub")
def bfe(em, inst):
    t, _ = _one_int_type(em, inst)
    d, a, pos, length = inst.operands
    x = em.read(a, t.dtype)
    b = em.b
    w = t.bits
    u = M.extend(b, x, 64, False)
    p, ln = _field_operand(em, pos), _field_operand(em, length)
    in_range = b.icmp_unsigned("<", p, I64(w))
    avail = b.select(in_range, b.sub(I64(w), p), I64(0))
    eff = M.umin(b, ln, avail)
    mask = M.low_mask(b, eff, w)
    shifted = b.select(in_range, b.lshr(u, M.umin(b, p, I64(w - 1))), I64(0))
    field = b.and_(shifted, mask)
    if t.kind == "s":                           # bits past the field's msb copy its sign bit
        sb_pos = M.umin(b, b.sub(b.add(p, ln), I64(1)), I64(w - 1))
        sbit = b.trunc(b.lshr(u, sb_pos), L.IntType(1))
        sbit = b.and_(sbit, b.icmp_unsigned("!=", ln, I64(0)))
        fill = b.and_(b.not_(mask), I64((1 << w) - 1 if w < 64 else -1))
        field = b.select(sbit, b.or_(field, fill), field)
    em.write(d, b.trunc(field, x.type) if w < 64 else field, t.dtype)


@lower("bfi", types="iub")
def bfi(em, inst):
    t, _ = _one_int_type(em, inst)
    d, f, base, pos, length = inst.operands
    b = em.b
    w = t.bits
    ua = M.extend(b, em.read(f, t.dtype), 64, False)
    xb = em.read(base, t.dtype)
    ub = M.extend(b, xb, 64, False)
    p, ln = _field_operand(em, pos), _field_operand(em, length)
    in_range = b.icmp_unsigned("<", p, I64(w))
    ps = M.umin(b, p, I64(w - 1))
    eff = b.select(in_range, M.umin(b, ln, b.sub(I64(w), ps)), I64(0))
    full = I64((1 << w) - 1 if w < 64 else -1)
    mask = b.and_(b.shl(M.low_mask(b, eff, w), ps), full)
    r = b.or_(b.and_(ub, b.not_(mask)), b.and_(b.shl(ua, ps), mask))
    em.write(d, b.trunc(r, xb.type) if w < 64 else r, t.dtype)


# bits.prmt's byte selectors per named mode, as data: entry [c & 3][output byte]
_PRMT_MODES = {
    "f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)),
    "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)),
    "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3)),
}


def _byte(b, word, sel):
    """Byte `sel` (i64, 0..7) of the 64-bit word {b, a}, as i64."""
    return b.and_(b.lshr(word, b.mul(sel, I64(8))), I64(0xFF))


@lower("prmt", types="b")
def prmt(em, inst):
    m = em.mods(inst)
    mode = m.take(*_PRMT_MODES)
    t = m.one_type()
    m.finish()
    if t.bits != 32:
        raise NotNative(f"prmt.{t.name}")
    d, a, bo, c = inst.operands
    b = em.b
    word = b.or_(b.zext(em.read(a, t.dtype), I64), b.shl(b.zext(em.read(bo, t.dtype), I64), I64(32)))
    ctl = b.zext(em.read(c, t.dtype), I64)
    out = I64(0)
    for i in range(4):
        if mode is None:                        # nibble i: byte index, bit 3 replicates its sign
            nib = b.and_(b.lshr(ctl, I64(4 * i)), I64(0xF))
            v = _byte(b, word, b.and_(nib, I64(7)))
            rep = b.select(b.icmp_unsigned("!=", b.and_(v, I64(0x80)), I64(0)), I64(0xFF), I64(0))
            v = b.select(b.icmp_unsigned("!=", b.and_(nib, I64(8)), I64(0)), rep, v)
        else:                                   # the table's column i, indexed by c & 3
            column = sum(sel[i] << (4 * row) for row, sel in enumerate(_PRMT_MODES[mode]))
            shift_by = b.mul(b.and_(ctl, I64(3)), I64(4))
            v = _byte(b, word, b.and_(b.lshr(I64(column), shift_by), I64(0xF)))
        out = b.or_(out, b.shl(v, I64(8 * i)) if i else v)
    em.write(d, b.trunc(out, I32), U32)


@lower("shf", types="b")
def shf(em, inst):
    m = em.mods(inst)
    direction = m.take("l", "r")
    mode = m.take("wrap", "clamp")
    t = m.one_type()
    m.finish()
    if direction is None or mode is None or t.bits != 32:
        raise NotNative(f"{inst.full_opcode}")
    d, a, bo, c = inst.operands
    b = em.b
    word = b.or_(b.zext(em.read(a, t.dtype), I64), b.shl(b.zext(em.read(bo, t.dtype), I64), I64(32)))
    n = b.zext(em.read(c, t.dtype), I64)
    n = b.and_(n, I64(31)) if mode == "wrap" else M.umin(b, n, I64(32))
    r = b.lshr(b.shl(word, n), I64(32)) if direction == "l" else b.lshr(word, n)
    em.write(d, b.trunc(r, I32), U32)


@lower("lop3", types="b")
def lop3(em, inst):
    t, _ = _one_int_type(em, inst)
    if len(inst.operands) != 5 or not isinstance(inst.operands[4], ir.Immediate):
        raise NotNative("lop3 with a predicate result or a truth table in a register")
    d, a, bo, c, lut = inst.operands
    table = int(immediate_value(lut, U32))
    b = em.b
    x, y, z = em.read(a, t.dtype), em.read(bo, t.dtype), em.read(c, t.dtype)
    out = L.Constant(x.type, 0)
    for idx in range(8):                        # the minterms the table selects
        if (table >> idx) & 1:
            term = b.and_(b.and_(x if idx & 4 else b.not_(x), y if idx & 2 else b.not_(y)),
                          z if idx & 1 else b.not_(z))
            out = b.or_(out, term)
    em.write(d, out, t.dtype)


@lower("cnot", types="iub")
def cnot(em, inst):
    t, _ = _one_int_type(em, inst)
    d, a = inst.operands
    x = em.read(a, t.dtype)
    em.write(d, em.b.zext(em.b.icmp_unsigned("==", x, L.Constant(x.type, 0)), x.type), t.dtype)
