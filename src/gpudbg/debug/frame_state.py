"""The state of each frame of a lane's call stack: where it is, its
local-memory frame, and its registers as that activation sees them.

The one idea: a caller's frame is fully recoverable from what the callee
leaves behind, so no frame needs saving by the debugger. The simulator
gives every PTX function its own registers (a caller's stay untouched
while its callee runs), a callee's local frame sits right above its
caller's (caller sp = callee sp - caller's frame size), and the only
registers a callee overwrites are those of a recursive function, which
the activation it calls saves in its own frame's callee-saved area first.
So frame k's register r is the copy saved by the nearest inner frame
j < k whose function saves r, else the live register; its locals are at
its frame base. Frame 0 is the lane itself.

It deliberately does not unwind without the program (a coredump backend
with no per-function registers answers outer-frame registers as not
available, never with frame 0's values).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpudbg.debug.backend import BackendError, MemorySpace, RegisterValue

INSTRUCTION_BYTES = 16
SAVE_SLOT_BYTES = 8          # sim/wave.py: one 8-byte slot per saved register


@dataclass(frozen=True)
class FrameState:
    level: int
    pc: int                  # code address where the frame is (a caller: its return address)
    lookup_pc: int           # program pc index whose scopes and locations apply (a caller: its call)
    function: str            # PTX name
    frame_base: int          # offset of its frame in the lane's local memory
    program: Any


def _error(code: str, message: str) -> Exception:
    from gpudbg.debug.session import DebugError
    return DebugError(code, message)


def chain(session: Any, dev: int, sm: int, wp: int, ln: int) -> list[FrameState]:
    """Every frame of the lane, innermost first."""
    lv = session.lane(dev, sm, wp, ln)
    out: list[FrameState] = []
    base = int(lv.frame_base)
    addresses = [int(lv.pc)] + [int(a) for a in lv.return_addresses]
    for level, pc in enumerate(addresses):
        look = pc if level == 0 else pc - INSTRUCTION_BYTES
        prog = session.program_at(dev, look)
        if prog is None:
            raise _error("INVALID_ADDRESS", f"no module holds the code of frame #{level} (0x{look:x})")
        index = prog.pc_of_address(look)
        info = prog.function_list[int(prog.function_of_pc[index])]
        if level > 0:
            base -= int(info.frame_size)      # the callee's frame starts where this one ends
        out.append(FrameState(level, pc, index, info.name, base, prog))
    return out


def frame(session: Any, dev: int, sm: int, wp: int, ln: int, level: int) -> FrameState:
    frames = chain(session, dev, sm, wp, ln)
    if not 0 <= level < len(frames):
        raise _error("INVALID_ARGS", f"No frame at level {level}." if level >= 0 else
                     "Bottom (innermost) frame selected; you cannot go down.")
    return frames[level]


def _saved_slot(frames: list[FrameState], level: int, name: str) -> tuple[int, int] | None:
    """(local offset, register key) of the copy of frame `level`'s
    register `name` saved by an inner recursive activation, or None when
    the live register holds it."""
    f = frames[level]
    prog = f.program
    try:
        key = prog.reg_names.index((f.function, name))
    except ValueError:
        return None
    for j in range(level - 1, -1, -1):
        inner = frames[j]
        saved = getattr(inner.program, "saved_registers", {}).get(inner.function)
        if saved and key in saved:
            info = inner.program.functions[inner.function]
            return inner.frame_base + int(info.save_offset) + SAVE_SLOT_BYTES * saved.index(key), key
    return None


def registers(session: Any, dev: int, sm: int, wp: int, ln: int, level: int) -> list[RegisterValue]:
    """Frame `level`'s registers with the values that activation has."""
    if level == 0:
        return session.registers(dev, sm, wp, ln)
    frames = chain(session, dev, sm, wp, ln)
    if not 0 <= level < len(frames):
        raise _error("INVALID_ARGS", f"No frame at level {level}.")
    f = frames[level]
    read = getattr(session.backend, "function_registers", None)
    if read is None:
        raise _error("NOT_SUPPORTED", f"the registers of frame #{level} ({f.function}) are not available "
                                      f"from this backend")
    try:
        live = read(dev, sm, wp, ln, f.function)
    except BackendError as e:
        raise _error(e.code, e.message) from None
    out = []
    for r in live:
        slot = _saved_slot(frames, level, r.name)
        if slot is None:
            out.append(r)
            continue
        dt = np.dtype(r.dtype)
        raw = session.read_memory(dev, MemorySpace.LOCAL, slot[0], 1 if dt == np.bool_ else dt.itemsize,
                                  sm, wp, ln)
        value = np.frombuffer(raw, dtype=np.uint8 if dt == np.bool_ else dt)[0]
        out.append(RegisterValue(r.name, r.dtype, value.astype(dt) if dt == np.bool_ else value))
    return out


def read_register(session: Any, dev: int, sm: int, wp: int, ln: int, level: int, name: str) -> Any:
    want = name if name.startswith("%") else "%" + name
    for r in registers(session, dev, sm, wp, ln, level):
        if r.name == want:
            return session.register_value(r)
    raise _error("INVALID_REGISTER", f"frame #{level} has no register {want}")


def write_register(session: Any, dev: int, sm: int, wp: int, ln: int, level: int, name: str,
                   value: Any) -> None:
    """Write frame `level`'s register where that activation will read it
    back: the live register, or the inner recursive frame's saved copy."""
    if level == 0:
        session.write_register(dev, sm, wp, ln, name, value)
        return
    frames = chain(session, dev, sm, wp, ln)
    if not 0 <= level < len(frames):
        raise _error("INVALID_ARGS", f"No frame at level {level}.")
    f = frames[level]
    want = name if name.startswith("%") else "%" + name
    slot = _saved_slot(frames, level, want)
    if slot is not None:
        v = np.asarray(value)
        raw = v.astype(np.uint8).tobytes() if v.dtype == np.bool_ else v.tobytes()
        session.write_memory(dev, MemorySpace.LOCAL, slot[0], raw, sm, wp, ln)
        return
    write = getattr(session.backend, "write_function_register", None)
    if write is None:
        raise _error("NOT_SUPPORTED", f"the registers of frame #{level} cannot be written through this backend")
    try:
        write(dev, sm, wp, ln, f.function, want, value)
    except BackendError as e:
        raise _error(e.code, e.message) from None
