"""The common base of the errors gpudbg's file readers raise on damaged or
foreign input: PTX (PTXParseError), devcoredumps (DevcoredumpError), GPU
coredumps (CoredumpError and the ELF layer's ElfError) and compile-cache
entries (CacheEntryError).

The one idea: a reader turns every kind of damage into its own subclass of
ReaderError carrying where it is (file, line and column for text, byte
offset or section for binary files), so a caller that shows a file to a
user (the CLI, the debugger, a fuzz test) catches exactly one type and
prints one line; anything else that escapes a reader is a bug. It does not
format the message for a particular tool: each subclass keeps its own
`str()` (a compiler-style `file:line:col: ...`, a devcoredump's `line N:
...`).
"""
from __future__ import annotations


class ReaderError(Exception):
    """Input a gpudbg reader cannot read, with where the problem is."""

    file: str | None = None
    line: int | None = None      # 1-based, text formats
    column: int | None = None    # 1-based, text formats
    offset: int | None = None    # byte offset, binary formats

    def location(self) -> str:
        """`file:line:col`, `file: offset 0x..`, or what of it is known."""
        if self.line is not None:
            pos = f"{self.line}:{self.column}" if self.column is not None else str(self.line)
            return f"{self.file}:{pos}" if self.file else f"line {pos}"
        if self.offset is not None:
            return f"{self.file}: offset 0x{self.offset:x}" if self.file else f"offset 0x{self.offset:x}"
        return self.file or ""
