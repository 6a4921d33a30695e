"""GPU crash dumps: the drm/msm devcoredump text format (write, parse,
analyze) and the per-dword ascii85 codec it uses.

Everything here works on files and in-memory models only; nothing imports
the simulator, so reading a dump from a real device never needs a GPU.
Every writer puts its files on disk the same way (files.py): atomically,
mode 0600, never over an existing file; every reader raises its own
ReaderError subclass (gpudbg/reader_error.py) on damage.
"""
from __future__ import annotations


def dump_notes(details: dict, prefix: str = "=========") -> str:
    """The lines a printed fault report ends with to say where its GPU
    coredump went, or why writing it failed ('' when none was asked for).
    Devcoredumps announce themselves on stderr when written (capture.py)."""
    out = ""
    if details.get("coredump"):
        out += f"\n{prefix}     coredump written to {details['coredump']}"
    if details.get("coredump_error"):
        out += f"\n{prefix}     coredump failed: {details['coredump_error']}"
    return out
