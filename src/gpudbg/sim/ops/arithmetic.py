"""Arithmetic instructions (integer and floating point): operand plumbing
over the exact semantics in `gpudbg.sim.arith`.

Plain forms that numpy already computes exactly (wrapping integer add, the
low half of a multiply, round-to-nearest float add/mul) run as one numpy
operation; every other form (saturation, carries, high halves, directed
rounding, ftz, fused multiply-add) calls the arith library, whose property
tests pin the semantics down.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.sim.arith import floating as F
from gpudbg.sim.arith import integer as I
from gpudbg.sim.arith.fbasic import canonicalize
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op

_HALF = ("f16", "bf16", "f16x2", "bf16x2")


def _unary(tc, inst, t, fn):
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], t)

    def run(X, idx):
        d(X, idx, fn(a(X, idx)))
    return Built(run)


def _binary(tc, inst, t, fn, tb=None):
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], t)
    b = tc.reader(inst.operands[2], tb or t)

    def run(X, idx):
        d(X, idx, fn(a(X, idx), b(X, idx)))
    return Built(run)


def _ternary(tc, inst, t, fn, tc_type=None):
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], t)
    b = tc.reader(inst.operands[2], t)
    c = tc.reader(inst.operands[3], tc_type or t)

    def run(X, idx):
        d(X, idx, fn(a(X, idx), b(X, idx), c(X, idx)))
    return Built(run)


def _float_mods(m: Mods):
    rnd = m.rounding()
    ftz = m.flag("ftz")
    sat = m.flag("sat")
    return rnd, ftz, sat


def _half_op(name):
    from gpudbg.sim.arith import half as H
    fn = getattr(H, f"half_{name}", None)
    if fn is None:
        raise UnsupportedInstruction(f"{name} on half-precision types is not supported")
    return fn


@op("add", "sub")
def build_add(inst: ir.Instruction, tc) -> Built:
    m = Mods(inst)
    sub = inst.opcode == "sub"
    cc = m.flag("cc")
    sat = m.flag("sat")
    t = m.one_type()
    if t.is_float:
        rnd, ftz, fsat = _float_mods(m)
        m.finish()
        if t.name in _HALF:
            hf = _half_op(inst.opcode)
            return _binary(tc, inst, t, lambda a, b: hf(a, b, t.name, rnd or "rn", ftz, fsat or sat))
        if rnd in (None, "rn") and not ftz and not (sat or fsat):
            return _binary(tc, inst, t, _canonical_nan(np.subtract if sub else np.add))
        f = F.sub if sub else F.add
        return _binary(tc, inst, t, lambda a, b: f(a, b, rnd=rnd, ftz=ftz, sat=sat or fsat))
    m.finish()
    if cc:
        fcc = I.sub_cc if sub else I.add_cc
        d = tc.writer(inst.operands[0])
        a = tc.reader(inst.operands[1], t)
        b = tc.reader(inst.operands[2], t)

        def run(X, idx):
            r, carry = fcc(a(X, idx), b(X, idx))
            d(X, idx, r)
            _set_carry(X, idx, carry)
        return Built(run)
    if sat:
        return _binary(tc, inst, t, I.sub_sat if sub else I.add_sat)
    return _binary(tc, inst, t, np.subtract if sub else np.add)


def _canonical_nan(fn):
    """`fn` (a numpy float operation) with NaN results made the canonical
    NaN, as every other float path (fbasic.finish) and NVIDIA GPUs give:
    numpy's own NaN payload depends on the lane's position (its vector
    loops and their scalar tails pick different operands of two NaNs), so
    it cannot be the reference. NaN-free results cost one min-reduction."""
    return lambda *args: _canonical_nans(fn(*args))


def _canonical_nans(r):
    if np.ndim(r) == 0:
        return canonicalize(r) if np.isnan(r) else r
    if r.size and np.isnan(np.minimum.reduce(r)):
        return canonicalize(r)
    return r


def _set_carry(X, idx, carry):
    c = np.asarray(carry).astype(np.uint32)
    if idx is None:
        X.carry[...] = c        # in place: native segments address this array
    else:
        X.carry[idx] = c


def _get_carry(X, idx):
    return X.carry if idx is None else X.carry[idx]


@op("addc", "subc")
def build_addc(inst, tc) -> Built:
    m = Mods(inst)
    cc = m.flag("cc")
    t = m.one_type()
    m.finish()
    fcc = I.sub_cc if inst.opcode == "subc" else I.add_cc
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], t)
    b = tc.reader(inst.operands[2], t)

    def run(X, idx):
        r, carry = fcc(a(X, idx), b(X, idx), _get_carry(X, idx))
        d(X, idx, r)
        if cc:
            _set_carry(X, idx, carry)
    return Built(run)


@op("mul")
def build_mul(inst, tc) -> Built:
    m = Mods(inst)
    mode = m.take("lo", "hi", "wide")
    t = m.one_type()
    if t.is_float:
        rnd, ftz, sat = _float_mods(m)
        m.finish()
        if t.name in _HALF:
            hf = _half_op("mul")
            return _binary(tc, inst, t, lambda a, b: hf(a, b, t.name, rnd or "rn", ftz, sat))
        if rnd in (None, "rn") and not ftz and not sat:
            return _binary(tc, inst, t, _canonical_nan(np.multiply))
        return _binary(tc, inst, t, lambda a, b: F.mul(a, b, rnd=rnd, ftz=ftz, sat=sat))
    m.finish()
    if mode in (None, "lo"):
        return _binary(tc, inst, t, np.multiply)
    return _binary(tc, inst, t, lambda a, b: I.mul(a, b, mode))


@op("mad", "madc")
def build_mad(inst, tc) -> Built:
    m = Mods(inst)
    mode = m.take("lo", "hi", "wide")
    cc = m.flag("cc")
    isat = m.flag("sat")
    t = m.one_type()
    if t.is_float:
        rnd, ftz, sat = _float_mods(m)
        m.finish()
        return _fma(tc, inst, t, rnd or "rn", ftz, sat or isat)
    m.finish()
    if inst.opcode == "madc" or cc:
        d = tc.writer(inst.operands[0])
        a = tc.reader(inst.operands[1], t)
        b = tc.reader(inst.operands[2], t)
        c = tc.reader(inst.operands[3], t)
        use_in = inst.opcode == "madc"

        def run(X, idx):
            r, carry = I.mad_cc(a(X, idx), b(X, idx), c(X, idx), mode or "lo",
                                _get_carry(X, idx) if use_in else None)
            d(X, idx, r)
            if cc:
                _set_carry(X, idx, carry)
        return Built(run)
    if mode == "wide":
        from gpudbg.ptx.types import PTX_TYPES
        wide = PTX_TYPES[t.kind + str(t.bits * 2)]
        return _ternary(tc, inst, t, lambda a, b, c: I.mad(a, b, c, "wide", sat=isat), wide)
    if mode in (None, "lo") and not isat:
        return _ternary(tc, inst, t, lambda a, b, c: a * b + c)
    return _ternary(tc, inst, t, lambda a, b, c: I.mad(a, b, c, mode or "lo", sat=isat))


_F32_TIE_MASK = np.uint64((1 << 29) - 1)
_F32_TIE = np.uint64(1 << 28)
_F32_SUBNORMAL_EDGE = np.float64(2.0 ** -125)


def fma_f32_rn(a, b, c):
    """fma.rn.f32: the exact product and a double-precision sum round
    correctly to f32 except where the double result sits exactly on an f32
    rounding tie (or in the subnormal range); only those lanes take the
    exact path in the arith library."""
    a64 = np.asarray(a, dtype=np.float64)
    s = a64 * b + np.asarray(c, dtype=np.float64)
    r = s.astype(np.float32)
    s_arr = np.atleast_1d(s)
    suspicious = ((s_arr.view(np.uint64) & _F32_TIE_MASK) == _F32_TIE) | (np.abs(s_arr) < _F32_SUBNORMAL_EDGE)
    if suspicious.any():
        r = np.atleast_1d(r).copy()
        k = np.flatnonzero(suspicious)
        aa = np.broadcast_to(np.asarray(a, np.float32), s_arr.shape)[k]
        bb = np.broadcast_to(np.asarray(b, np.float32), s_arr.shape)[k]
        cc = np.broadcast_to(np.asarray(c, np.float32), s_arr.shape)[k]
        r[k] = F.fma(aa, bb, cc, rnd="rn")
        if np.ndim(s) == 0:
            r = r[0]
    return _canonical_nans(r)


def _fma(tc, inst, t, rnd, ftz, sat) -> Built:
    if t.name in _HALF:
        hf = _half_op("fma")
        return _ternary(tc, inst, t, lambda a, b, c: hf(a, b, c, t.name, rnd, ftz, sat))
    if t.name == "f32" and rnd == "rn" and not ftz and not sat:
        return _ternary(tc, inst, t, fma_f32_rn)
    return _ternary(tc, inst, t, lambda a, b, c: F.fma(a, b, c, rnd=rnd, ftz=ftz, sat=sat))


@op("fma")
def build_fma(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    rnd, ftz, sat = _float_mods(m)
    m.take("oob")
    m.finish()
    return _fma(tc, inst, t, rnd or "rn", ftz, sat)


@op("mul24", "mad24")
def build_24(inst, tc) -> Built:
    m = Mods(inst)
    mode = m.take("lo", "hi") or "lo"
    sat = m.flag("sat")
    t = m.one_type()
    m.finish()
    if inst.opcode == "mul24":
        return _binary(tc, inst, t, lambda a, b: I.mul24(a, b, mode))
    return _ternary(tc, inst, t, lambda a, b, c: I.mad24(a, b, c, mode, sat=sat))


@op("sad")
def build_sad(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    return _ternary(tc, inst, t, I.sad)


@op("div")
def build_div(inst, tc) -> Built:
    m = Mods(inst)
    mode = m.take("approx", "full")
    t = m.one_type()
    if t.is_float:
        rnd, ftz, sat = _float_mods(m)
        m.finish()
        fmode = mode or rnd or "rn"
        return _binary(tc, inst, t, lambda a, b: F.div(a, b, fmode, ftz))
    m.finish()
    return _binary(tc, inst, t, I.div)


@op("rem")
def build_rem(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    return _binary(tc, inst, t, I.rem)


@op("abs", "neg")
def build_abs(inst, tc) -> Built:
    m = Mods(inst)
    ftz = m.flag("ftz")
    t = m.one_type()
    m.finish()
    name = inst.opcode
    if t.name in _HALF:
        hf = _half_op(name)
        return _unary(tc, inst, t, lambda a: hf(a, t.name, ftz))
    if t.is_float:
        f = getattr(F, name)
        return _unary(tc, inst, t, lambda a: f(a, ftz=ftz))
    return _unary(tc, inst, t, getattr(I, name))


@op("min", "max")
def build_minmax(inst, tc) -> Built:
    m = Mods(inst)
    ftz = m.flag("ftz")
    nan = m.flag("NaN")
    xorsign = m.flag("xorsign")
    m.flag("abs")
    relu = m.flag("relu")
    t = m.one_type()
    m.finish()
    name = inst.opcode
    if t.name in _HALF:
        hf = _half_op(name)
        return _binary(tc, inst, t, lambda a, b: hf(a, b, t.name, ftz=ftz, nan=nan))
    if t.is_float:
        f = getattr(F, name)
        return _binary(tc, inst, t, lambda a, b: f(a, b, nan=nan, ftz=ftz, xorsign_abs=xorsign))
    f = getattr(I, name)
    if relu:
        return _binary(tc, inst, t, lambda a, b: f(a, b, relu=True))
    return _binary(tc, inst, t, f)


@op("copysign")
def build_copysign(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    return _binary(tc, inst, t, F.copysign)


_UNARY_FLOAT = {"rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh"}


@op(*_UNARY_FLOAT)
def build_float_unary(inst, tc) -> Built:
    m = Mods(inst)
    mode = m.take("approx", "full")
    rnd = m.rounding()
    ftz = m.flag("ftz")
    t = m.one_type()
    m.finish()
    name = inst.opcode
    if t.name in _HALF:
        hf = _half_op(name)
        return _unary(tc, inst, t, lambda a: hf(a, t.name, ftz))
    f = getattr(F, name)
    if name == "tanh":      # no .ftz form (arith's tanh takes none)
        if ftz:
            raise UnsupportedInstruction("tanh has no .ftz form")
        return _unary(tc, inst, t, f)
    if name in ("rcp", "sqrt"):
        fmode = mode or rnd or "rn"
        return _unary(tc, inst, t, lambda a: f(a, fmode, ftz))
    return _unary(tc, inst, t, lambda a: f(a, ftz=ftz))


@op("testp")
def build_testp(inst, tc) -> Built:
    m = Mods(inst)
    kind = m.take("finite", "infinite", "number", "notanumber", "normal", "subnormal")
    t = m.one_type()
    m.finish()
    if kind is None:
        raise UnsupportedInstruction("testp needs a test")
    return _unary(tc, inst, t, lambda a: F.testp(a, kind))
