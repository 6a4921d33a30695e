"""The one exception the PTX front end raises on bad input.

Every syntax or reference error carries the PTX file name, 1-based line and
column and the offending source line, so a user sees the same
`file:line:col: message` a compiler would print, with a caret under the
column. The parser never lets any other exception escape on bad text. It is
a ReaderError (gpudbg/reader_error.py), like the dump readers' errors.
"""
from __future__ import annotations

from gpudbg.reader_error import ReaderError


class PTXParseError(ReaderError):
    """A PTX text could not be parsed (or referenced something undeclared)."""

    def __init__(self, file: str, line: int, col: int, message: str,
                 source_line: str | None = None) -> None:
        self.file = file
        self.line = line
        self.col = col
        self.column = col
        self.message = message
        self.source_line = source_line
        super().__init__(str(self))

    def __str__(self) -> str:
        head = f"{self.file}:{self.line}:{self.col}: {self.message}"
        if self.source_line is None:
            return head
        text = self.source_line.expandtabs(1).rstrip()
        caret = " " * max(0, self.col - 1) + "^"
        return f"{head}\n    {text}\n    {caret}"

    def __reduce__(self):
        return (type(self), (self.file, self.line, self.col, self.message, self.source_line))
