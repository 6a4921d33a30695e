"""Data movement between registers: mov (incl. packing and unpacking
vectors into wider registers) and cvt.

mov copies bits: its result is always a fresh array, never an alias of the
source register, because a later partial write to one register must not
show through another. cvt delegates every rounding, saturation and width
rule to `gpudbg.sim.arith.convert`.
"""
from __future__ import annotations

import numpy as np

from gpudbg.ptx import ir
from gpudbg.ptx.types import unsigned_dtype
from gpudbg.sim.arith import convert as V
from gpudbg.sim.ops.base import Built, Mods, UnsupportedInstruction, op


@op("mov")
def build_mov(inst, tc) -> Built:
    m = Mods(inst)
    t = m.one_type()
    m.finish()
    dst, src = inst.operands[0], inst.operands[1]
    if isinstance(src, ir.Vector):
        return _pack(tc, t, dst, src)
    if isinstance(dst, ir.Vector):
        return _unpack(tc, t, dst, src)
    d = tc.writer(dst)
    a = tc.reader(src, t)

    def run(X, idx):
        v = a(X, idx)
        d(X, idx, v.copy() if isinstance(v, np.ndarray) else v)
    return Built(run)


def _pack(tc, t, dst, src: ir.Vector) -> Built:
    n = len(src.elements)
    part_bits = t.bits // n
    pdt = unsigned_dtype(part_bits)
    wdt = unsigned_dtype(t.bits)
    parts = [tc.reader_dtype(e, pdt) for e in src.elements]
    d = tc.writer(dst)

    def run(X, idx):
        acc = None
        for i, p in enumerate(parts):
            v = np.asarray(p(X, idx)).astype(wdt) << wdt.type(i * part_bits)
            acc = v if acc is None else acc | v
        d(X, idx, acc)
    return Built(run)


def _unpack(tc, t, dst: ir.Vector, src) -> Built:
    n = len(dst.elements)
    part_bits = t.bits // n
    pdt = unsigned_dtype(part_bits)
    wdt = unsigned_dtype(t.bits)
    a = tc.reader_dtype(src, wdt)
    outs = [tc.writer(e) for e in dst.elements]
    mask = wdt.type((1 << part_bits) - 1)

    def run(X, idx):
        v = np.asarray(a(X, idx))
        for i, w in enumerate(outs):
            w(X, idx, ((v >> wdt.type(i * part_bits)) & mask).astype(pdt))
    return Built(run)


@op("cvt")
def build_cvt(inst, tc) -> Built:
    m = Mods(inst)
    rnd = m.rounding()
    ftz = m.flag("ftz")
    sat = m.flag("sat")
    relu = m.flag("relu")
    m.flag("satfinite")
    ts = m.types()
    m.finish()
    if len(ts) != 2:
        raise UnsupportedInstruction("cvt needs a destination and a source type")
    dt, st = ts
    d = tc.writer(inst.operands[0])
    if dt.name in ("f16x2", "bf16x2", "e4m3x2", "e5m2x2") and len(inst.operands) == 3:
        a = tc.reader(inst.operands[1], st)
        b = tc.reader(inst.operands[2], st)

        def run2(X, idx):
            d(X, idx, V.cvt_pack(a(X, idx), b(X, idx), dt.name, rnd, relu=relu, sat=sat))
        return Built(run2)
    a = tc.reader(inst.operands[1], st)
    dname, sname = dt.name, st.name
    if dname == sname and rnd is None and not ftz and not sat and not relu:
        return Built(lambda X, idx: d(X, idx, np.array(a(X, idx), copy=True)))

    def run(X, idx):
        d(X, idx, V.cvt(a(X, idx), dname, sname, rnd=rnd, ftz=ftz, sat=sat, relu=relu))
    return Built(run)
