"""Native lowerings of the f32 transcendental approximations ex2, lg2,
sin, cos and tanh (.approx, .ftz), mirroring sim/arith/fapprox.py: the
function in f64, rounded once to f32, flushed and canonicalized.

The one idea: the interpreter's f64 value comes from numpy, which calls
the C library's exp2/log2/sin/cos here (bit-identical on every value
tried) but may use its own vector code elsewhere (SVML builds, its own
tanh): so native code calls the C library too and keeps a result only
where it cannot depend on which of two accurate f64 implementations
produced it: its f64 value lies more than MARGIN f64 ulps from every f32
rounding boundary (or is 0, infinite, NaN, or flushed far below the
normal range). Any other lane fails its check and the interpreter
computes the whole selection, so results are the interpreter's own
whenever the two f64 libraries agree within MARGIN ulps.

What it deliberately does not do: reimplement the functions, or cover the
f16 forms (ex2.approx.f16, tanh.approx.f16), which stay interpreted.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.sim.native.emit import F32, F64, I64, NotNative, lower
from gpudbg.sim.native.fpbits import FP

MARGIN = 1 << 10          # f64 ulps between a value and the nearest f32 rounding boundary
_LIBM = {"ex2": "exp2", "lg2": "log2", "sin": "sin", "cos": "cos", "tanh": "tanh"}
_F64 = np.dtype(np.float64)


def _libm(em, name: str) -> L.Function:
    fn = em.b.module.globals.get(name)
    if fn is None:
        fn = L.Function(em.b.module, L.FunctionType(F64, [F64]), name=name)
        fn.attributes.add("nounwind")
    return fn


@lower("ex2", "lg2", "sin", "cos", "tanh", types="f", effect="read")
def approx(em, inst):
    m = em.mods(inst)
    kind = m.take("approx", "full")
    rnd = m.rounding()
    ftz = m.flag("ftz")
    t = m.one_type()
    m.finish()
    if t.name != "f32" or kind != "approx" or rnd is not None or (ftz and inst.opcode == "tanh"):
        raise NotNative(f"{inst.full_opcode} stays interpreted")
    fp = FP(em, t.dtype)
    f64 = FP(em, _F64)
    b = em.b
    x = em.read(inst.operands[1], t.dtype)
    if ftz:
        x = fp.flush(x)
    y = b.call(_libm(em, _LIBM[inst.opcode]), [fp.widen(x)])
    em.check(_robust(em, f64, y, ftz))
    r = b.fptrunc(y, F32)
    em.write(inst.operands[0], fp.finish(r, ftz, False), t.dtype)


def _robust(em, f64: FP, y: L.Value, ftz: bool) -> L.Value:
    """Whether y's f32 rounding (and .ftz flush) is the same for every f64
    value within MARGIN ulps of y."""
    b = em.b
    mag = f64.fabs(y)
    u = f64.bits(y)
    low = b.and_(u, I64((1 << 29) - 1))          # the bits f32 rounding drops (normal range)
    dist = b.sub(low, I64(1 << 28))
    dist = b.select(b.icmp_signed("<", dist, I64(0)), b.neg(dist), dist)
    normal = b.and_(b.fcmp_ordered(">=", mag, L.Constant(F64, 2.0 ** -126)),
                    b.icmp_signed(">", dist, I64(MARGIN)))
    ok = b.or_(normal, b.fcmp_unordered("uno", y, y))
    ok = b.or_(ok, b.fcmp_ordered("==", mag, L.Constant(F64, 0.0)))
    ok = b.or_(ok, b.fcmp_ordered("==", mag, L.Constant(F64, np.inf)))
    if ftz:      # far enough below 2^-126 that it rounds to a subnormal and is flushed
        ok = b.or_(ok, b.fcmp_ordered("<", mag, L.Constant(F64, 2.0 ** -126 * (1 - 2.0 ** -20))))
    return ok
