"""Helpers for the PTX front-end tests: paths and cached parses of the
checked-in PTX fixtures (the tests never run NVRTC themselves)."""
from __future__ import annotations

from pathlib import Path

from gpudbg.ptx import ir, parse_file

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ARCHS = ("sm80", "sm90")

_CACHE: dict[Path, ir.Module] = {}


def load(stem: str, arch: str = "sm80") -> ir.Module:
    """Parse `fixtures/<stem>.<arch>.ptx` (or `fixtures/<stem>` if it names a
    .ptx file) once per test session; tests must not mutate the result."""
    path = FIXTURES / stem if stem.endswith(".ptx") else FIXTURES / f"{stem}.{arch}.ptx"
    if path not in _CACHE:
        _CACHE[path] = parse_file(path)
    return _CACHE[path]
