"""Breakpoints as the user names them (an address, a kernel, a source
line), resolved to code addresses whenever code is loaded.

The one idea: a breakpoint is a *request* kept independent of any module;
resolution is a pure function of (breakpoint, loaded programs), re-run for
every breakpoint on every module load or unload, so a breakpoint set before
its kernel is loaded is simply pending (no addresses yet) and one whose
module is unloaded becomes pending again. The device only ever sees the
union of the enabled breakpoints' addresses. Conditions are evaluated
per lane where the device stops (`matching_lanes`), not here.

A line with no code moves to the next line that has some, and a line
whose code is split (a loop condition) gets one location per function, its
lowest address, as gdb does; a
kernel breakpoint stops at the first line of the body (after the
declaration line's prologue), as cuda-gdb's `break kernel` does.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from gpudbg.debug.backend import LaneCoords

Condition = Callable[[LaneCoords], Any]


@dataclass
class Breakpoint:
    id: int
    kind: str                       # "address" | "kernel" | "line"
    address: int | None = None
    kernel: str | None = None
    file: str | None = None
    line: int | None = None
    condition: Condition | None = None
    temporary: bool = False
    enabled: bool = True
    addresses: set[int] = field(default_factory=set)
    resolved_line: int | None = None   # where a line breakpoint landed
    hits: int = 0
    condition_text: str | None = None  # what the user typed, for listings

    @property
    def pending(self) -> bool:
        return not self.addresses

    def describe(self) -> str:
        if self.kind == "address":
            return f"*0x{self.address:x}"
        if self.kind == "kernel":
            return self.kernel or "?"
        return f"{self.file}:{self.line}"


class BreakpointTable:
    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.by_id: dict[int, Breakpoint] = {}

    def next_id(self) -> int:
        """The next number (watchpoints take theirs here too: one numbering)."""
        return next(self._ids)

    def add(self, kind: str, **fields: Any) -> Breakpoint:
        bp = Breakpoint(self.next_id(), kind, **fields)
        self.by_id[bp.id] = bp
        return bp

    def get(self, bp: "Breakpoint | int") -> Breakpoint:
        key = bp.id if isinstance(bp, Breakpoint) else int(bp)
        try:
            return self.by_id[key]
        except KeyError:
            raise KeyError(f"No breakpoint number {key}.") from None

    def remove(self, bp: "Breakpoint | int") -> Breakpoint:
        b = self.get(bp)
        del self.by_id[b.id]
        return b

    def all(self) -> list[Breakpoint]:
        return [self.by_id[k] for k in sorted(self.by_id)]

    def addresses(self) -> set[int]:
        out: set[int] = set()
        for bp in self.by_id.values():
            if bp.enabled:
                out |= bp.addresses
        return out

    def resolve(self, programs: list[Any], lines_of: Callable[[Any], Any]) -> None:
        """Recompute every breakpoint's addresses against the loaded programs."""
        for bp in self.by_id.values():
            bp.addresses = resolve_one(bp, programs, lines_of)

    def at(self, address: int) -> list[Breakpoint]:
        return [bp for bp in self.all() if bp.enabled and address in bp.addresses]


def resolve_one(bp: Breakpoint, programs: list[Any], lines_of: Callable[[Any], Any]) -> set[int]:
    out: set[int] = set()
    for prog in programs:
        if bp.kind == "address":
            if prog.pc_of_address(bp.address) is not None:
                out.add(bp.address)
        elif bp.kind == "kernel":
            for fname in functions_named(prog, bp.kernel):
                out.add(prog.code_address(lines_of(prog).function_body_pc(fname)))
        else:
            try:
                line, pcs = lines_of(prog).resolve_breakpoint(bp.file, bp.line)
            except ValueError:
                continue
            bp.resolved_line = line
            first: dict[int, int] = {}      # gdb: one location per function, its lowest address
            for p in pcs:
                f = int(prog.function_of_pc[p])
                first[f] = min(first.get(f, p), p)
            out |= {prog.code_address(p) for p in first.values()}
    return out


def functions_named(prog: Any, name: str) -> list[str]:
    """The functions of a program that `break name` means: the PTX name
    itself, else every C++ function whose Itanium-mangled name is `name`
    with any parameter list (`helper` -> `_Z6helperi`, `_Z6helperf`), or
    whose qualified name is `name` or ends in `::name` (gdb's wild match:
    `body` and `__main__::body` both mean Numba's `_ZN8__main__4bodyB2v1...`,
    but not its `..._ZN8__main__4bodyB2v1...Ei__exc_helper__`)."""
    def has_code(f: str) -> bool:
        info = prog.functions[f]
        return info.builtin is None and info.end_pc > info.entry_pc
    if name in prog.functions:
        return [name] if has_code(name) else []
    found = [f for f in prog.functions if names_function(f, name) and has_code(f)]
    # A mangled name plus "__suffix" is no C++ overload (no type encoding
    # starts with "_") but a compiler-made companion: Numba's `__exc_helper__`.
    return [f for f in found if not any(f != g and f.startswith(g + "__") for g in found)]


def names_function(linkage: str, name: str) -> bool:
    """Whether `break name` means the function whose PTX name is `linkage`."""
    qualified = qualified_name(linkage)
    return qualified is not None and (qualified == name or qualified.endswith("::" + name))


def qualified_name(linkage: str) -> str | None:
    """The C++ name (no parameters, templates or ABI tags) of an Itanium-
    mangled `linkage`: `_Z6helperi` -> `helper`, `_ZN2ns6kernelEPf` ->
    `ns::kernel`, Numba's `_ZN8__main__4bodyB2v1B...E5ArrayIiLi1E...` ->
    `__main__::body`; None for a name that is not mangled this way."""
    if not linkage.startswith("_Z"):
        return None
    i, nested = 2, linkage.startswith("_ZN")
    if nested:
        i = 3
        while i < len(linkage) and linkage[i] in "rVKRO":    # cv- and ref-qualifiers of a method
            i += 1
    parts: list[str] = []
    while i < len(linkage):
        tag = linkage[i] == "B"                 # an ABI tag: B<length><tag>, not part of the name
        j = i + 1 if tag else i
        k = j
        while k < len(linkage) and linkage[k].isdigit():
            k += 1
        if k == j:
            break
        n = int(linkage[j:k])
        if n == 0 or k + n > len(linkage):
            return None
        if not tag:
            parts.append(linkage[k:k + n])
        i = k + n
        if not nested and not (i < len(linkage) and linkage[i] == "B"):
            break
    return "::".join(parts) if parts else None


def matching_lanes(bps: list[Breakpoint], lanes: LaneCoords) -> tuple[np.ndarray, list[Breakpoint]]:
    """Which candidate lanes stop, and the breakpoints that stopped them.
    A condition that raises stops the lanes (gdb stops on an error in a
    condition so the user sees it)."""
    n = len(lanes)
    stop = np.zeros(n, dtype=bool)
    hit: list[Breakpoint] = []
    for bp in bps:
        if bp.condition is None:
            m = np.ones(n, dtype=bool)
        else:
            try:
                m = np.broadcast_to(np.asarray(bp.condition(lanes), dtype=bool), (n,))
            except Exception:
                m = np.ones(n, dtype=bool)
        if m.any():
            hit.append(bp)
            stop |= m
    return stop, hit
