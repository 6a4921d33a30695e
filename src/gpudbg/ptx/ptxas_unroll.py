"""ptxas's loop unrolling, as far as register lifetimes see it: an
innermost loop of one basic block (it branches back to its own label)
that PTX does not mark `.pragma "nounroll"` is unrolled UNROLL_FACTOR
times, and the scheduler then issues the copies' loads together, so their
results are live at once.

Probe (ptxas -arch=sm_80, CUDA 13.0): a copy loop with a runtime trip
count, 1, 2, 4 or 8 `ld.global; st.shared` pairs per iteration, becomes a
main loop of 4 iterations' loads issued before their stores plus 2- and
1-iteration remainders (7, 14, 28, 56 LDGs in the SASS); with
`.pragma "nounroll"` the loop stays as written (4 LDGs for 4 pairs).

The copies are renamed (SSA-like: each copy's definitions get fresh names,
the last copy writes the loop's own registers so the back edge stays
right) and the inner exits are dropped, as in ptxas's main loop. It does
not model the remainder loops (they need fewer registers than the main
loop) nor unrolling of loops with several blocks or calls.
"""
from __future__ import annotations

import dataclasses

from . import ir
from .ptxas_schedule import split_operands

#: Copies of a loop body ptxas's main loop holds (probe above).
UNROLL_FACTOR = 4

#: Instructions whose presence keeps a loop as written: ptxas does not
#: duplicate barriers, calls or warp-synchronous collectives in our probes'
#: sense (conservative: they order everything around them anyway).
_KEEPS_LOOP = frozenset({"call", "bar", "barrier", "ret", "exit", "trap", "brx"})


def _rename(o, names: dict[str, str]):
    if isinstance(o, ir.Register):
        return dataclasses.replace(o, name=names.get(o.name, o.name))
    if isinstance(o, ir.Address):
        return dataclasses.replace(o, base=_rename(o.base, names)) if isinstance(o.base, ir.Register) else o
    if isinstance(o, ir.Vector):
        return dataclasses.replace(o, elements=tuple(_rename(e, names) for e in o.elements))
    if isinstance(o, ir.Negated):
        return dataclasses.replace(o, operand=_rename(o.operand, names))
    if isinstance(o, ir.PredicatePair):
        return dataclasses.replace(o, first=_rename(o.first, names), second=_rename(o.second, names))
    if isinstance(o, ir.ImageOperand):
        return dataclasses.replace(o, **{f: _rename(getattr(o, f), names) for f in ("handle", "sampler", "coords")
                                          if getattr(o, f) is not None})
    return o


def _copy(inst: ir.Instruction, uses: dict[str, str], defs: dict[str, str]) -> ir.Instruction:
    """The instruction reading `uses`' names and writing `defs`' names."""
    dests, _ = split_operands(inst)
    ops = list(inst.operands)
    for k, o in enumerate(ops):
        ops[k] = _rename(o, defs if k == 0 and dests else uses)
    guard = _rename(inst.guard, uses) if inst.guard is not None else None
    return dataclasses.replace(inst, operands=tuple(ops), guard=guard)


def _counted(body: list[ir.Instruction], predicate: str) -> bool:
    """Whether the loop's exit test compares an induction variable (stepped
    by a constant once per iteration) with a loop-invariant bound: only
    then does ptxas know the trip count to unroll with remainders (probe:
    the same copy loop with a runtime stride, or one that exits on an
    atomic's result, keeps one copy per iteration)."""
    defs: dict[str, list[ir.Instruction]] = {}
    for inst in body:
        for d in split_operands(inst)[0]:
            defs.setdefault(d, []).append(inst)
    test = defs.get(predicate, [])
    if len(test) != 1 or test[0].opcode != "setp" or len(test[0].operands) < 3:
        return False

    def induction(o) -> bool:
        if not isinstance(o, ir.Register) or len(defs.get(o.name, [])) != 1:
            return False
        step = defs[o.name][0]
        return (step.opcode in ("add", "sub") and step.guard is None and len(step.operands) == 3
                and isinstance(step.operands[1], ir.Register) and step.operands[1].name == o.name
                and isinstance(step.operands[2], ir.Immediate))

    def invariant(o) -> bool:
        return isinstance(o, ir.Immediate) or isinstance(o, ir.Register) and o.name not in defs

    a, b = test[0].operands[1], test[0].operands[2]
    return induction(a) and invariant(b) or induction(b) and invariant(a)


def unrolled(block: list[ir.Instruction], labels: list[str], words: dict[str, int],
             nounroll: bool) -> list[ir.Instruction]:
    """The block as ptxas's unrolled main loop has it, or the block itself
    when it is not an unrollable single-block loop. New names' sizes are
    added to `words`."""
    if nounroll or not block or not labels:
        return block
    last = block[-1]
    target = next((o.name for o in last.operands if isinstance(o, ir.LabelRef)), None)
    if last.opcode != "bra" or last.guard is None or target not in labels:
        return block
    body = block[:-1]
    if any(i.opcode in _KEEPS_LOOP for i in body) or not _counted(body, last.guard.name):
        return block
    out: list[ir.Instruction] = []
    current: dict[str, str] = {}
    for c in range(UNROLL_FACTOR):
        final = c == UNROLL_FACTOR - 1
        for inst in body:
            dests, _ = split_operands(inst)
            fresh = {d: d if final else f"{d}~u{c}" for d in dests}
            for d, n in fresh.items():
                words.setdefault(n, words.get(d, 0))
            out.append(_copy(inst, current, fresh))
            current.update({d: n for d, n in fresh.items()})
    out.append(_copy(last, current, {}))
    return out
