"""Registers a segment recomputes instead of loading (rematerialization).

A thread's index, its block's shared-memory address and the like are
written once near a kernel's entry and read after every barrier. Each
later segment used to load them from their arrays, one per thread slot of
the wave: a tree reduction's near-empty levels spent most of their time
streaming those arrays (a megabyte each for a wave of 270,000 threads)
to find the few threads whose guard holds.

The one idea: a register with exactly one instruction that may write it,
where that instruction is unguarded, lowered, has no memory effect and
reads only immediates, special registers, symbols and other such
registers, holds the same value for a thread from the moment it ran until
the thread exits. A segment entered only after that instruction ran on
every path from the function's entry (a forward must-be-defined dataflow)
may emit the instruction again where the value is first read, instead of
loading it. Its array is still written by the definition and keeps what
the interpreter, a fallback re-run, a coredump and the differential test
read; only the loads go.

A debugger may write a register while a wave is stopped: when it writes
one of these, the rest of that wave runs interpreted
(debug_views.write_register), so the written value is the one used.

What it deliberately does not do: recompute floats (their NaN
canonicalization is tracked separately), chains of more than
MAX_INSTRUCTIONS instructions, anything in a recursive function (a nested
activation's registers are saved and restored behind the analysis's
back), instructions with a carry (.cc, addc: hidden state), or anything
in loop regions.
"""
from __future__ import annotations

from gpudbg.sim.native.liveness import _named, _successors

MAX_INSTRUCTIONS = 6      # a recomputed value's instructions, its operands' included
# the must-be-defined bitsets hold one bit per candidate per pc: a program
# whose product exceeds this (8 MB) recomputes nothing (a -G library
# module of 100,000 instructions and 20,000 candidates would need 250 MB)
MAX_BITS = 1 << 26
_CARRY = ("addc", "subc", "madc")


class Recomputable:
    """A program's recomputable registers and where they are defined."""

    def __init__(self, program, lowered: dict):
        self.defs: dict[int, int] = {}        # register -> pc of its only definition
        self._must: list[int] = []            # per pc: bits (in `_bit` order) of the defined candidates
        candidates = self._candidates(program, lowered)
        self._bit = {k: i for i, k in enumerate(candidates)}
        if candidates and len(candidates) * len(program.code) <= MAX_BITS:
            self._must = _must_be_defined(program, {self._bit[k]: pc for k, (pc, _) in candidates.items()})
            self.defs = _closed(candidates, self._must, self._bit)

    def at(self, pc: int) -> dict[int, int]:
        """register -> definition pc, for the registers every path to pc defined."""
        if not self.defs:
            return {}
        must, bit = self._must[pc], self._bit
        return {k: d for k, d in self.defs.items() if must >> bit[k] & 1}

    @staticmethod
    def _candidates(program, lowered: dict) -> dict[int, tuple[int, frozenset]]:
        """register -> (pc, registers it reads) for registers with one
        possible writer that is a pure, unguarded, lowered instruction."""
        writers: dict[int, list[int]] = {}
        for c in program.code:
            got = lowered.get(c.pc)
            if got is not None:
                written = got[2]
            else:
                bits = _named(program, c)
                written = [k for k in range(bits.bit_length()) if bits >> k & 1]
            for k in written:
                writers.setdefault(k, []).append(c.pc)
        out = {}
        for k, pcs in writers.items():
            if len(pcs) != 1:
                continue
            c = program.code[pcs[0]]
            effect, reads, writes = lowered.get(c.pc, ("", (), ()))
            if (effect != "none" or set(writes) != {k} or k in reads or c.inst.guard is not None
                    or c.inst.opcode in _CARRY or "cc" in c.inst.modifiers
                    or program.reg_dtypes[k].kind not in "iub" or c.function in program.recursive):
                continue
            out[k] = (c.pc, frozenset(reads))
        return out


def recomputed_registers(program) -> frozenset:
    """The registers native code may recompute instead of reading (either
    variant), computed once per program: a debugger that writes one of them
    turns native code off for the rest of that wave (debug_views.py)."""
    got = getattr(program, "native_recomputed", None)
    if got is None:
        from gpudbg.sim.native.segments import plan_segments
        _, lowered, _ = plan_segments(program, if_convert=True)
        got = program.native_recomputed = frozenset(Recomputable(program, lowered).defs)
    return got


def _must_be_defined(program, defs: dict[int, int]) -> list[int]:
    """Per pc: bitset of the definitions in `defs` (bit -> pc) that every
    path from its function's entry to the pc has run (an intersection
    over the control-flow graph's predecessors; the entries start empty)."""
    code = program.code
    n = len(code)
    kill: dict[int, int] = {}
    for bit, pc in defs.items():
        kill[pc] = kill.get(pc, 0) | 1 << bit
    labels_of: dict[str, list[int]] = {}
    for (fname, _), pc in program._labels.items():
        labels_of.setdefault(fname, []).append(pc)
    succ = [[s for s in _successors(program, c, labels_of) if s < n] for c in code]
    top = (1 << len(defs)) - 1
    must = [top] * n
    entries = {f.entry_pc for f in program.functions.values() if f.entry_pc < n}
    for pc in entries:
        must[pc] = 0
    changed = True
    while changed:
        changed = False
        for pc in range(n):
            out = must[pc] | kill.get(pc, 0)
            for s in succ[pc]:
                new = must[s] & out
                if new != must[s]:
                    must[s] = new
                    changed = True
    return must


def _closed(candidates: dict, must: list[int], bit: dict[int, int]) -> dict[int, int]:
    """The candidates whose operands are candidates defined before them,
    with at most MAX_INSTRUCTIONS instructions in all: register -> pc."""
    alive = dict(candidates)
    changed = True
    while changed:
        changed = False
        for k, (pc, reads) in list(alive.items()):
            if any(j not in alive or not must[pc] >> bit[j] & 1 for j in reads):
                del alive[k]
                changed = True
    sizes: dict[int, int] = {}      # exact counts only
    visiting: set[int] = set()

    def size(k: int, budget: int = MAX_INSTRUCTIONS) -> int:
        """k's instructions, or more than `budget` once they exceed it
        (so the recursion is never deeper than MAX_INSTRUCTIONS)."""
        got = sizes.get(k)
        if got is not None:
            return got
        if budget <= 0 or k in visiting:     # (a cycle: only in unreachable code)
            return budget + 1
        visiting.add(k)
        total = 1
        for j in alive[k][1]:
            total += size(j, budget - total)
            if total > budget:
                break
        visiting.discard(k)
        if total <= budget:
            sizes[k] = total
        return total
    return {k: pc for k, (pc, _) in alive.items() if size(k) <= MAX_INSTRUCTIONS}
