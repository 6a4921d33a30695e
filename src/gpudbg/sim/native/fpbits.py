"""IEEE building blocks for the float lowerings, in LLVM IR: the
interpreter's float post-processing (sim/arith/fbasic.py: .ftz flushing,
.sat clamping, canonical NaN) and its directed-rounding step
(sim/arith/rounding.nudge), each written to give the same bits.

The one idea: LLVM's plain fadd/fmul/fdiv/sqrt/fma compute the IEEE
round-to-nearest result exactly as numpy does, so every other form is that
result plus bit-level work decided by IEEE classes and signs; where the
interpreter needs the sign of a rounding error it is computed the same
error-free way in the lowering module. NaN payloads never leak from LLVM:
every NaN an arithmetic lowering writes goes through `canonical` (LLVM may
commute operands, which changes which NaN x86 returns).

What it deliberately does not do: touch the host's rounding mode (MXCSR):
directed results come from the nearest one and an exact error sign.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.sim.arith.fbasic import CANONICAL_NAN_BITS
from gpudbg.sim.native.emit import F32, F64, I32, I64, NotNative
from gpudbg.sim.native.environment import ENV

_MIN_NORMAL = {4: 2.0 ** -126, 8: 2.0 ** -1022}


class FP:
    """Float helpers for one f32/f64 dtype inside one lowering."""

    def __init__(self, em, dtype):
        dtype = np.dtype(dtype)
        if dtype not in (np.float32, np.float64):
            raise NotNative(f"float type {dtype} has no native lowering")
        self.em, self.b, self.dtype = em, em.b, dtype
        n = dtype.itemsize
        self.ft = F32 if n == 4 else F64
        self.it = I32 if n == 4 else I64
        self.nbits = 8 * n
        self.sign_bit = 1 << (self.nbits - 1)
        self.exp_mask = (0xFF << 23) if n == 4 else (0x7FF << 52)
        self.canon_bits = CANONICAL_NAN_BITS[dtype]
        self.min_normal = _MIN_NORMAL[n]

    # ------------------------------------------------------------ plumbing
    def bits(self, v: L.Value) -> L.Value:
        return self.b.bitcast(v, self.it)

    def from_bits(self, i: L.Value) -> L.Value:
        return self.b.bitcast(i, self.ft)

    def const(self, x: float) -> L.Value:
        return L.Constant(self.ft, float(x))

    def const_bits(self, u: int) -> L.Value:
        return self.from_bits(self.it(u))

    def intrinsic(self, name: str, *args: L.Value) -> L.Value:
        fnty = L.FunctionType(self.ft, [self.ft] * len(args))
        fn = self.b.module.declare_intrinsic(name, [self.ft], fnty)
        return self.b.call(fn, list(args))

    def widen(self, v: L.Value) -> L.Value:
        """Exactly as f64 (numpy's astype(float64))."""
        return v if self.ft is F64 else self.b.fpext(v, F64)

    # ------------------------------------------------------------ classes
    def is_nan(self, v: L.Value) -> L.Value:
        return self.b.fcmp_unordered("uno", v, v)

    def fabs(self, v: L.Value) -> L.Value:
        return self.from_bits(self.b.and_(self.bits(v), self.it(~self.sign_bit & ((1 << self.nbits) - 1))))

    def is_finite(self, v: L.Value) -> L.Value:
        return self.b.fcmp_ordered("<", self.fabs(v), self.const(np.inf))

    def is_inf(self, v: L.Value) -> L.Value:
        return self.b.fcmp_ordered("==", self.fabs(v), self.const(np.inf))

    def signbit(self, v: L.Value) -> L.Value:
        return self.b.icmp_signed("<", self.bits(v), self.it(0))

    def is_zero(self, v: L.Value) -> L.Value:
        return self.b.fcmp_ordered("==", v, self.const(0.0))

    def neg(self, v: L.Value) -> L.Value:
        return self.from_bits(self.b.xor(self.bits(v), self.it(self.sign_bit)))

    def sign(self, v: L.Value, ft=None) -> L.Value:
        """np.sign as i32 -1/0/+1 (0 for NaN: callers mask NaN lanes anyway)."""
        b = self.b
        zero = L.Constant(ft or self.ft, 0.0)
        pos = b.zext(b.fcmp_ordered(">", v, zero), I32)
        neg = b.zext(b.fcmp_ordered("<", v, zero), I32)
        return b.sub(pos, neg)

    # ------------------------------------------------------------ fbasic
    def flush(self, v: L.Value) -> L.Value:
        """.ftz: subnormals become the zero of their sign (fbasic.flush_subnormals)."""
        b = self.b
        u = self.bits(v)
        tiny = b.icmp_unsigned("==", b.and_(u, self.it(self.exp_mask)), self.it(0))
        return self.from_bits(b.select(tiny, b.and_(u, self.it(self.sign_bit)), u))

    def saturate(self, v: L.Value) -> L.Value:
        """.sat: NaN and values <= 0 (-0 too) give +0, values > 1 give 1."""
        b = self.b
        low = b.fcmp_unordered("<=", v, self.const(0.0))
        high = b.fcmp_ordered(">", v, self.const(1.0))
        return b.select(low, self.const(0.0), b.select(high, self.const(1.0), v))

    def canonical(self, v: L.Value) -> L.Value:
        """Every NaN becomes the canonical NaN. LLVM treats all NaNs as
        interchangeable: given select(isnan(v), NaN, v), or the same on
        the bits, it keeps v (and select(x < 0, NaN, sqrt(x)) became
        sqrt(x)). So the canonical bits come from the environment, a value
        LLVM cannot see, and the test is an unordered compare: two x86
        instructions where a test on the bits took six (move out, mask,
        compare, set, move to a mask, masked move)."""
        b = self.b
        nan = b.fcmp_unordered("uno", v, v)
        canon = self.em.env(ENV["nan_f32" if self.nbits == 32 else "nan_f64"])
        if self.nbits == 32:
            canon = b.trunc(canon, I32)
        return self.from_bits(b.select(nan, canon, self.bits(v)))

    def finish(self, r: L.Value, ftz: bool, sat: bool) -> L.Value:
        """fbasic.finish: flush, saturate, canonical NaN."""
        if ftz:
            r = self.flush(r)
        if sat:
            r = self.saturate(r)
        return self.canonical(r)

    # ------------------------------------------------------------ rounding
    def next_after(self, r: L.Value, up: bool) -> L.Value:
        """np.nextafter(r, +inf if up else -inf) for non-NaN r (from +-inf
        only toward zero, which is all nudge asks for)."""
        b = self.b
        u = self.bits(r)
        zero = self.is_zero(r)
        away = b.icmp_signed(">=" if up else "<", u, self.it(0))   # moving away from zero
        step = b.select(away, b.add(u, self.it(1)), b.sub(u, self.it(1)))
        tiny = self.it((0 if up else self.sign_bit) | 1)
        return self.from_bits(b.select(zero, tiny, step))

    def nudge(self, r: L.Value, es: L.Value, mode: str) -> L.Value:
        """rounding.nudge: the directed result from the nearest one `r` and
        the sign (i32) of the exact value minus r."""
        b = self.b
        if mode == "rn":
            return r
        if mode == "rm":
            return b.select(b.icmp_signed("<", es, I32(0)), self.next_after(r, False), r)
        if mode == "rp":
            return b.select(b.icmp_signed(">", es, I32(0)), self.next_after(r, True), r)
        if mode != "rz":
            raise NotNative(f"rounding mode {mode}")
        rsign = self.sign(r)
        toward = b.and_(b.and_(b.icmp_signed("!=", es, I32(0)), b.icmp_signed("!=", es, rsign)),
                        b.not_(self.is_zero(r)))
        toward_zero = self.from_bits(b.sub(self.bits(r), self.it(1)))
        return b.select(toward, toward_zero, r)

    def masked_error_sign(self, es: L.Value, fin: L.Value, r: L.Value) -> L.Value:
        """floating.add/mul: error sign only where inputs and result are
        finite; an overflowed result of finite inputs gets -sign(r)."""
        b = self.b
        es = b.select(b.and_(fin, self.is_finite(r)), es, I32(0))
        over = b.and_(self.is_inf(r), fin)
        return b.select(over, b.sub(I32(0), self.sign(r)), es)

    def zero_sign_rm(self, r: L.Value, exact_zero: L.Value, p: L.Value, c: L.Value,
                     mode: str, pc_fp: "FP | None" = None) -> L.Value:
        """floating._zero_sign_rm: under rm an exact zero sum is -0 unless
        both addends are +0 (p, c of type pc_fp, default self)."""
        if mode != "rm":
            return r
        b = self.b
        q = pc_fp or self
        pos_zero = b.and_(b.and_(q.is_zero(p), b.not_(q.signbit(p))),
                          b.and_(q.is_zero(c), b.not_(q.signbit(c))))
        return b.select(b.and_(exact_zero, b.not_(pos_zero)), self.const_bits(self.sign_bit), r)


def two_sum(b: L.IRBuilder, x: L.Value, y: L.Value) -> tuple[L.Value, L.Value]:
    """rounding.two_sum, operation for operation."""
    s = b.fadd(x, y)
    bb = b.fsub(s, x)
    e = b.fadd(b.fsub(x, b.fsub(s, bb)), b.fsub(y, bb))
    return s, e


def all_of(b: L.IRBuilder, *conds: L.Value) -> L.Value:
    out = conds[0]
    for c in conds[1:]:
        out = b.and_(out, c)
    return out

