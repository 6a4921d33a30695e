"""Comparisons and selects: setp, set, selp, slct.

The comparison itself is `gpudbg.sim.arith.compare.compare`, which knows
ordered/unordered float rules; this module adds the optional boolean
combination with a third predicate (`setp.lt.and`), the two-result form
`p|q` (q gets the complement) and the result encodings of `set`.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES
from gpudbg.sim.arith import compare as C
from gpudbg.sim.arith import floating as F
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op

CMP_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
           "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
BOOL_OPS = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
PRED = PTX_TYPES["pred"]


def _comparison(inst, tc, m: Mods, t, ftz):
    cmp = m.take(*CMP_OPS)
    if cmp is None:
        raise UnsupportedInstruction("missing comparison operator")
    bool_op = m.take(*BOOL_OPS)
    a = tc.reader(inst.operands[1], t)
    b = tc.reader(inst.operands[2], t)
    c = tc.reader(inst.operands[3], PRED) if bool_op else None
    tname = t.name
    flush = ftz and t.is_float

    combine = BOOL_OPS[bool_op] if bool_op else None

    def compute(X, idx):
        """-> (raw comparison, combined-with-c function or None)."""
        x, y = a(X, idx), b(X, idx)
        if flush:
            x, y = F.flush_subnormals(x), F.flush_subnormals(y)
        r = C.compare(x, y, cmp, tname)
        if c is None:
            return r, None
        cv = c(X, idx)
        return r, (lambda v: combine(v, cv))
    return compute


@op("setp")
def build_setp(inst, tc) -> Built:
    m = Mods(inst)
    ftz = m.flag("ftz")
    ops_mods = [x for x in m.left]
    t_list = [PTX_TYPES[x] for x in ops_mods if x in PTX_TYPES]
    if len(t_list) != 1:
        raise UnsupportedInstruction("setp needs one type")
    t = t_list[0]
    m.left.remove(t.name)
    compute = _comparison(inst, tc, m, t, ftz)
    m.finish()
    dst = inst.operands[0]
    if isinstance(dst, ir.PredicatePair):
        p = tc.writer(dst.first)
        q = tc.writer(dst.second)

        def run(X, idx):
            r, comb = compute(X, idx)
            if comb is None:
                p(X, idx, r)
                q(X, idx, ~r)
            else:
                p(X, idx, comb(r))
                q(X, idx, comb(~r))
        return Built(run)
    p = tc.writer(dst)

    def run1(X, idx):
        r, comb = compute(X, idx)
        p(X, idx, r if comb is None else comb(r))
    return Built(run1)


_SET_TRUE = {"bf16": np.uint16(0x3F80), "f16x2": np.uint32(0x3C003C00), "bf16x2": np.uint32(0x3F803F80)}


@op("set")
def build_set(inst, tc) -> Built:
    m = Mods(inst)
    ftz = m.flag("ftz")
    ts = [PTX_TYPES[x] for x in m.left if x in PTX_TYPES]
    if len(ts) != 2:
        raise UnsupportedInstruction("set needs a destination and a source type")
    dt, st = ts
    m.left.remove(dt.name)
    m.left.remove(st.name) if st.name in m.left else None
    compute = _comparison(inst, tc, m, st, ftz)
    m.finish()
    d = tc.writer(inst.operands[0])
    # true is 1.0 for a floating-point destination (bf16 and the packed x2
    # types are held as raw bits: 0x3F80, and 1.0 in each half), all ones for
    # an integer one; false is 0
    one = _SET_TRUE.get(dt.name)
    if one is None:
        one = np.array(-1).astype(dt.dtype) if dt.kind in ("u", "s", "b") else dt.dtype.type(1.0)
    zero = dt.dtype.type(0)

    def run(X, idx):
        r, comb = compute(X, idx)
        if comb is not None:
            r = comb(r)
        d(X, idx, np.where(r, one, zero).astype(dt.dtype))
    return Built(run)


@op("selp")
def build_selp(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], t)
    b = tc.reader(inst.operands[2], t)
    c = tc.reader(inst.operands[3], PRED)
    dt = t.dtype

    def run(X, idx):
        d(X, idx, np.where(c(X, idx), a(X, idx), b(X, idx)).astype(dt, copy=False))
    return Built(run)


@op("slct")
def build_slct(inst, tc) -> Built:
    m = Mods(inst)
    ftz = m.flag("ftz")
    ts = m.types()
    m.finish()
    if len(ts) != 2:
        raise UnsupportedInstruction("slct needs two types")
    dt, ct = ts
    d = tc.writer(inst.operands[0])
    a = tc.reader(inst.operands[1], dt)
    b = tc.reader(inst.operands[2], dt)
    c = tc.reader(inst.operands[3], ct)

    def run(X, idx):
        cv = c(X, idx)
        if ftz and ct.is_float:
            cv = F.flush_subnormals(cv)
        d(X, idx, np.where(cv >= 0, a(X, idx), b(X, idx)).astype(dt.dtype, copy=False))
    return Built(run)
