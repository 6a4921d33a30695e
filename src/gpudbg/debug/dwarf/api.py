"""DebugInfo: the source-level view of one loaded program, by pc.

It ties the three parts together: the line table (from `.loc`, always
there when the PTX has line info), and, for `-G` PTX, the embedded DWARF
assembled against the program's code addresses and read into functions,
scopes and variables. The one idea: everything is keyed by the
simulator's pc (or code address, `program.code_address(pc)`), so a
debugger stopped at a warp's pc asks `variables_at(pc)` and gets, innermost
scope first, each visible variable with the Location valid *at that pc*.

It does not read thread state; `frame_offset` turns a local-depot location
into the byte offset in the function's local frame, which is all the
debugger needs to read the value from a thread's local memory.
"""
from __future__ import annotations

from dataclasses import dataclass

from gpudbg.ptx.types import PTX_TYPES

from .assemble import Assembled, assemble, symbols_of
from .demoted import demoted_shared
from .lines import LineTable
from .model import AddressSpace, Location, LocationKind, Scope, Subprogram, Variable
from .reader import Reader


@dataclass(frozen=True)
class VisibleVariable:
    """A variable in scope at a pc. `location` is None where the variable
    is not available at this pc; `shadowed` marks an outer variable hidden
    by an inner one of the same name; `depth` is 0 for the innermost
    scope, and -1 for compile-unit globals."""

    variable: Variable
    location: Location | None
    depth: int
    shadowed: bool = False

    @property
    def name(self) -> str:
        return self.variable.name


class DebugInfo:
    """Source-level debug information of one simulator Program."""

    def __init__(self, program):
        self.program = program
        module = program.module
        self.lines = LineTable(program)
        if module.debug_sections:
            self.assembled = assemble(module, symbols_of(program))
        else:
            self.assembled = Assembled({})
        sizes = {}
        for v in module.globals.values():
            if v.name in program.symbols and v.type in PTX_TYPES:
                n = v.element_count or 0
                sizes[v.name] = (program.symbols[v.name], PTX_TYPES[v.type].size * (v.vector or 1) * n)
        self.units = Reader(module, self.assembled, sizes).read()
        self.subprograms: list[Subprogram] = [sp for u in self.units for sp in u.subprograms]
        self._add_demoted()

    def _add_demoted(self) -> None:
        """Kernel-local __shared__ arrays NVVM left out of the DWARF (demoted.py)."""
        if not self.program.shared_vars:
            return
        from gpudbg.compiler import source_line
        for u in self.units:
            for sp in u.subprograms:
                info = self.program.functions.get(sp.linkage_name)
                if info is None:
                    continue
                lines = [e.line for e in (self.lines.at(pc) for pc in range(info.entry_pc, info.end_pc))
                         if e is not None]
                last = max(lines, default=sp.decl_line or 0)
                sp.scope.variables.extend(demoted_shared(sp, self.program.shared_vars, u.types,
                                                         source_line, last))

    @property
    def has_variables(self) -> bool:
        """Whether the module carries DWARF (compiled with -G)."""
        return bool(self.units)

    def address(self, pc: int) -> int:
        return self.program.code_address(pc)

    def function_at(self, pc: int) -> Subprogram | None:
        """The DWARF function whose code holds pc."""
        a = self.address(pc)
        for sp in self.subprograms:
            if sp.low_pc <= a < sp.high_pc:
                return sp
        return None

    def function(self, name: str) -> Subprogram:
        """By source or PTX (linkage) name; a source name shared by
        overloads is ambiguous and raises ValueError, as does an unknown one."""
        exact = [sp for sp in self.subprograms if sp.linkage_name == name]
        if exact:
            return exact[0]
        by_src = [sp for sp in self.subprograms if sp.name == name]
        if len(by_src) == 1:
            return by_src[0]
        if by_src:
            raise ValueError(f"function name {name!r} is ambiguous: "
                             f"{', '.join(sp.linkage_name for sp in by_src)}")
        raise ValueError(f"no debug information for function {name!r}")

    def scopes_at(self, pc: int) -> list[Scope]:
        """The scopes holding pc, innermost first, ending with the function."""
        sp = self.function_at(pc)
        if sp is None:
            return []
        a = self.address(pc)
        chain = [sp.scope]
        while True:
            inner = next((c for c in chain[-1].children if c.contains(a)), None)
            if inner is None:
                return chain[::-1]
            chain.append(inner)

    def variables_at(self, pc: int) -> list[VisibleVariable]:
        """Visible variables at pc, innermost scope first (parameters with
        the function scope), then compile-unit globals."""
        a = self.address(pc)
        out: list[VisibleVariable] = []
        seen: set[str] = set()
        for depth, scope in enumerate(self.scopes_at(pc)):
            for v in scope.variables:
                out.append(VisibleVariable(v, v.location_at(a), depth, v.name in seen))
            seen |= {v.name for v in scope.variables}
        for u in self.units:
            for v in u.globals:
                out.append(VisibleVariable(v, v.location_at(a), -1, v.name in seen))
        return out

    def lookup(self, name: str, pc: int) -> VisibleVariable | None:
        """What `print name` means at pc: the innermost visible variable."""
        return next((v for v in self.variables_at(pc) if v.name == name and not v.shadowed), None)

    def frame_offset(self, location: Location, function: str) -> int:
        """The byte offset in `function`'s local-memory frame of a LOCAL
        memory location naming one of its `.local` variables."""
        if location.kind is not LocationKind.MEMORY or location.space is not AddressSpace.LOCAL \
                or location.symbol is None:
            raise ValueError(f"{location} is not a location in a function's local memory")
        info = self.program.functions.get(function)
        if info is None:
            raise ValueError(f"unknown function {function!r}")
        base = info.local_offsets.get(location.symbol)
        if base is None:
            raise ValueError(f"{location.symbol} is not a .local variable of {function}")
        return base + location.offset
