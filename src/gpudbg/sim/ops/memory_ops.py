"""Memory instructions: ld, ldu, st, atom, red, cvta, isspacep (cp.async is
in async_copy.py, the cache hints prefetch/applypriority/discard/createpolicy
in hints.py).

An instruction's state space picks the memory object that checks and
serves it: global and const go to the device address space, shared to the
executing block's segment, local to the thread's own segment, generic
addresses are classified per lane, kernel parameters come from the launch's
parameter buffer and `.func` parameters from per-thread parameter storage.
Memory objects raise AccessFault naming the first faulting element and
carrying every faulting lane; the executor turns that into a precise fault
report for that thread that counts the others.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim import param_window
from gpudbg.sim.memory import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE
from gpudbg.sim.memory.spaces import AccessType
from gpudbg.sim.ops import cluster_ops
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op
from gpudbg.sim.ops.symbols import symbol_kind, symbol_reader

U64 = np.dtype(np.uint64)
ATOMIC_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")


def _count(X, idx) -> int:
    return X.n if idx is None else len(idx)


def _as_lanes(value, n, dtype):
    value = np.asarray(value)
    if value.ndim == 0:
        return np.full(n, value, dtype=dtype)
    return value if value.dtype == dtype else value.astype(dtype)


def address_of(tc, operand) -> tuple[str | None, object]:
    """-> (kind of the base symbol or None, reader returning uint64 addrs)."""
    if not isinstance(operand, ir.Address):
        raise UnsupportedInstruction("expected a memory operand [addr]")
    off = np.uint64(operand.offset & 0xFFFFFFFFFFFFFFFF)
    base = operand.base
    if base is None:
        return None, (lambda X, idx: off)
    if isinstance(base, ir.Register):
        k, rd = tc.reg(base)
        if rd.itemsize == 8:
            def read(X, idx, k=k):
                a = X.regs[k]
                a = a if idx is None else a[idx]
                return a.view(U64) + off
        else:
            def read(X, idx, k=k):
                a = X.regs[k]
                a = a if idx is None else a[idx]
                return a.astype(U64) + off
        return None, read
    if isinstance(base, ir.Symbol):
        kind = symbol_kind(tc, base.name)
        sym = symbol_reader(tc, ir.Symbol(base.name, base.offset + operand.offset)) if kind != "param" else None
        return kind, sym
    raise UnsupportedInstruction(f"unsupported address base {base!r}")


class _Space:
    """Loads/stores/atomics for one state space, per lane selection."""

    def __init__(self, tc, space: str, operand):
        self.space = space
        self.kind, self.addr = address_of(tc, operand)
        self.param_name = None
        if space == "param":
            if self.kind == "param":
                self.param_name = operand.base.name
                self.param_offset = operand.offset
            elif self.kind not in ("kparam", None):
                raise UnsupportedInstruction(f"{operand.base.name} is not in the .param space")
        if space in ("global", "const") and self.kind in ("shared", "local"):
            raise UnsupportedInstruction(f"{operand.base.name} is a .{self.kind} variable")

    def addresses(self, X, idx):
        return _as_lanes(self.addr(X, idx), _count(X, idx), U64)

    def load(self, X, idx, dtype, count=1):
        sp = self.space
        if sp == "param":
            if self.param_name is not None:
                return _param_load(X, idx, self.param_name, self.param_offset, dtype, count)
            return _kparam_load(X, idx, self.addresses(X, idx), dtype, count)
        a = self.addresses(X, idx)
        if sp in ("global", "const"):
            return X.gmem.load(a, dtype, count, space_name="__constant__" if sp == "const" else "__global__")
        if sp == "shared":
            return X.smem.load(X.block_segments(idx), a, dtype, count)
        if sp == "local":
            return X.lmem.load(X.thread_segments(idx), a, dtype, count)
        if sp == "shared::cluster":
            seg, off = cluster_ops.resolve(X, idx, a, dtype.itemsize * count)
            return X.smem.load(seg, off, dtype, count)
        a, bs = self._generic(X, idx, a)
        return X.generic.load(a, dtype, bs, X.thread_segments(idx), count)

    @staticmethod
    def _generic(X, idx, a):
        """Generic addresses and block segments, distributed shared memory
        resolved to the peer block in a cluster launch."""
        bs = X.block_segments(idx)
        if X.cluster_dim == (1, 1, 1):
            return a, bs
        return cluster_ops.resolve_generic(X, idx, a, bs)

    def store(self, X, idx, values, dtype, count=1):
        sp = self.space
        if sp == "param":
            if self.param_name is None:
                raise_fault_readonly_param(X, idx)
            return _param_store(X, idx, self.param_name, self.param_offset, values, dtype, count)
        a = self.addresses(X, idx)
        if sp == "global":
            return X.gmem.store(a, values, dtype, count)
        if sp == "shared":
            return X.smem.store(X.block_segments(idx), a, values, dtype, count)
        if sp == "local":
            return X.lmem.store(X.thread_segments(idx), a, values, dtype, count)
        if sp == "const":
            raise UnsupportedInstruction("st.const is not a valid instruction")
        if sp == "shared::cluster":
            seg, off = cluster_ops.resolve(X, idx, a, dtype.itemsize * count)
            return X.smem.store(seg, off, values, dtype, count)
        a, bs = self._generic(X, idx, a)
        return X.generic.store(a, values, dtype, bs, X.thread_segments(idx), count)

    def atomic(self, X, idx, opname, values, dtype, compare=None, want_old=True):
        sp = self.space
        a = self.addresses(X, idx)
        if sp == "global":
            mem = X.gmem
            if want_old:
                return mem.atomic(opname, a, values, dtype, compare)
            return mem.reduce(opname, a, values, dtype) if compare is None else mem.atomic(opname, a, values, dtype, compare)
        if sp in ("shared", "shared::cluster"):
            seg = X.block_segments(idx)
            if sp == "shared::cluster":
                seg, a = cluster_ops.resolve(X, idx, a, dtype.itemsize)
            if want_old or compare is not None:
                return X.smem.atomic(opname, seg, a, values, dtype, compare)
            return X.smem.reduce(opname, seg, a, values, dtype)
        if sp == "generic":
            a, bs = self._generic(X, idx, a)
            ts = X.thread_segments(idx)
            if want_old or compare is not None:
                return X.generic.atomic(opname, a, values, dtype, bs, ts, compare)
            return X.generic.reduce(opname, a, values, dtype, bs, ts)
        raise UnsupportedInstruction(f"atomics on .{sp} are not valid")


def raise_fault_readonly_param(X, idx):
    raise UnsupportedInstruction("st.param to a kernel parameter is not valid")


def _kparam_load(X, idx, addrs, dtype, count):
    size = dtype.itemsize * count
    buf = X.kparams
    if addrs.size and (int(addrs.max()) + size > len(buf)):
        from gpudbg.sim.memory import AccessFault
        from gpudbg.sim.faults import CUDBGException
        from gpudbg.sim.memory import Space
        bad = int(np.flatnonzero(addrs + np.uint64(size) > np.uint64(len(buf)))[0])
        raise AccessFault(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS, Space.PARAM, bad,
                          int(addrs[bad]), size,
                          f"Invalid __param__ read of size {size} bytes at offset {int(addrs[bad])}: "
                          f"the kernel has {len(buf)} bytes of parameters")
    # parameters are uniform: read once per distinct offset
    first = int(addrs[0]) if addrs.size else 0
    if addrs.size and (addrs == addrs[0]).all():
        v = np.frombuffer(buf, dtype=dtype, count=count, offset=first)
        return np.broadcast_to(v, (len(addrs), count)) if count > 1 else np.full(len(addrs), v[0], dtype)
    offs = addrs.astype(np.int64)[:, None] + np.arange(size, dtype=np.int64)[None, :]
    raw = np.frombuffer(buf, dtype=np.uint8)[offs]
    out = raw.view(dtype).reshape(len(addrs), count)
    return out if count > 1 else out[:, 0]


def _param_view(X, name, offset, dtype, count):
    store = X.params[name]
    size = dtype.itemsize * count
    if offset + size > store.shape[1]:
        raise UnsupportedInstruction(f"access past the end of .param {name}")
    return store[:, offset:offset + size]


def _param_load(X, idx, name, offset, dtype, count):
    cols = _param_view(X, name, offset, dtype, count)
    rows = cols if idx is None else cols[idx]
    out = np.ascontiguousarray(rows).view(dtype)
    return out if count > 1 else out[:, 0]


def _param_store(X, idx, name, offset, values, dtype, count):
    cols = _param_view(X, name, offset, dtype, count)
    v = np.asarray(values, dtype=dtype).reshape(-1, count) if np.ndim(values) else np.full((1, count), values, dtype)
    raw = np.ascontiguousarray(v).view(np.uint8).reshape(v.shape[0], -1)
    if idx is None:
        cols[:] = raw
    else:
        cols[idx] = raw


def _vector_io(tc, operand, t, count, write: bool):
    if count == 1:
        return tc.writer(operand) if write else tc.reader(operand, t)
    if not isinstance(operand, ir.Vector) or len(operand.elements) != count:
        raise UnsupportedInstruction(f"expected a {count}-element vector operand")
    if write:
        return [tc.writer(e) for e in operand.elements]
    return [tc.reader(e, t) for e in operand.elements]


def _state_space(m: Mods) -> str:
    """ld/st/atom/red's state space: .shared::cta is .shared, and
    .shared::cluster is distributed shared memory (sim/ops/cluster_ops.py)."""
    if m.flag("shared::cluster"):
        return "shared::cluster"
    if m.flag("shared::cta"):
        return "shared"
    return m.space()


@op("ld", "ldu")
def build_ld(inst, tc) -> Built:
    m = Mods(inst)
    space = _state_space(m)
    count = m.vector()
    m.take("L2::cache_hint")
    t = m.one_type()
    m.finish()
    dtype = t.dtype if t.name != "pred" else np.dtype(np.uint8)
    mem = _Space(tc, space, inst.operands[1])
    out = _vector_io(tc, inst.operands[0], t, count, write=True)
    if count == 1:
        def run(X, idx):
            out(X, idx, mem.load(X, idx, dtype))
    else:
        def run(X, idx):
            v = mem.load(X, idx, dtype, count)
            for i, w in enumerate(out):
                w(X, idx, np.ascontiguousarray(v[:, i]))
    # "memory" declares the access for analysis tools (sim/instrument.py)
    return Built(run, info={"space": space, "access": "read",
                            "memory": ((mem, AccessType.READ, dtype.itemsize * count),)})


@op("st")
def build_st(inst, tc) -> Built:
    m = Mods(inst)
    space = _state_space(m)
    count = m.vector()
    t = m.one_type()
    m.finish()
    dtype = t.dtype
    mem = _Space(tc, space, inst.operands[0])
    src = _vector_io(tc, inst.operands[1], t, count, write=False)
    if count == 1:
        def run(X, idx):
            n = _count(X, idx)
            mem.store(X, idx, _as_lanes(src(X, idx), n, dtype), dtype)
    else:
        def run(X, idx):
            n = _count(X, idx)
            v = np.stack([_as_lanes(r(X, idx), n, dtype) for r in src], axis=1)
            mem.store(X, idx, v, dtype, count)
    return Built(run, info={"space": space, "access": "write",
                            "memory": ((mem, AccessType.WRITE, dtype.itemsize * count),)})


def _atomic_parts(inst, tc):
    m = Mods(inst)
    space = _state_space(m)
    opname = m.take(*ATOMIC_OPS)
    m.flag("noftz")
    t = m.one_type()
    m.finish()
    if opname is None:
        raise UnsupportedInstruction("missing atomic operation")
    if space in ("local", "const", "param"):
        raise UnsupportedInstruction(f"atomics on .{space} are not valid")
    dtype = t.dtype
    if t.kind == "b" and opname in ("add", "min", "max", "inc", "dec"):
        raise UnsupportedInstruction(f"atomic {opname} needs a typed operand, not .{t.name}")
    return space, opname, t, dtype


@op("atom")
def build_atom(inst, tc) -> Built:
    space, opname, t, dtype = _atomic_parts(inst, tc)
    d = tc.writer(inst.operands[0])
    mem = _Space(tc, space, inst.operands[1])
    b = tc.reader(inst.operands[2], t)
    c = tc.reader(inst.operands[3], t) if opname == "cas" else None
    # a result register nobody reads is a reduction: no old values needed
    dead = isinstance(inst.operands[0], ir.Register) and not tc.program.register_is_read(tc.function, inst.operands[0].name)

    def run(X, idx):
        n = _count(X, idx)
        if c is None:
            vals, cmp = _as_lanes(b(X, idx), n, dtype), None
        else:
            # atom.cas d, [a], b, c: b is the compare value, c the new value
            vals, cmp = _as_lanes(c(X, idx), n, dtype), _as_lanes(b(X, idx), n, dtype)
        old = mem.atomic(X, idx, opname, vals, dtype, cmp, want_old=not dead)
        if old is not None:
            d(X, idx, old)
    return Built(run, info={"space": space, "access": "atomic",
                            "memory": ((mem, AccessType.ATOMIC, dtype.itemsize),)})


@op("red")
def build_red(inst, tc) -> Built:
    space, opname, t, dtype = _atomic_parts(inst, tc)
    mem = _Space(tc, space, inst.operands[0])
    b = tc.reader(inst.operands[1], t)

    def run(X, idx):
        vals = _as_lanes(b(X, idx), _count(X, idx), dtype)
        mem.atomic(X, idx, opname, vals, dtype, None, want_old=False)
    return Built(run, info={"space": space, "access": "atomic",
                            "memory": ((mem, AccessType.ATOMIC, dtype.itemsize),)})


@op("cvta")
def build_cvta(inst, tc) -> Built:
    m = Mods(inst)
    to = m.flag("to")
    space = m.take("global", "shared", "local", "const", "param")
    m.take("shared::cta")
    t = m.one_type()
    m.finish()
    if space is None:
        raise UnsupportedInstruction("cvta needs a state space")
    d = tc.writer(inst.operands[0])
    a = tc.reader_dtype(inst.operands[1], U64)
    dt = t.dtype
    if space in ("global", "const"):
        return Built(lambda X, idx: d(X, idx, np.asarray(a(X, idx)).astype(dt)))
    if space == "param":      # a kernel parameter's generic address (sim/param_window.py)
        if to:
            raise UnsupportedInstruction("cvta.to.param (a generic address back to the parameter space) "
                                         "is not supported")
        return Built(lambda X, idx: d(X, idx, (np.asarray(a(X, idx))
                                               + np.uint64(param_window.generic_base(X))).astype(dt)))
    base = np.uint64(SHARED_WINDOW_BASE if space == "shared" else LOCAL_WINDOW_BASE)
    if to:
        return Built(lambda X, idx: d(X, idx, (np.asarray(a(X, idx)) - base).astype(dt)))
    return Built(lambda X, idx: d(X, idx, (np.asarray(a(X, idx)) + base).astype(dt)))


@op("isspacep")
def build_isspacep(inst, tc) -> Built:
    m = Mods(inst)
    space = m.take("global", "shared", "local", "const", "param")
    m.take("shared::cta")
    m.finish()
    d = tc.writer(inst.operands[0])
    a = tc.reader_dtype(inst.operands[1], U64)
    win = {"shared": SHARED_WINDOW_BASE, "local": LOCAL_WINDOW_BASE}

    def run(X, idx):
        v = _as_lanes(a(X, idx), _count(X, idx), U64)
        if space in win:
            lo = np.uint64(win[space])
            r = (v >= lo) & (v < lo + np.uint64(WINDOW_SIZE))
        elif space in ("global", "const"):
            r = ~(((v >= np.uint64(SHARED_WINDOW_BASE)) & (v < np.uint64(SHARED_WINDOW_BASE + WINDOW_SIZE)))
                  | ((v >= np.uint64(LOCAL_WINDOW_BASE)) & (v < np.uint64(LOCAL_WINDOW_BASE + WINDOW_SIZE))))
        else:
            r = np.zeros(len(v), dtype=bool)
        d(X, idx, r)
    return Built(run)
