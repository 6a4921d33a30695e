"""The user's Python frames at an API call: the host site a launch, an
allocation or a free is reported at.

The one idea: a frame is the user's when its file lies outside gpudbg,
the standard library and installed packages (numba, cuda-python, numpy,
...), which is what compute-sanitizer's host backtrace "up to the driver
entry point" shows. Walking the frames costs a few microseconds per call,
so the engine records it for every launch. A launch records the frames
raw (`capture`: code objects and instruction offsets, no strings, not even
line numbers, which a frame computes by walking its code's line table)
and they are formatted only when a report reads them (`formatted`):
nearly every launch succeeds, and its site is never shown. A native
program's C frames are the sanitizer's business (sanitizer/sites.py), not
the engine's.
"""
from __future__ import annotations

import os
import sys

__all__ = ["python_frames", "capture", "formatted", "line_at"]

_ROOTS: tuple[str, ...] = ()
# The co_filenames seen so far, by verdict: a file's verdict never changes
# while the process runs (abspath resolves against the cwd of the first
# sighting, as the code object's own relative name does), and a launch walks
# the same few files every time; a library frame then costs one set test
_LIBRARY_FILE: set[str] = set()
_USER_FILE: set[str] = set()


def _library_roots() -> tuple[str, ...]:
    import sysconfig

    import gpudbg
    roots = {os.path.dirname(os.path.abspath(gpudbg.__file__))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.abspath(path))
    return tuple(r + os.sep for r in sorted(roots))


def capture(limit: int = 8, skip: int = 1) -> tuple:
    """The user's frames of the calling thread `skip` frames up, innermost
    first, as (code, instruction offset) pairs (at most the innermost
    `limit`): what python_frames shows, without making its strings or
    finding its lines."""
    global _ROOTS
    if not _ROOTS:
        _ROOTS = _library_roots()
    frames = []
    f = sys._getframe(skip)
    library, users = _LIBRARY_FILE, _USER_FILE
    want = limit if 0 < limit <= 64 else 64
    while True:
        try:
            while f.f_code.co_filename in library:
                f = f.f_back
        except AttributeError:          # f is None: past the outermost frame
            break
        path = f.f_code.co_filename
        if path not in users:           # first sighting of this file
            if path.startswith("<") or os.path.abspath(path).startswith(_ROOTS):
                library.add(path)
                continue
            users.add(path)
        frames.append((f.f_code, f.f_lasti))
        if len(frames) >= want:         # the innermost `limit` are all that is kept
            break
        f = f.f_back
    return tuple(frames)


def line_at(code, offset: int) -> int | None:
    """The source line of the instruction at byte `offset` of `code`, as a
    frame's f_lineno gives it there (None for an instruction of no line; a
    captured frame stands at a call, which has one)."""
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return None


def formatted(frames: tuple, limit: int = 8) -> list[str]:
    """A capture as 'file:line in function', outermost first (at most `limit`)."""
    out = [f"{code.co_filename}:{line_at(code, offset)} in {code.co_name}" for code, offset in reversed(frames)]
    return out[-limit:]


def python_frames(limit: int = 8) -> list[str]:
    """The user's frames of the calling thread, outermost first, as
    'file:line in function' (at most the innermost `limit`)."""
    return formatted(capture(limit, 2), limit)
