"""Where a CUDA C++ source passed to gpudbg.compile sits in the user's .py
file, so reports, the line table and the debugger name `prog.py:LINE`
instead of the string's own line numbers.

The one idea: the caller's file is parsed with `ast`, and a string
constant whose value is exactly the source gives the line its text starts
on; `#line N "prog.py"` in front of the source then makes NVRTC (and so
the `.loc` line table, its diagnostics and __LINE__) count in the .py file.
A source built at run time (an f-string, a concatenation, text read from a
file) matches no constant and keeps its own name; so does a source whose
file cannot be read (the interactive prompt, `python -c`).

It does not follow a source through variables of other modules: only the
file of the first frame outside gpudbg is searched.
"""
from __future__ import annotations

import ast
import functools
import os
import sys
from dataclasses import dataclass

__all__ = ["StringOrigin", "find", "with_line_directive"]


@dataclass(frozen=True)
class StringOrigin:
    """The .py file holding a source string and the line its text starts on."""

    file: str
    line: int


@functools.lru_cache(maxsize=64)
def _constants(path: str, mtime_ns: int) -> dict[str, tuple[int, ...]]:
    """Each string constant of a file -> the lines it starts on (cached by
    the file's modification time, so an edited file is parsed afresh)."""
    with open(path, "rb") as f:
        tree = ast.parse(f.read(), filename=path)
    out: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" in node.value:
            out.setdefault(node.value, []).append(node.lineno)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def _caller() -> tuple[str, int] | None:
    """The file and line of the first frame outside the gpudbg package."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    f = sys._getframe(1)
    while f is not None:
        path = f.f_code.co_filename
        if not path.startswith("<") and not os.path.abspath(path).startswith(package):
            return path, f.f_lineno
        f = f.f_back
    return None


def find(source: str) -> StringOrigin | None:
    """The .py file and line where `source` is written as a literal, if the
    caller wrote it as one; None otherwise. With several identical
    literals, the last one before the calling line (a module-level SOURCE
    defined above its use), else the first."""
    caller = _caller()
    if caller is None or not caller[0].endswith(".py"):
        return None
    path, call_line = caller
    try:
        lines = _constants(os.path.abspath(path), os.stat(path).st_mtime_ns).get(source)
    except (OSError, SyntaxError, ValueError):
        return None
    if not lines:
        return None
    before = [n for n in lines if n <= call_line]
    return StringOrigin(path, before[-1] if before else lines[0])


def with_line_directive(source: str, origin: StringOrigin) -> str:
    """The source with a #line directive placing its first line where the
    literal starts (a triple-quoted literal's text starts on the line of
    its opening quotes)."""
    name = origin.file.replace("\\", "\\\\").replace('"', '\\"')
    return f'#line {origin.line} "{name}"\n{source}'
