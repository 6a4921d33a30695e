"""The one exception type the devcoredump parser raises, always with a line.

Damaged input must never surface as IndexError or ValueError from deep in
the parser: callers (the CLI, fuzz tests) rely on catching exactly this and
showing `line N: what is wrong`. Display-engine dumps get their own subclass
so a tool can route them elsewhere instead of reporting corruption. It is
a ReaderError (gpudbg/reader_error.py), like the other readers' errors.
"""
from __future__ import annotations

from gpudbg.reader_error import ReaderError


class DevcoredumpError(ReaderError, ValueError):
    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.reason = message


class DpuDumpError(DevcoredumpError):
    """A drm/msm display (DPU/SDE) snapshot, which is not a GPU dump."""
