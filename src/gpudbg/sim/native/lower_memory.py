"""Native lowerings of ld, ldu, st and isspacep in every state space the interpreter
serves (global, const, shared, local, generic, kernel and `.func`
parameters), scalars and vectors of 2, 4 and 8 elements, sub-word types
widened to their registers, predicates as bytes.

The one idea: the same instruction forms as sim/ops/memory_ops.py, read
with the same Mods; the address and its checks come from addressing.py,
which decides only "fine" or "not mine", so every fault report is the
interpreter's. Cache operators, memory-order and scope qualifiers are the
modifiers the interpreter ignores (sim/ops/base.IGNORABLE), so they are
ignored here too. Stores record (host address, value bits) per thread in
the first pass and write in the second (sim/native/emit.py), after every
thread's check, in slot order (the interpreter's last writer wins).

What it deliberately does not do: .shared::cluster (distributed shared
memory), st.param to a kernel parameter or st.const (the interpreter
refuses them), or a float load into a float register of another width
(the interpreter converts the value there, emit.convert keeps the bits).
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.sim.native.addressing import READ, WRITE, operand, pointer
from gpudbg.sim.memory.spaces import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE
from gpudbg.sim.native.emit import BOOL, I1, I8, I64, NotNative, lower, storage_type

U8 = np.dtype(np.uint8)
U64 = np.dtype(np.uint64)


def _space(m) -> str:
    """memory_ops._state_space, without distributed shared memory."""
    if m.flag("shared::cluster"):
        raise NotNative("distributed shared memory")
    if m.flag("shared::cta"):
        return "shared"
    return m.space()


def _elements(op, count: int) -> list:
    if count == 1:
        return [op]
    if not isinstance(op, ir.Vector) or len(op.elements) != count:
        raise NotNative("vector operand shape")
    return list(op.elements)


def _load_dtype(em, t, outs) -> np.dtype:
    """The element type the interpreter loads (.pred: a byte), refusing a
    float into a float register of another width (as_dtype converts the
    value there)."""
    dtype = U8 if t.name == "pred" else t.dtype
    for out in outs:
        if isinstance(out, ir.Register):
            _, rd = em.register(out)
            if dtype.kind == "f" and rd.kind == "f" and rd.itemsize != dtype.itemsize:
                raise NotNative(f"ld.{t.name} into a .{rd} register")
    return dtype


@lower("ld", "ldu", effect="read")
def ld(em, inst):
    m = em.mods(inst)
    space = _space(m)
    count = m.vector()
    m.take("L2::cache_hint")        # the cache-policy operand, if any, is ignored like the interpreter does
    t = m.one_type()
    m.finish()
    if len(inst.operands) < 2:
        raise NotNative("ld without an address")
    outs = _elements(inst.operands[0], count)
    dtype = _load_dtype(em, t, outs)
    where = operand(em, inst.operands[1], space)
    ptr = pointer(em, space, where, dtype.itemsize * count, READ)
    ety = storage_type(dtype)
    p = em.b.inttoptr(ptr, ety.as_pointer())
    align = 1 if space == "param" else dtype.itemsize
    # a kernel parameter's bytes do not change during a call: an invariant
    # load, which LLVM may take out of the thread loop
    load = em.load_invariant if space == "param" and where.kind != "param" else em.b.load
    values = [load(em.b.gep(p, [I64(i)]) if i else p, align=align) for i in range(count)]
    for out, v in zip(outs, values):
        em.write(out, v, dtype)


@lower("st", effect="write")
def st(em, inst):
    m = em.mods(inst)
    space = _space(m)
    count = m.vector()
    t = m.one_type()
    m.finish()
    if space == "const":
        raise NotNative("st.const is not a valid instruction")
    dtype = t.dtype
    where = operand(em, inst.operands[0], space)
    if space == "param" and where.kind != "param":
        raise NotNative("st.param to a kernel parameter")
    srcs = _elements(inst.operands[1], count)
    if t.name == "pred":
        vals = [em.b.zext(em.read(v, BOOL), I8) for v in srcs]
        ety = I8
    else:
        vals = [em.read(v, dtype) for v in srcs]
        ety = storage_type(dtype)
    ptr = pointer(em, space, where, dtype.itemsize * count, WRITE)
    align = 1 if space == "param" else dtype.itemsize
    pslot = em.new_slot()
    em.record(pslot, ptr)
    vslots = []
    for v in vals:
        s = em.new_slot()
        em.record(s, v)
        vslots.append(s)

    def write(em2):
        base = em2.b.inttoptr(em2.recorded(pslot, I64), ety.as_pointer())
        for i, s in enumerate(vslots):
            v = em2.recorded(s, ety)
            em2.b.store(v, em2.b.gep(base, [I64(i)]) if i else base, align=align)
    em.defer(write)


@lower("isspacep")
def isspacep(em, inst):
    """memory_ops.build_isspacep: the shared and local windows by range;
    global and const are whatever lies outside both; param is never."""
    m = em.mods(inst)
    space = m.take("global", "shared", "local", "const", "param")
    m.take("shared::cta")
    m.finish()
    d, a = inst.operands
    b = em.b
    v = em.read(a, U64)
    in_window = {base: b.icmp_unsigned("<", b.sub(v, I64(base)), I64(WINDOW_SIZE))
                 for base in (SHARED_WINDOW_BASE, LOCAL_WINDOW_BASE)}
    if space == "shared":
        r = in_window[SHARED_WINDOW_BASE]
    elif space == "local":
        r = in_window[LOCAL_WINDOW_BASE]
    elif space in ("global", "const"):
        r = b.not_(b.or_(in_window[SHARED_WINDOW_BASE], in_window[LOCAL_WINDOW_BASE]))
    else:
        r = I1(0)
    em.write(d, r, BOOL)
