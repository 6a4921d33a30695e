"""Special registers in native code: the per-thread ones are arrays of the
wave's layout and the uniform ones values of the environment table
(sim/native/environment.py); every other special register (clocks, timers,
cluster and reserved-shared-memory registers) keeps the instruction
interpreted.
"""
from __future__ import annotations

from llvmlite import ir as L

from gpudbg.ptx import ir
from gpudbg.sim.native.emit import I32, I64, NotNative
from gpudbg.sim.native.environment import ENTRIES, ENV

_DERIVED = {"tid.x", "tid.y"}     # computed from the slot number where the block shape allows

_SPECIALS = ("tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z", "laneid", "warpid", "smid",
             "ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y", "nctaid.z", "nwarpid", "nsmid")
_KIND = {name: kind for name, kind, _ in ENTRIES if name in _SPECIALS}


def read_special(em, sreg: ir.SpecialRegister):
    """The register's value for this thread, as i32 (all are 32-bit)."""
    key = sreg.name.lstrip("%") + (f".{sreg.component}" if sreg.component else "")
    kind = _KIND.get(key)
    if kind is None:
        raise NotNative(f"special register {sreg.name}")
    if kind == "value":
        return em.b.trunc(em.env(ENV[key]), I32)
    base = em.env_pointer(ENV[key], I32)
    if key.startswith("ctaid."):            # per resident block: index by the slot's block
        return em.load_invariant(em.b.gep(base, [slot_block(em)], inbounds=True))
    if key in _DERIVED:
        return _tid(em, key, base)
    return em.load_invariant(em.b.gep(base, [em.t], inbounds=True))


def _from_slot(em, computed, usable, array, elem) -> L.Value:
    """`computed` where `usable` (i1, the same for every thread), else the
    array's element for this slot. A branch, not a select: its condition
    is the same for the whole call, so LLVM's loop unswitching gives the
    thread loop a copy for each case (jit.py), and the copy for a regular
    block shape neither tests it nor streams the array."""
    b = em.b
    value = b.trunc(computed, elem) if elem != I64 else computed
    before = b.block
    with b.if_then(b.not_(usable)):
        loaded = em.load_invariant(b.gep(array, [em.t], inbounds=True))
        after_load = b.block
    phi = b.phi(elem)
    phi.add_incoming(value, before)
    phi.add_incoming(loaded, after_load)
    return phi


def slot_block(em) -> L.Value:
    """The wave-local block index of this thread's slot (i64):
    slot >> log2(slots_per_block) when that is a power of two, else
    block_of[slot]."""
    b = em.b
    shift = em.env(ENV["slot_shift"])
    usable = b.icmp_signed(">=", shift, I64(0))
    return _from_slot(em, b.lshr(em.t, b.and_(shift, I64(63))), usable,
                      em.env_pointer(ENV["block_of"], I64), I64)


def _tid(em, key: str, array) -> L.Value:
    b = em.b
    if key == "tid.x":
        mask = em.env(ENV["tidx_mask"])
        computed = b.and_(em.t, mask)
    else:
        mask = em.env(ENV["tidy_mask"])
        computed = b.and_(b.lshr(em.t, b.and_(em.env(ENV["tidy_shift"]), I64(63))), mask)
    return _from_slot(em, computed, b.icmp_signed(">=", mask, I64(0)), array, I32)
