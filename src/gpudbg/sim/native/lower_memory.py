"""Native lowerings of ld and st: global and const (through the wave's
allocation table), shared (the block's segment) and kernel parameters,
scalars and vectors, with the interpreter's checks compiled in.

The one idea: a native access only ever decides "fine" or "not mine": an
address that is misaligned, outside every allocation the table lists,
outside the block's shared memory or past the parameters fails the
segment's check, and the interpreter re-runs the instructions and words
the exact report. The lookup keeps the last allocation hit (base, end,
host delta) per access site, so a loop over one buffer costs one compare
pair per access; a miss binary-searches the sorted table.

Stores record (host address, value bits) per thread in the first pass and
write in the second (sim/native/emit.py), after every thread's check.
Local memory, generic addresses, `.func` parameters, predicates and
atomics stay interpreted until lowerings here cover them.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.ptx import ir
from gpudbg.sim.native.emit import I1, I8, I64, NotNative, lower, storage_type
from gpudbg.sim.native.environment import ENV, READABLE, WRITABLE
from gpudbg.sim.ops.base import TranslateContext
from gpudbg.sim.ops.symbols import symbol_kind

U64 = np.dtype(np.uint64)
_FIND = "gpudbg_find_allocation"


def _space(m) -> str:
    if m.flag("shared::cluster"):
        raise NotNative("distributed shared memory")
    if m.flag("shared::cta"):
        return "shared"
    return m.space()


def _address(em, operand) -> tuple[str | None, L.Value]:
    """(kind of a symbol base or None, the address as i64)."""
    if not isinstance(operand, ir.Address):
        raise NotNative("not a memory operand")
    off = I64(operand.offset & 0xFFFFFFFFFFFFFFFF)
    base = operand.base
    if base is None:
        return None, off
    if isinstance(base, ir.Register):
        k, rd = em.register(base)
        v = em.read(base, rd)
        return None, em.b.add(em.convert(v, rd, U64), off)
    if isinstance(base, ir.Symbol):
        tc = TranslateContext(em.program, em.function_ir, em.current.pc)
        kind = symbol_kind(tc, base.name)
        if kind not in ("shared", "kparam", "global"):
            raise NotNative(f"address of a .{kind} symbol")
        sym = em.symbol(kind, base.name)
        return kind, em.b.add(em.b.add(sym, I64(base.offset & 0xFFFFFFFFFFFFFFFF)), off)
    raise NotNative(f"address base {base!r}")


def _find_function(module: L.Module) -> L.Function:
    """i64 find(i64 addr, i64* env): index of the last allocation whose
    base <= addr, or -1 (binary search of the table)."""
    fn = module.globals.get(_FIND)
    if fn is not None:
        return fn
    fn = L.Function(module, L.FunctionType(I64, [I64, I64.as_pointer()]), name=_FIND)
    fn.linkage = "internal"
    addr, env = fn.args
    b = L.IRBuilder(fn.append_basic_block("entry"))
    count = b.load(b.gep(env, [I64(ENV["gcount"])]))
    bases = b.inttoptr(b.load(b.gep(env, [I64(ENV["gbases"])])), I64.as_pointer())
    head, body, done = (fn.append_basic_block(n) for n in ("head", "body", "done"))
    entry = b.block
    b.branch(head)
    b.position_at_end(head)
    lo = b.phi(I64)
    hi = b.phi(I64)
    lo.add_incoming(I64(0), entry)
    hi.add_incoming(count, entry)
    b.cbranch(b.icmp_signed("<", lo, hi), body, done)
    b.position_at_end(body)
    mid = b.lshr(b.add(lo, hi), I64(1))
    below = b.icmp_unsigned("<=", b.load(b.gep(bases, [mid])), addr)
    lo.add_incoming(b.select(below, b.add(mid, I64(1)), lo), body)
    hi.add_incoming(b.select(below, hi, mid), body)
    b.branch(head)
    b.position_at_end(done)
    b.ret(b.sub(lo, I64(1)))
    return fn


def _global_pointer(em, addr: L.Value, size: int, need: int) -> L.Value:
    """Host address of a checked global access (fails the segment otherwise)."""
    b = em.b
    em.check(b.icmp_unsigned("==", b.and_(addr, I64(size - 1)), I64(0)))
    lo, hi, delta = em.site_cache(need)
    end = b.add(addr, I64(size))
    hit = b.and_(b.icmp_unsigned("<=", b.load(lo), addr), b.icmp_unsigned("<=", end, b.load(hi)))
    with b.if_then(b.not_(hit), likely=False):
        j = b.call(_find_function(em.module), [addr, em.env_arg])
        em.check(b.icmp_signed(">=", j, I64(0)))
        base = b.load(b.gep(em.env_pointer(ENV["gbases"], I64), [j]))
        top = b.load(b.gep(em.env_pointer(ENV["gends"], I64), [j]))
        ptr = b.load(b.gep(em.env_pointer(ENV["gptrs"], I64), [j]))
        flags = b.load(b.gep(em.env_pointer(ENV["gflags"], I8), [j]))
        em.check(b.icmp_unsigned("!=", b.and_(flags, I8(need)), I8(0)))
        em.check(b.icmp_unsigned("<=", end, top))
        b.store(base, lo)
        b.store(top, hi)
        b.store(b.sub(ptr, base), delta)
    return b.add(addr, b.load(delta))


def _shared_pointer(em, off: L.Value, size: int) -> L.Value:
    b = em.b
    em.check(b.icmp_unsigned("==", b.and_(off, I64(size - 1)), I64(0)))
    seg = b.load(b.gep(em.env_pointer(ENV["block_of"], I64), [em.t]))
    lim = b.load(b.gep(em.env_pointer(ENV["slimits"], I64), [seg]))
    em.check(b.and_(b.icmp_unsigned("<", off, lim), b.icmp_unsigned(">=", b.sub(lim, off), I64(size))))
    return b.add(b.add(em.env(ENV["smem"]), b.mul(seg, em.env(ENV["sstride"]))), off)


def _param_pointer(em, off: L.Value, size: int) -> L.Value:
    b = em.b
    em.check(b.icmp_unsigned("<=", b.add(off, I64(size)), em.env(ENV["kparams_len"])))
    return b.add(em.env(ENV["kparams"]), off)


def _pointer(em, space: str, kind: str | None, addr: L.Value, size: int, write: bool) -> L.Value:
    if space in ("global", "const") and kind in (None, "global"):
        return _global_pointer(em, addr, size, WRITABLE if write else READABLE)
    if space == "shared" and kind in (None, "shared"):
        return _shared_pointer(em, addr, size)
    if space == "param" and kind == "kparam" and not write:
        return _param_pointer(em, addr, size)
    raise NotNative(f".{space} access through a {kind or 'register'} address")


def _elements(operand, count: int) -> list:
    if count == 1:
        return [operand]
    if not isinstance(operand, ir.Vector) or len(operand.elements) != count:
        raise NotNative("vector operand shape")
    return list(operand.elements)


@lower("ld", "ldu", effect="read")
def ld(em, inst):
    m = em.mods(inst)
    space = _space(m)
    count = m.vector()
    m.take("L2::cache_hint")
    t = m.one_type()
    m.finish()
    if t.name == "pred" or len(inst.operands) != 2:
        raise NotNative("ld of a predicate or with a cache policy")
    dtype = t.dtype
    kind, addr = _address(em, inst.operands[1])
    outs = _elements(inst.operands[0], count)
    ptr = _pointer(em, space, kind, addr, dtype.itemsize * count, write=False)
    ety = storage_type(dtype)
    p = em.b.inttoptr(ptr, ety.as_pointer())
    for i, out in enumerate(outs):
        v = em.b.load(em.b.gep(p, [I64(i)]) if i else p, align=dtype.itemsize)
        em.write(out, v, dtype)


@lower("st", effect="write")
def st(em, inst):
    m = em.mods(inst)
    space = _space(m)
    count = m.vector()
    t = m.one_type()
    m.finish()
    if t.name == "pred" or space not in ("global", "shared"):
        raise NotNative(f"st.{space} of {t.name}")
    dtype = t.dtype
    kind, addr = _address(em, inst.operands[0])
    vals = [em.read(v, dtype) for v in _elements(inst.operands[1], count)]
    ptr = _pointer(em, space, kind, addr, dtype.itemsize * count, write=True)
    ety = storage_type(dtype)
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
            em2.b.store(v, em2.b.gep(base, [I64(i)]) if i else base, align=dtype.itemsize)
    em.defer(write)


__all__ = ["ld", "st", "I1"]
