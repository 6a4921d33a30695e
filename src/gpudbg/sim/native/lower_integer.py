"""Native lowerings of integer, bit and predicate instructions: the forms
whose numpy semantics in the interpreter are plain wrapping arithmetic,
bitwise logic, comparisons and width changes.

Each lowering takes the instruction's modifiers with Mods and refuses any
form it does not model exactly (NotNative / UnsupportedInstruction from
finish()); the interpreter keeps those.
"""
from __future__ import annotations

from gpudbg.ptx import ir
from gpudbg.sim.native.emit import BOOL, NotNative, lower

_INT_BINARY = {"add": "add", "sub": "sub", "and": "and_", "or": "or_", "xor": "xor"}


@lower("add", "sub", types="iub")
def add_sub(em, inst):
    m = em.mods(inst)
    t = m.one_type()
    m.finish()
    d, a, b = inst.operands
    x, y = em.read(a, t.dtype), em.read(b, t.dtype)
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


@lower("mul", types="iu")
def mul_lo(em, inst):
    m = em.mods(inst)
    m.take("lo")
    t = m.one_type()
    m.finish()
    d, a, b = inst.operands
    em.write(d, em.b.mul(em.read(a, t.dtype), em.read(b, t.dtype)), t.dtype)


@lower("mad", types="iu")
def mad_lo(em, inst):
    m = em.mods(inst)
    if m.take("lo") is None:
        raise NotNative("mad without .lo")
    t = m.one_type()
    m.finish()
    d, a, b, c = inst.operands
    dt = t.dtype
    em.write(d, em.b.add(em.b.mul(em.read(a, dt), em.read(b, dt)), em.read(c, dt)), dt)


@lower("mov")
def mov(em, inst):
    m = em.mods(inst)
    t = m.one_type()
    m.finish()
    d, a = inst.operands
    if not isinstance(d, ir.Register) or isinstance(a, (ir.Vector, ir.Symbol, ir.Address)):
        raise NotNative("mov of a vector or an address")
    dt = BOOL if t.name == "pred" else t.dtype
    em.write(d, em.read(a, dt), dt)


@lower("selp")
def selp(em, inst):
    m = em.mods(inst)
    t = m.one_type()
    m.finish()
    d, a, b, c = inst.operands
    dt = t.dtype
    em.write(d, em.b.select(em.read(c, BOOL), em.read(a, dt), em.read(b, dt)), dt)


_SIGNED = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_UNSIGNED_ONLY = {"lo": "<", "ls": "<=", "hi": ">", "hs": ">="}


@lower("setp", types="iub")
def setp_int(em, inst):
    m = em.mods(inst)
    cmp = m.take(*_SIGNED, *_UNSIGNED_ONLY)
    t = m.one_type()
    m.finish()
    if cmp is None or len(inst.operands) != 3 or not isinstance(inst.operands[0], ir.Register):
        raise NotNative("setp with a boolean op or a predicate pair")
    d, a, b = inst.operands
    x, y = em.read(a, t.dtype), em.read(b, t.dtype)
    if cmp in _UNSIGNED_ONLY or t.kind != "s":
        r = em.b.icmp_unsigned(_UNSIGNED_ONLY.get(cmp) or _SIGNED[cmp], x, y)
    else:
        r = em.b.icmp_signed(_SIGNED[cmp], x, y)
    em.write(d, r, BOOL)


@lower("cvt", types="iu")
def cvt_int(em, inst):
    m = em.mods(inst)
    ts = m.types()
    m.finish()                      # .sat and rounding forms stay interpreted
    if len(ts) != 2 or any(t.kind not in "us" for t in ts):
        raise NotNative("cvt between non-integer types")
    dt, st = ts
    d, a = inst.operands
    em.write(d, em.convert(em.read(a, st.dtype), st.dtype, dt.dtype), dt.dtype)
