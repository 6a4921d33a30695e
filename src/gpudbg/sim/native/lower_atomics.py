"""Native lowerings of atom and red on global, shared and generic
addresses: integer add, min, max, and, or, xor, exch, cas and the u32
inc/dec with their wrap rules, f16/f32/f64 add, exch and cas, and
f32/f64 min and max.

The one idea: an atomic is a store segment's last instruction
(effect="write"). The first pass checks every thread's address and
records (host address, operand, compare); the second pass, only when
every check passed, applies the operations in slot order, which is the
order in which sim/memory/atomics.py serializes lanes that hit one
address (ascending lane), so each thread sees the same old value, and
writes it to the destination register. The operations are LLVM atomic
instructions (atomicrmw, or a cmpxchg loop for inc/dec and float add),
so that code running blocks on several host threads stays atomic.

Float add mirrors atomics.step_function exactly: f32 flushes subnormal
inputs and the result to sign-preserving zero (PTX's atom.add.f32, which
the interpreter applies whatever .noftz says), f16 and f64 do not (f16
adds in f32 and rounds once more, as numpy does, which for an add gives
the correctly rounded f16 sum). Which NaN numpy returns when both
operands are NaNs depends on its code path (a plain add, ufunc.at or
accumulate, and the host's SIMD width), so an operand that is a NaN
fails the first pass's check and the interpreter runs it; with a number
as the operand only the current value can be a NaN, and the result is
that NaN quieted on every path. Float min/max are _FloatExtremum's
fmin/fmax with -0 < +0; numpy's fmin/fmax treat a signaling NaN unlike a
quiet one and the interpreter's grouped scan then disagrees with its own
old values, so a NaN operand or a NaN in memory when the first pass looks
(the only time memory can hold one: min/max of numbers make none) goes to
the interpreter.

What it deliberately does not do: f16 min/max, bf16 and packed types, `.shared::cluster`, or forms the interpreter's translation or
check_op_type refuses (those raise NotNative and stay interpreted).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.ptx import ir
from gpudbg.sim.memory import atomics
from gpudbg.sim.native.addressing import ATOMIC, operand, pointer
from gpudbg.sim.native.emit import F16, F32, F64, I8, I64, NotNative, lower, storage_type
from gpudbg.sim.ops.memory_ops import ATOMIC_OPS

_RMW = {"add": "add", "and": "and", "or": "or", "xor": "xor", "exch": "xchg"}
_ORDER = "monotonic"


def _form(em, inst):
    """memory_ops._atomic_parts plus the type rules of atomics.check_op_type;
    (space, op, ptx type) of a form lowered here, else NotNative."""
    m = em.mods(inst)
    if m.flag("shared::cluster"):
        raise NotNative("distributed shared memory")
    space = "shared" if m.flag("shared::cta") else m.space()
    opname = m.take(*ATOMIC_OPS)
    m.flag("noftz")
    t = m.one_type()
    m.finish()
    if opname is None or space not in ("global", "shared", "generic"):
        raise NotNative(f"atomic {opname} on .{space}")
    if t.kind == "b" and opname in ("add", "min", "max", "inc", "dec"):
        raise NotNative(f"atomic {opname} on .{t.name}")
    at = atomics.atomic_type(t.dtype)
    try:
        atomics.check_op_type(atomics.parse_op(opname), at)
    except TypeError as e:
        raise NotNative(str(e)) from None
    if at.kind == "f":
        if t.name not in ("f16", "f32", "f64") or opname not in ("add", "exch", "cas", "min", "max") \
                or (t.name == "f16" and opname in ("min", "max")):
            raise NotNative(f"atomic {opname}.{t.name}")
    elif at.kind not in "us" or at.size not in (2, 4, 8):
        raise NotNative(f"atomic {opname}.{t.name}")
    return space, opname, t


def _flush_f32(b, bits: L.Value) -> L.Value:
    """atomics.flush_f32 on bits: exponent 0 keeps only the sign."""
    zero_exp = b.icmp_unsigned("==", b.and_(bits, bits.type(0x7F800000)), bits.type(0))
    return b.select(zero_exp, b.and_(bits, bits.type(0x80000000)), bits)


_FLOAT = {16: (F16, 0x0200), 32: (F32, 0x00400000), 64: (F64, 0x0008000000000000)}


def _float_add(b, cur: L.Value, v: L.Value, width: int) -> L.Value:
    """step_function's float add on bit patterns (iW -> iW); `v` is no
    NaN (checked in the first pass)."""
    ft, quiet = _FLOAT[width]
    if width == 32:
        cur, v = _flush_f32(b, cur), _flush_f32(b, v)
    fc, fv = b.bitcast(cur, ft), b.bitcast(v, ft)
    if width == 16:          # numpy's half add: in float, rounded back to half
        s = b.fptrunc(b.fadd(b.fpext(fc, F32), b.fpext(fv, F32)), F16)
    else:
        s = b.fadd(fc, fv)
    s = b.bitcast(s, cur.type)
    r = b.select(b.fcmp_unordered("uno", fc, fc), b.or_(cur, cur.type(quiet)), s)
    return _flush_f32(b, r) if width == 32 else r


def _float_extremum(b, cur: L.Value, v: L.Value, width: int, is_min: bool) -> L.Value:
    """_FloatExtremum on bit patterns of two numbers (NaNs were handed to
    the interpreter by the first pass): two zeros give -0 for min when
    either is -0, for max only when both are; else the smaller (larger)."""
    ft, _ = _FLOAT[width]
    fc, fv = b.bitcast(cur, ft), b.bitcast(v, ft)
    zero = L.Constant(ft, 0.0)
    both_zero = b.and_(b.fcmp_ordered("==", fc, zero), b.fcmp_ordered("==", fv, zero))
    zeros = b.or_(cur, v) if is_min else b.and_(cur, v)     # the bits of two zeros are their signs
    better = b.fcmp_ordered("<" if is_min else ">", fv, fc)
    return b.select(both_zero, zeros, b.select(better, v, cur))


def _cas_loop(em, p: L.Value, size: int, new_of) -> L.Value:
    """Apply new = new_of(cur) atomically; the old value."""
    b = em.b
    first = b.load_atomic(p, _ORDER, size)
    before = b.block
    loop = em.fn.append_basic_block("atom_retry")
    done = em.fn.append_basic_block("atom_done")
    b.branch(loop)
    b.position_at_end(loop)
    cur = b.phi(first.type)
    cur.add_incoming(first, before)
    pair = b.cmpxchg(p, cur, new_of(cur), _ORDER, _ORDER)
    cur.add_incoming(b.extract_value(pair, 0), b.block)
    b.cbranch(b.extract_value(pair, 1), done, loop)
    b.position_at_end(done)
    return cur


def _apply(em, opname: str, t, p: L.Value, v: L.Value, c: L.Value | None) -> L.Value:
    """One thread's atomic on bits at p; the old bits."""
    b = em.b
    size = t.dtype.itemsize
    if opname == "cas":
        return b.extract_value(b.cmpxchg(p, c, v, _ORDER, _ORDER), 0)
    if opname == "add" and t.kind == "f":
        return _cas_loop(em, p, size, lambda cur: _float_add(b, cur, v, 8 * size))
    if opname in ("min", "max") and t.kind == "f":
        return _cas_loop(em, p, size, lambda cur: _float_extremum(b, cur, v, 8 * size, opname == "min"))
    if opname == "inc":        # cur >= v ? 0 : cur + 1
        return _cas_loop(em, p, size, lambda cur: b.select(
            b.icmp_unsigned(">=", cur, v), cur.type(0), b.add(cur, cur.type(1))))
    if opname == "dec":        # cur == 0 or cur > v ? v : cur - 1
        return _cas_loop(em, p, size, lambda cur: b.select(
            b.or_(b.icmp_unsigned("==", cur, cur.type(0)), b.icmp_unsigned(">", cur, v)),
            v, b.sub(cur, cur.type(1))))
    if opname in ("min", "max"):
        op = opname if t.kind == "s" else "u" + opname
        return b.atomic_rmw(op, p, v, _ORDER)
    return b.atomic_rmw(_RMW[opname], p, v, _ORDER)


def _dest(em, inst) -> tuple[int, np.dtype] | None:
    """The destination register whose old value the interpreter writes
    (none when nothing reads it: build_atom then reduces)."""
    if inst.opcode != "atom":
        return None
    d = inst.operands[0]
    if isinstance(d, ir.Sink):
        return None
    if not isinstance(d, ir.Register):
        raise NotNative(f"atom destination {d!r}")
    k, rd = em.register(d)
    if not em.program.register_is_read(em.function_ir, d.name):
        return None
    em.writes.add(k)
    return k, rd


def _store_register(em, k: int, rd: np.dtype, value: L.Value, src: np.dtype) -> None:
    """Second pass: register k of this thread = value (as_dtype to rd),
    into its array and, when the segment commits it from scratch, into its
    scratch row too, so either way the old value is what stays."""
    b = em.b
    v = em.convert(value, src, rd)
    if rd.kind == "b":
        v = b.zext(v, I8)
    raw = b.load(b.gep(em.regs_arg, [I64(k)], inbounds=True))
    arr = b.inttoptr(raw, storage_type(rd).as_pointer())
    b.store(v, b.gep(arr, [em.t], inbounds=True))
    row = em.plan.scratch_regs.get(k)
    if row is not None:
        b.store(v, b.gep(em.scratch_row(row, v.type), [em.i], inbounds=True))


def _atomic(em, inst):
    space, opname, t = _form(em, inst)
    ops = inst.operands if inst.opcode == "atom" else [None] + list(inst.operands)
    if opname == "cas" and inst.opcode == "red":
        raise NotNative("red has no cas form")
    if len(ops) != (4 if opname == "cas" else 3):
        raise NotNative("atomic operand count")
    dest = _dest(em, inst)
    dtype = t.dtype
    size = dtype.itemsize
    ity = L.IntType(8 * size)

    def bits(x):
        return em.b.bitcast(x, ity) if x.type != ity else x
    if opname == "cas":    # atom.cas d, [a], b, c: b the compare value, c the new one
        v, c = bits(em.read(ops[3], dtype)), bits(em.read(ops[2], dtype))
    else:
        raw = em.read(ops[2], dtype)
        if opname in ("add", "min", "max") and dtype.kind == "f":   # a NaN operand: the interpreter's
            em.check(em.b.fcmp_ordered("ord", raw, raw))
        v, c = bits(raw), None
    ptr = pointer(em, space, operand(em, ops[1], space), size, ATOMIC)
    # atomics.atomic_update indexes an allocation's words: its host bytes are aligned too
    em.check(em.b.icmp_unsigned("==", em.b.and_(ptr, I64(size - 1)), I64(0)))
    if opname in ("min", "max") and dtype.kind == "f":    # a NaN in memory: the interpreter's
        now = em.b.load(em.b.inttoptr(ptr, storage_type(dtype).as_pointer()), align=size)
        em.check(em.b.fcmp_ordered("ord", now, now))
    slots = [em.new_slot() for _ in range(2 if c is None else 3)]
    em.record(slots[0], ptr)
    em.record(slots[1], v)
    if c is not None:
        em.record(slots[2], c)

    def perform(em2):
        p = em2.b.inttoptr(em2.recorded(slots[0], I64), ity.as_pointer())
        val = em2.recorded(slots[1], ity)
        cmp = em2.recorded(slots[2], ity) if c is not None else None
        old = _apply(em2, opname, t, p, val, cmp)
        if dest is not None:
            k, rd = dest
            if dtype.kind == "f":
                old = em2.b.bitcast(old, storage_type(dtype))
            _store_register(em2, k, rd, old, dtype)
    em.defer(perform)


@lower("atom", "red", effect="write")
def atom(em, inst):
    _atomic(em, inst)

