"""cuda-gdb's register numbering over the PTX registers of a function.

cuda-gdb (and CUDBG's readRegister) speak of 32-bit R registers and
predicate P registers; the simulator has PTX registers of any width. The
one idea, shared with the coredump writer (dump/coredump/snapshot.py):
the running function's PTX registers in declaration order take
consecutive R numbers, a 64-bit register two (low word first), 8/16/32-bit
ones one; predicates take P0, P1, ... Registers past R254 get no number
(-1). Everything here is a pure function of the lane's RegisterValues.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gpudbg.debug.backend import RegisterValue

MAX_R = 255
_UINT = {8: np.uint64, 4: np.uint32, 2: np.uint16, 1: np.uint8}


def register_map(regs: list[RegisterValue]) -> list[tuple[str, str, str, int, int]]:
    """[(PTX name, dtype, 'R' or 'P', first number, words)]."""
    out, r, p = [], 0, 0
    for reg in regs:
        if reg.dtype == "bool":
            out.append((reg.name, reg.dtype, "P", p, 1))
            p += 1
            continue
        words = 2 if np.dtype(reg.dtype).itemsize == 8 else 1
        out.append((reg.name, reg.dtype, "R", r if r + words <= MAX_R else -1, words))
        r += words
    return out


def _bits(value: Any) -> tuple[int, Any]:
    raw = np.asarray(value)
    return int(raw.view(_UINT[raw.dtype.itemsize])), raw


def read_r(regs: list[RegisterValue], regno: int) -> int:
    """R<regno> as uint32; 0 for a number no register of the function holds."""
    values = {r.name: r.value for r in regs}
    for name, _dt, cls, first, words in register_map(regs):
        if cls == "R" and first <= regno < first + words:
            bits, _raw = _bits(values[name])
            return (bits >> (32 * (regno - first))) & 0xFFFFFFFF
    return 0


def write_r(regs: list[RegisterValue], regno: int, value: int) -> tuple[str, Any] | None:
    """(PTX name, new value of that register) for writing R<regno>, or None."""
    values = {r.name: r.value for r in regs}
    for name, _dt, cls, first, words in register_map(regs):
        if cls == "R" and first <= regno < first + words:
            bits, raw = _bits(values[name])
            shift = 32 * (regno - first)
            bits = (bits & ~(0xFFFFFFFF << shift)) | ((int(value) & 0xFFFFFFFF) << shift)
            bits &= (1 << (8 * raw.dtype.itemsize)) - 1
            return name, _UINT[raw.dtype.itemsize](bits).view(raw.dtype)
    return None


def read_p(regs: list[RegisterValue], predno: int) -> int:
    values = {r.name: r.value for r in regs}
    for name, _dt, cls, first, _w in register_map(regs):
        if cls == "P" and first == predno:
            return int(bool(values[name]))
    return 0
