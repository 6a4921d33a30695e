"""Reading a source variable of one lane: a DWARF Location (from `-G`
PTX) turned into bytes through the backend.

The one idea: every location the PTX DWARF uses is one of three things the
backend already serves: a PTX register of the lane (by name), an offset in
a state space (the lane's local frame, the kernel's parameter buffer, a
module global or a shared variable), or a constant. So a variable is
(type size, where) and the value is the first `size` bytes read there. A
variable whose location is not understood, or not available at this pc,
is an error naming the variable and why, never a wrong value.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gpudbg.debug.backend import MemorySpace

_SPACES = {"local": MemorySpace.LOCAL, "param": MemorySpace.PARAM, "global": MemorySpace.GLOBAL,
           "shared": MemorySpace.SHARED, "const": MemorySpace.CONST, "generic": MemorySpace.GENERIC}


def read(session: Any, dev: int, sm: int, wp: int, ln: int, name: str, frame: int = 0):
    """`name` as frame `frame` of the lane sees it (0: the innermost; a
    caller's variables are read at its call, in its own local frame and
    registers: debug/frame_state.py)."""
    from gpudbg.debug import frame_state
    from gpudbg.debug.dwarf.model import LocationKind
    from gpudbg.debug.session import DebugError, VariableValue
    fs = frame_state.frame(session, dev, sm, wp, ln, frame)
    prog = fs.program
    info = session.debug_info(prog)
    vv = info.lookup(name, fs.lookup_pc)
    if vv is None:
        raise DebugError("UNKNOWN_SYMBOL", f'No symbol "{name}" in current context.')
    loc = vv.location
    t = vv.variable.type
    size = t.byte_size if t is not None and t.byte_size else 4
    if loc is None:
        raise DebugError("OPTIMIZED_OUT", f"{name} is not available at this pc (<optimized out>)")
    if loc.kind is LocationKind.VALUE:
        return VariableValue(vv, int(loc.value).to_bytes(8, "little", signed=loc.value < 0)[:size], None, None)
    if loc.kind is LocationKind.REGISTER:
        value = np.asarray(frame_state.read_register(session, dev, sm, wp, ln, frame, loc.name))
        raw = value.astype(np.uint8).tobytes() if value.dtype == np.bool_ else value.tobytes()
        return VariableValue(vv, raw[:size].ljust(size, b"\0"), None, None)
    if loc.kind is not LocationKind.MEMORY:
        raise DebugError("NOT_SUPPORTED", f"cannot read {name}: {loc.detail or loc.kind.value}")
    space = _SPACES.get(loc.space.value if loc.space is not None else "generic", MemorySpace.GENERIC)
    if loc.address is not None:
        address = loc.address + loc.offset
    elif space is MemorySpace.LOCAL:
        address = fs.frame_base + info.frame_offset(loc, fs.function)
    elif space is MemorySpace.PARAM and hasattr(session.backend, "param_offset"):
        address = session.backend.param_offset(dev, loc.symbol) + loc.offset
    elif space in (MemorySpace.GLOBAL, MemorySpace.CONST) and loc.symbol in prog.symbols:
        address = prog.symbols[loc.symbol] + loc.offset
    elif space is MemorySpace.SHARED and hasattr(session.backend, "shared_offset"):
        address = session.backend.shared_offset(dev, loc.symbol) + loc.offset
    else:
        raise DebugError("NOT_SUPPORTED", f"cannot locate {name}: {loc}")
    data = session.read_memory(dev, space, address, size, sm, wp, ln)
    return VariableValue(vv, data, address, space)
