"""Vectorized atomics with exact lane-order serialization of collisions.

The one idea: sort the lanes by element index (stably, so lane order is kept
inside each group of colliding lanes) and compute every group's sequence of
old values at once with the cheapest exact method for the operation:
exchange by shifting, integer add by wrapping prefix sums, and/or/xor/min/max
by a segmented log-step scan (they are associative), inc/dec in closed form
when a group's bound is uniform, and everything else (float adds, whose
rounding depends on order, and cas) by "rounds" over small groups (round k
applies the k-th lane of every group) plus a per-group pass (np.add.accumulate,
or jumping between successful compares for cas) over the few large ones.
Python iterations therefore stay near sqrt(n).

This module works on word arrays and element indices only; bounds,
alignment and permissions are checked by the callers before anything here
runs. Atomics wider than 64 bits are not provided.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


class AtomicOp(enum.Enum):
    ADD = "add"
    MIN = "min"
    MAX = "max"
    INC = "inc"
    DEC = "dec"
    AND = "and"
    OR = "or"
    XOR = "xor"
    EXCH = "exch"
    CAS = "cas"


def parse_op(op: "str | AtomicOp") -> AtomicOp:
    if isinstance(op, AtomicOp):
        return op
    try:
        return AtomicOp(str(op).lstrip(".").lower())
    except ValueError:
        names = ", ".join(o.value for o in AtomicOp)
        raise ValueError(f"unknown atomic operation {op!r} (expected one of {names})") from None


@dataclass(frozen=True)
class AtomicType:
    """What the bits in memory mean: `storage` is the word dtype, `kind` one of
    u (unsigned/bits), s (signed), f (numpy float), bf16, f16x2, bf16x2."""

    name: str
    storage: np.dtype
    kind: str

    @property
    def size(self) -> int:
        return self.storage.itemsize


_NAMED_TYPES = {
    "bf16": ("bf16", np.uint16), "f16x2": ("f16x2", np.uint32), "bf16x2": ("bf16x2", np.uint32),
    "f16": ("f", np.float16), "f32": ("f", np.float32), "f64": ("f", np.float64),
}
for _bits, _u, _s in ((8, np.uint8, np.int8), (16, np.uint16, np.int16),
                      (32, np.uint32, np.int32), (64, np.uint64, np.int64)):
    _NAMED_TYPES[f"u{_bits}"] = ("u", _u)
    _NAMED_TYPES[f"b{_bits}"] = ("u", _u)
    _NAMED_TYPES[f"s{_bits}"] = ("s", _s)


def atomic_type(dtype: Any) -> AtomicType:
    """Accepts a numpy dtype or a PTX type name; bf16 and the packed types
    need their PTX name because numpy holds them as plain unsigned words."""
    if isinstance(dtype, AtomicType):
        return dtype
    if isinstance(dtype, str) and dtype.lstrip(".") in _NAMED_TYPES:
        kind, st = _NAMED_TYPES[dtype.lstrip(".")]
        return AtomicType(dtype.lstrip("."), np.dtype(st), kind)
    dt = np.dtype(dtype)
    if dt.kind == "u":
        return AtomicType(f"u{dt.itemsize * 8}", dt, "u")
    if dt.kind == "i":
        return AtomicType(f"s{dt.itemsize * 8}", dt, "s")
    if dt.kind == "f":
        return AtomicType(f"f{dt.itemsize * 8}", dt, "f")
    raise TypeError(f"no atomic operations on values of type {dt}")


_ALLOWED = {
    AtomicOp.ADD: {"u", "s", "f", "bf16", "f16x2", "bf16x2"},
    AtomicOp.MIN: {"u", "s", "f", "bf16"},
    AtomicOp.MAX: {"u", "s", "f", "bf16"},
    AtomicOp.AND: {"u", "s"}, AtomicOp.OR: {"u", "s"}, AtomicOp.XOR: {"u", "s"},
    AtomicOp.EXCH: {"u", "s", "f", "bf16", "f16x2", "bf16x2"},
    AtomicOp.CAS: {"u", "s", "f", "bf16", "f16x2", "bf16x2"},
}


def check_op_type(op: AtomicOp, at: AtomicType) -> None:
    if op in (AtomicOp.INC, AtomicOp.DEC):
        if at.kind != "u" or at.size != 4:
            raise TypeError(f"atomic {op.value} is defined for u32 only, not {at.name}")
        return
    if at.kind not in _ALLOWED[op]:
        raise TypeError(f"atomic {op.value} is not defined for {at.name}")
    if op is AtomicOp.ADD and at.kind in "us" and at.size < 4:
        raise TypeError(f"atomic add is not defined for {at.name} (use 32 or 64 bits)")


# --------------------------------------------------------------------------- floats

_F32_MIN_NORMAL = np.float32(np.finfo(np.float32).tiny)


def flush_f32(x: np.ndarray) -> np.ndarray:
    """Subnormal float32 values to sign-preserving zero."""
    sub = (np.abs(x) < _F32_MIN_NORMAL) & (x != 0)
    if sub.any():
        x = np.where(sub, np.copysign(np.float32(0), x), x).astype(np.float32)
    return x


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 to bf16 bits, to nearest even; NaNs stay quiet NaNs."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    safe = np.where(nan, np.uint32(0), u)
    r = (safe + np.uint32(0x7FFF) + ((safe >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    r = np.where(nan, (u >> np.uint32(16)) | np.uint32(0x40), r)
    return r.astype(np.uint16)


def _bf16_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return f32_to_bf16(bf16_to_f32(a) + bf16_to_f32(b))


def _halves(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.uint32)
    return (x & np.uint32(0xFFFF)).astype(np.uint16), (x >> np.uint32(16)).astype(np.uint16)


def _join(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16))


def _f16x2_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    (al, ah), (bl, bh) = _halves(a), _halves(b)
    lo = (al.view(np.float16) + bl.view(np.float16)).view(np.uint16)
    hi = (ah.view(np.float16) + bh.view(np.float16)).view(np.uint16)
    return _join(lo, hi)


def _bf16x2_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    (al, ah), (bl, bh) = _halves(a), _halves(b)
    return _join(_bf16_add(al, bl), _bf16_add(ah, bh))


# --------------------------------------------------------------------------- one step

def step_function(op: AtomicOp, at: AtomicType, ftz: bool) -> Callable:
    """new = f(current, operand, compare) for one application, elementwise."""
    if op is AtomicOp.ADD:
        if at.kind in "us":
            return lambda cur, v, c: cur + v
        if at.kind == "f":
            if ftz:
                return lambda cur, v, c: flush_f32(flush_f32(cur) + flush_f32(v))
            return lambda cur, v, c: cur + v
        return {"bf16": lambda cur, v, c: _bf16_add(cur, v),
                "f16x2": lambda cur, v, c: _f16x2_add(cur, v),
                "bf16x2": lambda cur, v, c: _bf16x2_add(cur, v)}[at.kind]
    if op in (AtomicOp.MIN, AtomicOp.MAX):
        if at.kind == "bf16":
            fn = np.fmin if op is AtomicOp.MIN else np.fmax
            return lambda cur, v, c: _to_bf16_bits(fn(bf16_to_f32(cur), bf16_to_f32(v)))
        return lambda cur, v, c: _scan_ufunc(op, at)(cur, v)
    if op is AtomicOp.INC:
        return lambda cur, v, c: np.where(cur >= v, np.uint32(0), cur + np.uint32(1)).astype(np.uint32)
    if op is AtomicOp.DEC:
        return lambda cur, v, c: np.where((cur == 0) | (cur > v), v, cur - np.uint32(1)).astype(np.uint32)
    if op in (AtomicOp.AND, AtomicOp.OR, AtomicOp.XOR):
        return lambda cur, v, c: _scan_ufunc(op, at)(cur, v)
    if op is AtomicOp.EXCH:
        return lambda cur, v, c: v
    return lambda cur, v, c: np.where(cur == c, v, cur)


class _FloatExtremum:
    """fmin/fmax (a NaN operand yields the other) with PTX's signed-zero
    order, -0 < +0, which numpy's fmin/fmax ignore. Has the two ufunc
    entry points the atomics use: a binary call and `.at`."""

    def __init__(self, is_min: bool):
        self.is_min = is_min
        self.base = np.fmin if is_min else np.fmax

    def _zero_sign(self, neg_any, pos_any):
        return neg_any if self.is_min else ~pos_any

    def __call__(self, a, b):
        r = self.base(a, b)
        a, b = np.asarray(a), np.asarray(b)
        z = (a == 0) & (b == 0)
        if np.any(z):
            sa, sb = np.signbit(a), np.signbit(b)
            neg = self._zero_sign(sa | sb, ~sa | ~sb)
            r = np.where(z, np.where(neg, -0.0, 0.0).astype(r.dtype), r)
        return r

    def at(self, w, idx, vals) -> None:
        before = w[idx].copy()
        self.base.at(w, idx, vals)
        res = w[idx]
        zero = res == 0
        if not zero.any():
            return
        neg_any = np.zeros(w.shape, dtype=bool)
        pos_any = np.zeros(w.shape, dtype=bool)
        for cand in (before, vals):
            cz = (cand == 0) & zero
            np.logical_or.at(neg_any, idx[cz], np.signbit(cand[cz]))
            np.logical_or.at(pos_any, idx[cz], ~np.signbit(cand[cz]))
        targets = np.unique(idx[zero])
        neg = self._zero_sign(neg_any[targets], pos_any[targets])
        w[targets] = np.where(neg, -0.0, 0.0).astype(w.dtype)


_FMIN, _FMAX = _FloatExtremum(True), _FloatExtremum(False)


def _scan_ufunc(op: AtomicOp, at: AtomicType):
    if op is AtomicOp.MIN:
        return _FMIN if at.kind == "f" else np.minimum
    if op is AtomicOp.MAX:
        return _FMAX if at.kind == "f" else np.maximum
    return {AtomicOp.AND: np.bitwise_and, AtomicOp.OR: np.bitwise_or,
            AtomicOp.XOR: np.bitwise_xor, AtomicOp.ADD: np.add}[op]


def bit_type(at: AtomicType) -> AtomicType:
    """The unsigned view used where only bits matter (exch, cas)."""
    return AtomicType(at.name, np.dtype(f"u{at.size}"), "u")


def default_ftz(op: AtomicOp, at: AtomicType) -> bool:
    """PTX: atom/red .add.f32 flush subnormal inputs and results to zero."""
    return op is AtomicOp.ADD and at.kind == "f" and at.size == 4


# --------------------------------------------------------------------------- engine

@dataclass
class _Groups:
    order: np.ndarray     # lane indices sorted by element index (stable)
    starts: np.ndarray    # first sorted position of each group
    sizes: np.ndarray
    uniq: np.ndarray      # element index of each group

    @property
    def ends(self) -> np.ndarray:
        return self.starts + self.sizes


def stable_order(idx: np.ndarray) -> np.ndarray:
    """Stable argsort; numpy radix-sorts 16-bit keys, so small index spans
    take one or two O(n) radix passes instead of a comparison sort."""
    lo = int(idx.min())
    span = int(idx.max()) - lo
    if span < 1 << 16:
        return np.argsort((idx - lo).astype(np.uint16), kind="stable")
    if span < 1 << 32:
        k = (idx - lo).astype(np.uint32)
        first = np.argsort((k & np.uint32(0xFFFF)).astype(np.uint16), kind="stable")
        second = np.argsort((k[first] >> np.uint32(16)).astype(np.uint16), kind="stable")
        return first[second]
    return np.argsort(idx, kind="stable")


def _group(idx: np.ndarray) -> _Groups | None:
    """None when no two lanes collide."""
    n = idx.shape[0]
    if n > 1 and bool((idx[1:] > idx[:-1]).all()):
        return None
    order = stable_order(idx)
    s = idx[order]
    brk = np.flatnonzero(s[1:] != s[:-1]) + 1
    if brk.shape[0] == n - 1:
        return None
    starts = np.concatenate((np.zeros(1, dtype=np.intp), brk.astype(np.intp)))
    sizes = np.diff(np.append(starts, n))
    return _Groups(order, starts, sizes, s[starts])


def _segmented_scan(ufunc: np.ufunc, x: np.ndarray, gid: np.ndarray, maxg: int) -> np.ndarray:
    """Inclusive scan within groups of consecutive equal gid (Hillis-Steele)."""
    x = x.copy()
    d = 1
    while d < maxg:
        same = gid[d:] == gid[:-d]
        combined = ufunc(x[:-d], x[d:])
        x[d:] = np.where(same, combined, x[d:])
        d <<= 1
    return x


def atomic_update(words: np.ndarray, idx: np.ndarray, op: "str | AtomicOp", values: Any,
                  dtype: Any, compare: Any = None, ftz: bool | None = None) -> np.ndarray:
    """Apply one atomic per lane to words[idx], colliding lanes serialized
    in ascending lane order; returns the old value each lane observed."""
    op = parse_op(op)
    at = atomic_type(dtype)
    check_op_type(op, at)
    if ftz is None:
        ftz = default_ftz(op, at)
    if op in (AtomicOp.EXCH, AtomicOp.CAS) or at.kind in ("bf16", "f16x2", "bf16x2"):
        work = bit_type(at) if op in (AtomicOp.EXCH, AtomicOp.CAS) else at
    else:
        work = at
    if op is AtomicOp.CAS and compare is None:
        raise ValueError("atomic cas needs a compare array")
    n = idx.shape[0]
    vals = _operand(values, n, at, work, "values")
    cmp = _operand(compare, n, at, work, "compare") if op is AtomicOp.CAS else None
    w = words if words.dtype == work.storage else words.view(work.storage)
    if n == 0:
        return np.zeros(0, dtype=at.storage)
    step = step_function(op, work, ftz)
    g = _group(idx)
    if g is None:
        cur = w[idx]
        w[idx] = step(cur, vals, cmp)
        return cur.view(at.storage)
    v = vals[g.order]
    c = cmp[g.order] if cmp is not None else None
    init = w[g.uniq].copy()
    old_s, final = _grouped(op, work, step, init, v, c, g, ftz)
    w[g.uniq] = final
    old = np.empty_like(old_s)
    old[g.order] = old_s
    return old.view(at.storage)


def _operand(values: Any, n: int, at: AtomicType, work: AtomicType, what: str) -> np.ndarray:
    a = np.asarray(values)
    if a.ndim == 0:
        a = np.full(n, a)
    a = a.reshape(-1)
    if a.shape[0] != n:
        raise ValueError(f"{what} has {a.shape[0]} elements for {n} addresses")
    if a.dtype != at.storage:
        if a.dtype.itemsize == at.storage.itemsize and a.dtype.kind in "iu" and at.storage.kind in "iu":
            a = a.view(at.storage)
        else:
            a = a.astype(at.storage)
    return a.view(work.storage) if work.storage != at.storage else a


def _grouped(op: AtomicOp, at: AtomicType, step: Callable, init: np.ndarray, v: np.ndarray,
             c: np.ndarray | None, g: _Groups, ftz: bool) -> tuple[np.ndarray, np.ndarray]:
    ends = g.ends
    if op is AtomicOp.EXCH:
        old = np.empty_like(v)
        old[1:] = v[:-1]
        old[g.starts] = init
        return old, v[ends - 1].copy()
    if op is AtomicOp.ADD and at.kind in "us":
        u = v.view(np.dtype(f"u{at.size}"))
        cs = np.cumsum(u, dtype=u.dtype)
        excl = cs - u
        within = excl - np.repeat(excl[g.starts], g.sizes)
        old = np.repeat(init.view(u.dtype), g.sizes) + within
        final = old[ends - 1] + u[ends - 1]
        return old.view(at.storage), final.view(at.storage)
    if op in (AtomicOp.AND, AtomicOp.OR, AtomicOp.XOR, AtomicOp.MIN, AtomicOp.MAX):
        bf = at.kind == "bf16"
        xv, xi = (bf16_to_f32(v), bf16_to_f32(init)) if bf else (v, init)
        uf = _scan_ufunc(op, AtomicType("f32", np.dtype(np.float32), "f") if bf else at)
        gid = np.repeat(np.arange(g.sizes.shape[0]), g.sizes)
        incl = _segmented_scan(uf, xv, gid, int(g.sizes.max()))
        init_rep = np.repeat(xi, g.sizes)
        prev = np.empty_like(incl)
        prev[1:] = incl[:-1]
        old = uf(init_rep, prev)
        old[g.starts] = xi
        final = uf(xi, incl[ends - 1])
        if bf:
            return _to_bf16_bits(old), _to_bf16_bits(final)
        return old.astype(at.storage, copy=False), final.astype(at.storage, copy=False)
    old = np.empty_like(v)
    final = init.copy()
    todo = np.arange(g.sizes.shape[0])
    if op in (AtomicOp.INC, AtomicOp.DEC):
        uniform = np.minimum.reduceat(v, g.starts) == np.maximum.reduceat(v, g.starts)
        _inc_dec_closed_form(op, init, v, g, uniform, old, final)
        todo = np.flatnonzero(~uniform)
    if todo.shape[0]:
        _sequential(op, at, step, init, v, c, g, todo, old, final, ftz)
    return old, final


def _to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 values that came from bf16 back to their (exact) bits."""
    return (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def _inc_dec_closed_form(op: AtomicOp, init: np.ndarray, v: np.ndarray, g: _Groups,
                         uniform: np.ndarray, old: np.ndarray, final: np.ndarray) -> None:
    """inc/dec with one bound b per group cycle through 0..b: old values
    follow from the rank of the lane inside its group."""
    sel_lanes = np.repeat(uniform, g.sizes)
    if not sel_lanes.any():
        return
    rank = (np.arange(v.shape[0]) - np.repeat(g.starts, g.sizes)).astype(np.int64)
    x = np.repeat(init, g.sizes).astype(np.int64)
    b = v.astype(np.int64)
    m = b + 1
    if op is AtomicOp.INC:
        # x > b: the first lane sees x, then the counter restarts at 0.
        seq = np.where(x <= b, (x + rank) % m, (rank - 1) % m)
    else:
        seq = np.where(x <= b, (x - rank) % m, (b - (rank - 1)) % m)
    seq = np.where(rank == 0, x, seq)
    old[sel_lanes] = seq[sel_lanes].astype(np.uint32)
    last = g.ends - 1
    fin = np.asarray(step_function(op, AtomicType("u32", np.dtype(np.uint32), "u"), False)(
        old[last], v[last], None), dtype=np.uint32)
    final[uniform] = fin[uniform]


def _sequential(op: AtomicOp, at: AtomicType, step: Callable, init: np.ndarray, v: np.ndarray,
                c: np.ndarray | None, g: _Groups, todo: np.ndarray, old: np.ndarray,
                final: np.ndarray, ftz: bool) -> None:
    """Exact lane-order application for the groups in `todo`: rounds over the
    small ones, one pass per large one."""
    n = v.shape[0]
    limit = max(32, math.isqrt(n))
    sizes = g.sizes[todo]
    small = todo[sizes <= limit]
    large = todo[sizes > limit]
    if small.shape[0]:
        small = small[np.argsort(-g.sizes[small], kind="stable")]
        ssz = g.sizes[small]
        sst = g.starts[small]
        cur = init[small].copy()
        active = small.shape[0]
        for r in range(int(ssz[0])):
            while active and ssz[active - 1] <= r:
                active -= 1
            lanes = sst[:active] + r
            old[lanes] = cur[:active]
            cur[:active] = step(cur[:active], v[lanes], None if c is None else c[lanes])
        final[small] = cur
    for gi in large:
        s, e = int(g.starts[gi]), int(g.ends[gi])
        o, f = _one_group(op, at, step, init[gi], v[s:e], None if c is None else c[s:e], ftz)
        old[s:e] = o
        final[gi] = f


def _one_group(op: AtomicOp, at: AtomicType, step: Callable, x0: Any, v: np.ndarray,
               c: np.ndarray | None, ftz: bool) -> tuple[np.ndarray, Any]:
    m = v.shape[0]
    if op is AtomicOp.CAS:
        # Only successful compares change the word: jump from one to the next.
        out = np.empty_like(v)
        cur = x0
        pos = 0
        while pos < m:
            hits = np.flatnonzero(c[pos:] == cur)
            if hits.shape[0] == 0:
                out[pos:] = cur
                break
            j = pos + int(hits[0])
            out[pos:j + 1] = cur
            cur = v[j]
            pos = j + 1
        return out, cur
    if op is AtomicOp.ADD and at.kind in ("f", "f16x2"):
        if at.kind == "f16x2":
            seq = np.empty((m + 1, 2), dtype=np.float16)
            seq[0] = np.array([x0], dtype=np.uint32).view(np.float16)
            seq[1:] = np.ascontiguousarray(v).view(np.float16).reshape(m, 2)
            acc = np.add.accumulate(seq, axis=0, dtype=np.float16)
            bits = np.ascontiguousarray(acc).view(np.uint32).reshape(-1)
            return bits[:-1].copy(), bits[-1]
        seq = np.concatenate((np.array([x0], dtype=at.storage), v))
        if ftz:
            seq = flush_f32(seq)
        acc = np.add.accumulate(seq, dtype=at.storage)
        # With no subnormal partial sum, flushing results would change nothing.
        if not ftz or not ((np.abs(acc) < _F32_MIN_NORMAL) & (acc != 0)).any():
            old = acc[:-1].copy()
            old[0] = x0  # the first lane sees memory as it was, unflushed
            return old, acc[-1]
    # Generic exact fallback: one element at a time.
    out = np.empty_like(v)
    cur = np.array([x0], dtype=v.dtype)
    for k in range(m):
        out[k] = cur[0]
        cur = np.asarray(step(cur, v[k:k + 1], None if c is None else c[k:k + 1]), dtype=v.dtype)
    return out, cur[0]


# --------------------------------------------------------------------------- red

def reduce_update(words: np.ndarray, idx: np.ndarray, op: "str | AtomicOp", values: Any,
                  dtype: Any, ftz: bool | None = None) -> None:
    """`red`: the effect of atomic_update without old values, via ufunc.at
    where numpy's in-order unbuffered application is already exact."""
    op = parse_op(op)
    at = atomic_type(dtype)
    check_op_type(op, at)
    if op is AtomicOp.CAS:
        raise ValueError("red has no cas form")
    if ftz is None:
        ftz = default_ftz(op, at)
    n = idx.shape[0]
    if n == 0:
        return
    fast = (op in (AtomicOp.AND, AtomicOp.OR, AtomicOp.XOR, AtomicOp.MIN, AtomicOp.MAX)
            and at.kind in "usf") or (op is AtomicOp.ADD and at.kind in "us") \
        or (op is AtomicOp.ADD and at.kind == "f" and not ftz)
    if not fast:
        atomic_update(words, idx, op, values, at, None, ftz)
        return
    vals = _operand(values, n, at, at, "values")
    w = words if words.dtype == at.storage else words.view(at.storage)
    if op is AtomicOp.ADD and at.kind in "us":
        u = np.dtype(f"u{at.size}")
        np.add.at(w.view(u), idx, vals.view(u))
        return
    _scan_ufunc(op, at).at(w, idx, vals)
