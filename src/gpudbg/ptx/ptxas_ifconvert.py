"""ptxas's if-conversion, as far as register lifetimes see it: a short
region a forward branch skips (`@%p bra L; ...; L:`) becomes predicated
straight-line code, so the scheduler may issue its loads together with
those of the code around it (a transpose's four guarded tile loads are
all in flight at once).

Probes (ptxas -arch=sm_80, CUDA 13.0, counting predicated instructions
and conditional BRAs in the SASS): runs of two to eight guarded
`ld.global; st.shared` regions are all predicated, up to 17 instructions
a region, not at 25; a single guarded region holding a load keeps its
branch, a single guarded store is predicated. IFCONV_MAX_INSTRUCTIONS
sits between the two measured sizes.

It converts only regions of plain instructions (no label inside, no
branch, call, barrier or instruction already guarded) and leaves those
just before a return, which ptxas turns into an early `@P EXIT`; it does
not model select instructions or larger regions' other forms.
"""
from __future__ import annotations

import dataclasses

from . import ir

#: Largest region (PTX instructions) ptxas predicates: 17 was, 25 was not.
IFCONV_MAX_INSTRUCTIONS = 20

_NOT_PREDICATED = frozenset({"bra", "brx", "call", "ret", "exit", "trap", "bar", "barrier"})
_LOADS = frozenset({"ld", "ldu", "tex", "tld4", "suld", "atom", "ldmatrix", "wmma"})


@dataclasses.dataclass
class _Region:
    branch: int             # index of `@%p bra L` in the body
    label: int              # index of `L:`
    loads: bool


def _regions(body: list[ir.Statement], targeted: dict[str, int]) -> list[_Region]:
    out = []
    for n, s in enumerate(body):
        if not (isinstance(s, ir.Instruction) and s.opcode == "bra" and s.guard is not None):
            continue
        target = next((o.name for o in s.operands if isinstance(o, ir.LabelRef)), None)
        end = n + 1
        while end < len(body) and isinstance(body[end], ir.Instruction):
            end += 1
        region = body[n + 1:end]
        if (end >= len(body) or not isinstance(body[end], ir.Label) or body[end].name != target
                or targeted.get(target) != 1 or not region or len(region) > IFCONV_MAX_INSTRUCTIONS
                or any(i.opcode in _NOT_PREDICATED or i.guard is not None for i in region)
                or _exits(body, end + 1)):
            continue
        out.append(_Region(n, end, any(i.opcode in _LOADS for i in region)))
    return out


def _exits(body: list[ir.Statement], n: int) -> bool:
    """Whether the code at `n` returns at once: ptxas then branches out
    with an early `@P EXIT` rather than predicating the region (probes)."""
    while n < len(body) and isinstance(body[n], ir.Label):
        n += 1
    return n < len(body) and isinstance(body[n], ir.Instruction) and body[n].opcode in ("ret", "exit")


def _straight(body: list[ir.Statement], start: int, stop: int) -> bool:
    """Only plain instructions between two indices (a run of regions)."""
    return all(isinstance(s, ir.Instruction) and s.opcode not in _NOT_PREDICATED for s in body[start:stop])


def if_converted(body: list[ir.Statement]) -> list[tuple[int, ir.Statement]]:
    """(index in `body`, statement) of the body as ptxas predicates it:
    each converted region's branch and label removed and its instructions
    guarded by the branch's negated condition."""
    targeted: dict[str, int] = {}
    for s in body:
        if isinstance(s, ir.Instruction):
            for o in s.operands:
                if isinstance(o, ir.LabelRef):
                    targeted[o.name] = targeted.get(o.name, 0) + 1
    regions = _regions(body, targeted)
    # a region with a load converts only in a run of two or more
    in_run = [False] * len(regions)
    for k in range(len(regions) - 1):
        if _straight(body, regions[k].label + 1, regions[k + 1].branch):
            in_run[k] = in_run[k + 1] = True
    drop: set[int] = set()
    guard: dict[int, ir.Instruction] = {}
    for r, run in zip(regions, in_run):
        if r.loads and not run:
            continue
        drop |= {r.branch, r.label}
        guard.update({n: body[r.branch] for n in range(r.branch + 1, r.label)})   # type: ignore[misc]
    out: list[tuple[int, ir.Statement]] = []
    for n, s in enumerate(body):
        if n in drop:
            continue
        if n in guard:
            bra = guard[n]
            s = dataclasses.replace(s, guard=bra.guard, guard_negated=not bra.guard_negated)  # type: ignore[arg-type]
        out.append((n, s))
    return out
