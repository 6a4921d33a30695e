"""One bounds check for a run of shared- or local-memory loads off one
base register: `ld.shared.f32 %f, [%r9+64*k]` for k = 0..15.

A segment checks every access (aligned, below the block's or thread's
limit); an unrolled shared-memory tile loop spent more of its time on
these checks than on its loads and multiply-adds. When a segment loads
several times from `[%r + c]` with the same register %r, not written in
the segment from the first of them on, the same access size s and constant offsets c >= 0 that are
multiples of s, the first of those loads checks the whole span instead:
%r aligned to s, %r <= limit and limit - %r >= the largest c + s. That
implies each load's own check (base + c aligned, base + c + s <= limit),
so the others skip theirs; when it fails although the first load alone
would not have, the segment hands the selection to the interpreter, which
reports exactly as always (a failed check never means more than that).

Only unguarded loads outside an if body are grouped (they run for every
thread of the segment, so the first dominates the others). What it
deliberately does not do: group stores or atomics, symbol-based or
generic addresses, or loads whose register the segment writes after
the group's first load.
"""
from __future__ import annotations

import re

from gpudbg.ptx import ir
from gpudbg.ptx.types import PTX_TYPES

SPACES = ("shared", "local")
_VECTOR = re.compile(r"v(\d+)$")


class Group:
    """Loads sharing one combined check: `first` pc checks `span` bytes."""

    __slots__ = ("key", "first", "span", "size")

    def __init__(self, key, first: int, size: int):
        self.key, self.first, self.size, self.span = key, first, size, 0


def _load_shape(inst) -> tuple[str, int] | None:
    """(space, bytes) of a plain `ld.<space>[.vN].<type>`, else None."""
    if inst.opcode != "ld" or inst.guard is not None:
        return None
    mods = inst.modifiers
    space = next((m for m in mods if m in SPACES), None)
    if space is None:
        return None
    count, size = 1, None
    for m in mods:
        v = _VECTOR.match(m)
        if v:
            count = int(v.group(1))
        elif m in PTX_TYPES:
            size = PTX_TYPES[m].size
    if size is None or size <= 0:
        return None
    return space, size * count


def plan(program, compiled: list, last_write: dict | None, if_branches=()) -> dict[int, tuple[Group, int]]:
    """{pc: (its group, its constant offset)} for the grouped loads of a
    segment's instructions (`last_write`: register -> the last pc of the
    segment writing it; None: unknown, nothing grouped), leaving out the
    loads of its if bodies (`if_branches`: (pc of the branch, L) pairs)."""
    if last_write is None:
        return {}
    bodies = [(int(lo), int(hi)) for lo, hi in if_branches]
    groups: dict[tuple, Group] = {}
    members: dict[int, tuple[Group, int]] = {}
    for c in compiled:
        if any(lo < c.pc < hi for lo, hi in bodies):
            continue
        shape = _load_shape(c.inst)
        if shape is None or len(c.inst.operands) < 2:
            continue
        addr = c.inst.operands[1]
        if not isinstance(addr, ir.Address) or not isinstance(addr.base, ir.Register):
            continue
        space, size = shape
        off = addr.offset
        if off < 0 or off % size:
            continue
        fn = program.functions[c.function].ir
        found = program._reg_index.get((fn.name, addr.base.name))
        if found is None or last_write.get(found, -1) >= c.pc:
            continue            # written at or after this load: the group's base would not be one value
        key = (space, found, size)
        g = groups.get(key)
        if g is None:
            g = groups[key] = Group(key, c.pc, size)
        g.span = max(g.span, off + size)
        members[c.pc] = (g, off)
    counts: dict[int, int] = {}
    for g, _ in members.values():
        counts[id(g)] = counts.get(id(g), 0) + 1
    return {pc: m for pc, m in members.items() if counts[id(m[0])] > 1}     # a group of one gains nothing
