"""Memory operands in native code: an instruction's address and the host
pointer behind it, for every state space the interpreter serves
(sim/ops/memory_ops.py), with the interpreter's checks compiled in.

The one idea: native code only ever decides "fine" or "not mine". An
address that is misaligned, outside every allocation the wave's table
lists, past a block's shared memory or a thread's local memory, outside
every generic window, or past the parameters fails the segment's check
(emit.py), and the interpreter re-runs the instructions and words the
exact report. So every test here is the interpreter's condition for "no
fault" and nothing more: no message, no lane bookkeeping.

Spaces: global and const go through the allocation table (a per-site
cache of the last allocation hit, a binary search on a miss); shared and
local through the block's or the thread's segment of the wave's windowed
buffers; generic addresses are classified by window as GenericAddressing
does (shared window, local window, else global); kernel parameters are
the launch's parameter bytes, `.func` parameters the per-thread rows of
X.params. Symbols are resolved per wave through the environment's symbol
table (environment.py), local ones relative to the thread's stack pointer.

What it deliberately does not do: distributed shared memory (a cluster
launch's generic accesses fail their check at run time, .shared::cluster
stays interpreted), or any access whose interpreter form raises something
other than an access fault (those forms raise NotNative here).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.ptx import ir
from gpudbg.sim.memory.spaces import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE
from gpudbg.sim.native.emit import I1, I8, I64, NotNative
from gpudbg.sim.native.environment import ENV, READABLE, WRITABLE
from gpudbg.sim.ops.base import TranslateContext, UnsupportedInstruction
from gpudbg.sim.ops.symbols import symbol_kind

U64 = np.dtype(np.uint64)
_FIND = "gpudbg_find_allocation"
_MASK = 0xFFFFFFFFFFFFFFFF
# what an access does, as the checks see it
READ, WRITE, ATOMIC = "read", "write", "atomic"


def _kind(em, name: str) -> str:
    tc = TranslateContext(em.program, em.function_ir, em.current.pc)
    try:
        return symbol_kind(tc, name)
    except UnsupportedInstruction as e:
        raise NotNative(str(e)) from None


def symbol_value(em, kind: str, name: str) -> L.Value:
    """The value symbol_reader gives a symbol of `kind` (no offset), i64.
    No check here: a symbol's value is read by instructions that cannot
    fail (mov); a shared variable or kernel parameter the running kernel
    lacks gets the environment's ABSENT value, which fails the bounds
    check of any access through it."""
    b = em.b
    if kind == "local":
        off = em.program.functions[em.function_ir.name].local_offsets[name]
        sp = b.load(b.gep(em.env_pointer(ENV["sp"], I64), [em.t], inbounds=True))
        return b.add(sp, I64(off & _MASK))
    if kind not in ("global", "shared", "kparam", "function"):
        raise NotNative(f"the value of .{kind} symbol {name}")
    return em.symbol(kind, name)


def read_symbol(em, sym: ir.Symbol) -> L.Value:
    """A symbol used as a value (`mov.u64 %rd, smem_var`): its address as
    the interpreter computes it, i64."""
    v = symbol_value(em, _kind(em, sym.name), sym.name)
    return em.b.add(v, I64(sym.offset & _MASK)) if sym.offset else v


class Operand:
    """A memory operand: the kind of its base symbol (None for a register
    or absolute address), and the address (i64), or for a `.func`
    parameter its name and byte offset."""

    def __init__(self, kind, addr=None, param=None, offset=0):
        self.kind, self.addr, self.param, self.offset = kind, addr, param, offset


def operand(em, op, space: str) -> Operand:
    """memory_ops.address_of and _Space's checks on symbol kinds, natively."""
    if not isinstance(op, ir.Address):
        raise NotNative("not a memory operand")
    off = op.offset & _MASK
    base = op.base
    b = em.b
    if base is None:
        return Operand(None, I64(off))
    if isinstance(base, ir.Register):
        k, rd = em.register(base)
        if rd.kind == "f" and rd.itemsize != 8:
            raise NotNative("an address in a narrow float register")
        if rd.kind == "b":
            raise NotNative("an address in a predicate")
        v = em.convert(em.read(base, rd), rd, U64)     # 8 bytes: the bits; narrower: astype(u64)
        return Operand(None, b.add(v, I64(off)) if off else v)
    if not isinstance(base, ir.Symbol):
        raise NotNative(f"address base {base!r}")
    kind = _kind(em, base.name)
    if space == "param":
        if kind == "param":
            if base.offset:
                raise NotNative(".param symbol with an offset in its base")
            return Operand("param", param=base.name, offset=op.offset)
        if kind != "kparam":
            raise NotNative(f"{base.name} is not in the .param space")
    elif kind == "param":
        raise NotNative(f"a .param variable ({base.name}) in .{space}")
    if space in ("global", "const") and kind in ("shared", "local"):
        raise NotNative(f"{base.name} is a .{kind} variable")
    v = symbol_value(em, kind, base.name)
    total = (base.offset + op.offset) & _MASK
    return Operand(kind, b.add(v, I64(total)) if total else v)


# ---------------------------------------------------------------- global

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


_RESOLVE = "gpudbg_resolve_global"
_TRIPLE = L.LiteralStructType([I64, I64, I64])


def _resolve_function(module: L.Module) -> L.Function:
    """{base, end, host - base} resolve(addr, end, need, env): the
    allocation holding [addr, end) with the `need` flag, or the empty
    cache (-1, 0, 0), which no access fits. One copy per module instead
    of the table lookups and three checks inline at every access site:
    on the benchmark's 100-load kernel that was an eighth of the IR and
    of LLVM's time, for code that runs only when a site's cache misses."""
    fn = module.globals.get(_RESOLVE)
    if fn is not None:
        return fn
    fn = L.Function(module, L.FunctionType(_TRIPLE, [I64, I64, I8, I64.as_pointer()]), name=_RESOLVE)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    addr, end, need, env = fn.args
    b = L.IRBuilder(fn.append_basic_block("entry"))
    j = b.call(_find_function(module), [addr, env])
    found, miss = fn.append_basic_block("found"), fn.append_basic_block("miss")
    b.cbranch(b.icmp_signed(">=", j, I64(0)), found, miss)
    b.position_at_end(miss)
    empty = L.Constant(_TRIPLE, [I64(-1), I64(0), I64(0)])
    b.ret(empty)
    b.position_at_end(found)

    def table(entry, ty):
        t = b.inttoptr(b.load(b.gep(env, [I64(ENV[entry])])), ty.as_pointer())
        return b.load(b.gep(t, [j]))
    base, top, ptr, flags = table("gbases", I64), table("gends", I64), table("gptrs", I64), table("gflags", I8)
    ok = b.and_(b.icmp_unsigned("!=", b.and_(flags, need), I8(0)), b.icmp_unsigned("<=", end, top))
    r = b.insert_value(b.insert_value(b.insert_value(empty, base, 0), top, 1), b.sub(ptr, base), 2)
    b.ret(b.select(ok, r, empty))
    return fn


def _aligned(em, addr: L.Value, size: int) -> None:
    if size > 1:
        em.check(em.b.icmp_unsigned("==", em.b.and_(addr, I64(size - 1)), I64(0)))


def global_pointer(em, addr: L.Value, size: int, access: str) -> L.Value:
    """Host address of a checked global access (access.resolve's
    conditions: aligned, inside one listed allocation, writable for a
    store or an atomic)."""
    b = em.b
    need = READABLE if access == READ else WRITABLE
    _aligned(em, addr, size)
    lo, hlim, delta = em.site_cache(need, size)
    # a hit needs no addr + size, which could wrap (emit.site_cache)
    hit = b.and_(b.icmp_unsigned("<=", b.load(lo), addr), b.icmp_unsigned("<", addr, b.load(hlim)))
    with b.if_then(b.not_(hit), likely=False):
        end = b.add(addr, I64(size))
        # an address so high that addr + size wraps is in no allocation (a
        # hit cannot wrap: resolve found [addr, addr + size) below the end)
        em.check(b.icmp_unsigned(">=", end, addr))
        found = b.call(_resolve_function(em.module), [addr, end, I8(need), em.env_arg])
        base, top, off = (b.extract_value(found, i) for i in range(3))
        em.check(b.and_(b.icmp_unsigned("<=", base, addr), b.icmp_unsigned("<=", end, top)))
        b.store(base, lo)
        b.store(b.sub(top, I64(size - 1)), hlim)
        b.store(off, delta)
    return b.add(addr, b.load(delta))


# ---------------------------------------------------------------- windows

def _segment_pointer(em, seg: L.Value, off: L.Value, size: int, space: str) -> L.Value:
    """SegmentedMemory.resolve for one thread: aligned, off < limit and
    limit - off >= size; the host address of the byte."""
    b = em.b
    mem, stride, limits = (("smem", "sstride", "slimits") if space == "shared"
                           else ("lmem", "lstride", "llimits"))
    grouped = _window_group(em, space, size)
    if grouped is None:
        _aligned(em, off, size)
        lim = b.load(b.gep(em.env_pointer(ENV[limits], I64), [seg]))
        em.check(b.and_(b.icmp_unsigned("<", off, lim), b.icmp_unsigned(">=", b.sub(lim, off), I64(size))))
    else:
        group, c = grouped
        if em.current.pc == group.first:     # the whole group's span, once (window_checks.py)
            base = b.sub(off, I64(c)) if c else off
            _aligned(em, base, size)
            lim = b.load(b.gep(em.env_pointer(ENV[limits], I64), [seg]))
            em.check(b.and_(b.icmp_unsigned("<=", base, lim),
                            b.icmp_unsigned(">=", b.sub(lim, base), I64(group.span))))
            em.window_verified.add(group.key)
    return b.add(b.add(em.env(ENV[mem]), b.mul(seg, em.env(ENV[stride]))), off)


def _window_group(em, space: str, size: int):
    """(group, offset) when this load's check is its group's (the first
    load of the group checks; the others rely on it), else None."""
    got = getattr(em, "windows", None)
    got = got.get(em.current.pc) if got and em.current is not None else None
    if got is None:
        return None
    group, _ = got
    if group.key[0] != space or group.size != size:
        return None
    if em.current.pc != group.first and group.key not in em.window_verified:
        return None
    return got


def shared_pointer(em, off: L.Value, size: int) -> L.Value:
    from gpudbg.sim.native.special import slot_block
    return _segment_pointer(em, slot_block(em), off, size, "shared")


def local_pointer(em, off: L.Value, size: int) -> L.Value:
    return _segment_pointer(em, em.t, off, size, "local")


def generic_pointer(em, addr: L.Value, size: int, access: str) -> L.Value:
    """GenericAddressing's classification: the shared window, the local
    window (atomics there fault), else global memory; a cluster launch's
    generic addresses may name a peer block's shared memory and stay with
    the interpreter."""
    b = em.b
    em.check(b.icmp_unsigned("==", em.env(ENV["clustered"]), I64(0)))
    in_shared = b.icmp_unsigned("<", b.sub(addr, I64(SHARED_WINDOW_BASE)), I64(WINDOW_SIZE))
    in_local = b.icmp_unsigned("<", b.sub(addr, I64(LOCAL_WINDOW_BASE)), I64(WINDOW_SIZE))
    shared_bb, not_shared, local_bb, global_bb, done = (
        em.fn.append_basic_block(n) for n in ("gen_shared", "gen_other", "gen_local", "gen_global",
                                              "gen_done"))
    b.cbranch(in_shared, shared_bb, not_shared)
    b.position_at_end(not_shared)
    b.cbranch(in_local, local_bb, global_bb)
    incoming = []
    b.position_at_end(shared_bb)
    incoming.append((shared_pointer(em, b.sub(addr, I64(SHARED_WINDOW_BASE)), size), b.block))
    b.branch(done)
    b.position_at_end(local_bb)
    if access == ATOMIC:
        em.check(I1(0))          # local memory allows no atomics: the interpreter reports it
    incoming.append((local_pointer(em, b.sub(addr, I64(LOCAL_WINDOW_BASE)), size), b.block))
    b.branch(done)
    b.position_at_end(global_bb)
    incoming.append((global_pointer(em, addr, size, access), b.block))
    b.branch(done)
    b.position_at_end(done)
    phi = b.phi(I64)
    for v, blk in incoming:
        phi.add_incoming(v, blk)
    return phi


# ---------------------------------------------------------------- parameters

def kparam_pointer(em, addr: L.Value, size: int) -> L.Value:
    """_kparam_load: fine when addr + size <= the parameter bytes (no
    alignment rule: the interpreter reads the bytes where they are)."""
    b = em.b
    n = em.env(ENV["kparams_len"])
    em.check(b.and_(b.icmp_unsigned(">=", n, I64(size)), b.icmp_unsigned("<=", addr, b.sub(n, I64(size)))))
    return b.add(em.env(ENV["kparams"]), addr)


def func_param_pointer(em, name: str, offset: int, size: int) -> L.Value:
    """A `.func` parameter's bytes for this thread: row t of X.params[name]
    (an access past its end is refused by the interpreter's translation)."""
    width = max(int(em.program.param_vars[name]), 1)
    if offset < 0 or offset + size > width:
        raise NotNative(f"access past the end of .param {name}")
    b = em.b
    base = em.symbol("param", name)
    return b.add(base, b.add(b.mul(em.t, I64(width)), I64(offset)))


# ---------------------------------------------------------------- dispatch

def pointer(em, space: str, op: Operand, size: int, access: str) -> L.Value:
    """The host address of a checked access of `size` bytes, i64."""
    if space == "param":
        if op.kind == "param":
            return func_param_pointer(em, op.param, op.offset, size)
        if access != READ:
            raise NotNative("a store or atomic to a kernel parameter")
        return kparam_pointer(em, op.addr, size)
    if space in ("global", "const"):
        if space == "const" and access != READ:
            raise NotNative("st.const / atomics on .const")
        return global_pointer(em, op.addr, size, access)
    if space == "shared":
        return shared_pointer(em, op.addr, size)
    if space == "local":
        if access == ATOMIC:
            raise NotNative("atomics on .local are not valid")
        return local_pointer(em, op.addr, size)
    if space == "generic":
        return generic_pointer(em, op.addr, size, access)
    raise NotNative(f".{space} accesses")
