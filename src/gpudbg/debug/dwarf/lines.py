"""The source line table of a loaded program, from the PTX `.loc`
directives the parser attached to each instruction.

NVVM leaves `.debug_line` to ptxas and writes the same information as
`.loc file line col` (with `-lineinfo` and with `-G`), so the table is built
directly over the simulator's pcs. The one idea for source stepping: an
instruction *starts a line* when its (file, line) differs from the previous
instruction's in the same function, or it is a function's first
instruction; a `file:line` breakpoint resolves to all pcs that start that
line (a loop header line has several), and `step`/`next` stop at the next
pc that starts a line. Line 0 is NVVM's "no source line" (code the compiler
made up) and never starts a line.

It does not know about calls or stack frames; the stepper combines this
table with call depth.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LineEntry:
    """The source position of one instruction."""

    pc: int
    file: str
    line: int
    col: int
    is_stmt: bool
    inlined_at: tuple[str, int, int] | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class LineTable:
    """pc -> LineEntry and file:line -> pcs for one Program."""

    def __init__(self, program):
        self.program = program
        module = program.module
        self._entries: list[LineEntry | None] = []
        self._starts: dict[tuple[str, int], list[int]] = {}
        prev_key, prev_fn = None, None
        for c in program.code:
            li = c.inst.line_info
            if li is None:
                self._entries.append(None)
                prev_key, prev_fn = None, c.function
                continue
            file = module.files.get(li.file_index, f"<file {li.file_index}>")
            key = (file, li.line)
            new_fn = c.function != prev_fn
            stmt = li.line > 0 and (key != prev_key or new_fn)
            inl = None
            if li.inlined_at is not None:
                at = li.inlined_at
                inl = (module.files.get(at.file_index, f"<file {at.file_index}>"), at.line, at.col)
            self._entries.append(LineEntry(c.pc, file, li.line, li.col, stmt, inl))
            if stmt:
                self._starts.setdefault(key, []).append(c.pc)
            prev_key, prev_fn = key, c.function

    def __len__(self) -> int:
        return sum(e is not None for e in self._entries)

    def at(self, pc: int) -> LineEntry | None:
        """The source position of pc; None without line info (or for a pc
        outside the program)."""
        if 0 <= pc < len(self._entries):
            return self._entries[pc]
        return None

    def is_stmt(self, pc: int) -> bool:
        e = self.at(pc)
        return e is not None and e.is_stmt

    @property
    def files(self) -> list[str]:
        return sorted({f for f, _ in self._starts})

    def _match_file(self, file: str) -> str:
        if any(f == file for f in self.files):
            return file
        base = [f for f in self.files if _path_suffix(f, file)]
        if len(base) == 1:
            return base[0]
        if len(base) > 1:
            raise ValueError(f"source file {file!r} is ambiguous: {', '.join(base)}")
        raise ValueError(f"no line information for source file {file!r} (known: {', '.join(self.files) or 'none'})")

    def pcs_for_line(self, file: str, line: int) -> list[int]:
        """The pcs that start `file:line`, in address order (one per code
        segment of the line). The file may be given by base name. An
        unknown file raises ValueError; a line without code gives []."""
        return list(self._starts.get((self._match_file(file), line), []))

    def resolve_breakpoint(self, file: str, line: int) -> tuple[int, list[int]]:
        """As a debugger moves a breakpoint on a line without code: the
        first line at or after `line` (in the same file) that has code, and
        its pcs. Raises ValueError when no later line has code."""
        f = self._match_file(file)
        later = sorted(ln for (ff, ln) in self._starts if ff == f and ln >= line)
        if not later:
            raise ValueError(f"no code at or after {file}:{line}")
        return later[0], list(self._starts[(f, later[0])])

    def lines_of(self, file: str) -> list[int]:
        f = self._match_file(file)
        return sorted(ln for (ff, ln) in self._starts if ff == f)

    def function_body_pc(self, function: str) -> int:
        """Where `break function` (and a step into it) stops: the first pc
        that starts a line other than the function's opening line (past the
        parameter loads NVVM attributes to the declaration line). A function
        written on one line has no other line: there its body starts at the
        first column past the loads' (NVVM puts them at column 0). The entry
        pc if neither exists."""
        info = self.program.functions[function]
        lo, hi = info.entry_pc, info.end_pc
        if lo >= hi:
            raise ValueError(f"function {function} has no code")
        first = self.at(lo)
        for pc in range(lo, hi):
            e = self.at(pc)
            if e is not None and e.is_stmt and (first is None or e.line != first.line or e.file != first.file):
                return pc
        if first is not None:
            for pc in range(lo, hi):
                e = self.at(pc)
                if e is not None and (e.file, e.line) == (first.file, first.line) and e.col != first.col:
                    return pc
        return lo

    def next_stmt(self, pc: int) -> int | None:
        """The next pc after `pc` in address order (same function) that
        starts a line; the straight-line successor for source stepping."""
        fn = self.program.code[pc].function if 0 <= pc < len(self.program.code) else None
        for q in range(pc + 1, len(self._entries)):
            if self.program.code[q].function != fn:
                return None
            if self.is_stmt(q):
                return q
        return None


def _path_suffix(a: str, b: str) -> bool:
    """Whether one path is the other's trailing components (`k.cu` and
    `/src/k.cu`, `src/k.cu` and `/home/u/src/k.cu`)."""
    pa = [p for p in a.replace("\\", "/").split("/") if p not in ("", ".")]
    pb = [p for p in b.replace("\\", "/").split("/") if p not in ("", ".")]
    n = min(len(pa), len(pb))
    return n > 0 and pa[-n:] == pb[-n:]
