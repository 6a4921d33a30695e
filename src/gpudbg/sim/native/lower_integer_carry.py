"""Native lowerings of the carry chain: add.cc, addc{.cc}, sub.cc, subc{.cc},
mad{.lo,.hi}.cc and madc{.cc}, with CC.CF in the wave's carry array
(X.carry, uint32 per thread slot; env entry "carry").

The one idea: the carry is per-thread state like a register, but it does
not take part in the segment's scratch/commit protocol, so a native
instruction may only read a carry that the same thread wrote earlier in
the same segment: a carry-in that comes from before the segment stays
interpreted (NotNative). Then a failed check, which makes the interpreter
re-run the segment from its entry registers, finds every carry it reads
rewritten first by that re-run, exactly as the native run wrote it.
`carry_in_native` decides this from the code alone, conservatively: the
nearest earlier unguarded carry writer must be reachable through
natively lowered, non-storing instructions with no block leader between
(the segment planner's cut rules, sim/native/segments.py), so the two are
always in one segment; guarded writers on the way may or may not run, and
either way the value read was written inside the segment.

Semantics are arith.integer.add_cc/sub_cc/mad_cc: the sum/difference of
the unsigned views plus/minus (CC.CF & 1), carry = either partial step
wrapped; only 32- and 64-bit types (others raise there at run time).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from gpudbg.sim.native import intmath as M
from gpudbg.sim.native.emit import I32, NotNative, lower
from gpudbg.sim.native.environment import ENV

_CARRY_WRITERS = ("add", "sub", "addc", "subc", "mad", "madc")
_CARRY_READERS = ("addc", "subc", "madc")


def writes_carry(inst) -> bool:
    return inst.opcode in _CARRY_WRITERS and "cc" in inst.modifiers


def _carry_pointer(em):
    return em.b.gep(em.env_pointer(ENV["carry"], I32), [em.t], inbounds=True)


def carry_in_native(program, pc: int) -> bool:
    """Whether the carry that the reader at `pc` sees is always written
    earlier in its own native segment (see the module docstring)."""
    memo = program.__dict__.setdefault("_native_carry_in", {})
    got = memo.get(pc)
    if got is None:
        got = memo[pc] = _carry_defined_in_segment(program, pc)
    return got


def _carry_defined_in_segment(program, pc: int) -> bool:
    from gpudbg.sim.native.emit import probe
    from gpudbg.sim.native.segments import SegmentPlan
    code, leader = program.code, program.leader
    j = pc
    while j > 0:
        if leader[j]:
            return False                   # a block starts between writer and reader
        j -= 1
        c = code[j]
        if c.built.run is None:
            return False                   # control instruction: the segment ends there
        found = probe(program, c, SegmentPlan.empty())
        if found is None or found[0].effect == "write":
            return False                   # interpreted, or a store/atomic that ends the segment
        if writes_carry(c.inst) and c.inst.guard is None:
            return True                    # (a guarded writer may not run: look further back)
    return False


def _check_width(t) -> None:
    if t.bits not in (32, 64) or t.kind not in "usb":
        raise NotNative(f"carry arithmetic on .{t.name}")


def _read_carry_in(em, ty: L.IntType):
    """_carry_arg: CC.CF & 1 in the operands' width; NotNative unless it
    was written earlier in this segment."""
    if not carry_in_native(em.program, em.current.pc):
        raise NotNative("a carry-in from before the segment")
    cin = em.b.load(_carry_pointer(em))
    return M.extend(em.b, em.b.and_(cin, I32(1)), ty.width, False)


def _add_carry(em, x, y, cin, subtract: bool):
    """(result, carry-out as i32 0/1): add_cc / sub_cc of the unsigned views."""
    b = em.b
    if subtract:
        t = b.sub(x, y)
        s = b.sub(t, cin) if cin is not None else t
        out = b.icmp_unsigned("<", x, y)
        if cin is not None:
            out = b.or_(out, b.icmp_unsigned("<", t, cin))
    else:
        t = b.add(x, y)
        s = b.add(t, cin) if cin is not None else t
        out = b.icmp_unsigned("<", t, x)
        if cin is not None:
            out = b.or_(out, b.icmp_unsigned("<", s, t))
    return s, b.zext(out, I32)


def add_sub_cc(em, inst, t, carry_in: bool, carry_out: bool = True) -> None:
    """add.cc/sub.cc (carry_in False) and addc/subc{.cc}."""
    _check_width(t)
    d, a, b = inst.operands
    x, y = em.read(a, t.dtype), em.read(b, t.dtype)
    cin = _read_carry_in(em, x.type) if carry_in else None
    s, cout = _add_carry(em, x, y, cin, subtract=inst.opcode in ("sub", "subc"))
    em.write(d, s, t.dtype)
    if carry_out:
        em.b.store(cout, _carry_pointer(em))


def mad_cc(em, inst, t, mode: str, carry_in: bool, carry_out: bool) -> None:
    """mad{c}.{lo,hi}{.cc}: the lo or hi half of a*b, plus c (plus CC.CF)."""
    if mode not in ("lo", "hi"):
        raise NotNative(f"{inst.full_opcode}: carry arithmetic with .{mode}")
    _check_width(t)
    d, a, b, c = inst.operands
    x, y, z = em.read(a, t.dtype), em.read(b, t.dtype), em.read(c, t.dtype)
    p = em.b.mul(x, y) if mode == "lo" else M.mul_high(em.b, x, y, np.dtype(t.dtype).kind == "i")
    cin = _read_carry_in(em, x.type) if carry_in else None
    s, cout = _add_carry(em, p, z, cin, subtract=False)
    em.write(d, s, t.dtype)
    if carry_out:
        em.b.store(cout, _carry_pointer(em))


@lower("addc", "subc", types="iub")
def addc_subc(em, inst):
    m = em.mods(inst)
    cc = m.flag("cc")
    t = m.one_type()
    m.finish()
    add_sub_cc(em, inst, t, carry_in=True, carry_out=cc)
