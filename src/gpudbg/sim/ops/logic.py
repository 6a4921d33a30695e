"""Bitwise, shift and bit-field instructions (and, shl, prmt, bfe, ...).

Predicate logic (`and.pred`) runs on bool arrays; everything else views the
operands as the instruction's type and calls `gpudbg.sim.arith.bits`,
except the operations numpy already computes bit-exactly.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim.arith import bits as B
from gpudbg.sim.arith import integer as I
from gpudbg.sim.arith import video as V
from gpudbg.sim.ops.arithmetic import _binary, _ternary, _unary
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op

U32 = PTX_TYPES["u32"]


@op("and", "or", "xor")
def build_bitwise(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[inst.opcode]
    return _binary(tc, inst, t, fn)


@op("not")
def build_not(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    return _unary(tc, inst, t, np.invert)


@op("cnot")
def build_cnot(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    return _unary(tc, inst, t, B.cnot)


@op("shl", "shr")
def build_shift(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    f = B.shl if inst.opcode == "shl" else B.shr
    return _binary(tc, inst, t, f, U32)


@op("shf")
def build_shf(inst, tc) -> Built:
    m = Mods(inst)
    direction = m.take("l", "r")
    mode = m.take("wrap", "clamp")
    t = m.one_type()
    m.finish()
    if direction is None or mode is None:
        raise UnsupportedInstruction("shf needs .l/.r and .wrap/.clamp")
    return _ternary(tc, inst, t, lambda a, b, c: B.shf(a, b, c, direction, mode))


@op("popc", "clz", "brev")
def build_count(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    return _unary(tc, inst, t, getattr(B, inst.opcode))


@op("bfind")
def build_bfind(inst, tc) -> Built:
    m = Mods(inst)
    shiftamt = m.flag("shiftamt")
    t = m.one_type()
    m.finish()
    return _unary(tc, inst, t, lambda a: B.bfind(a, shiftamt=shiftamt))


@op("bfe")
def build_bfe(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], t)
    p = tc.reader(inst.operands[2], U32)
    n = tc.reader(inst.operands[3], U32)
    return Built(lambda X, idx: d(X, idx, B.bfe(a(X, idx), p(X, idx), n(X, idx))))


@op("bfi")
def build_bfi(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    d = tc.writer(inst.operands[0])
    f = tc.reader(inst.operands[1], t)
    b = tc.reader(inst.operands[2], t)
    p = tc.reader(inst.operands[3], U32)
    n = tc.reader(inst.operands[4], U32)
    return Built(lambda X, idx: d(X, idx, B.bfi(f(X, idx), b(X, idx), p(X, idx), n(X, idx))))


@op("fns")
def build_fns(inst, tc) -> Built:
    m = Mods(inst)
    m.types()
    m.finish()
    d = tc.writer(inst.operands[0])
    mask = tc.reader(inst.operands[1], U32)
    base = tc.reader(inst.operands[2], U32)
    off = tc.reader(inst.operands[3], PTX_TYPES["s32"])
    return Built(lambda X, idx: d(X, idx, B.fns(mask(X, idx), base(X, idx), off(X, idx))))


@op("bmsk")
def build_bmsk(inst, tc) -> Built:
    m = Mods(inst)
    mode = m.take("clamp", "wrap") or "clamp"
    t = m.one_type()
    m.finish()
    return _binary(tc, inst, t, lambda a, b: B.bmsk(a, b, mode))


@op("prmt")
def build_prmt(inst, tc) -> Built:
    m = Mods(inst)
    mode = m.take("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")
    t = m.one_type()
    m.finish()
    return _ternary(tc, inst, t, lambda a, b, c: B.prmt(a, b, c, mode))


@op("lop3")
def build_lop3(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], t)
    b = tc.reader(inst.operands[2], t)
    c = tc.reader(inst.operands[3], t)
    lut = tc.reader(inst.operands[4], U32)
    return Built(lambda X, idx: d(X, idx, B.lop3(a(X, idx), b(X, idx), c(X, idx), int(lut(X, idx)))))


@op("vabsdiff4")
def build_vabsdiff4(inst, tc) -> Built:
    m = Mods(inst)
    sat = m.flag("sat")
    secondary = m.take("add", "min", "max")
    ts = m.types()
    m.finish()
    if len(ts) != 3:
        raise UnsupportedInstruction("vabsdiff4 needs three types")
    a_signed, b_signed = ts[1].is_signed, ts[2].is_signed
    if len(inst.operands) < 4:
        raise UnsupportedInstruction("vabsdiff4 needs a c operand")
    return _ternary(tc, inst, U32, lambda a, b, c: V.vabsdiff4(a, b, c, secondary, a_signed, b_signed, sat))


@op("dp4a", "dp2a")
def build_dp(inst, tc) -> Built:
    m = Mods(inst)
    hi = m.take("hi", "lo")
    ts = m.types()
    m.finish()
    if len(ts) != 2:
        raise UnsupportedInstruction(f"{inst.opcode} needs two types")
    a_s, b_s = ts[0].is_signed, ts[1].is_signed
    out = PTX_TYPES["s32"] if (a_s or b_s) else U32
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], U32)
    b = tc.reader(inst.operands[2], U32)
    c = tc.reader(inst.operands[3], out)
    if inst.opcode == "dp4a":
        return Built(lambda X, idx: d(X, idx, I.dp4a(a(X, idx), b(X, idx), c(X, idx), a_s, b_s)))
    return Built(lambda X, idx: d(X, idx, I.dp2a(a(X, idx), b(X, idx), c(X, idx), a_s, b_s, hi == "hi")))


@op("szext")
def build_szext(inst, tc) -> Built:
    m = Mods(inst)
    mode = m.take("clamp", "wrap") or "clamp"
    t = m.one_type()
    m.finish()
    return _binary(tc, inst, t, lambda a, b: I.szext(a, b, t.is_signed, mode), U32)
