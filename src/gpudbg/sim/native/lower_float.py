"""Native lowerings of floating-point instructions (f32, f64): the forms
whose interpreter semantics are IEEE round-to-nearest operations with no
flush-to-zero and no saturation, which LLVM's fadd/fsub/fmul and the fma
intrinsic compute bit for bit (no fast-math flags: no reassociation, no
contraction).

Directed rounding, .ftz, .sat, half precision and the approximate forms
stay interpreted until a lowering here models them exactly.
"""
from __future__ import annotations

from llvmlite import ir as L

from gpudbg.sim.native.emit import NotNative, lower

_F32_F64 = ("f32", "f64")


def _plain_float(em, inst):
    """The type of a plain (rn, no ftz/sat) f32/f64 form, else NotNative."""
    m = em.mods(inst)
    rnd = m.rounding()
    ftz = m.flag("ftz")
    sat = m.flag("sat")
    t = m.one_type()
    m.finish()
    if t.name not in _F32_F64 or rnd not in (None, "rn") or ftz or sat:
        raise NotNative(f"{inst.full_opcode}: only plain rn f32/f64 forms are native")
    return t


@lower("add", "sub", "mul", types="f")
def binary(em, inst):
    t = _plain_float(em, inst)
    d, a, b = inst.operands
    op = {"add": em.b.fadd, "sub": em.b.fsub, "mul": em.b.fmul}[inst.opcode]
    em.write(d, op(em.read(a, t.dtype), em.read(b, t.dtype)), t.dtype)


@lower("fma", "mad", types="f")
def fma(em, inst):
    t = _plain_float(em, inst)        # mad.f32 is fma.rn.f32 in the interpreter too
    d, a, b, c = inst.operands
    ft = L.FloatType() if t.name == "f32" else L.DoubleType()
    fn = em.b.module.declare_intrinsic("llvm.fma", [ft], L.FunctionType(ft, [ft, ft, ft]))
    em.write(d, em.b.call(fn, [em.read(a, t.dtype), em.read(b, t.dtype), em.read(c, t.dtype)]), t.dtype)
