"""Warp-level instructions: shfl.sync, vote.sync, match.sync, redux.sync,
activemask.

Threads that execute one of these together are the threads the scheduler
selected at this pc, which for a warp are its converged lanes. Per-warp
results come from bincount / ufunc.at over the warp number `slot // 32`
(padding lanes make every warp exactly 32 slots), so no loop runs per warp
or per lane. A source lane outside the executing set supplies whatever its
register holds, as undefined-behaviour PTX allows.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op

U32 = PTX_TYPES["u32"]
PRED = PTX_TYPES["pred"]
WARP = 32


def _slots(X, idx):
    return X.all_slots if idx is None else idx


def _lane_bits(X, slots):
    return (np.uint64(1) << (slots & 31).astype(np.uint64))


def _per_warp_or(X, slots, bits):
    """OR of `bits` (uint64, < 2**32) over the lanes of each warp,
    returned per element of slots."""
    w = slots >> 5
    sums = np.bincount(w, weights=bits.astype(np.float64), minlength=X.n // WARP)
    return sums.astype(np.uint64)[w].astype(np.uint32)


def _sync_info(inst, tc, mask_operand: int) -> dict:
    """What analysis tools need of a .sync instruction (sim/instrument.py):
    its name and the reader of its member mask."""
    if "sync" not in inst.modifiers:
        return {}
    ops = inst.operands
    mask = tc.reader(ops[mask_operand], U32) if len(ops) > mask_operand else None
    return {"sync_op": f"{inst.opcode}.sync", "sync_mask": mask}


def _member(X, idx, mreader):
    if mreader is None:
        return None
    return np.broadcast_to(np.asarray(mreader(X, idx)).astype(np.uint32), (X.count(idx),))


@op("activemask")
def build_activemask(inst, tc) -> Built:
    m = Mods(inst)
    m.types()
    m.finish()
    d = tc.writer(inst.operands[0])

    def run(X, idx):
        s = _slots(X, idx)
        d(X, idx, _per_warp_or(X, s, _lane_bits(X, s)))
    return Built(run)


@op("vote")
def build_vote(inst, tc) -> Built:
    m = Mods(inst)
    m.flag("sync")
    mode = m.take("all", "any", "uni", "ballot")
    m.types()
    m.finish()
    if mode is None:
        raise UnsupportedInstruction("vote needs .all/.any/.uni/.ballot")
    d = tc.writer(inst.operands[0])
    p = tc.reader(inst.operands[1], PRED)
    mreader = tc.reader(inst.operands[2], U32) if len(inst.operands) > 2 else None

    def run(X, idx):
        s = _slots(X, idx)
        bits = _lane_bits(X, s)
        pv = np.broadcast_to(np.asarray(p(X, idx)), s.shape)
        ballot = _per_warp_or(X, s, np.where(pv, bits, np.uint64(0)))
        mem = _member(X, idx, mreader)
        if mem is not None:
            ballot = ballot & mem
        if mode == "ballot":
            d(X, idx, ballot)
            return
        active = _per_warp_or(X, s, bits)
        if mem is not None:
            active = active & mem
        if mode == "all":
            d(X, idx, ballot == active)
        elif mode == "any":
            d(X, idx, ballot != 0)
        else:
            d(X, idx, (ballot == active) | (ballot == 0))
    return Built(run, info=_sync_info(inst, tc, 2))


@op("shfl")
def build_shfl(inst, tc) -> Built:
    m = Mods(inst)
    m.flag("sync")
    mode = m.take("up", "down", "bfly", "idx")
    t = m.one_type()
    m.finish()
    if mode is None:
        raise UnsupportedInstruction("shfl needs .up/.down/.bfly/.idx")
    dst = inst.operands[0]
    if isinstance(dst, ir.PredicatePair):
        d, pw = tc.writer(dst.first), tc.writer(dst.second)
    else:
        d, pw = tc.writer(dst), None
    src = inst.operands[1]
    a_full = tc.reader(src, t)  # read for every slot: sources may be outside idx
    b = tc.reader(inst.operands[2], U32)
    c = tc.reader(inst.operands[3], U32)

    def run(X, idx):
        s = _slots(X, idx)
        lane = (s & 31).astype(np.int64)
        bval = np.asarray(b(X, idx)).astype(np.int64) & 31
        cval = np.asarray(c(X, idx)).astype(np.int64)
        seg = (cval >> 8) & 31
        clamp = cval & 31
        max_lane = (lane & seg) | (clamp & ~seg)
        min_lane = lane & seg
        if mode == "up":
            j = lane - bval
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bval
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bval
            ok = j <= max_lane
        else:
            j = min_lane | (bval & ~seg)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        source = (s - (s & 31)) + j
        full = a_full(X, None)
        v = full[source] if np.ndim(full) else np.full(len(s), full)
        d(X, idx, v)
        if pw is not None:
            pw(X, idx, np.broadcast_to(ok, s.shape).copy())
    return Built(run, info=_sync_info(inst, tc, 4))


@op("match")
def build_match(inst, tc) -> Built:
    m = Mods(inst)
    m.flag("sync")
    mode = m.take("any", "all")
    t = m.one_type()
    m.finish()
    dst = inst.operands[0]
    if isinstance(dst, ir.PredicatePair):
        d, pw = tc.writer(dst.first), tc.writer(dst.second)
    else:
        d, pw = tc.writer(dst), None
    a = tc.reader(inst.operands[1], t)
    mreader = tc.reader(inst.operands[2], U32)

    def run(X, idx):
        s = _slots(X, idx)
        v = np.broadcast_to(np.asarray(a(X, idx)), s.shape).astype(np.uint64)
        w = s >> 5
        # group lanes by (warp, value)
        order = np.lexsort((v, w))
        ws, vs = w[order], v[order]
        new = np.ones(len(s), dtype=bool)
        new[1:] = (ws[1:] != ws[:-1]) | (vs[1:] != vs[:-1])
        gid_sorted = np.cumsum(new) - 1
        gid = np.empty_like(gid_sorted)
        gid[order] = gid_sorted
        bits = _lane_bits(X, s).astype(np.float64)
        gmask = np.bincount(gid, weights=bits).astype(np.uint64)[gid].astype(np.uint32)
        mem = _member(X, idx, mreader)
        gmask = gmask & mem
        if mode == "any":
            d(X, idx, gmask)
            return
        active = _per_warp_or(X, s, _lane_bits(X, s)) & mem
        same = gmask == active
        d(X, idx, np.where(same, active, np.uint32(0)))
        if pw is not None:
            pw(X, idx, same)
    return Built(run, info=_sync_info(inst, tc, 2))


# the forms the ISA defines: integer ops on .u32/.s32, bitwise on .b32, and
# (sm_100a) .min/.max on .f32 with the optional .abs and .NaN qualifiers
_REDUX_TYPES = {"add": ("u32", "s32"), "min": ("u32", "s32", "f32"), "max": ("u32", "s32", "f32"),
                "and": ("b32",), "or": ("b32",), "xor": ("b32",)}


_NEG_ZERO_KEY = -1e-300   # below +0.0 and above every negative float32


def _redux_float(d, a, opname: str, absolute: bool, nan: bool):
    """redux.sync.min/max.f32: without .NaN a NaN input is ignored (the
    result is NaN only when every input is), with .NaN any NaN input makes
    the result the canonical NaN; .abs reduces the magnitudes. -0.0 orders
    below +0.0 as in min/max.f32."""
    pick = np.minimum if opname == "min" else np.maximum
    canonical = np.array(0x7FFFFFFF, dtype=np.uint32).view(np.float32)[()]

    def run(X, idx):
        s = _slots(X, idx)
        v = np.broadcast_to(np.asarray(a(X, idx)), s.shape).astype(np.float32)
        if absolute:
            v = np.abs(v)
        w = s >> 5
        nw = X.n // WARP
        isnan = np.isnan(v)
        # order -0.0 below +0.0: compare (value, sign) by nudging through the bits
        key = np.where(np.signbit(v) & (v == 0), _NEG_ZERO_KEY, v.astype(np.float64))
        fill = np.inf if opname == "min" else -np.inf
        acc = np.full(nw, fill, dtype=np.float64)
        pick.at(acc, w[~isnan], key[~isnan])
        seen = np.bincount(w[~isnan], minlength=nw) > 0
        anynan = np.bincount(w[isnan], minlength=nw) > 0
        r = np.where(acc == _NEG_ZERO_KEY, -0.0, acc).astype(np.float32)
        r = np.where(seen, r, canonical)
        if nan:
            r = np.where(anynan, canonical, r)
        d(X, idx, r[w].astype(np.float32))
    return run


@op("elect")
def build_elect(inst, tc) -> Built:
    """elect.sync d|p, membermask: the active lane with the lowest lane id
    among the threads of membermask is the leader; every executing thread
    gets its lane id in d and p true in the leader only."""
    m = Mods(inst)
    if "sync" not in inst.modifiers:
        raise UnsupportedInstruction("elect needs .sync")
    m.finish()
    dest = inst.operands[0]
    if not isinstance(dest, ir.PredicatePair):
        raise UnsupportedInstruction("elect.sync takes a destination pair d|p")
    d = tc.writer(dest.first)
    p = tc.writer(dest.second)
    mask = tc.reader(inst.operands[1], U32)

    def run(X, idx):
        s = _slots(X, idx)
        lanes = (s & 31).astype(np.uint64)
        member = (np.broadcast_to(np.asarray(mask(X, idx)).astype(np.uint64), s.shape) >> lanes) & np.uint64(1)
        w = s >> 5
        nw = X.n // WARP
        lowest = np.full(nw, 32, dtype=np.int64)
        inside = member.astype(bool)
        np.minimum.at(lowest, w[inside], (s & 31)[inside].astype(np.int64))
        leader = lowest[w]
        d(X, idx, np.where(leader < 32, leader, 0).astype(np.uint32))
        p(X, idx, (s & 31) == leader)
    return Built(run, info=_sync_info(inst, tc, 1))


@op("redux")
def build_redux(inst, tc) -> Built:
    m = Mods(inst)
    m.flag("sync")
    opname = m.take("add", "min", "max", "and", "or", "xor")
    absolute = m.flag("abs")
    nan = m.flag("NaN")
    t = m.one_type()
    m.finish()
    if opname is None:
        raise UnsupportedInstruction("redux.sync needs an operation (.add .min .max .and .or .xor)")
    if t.name not in _REDUX_TYPES[opname]:
        raise UnsupportedInstruction(f"redux.sync.{opname} takes "
                                     + " or ".join("." + n for n in _REDUX_TYPES[opname]) + f", not .{t.name}")
    if (absolute or nan) and t.name != "f32":
        raise UnsupportedInstruction(".abs and .NaN apply to redux.sync.min/max.f32 only")
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], t)
    dt = t.dtype
    if dt.kind == "f":
        return Built(_redux_float(d, a, opname, absolute, nan), info=_sync_info(inst, tc, 2))
    ufunc = {"min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor}.get(opname)
    init = {"min": np.iinfo(dt).max if dt.kind in "ui" else None,
            "max": np.iinfo(dt).min if dt.kind in "ui" else None,
            "and": dt.type(-1) if dt.kind == "i" else np.iinfo(dt).max if dt.kind == "u" else None,
            "or": 0, "xor": 0}.get(opname)

    def run(X, idx):
        s = _slots(X, idx)
        v = np.broadcast_to(np.asarray(a(X, idx)), s.shape).astype(dt)
        w = s >> 5
        nw = X.n // WARP
        if opname == "add":
            acc = np.zeros(nw, dtype=np.uint64)
            np.add.at(acc, w, v.astype(np.int64).astype(np.uint64))
            r = acc.astype(dt)
        else:
            acc = np.full(nw, init, dtype=dt)
            ufunc.at(acc, w, v)
            r = acc
        d(X, idx, r[w])
    return Built(run, info=_sync_info(inst, tc, 2))
