"""Special registers in native code: the per-thread ones are arrays of the
wave's layout and the uniform ones values of the environment table
(sim/native/environment.py); every other special register (clocks, timers,
cluster and reserved-shared-memory registers) keeps the instruction
interpreted.
"""
from __future__ import annotations

from gpudbg.ptx import ir
from gpudbg.sim.native.emit import I32, I64, NotNative
from gpudbg.sim.native.environment import ENTRIES, ENV

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
    at = em.t
    if key.startswith("ctaid."):            # per resident block: index by the slot's block
        blocks = em.env_pointer(ENV["block_of"], I64)
        at = em.load_invariant(em.b.gep(blocks, [em.t], inbounds=True))
    return em.load_invariant(em.b.gep(base, [at], inbounds=True))
