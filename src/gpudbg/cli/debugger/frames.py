"""Where a lane is, in words: frames, their arguments, source lines.

The one idea: a lane's call stack is its pc plus the return addresses the
backend reports (innermost first), and every frame is described by asking
the Session for the function and source line of an address, gdb's way
(an outer frame's line is that of the call, so the lookup uses the return
address minus one instruction). Kernel frames carry cuda-gdb's launch
shape `name<<<(grid),(block)>>>`. Arguments come from DWARF when the
module has it (-G); otherwise the kernel's PTX .param list is decoded from
the launch's parameter buffer, which is always known. An outer frame's
arguments are its DWARF parameters read in that frame (at its call, in
its own registers and local frame: debug/frame_state.py); without DWARF
an outer device function prints without arguments.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpudbg.ptx.types import PTX_TYPES

from .focus import dim

INSTRUCTION_BYTES = 16


@dataclass(frozen=True)
class Frame:
    level: int
    pc: int
    function: str
    file: str | None
    line: int | None
    is_kernel: bool


def safe(call, *args, default=None):
    """A Session query that answers `default` where there is nothing to say."""
    from gpudbg.debug.session import DebugError
    from gpudbg.debug.backend import BackendError
    try:
        return call(*args)
    except (DebugError, BackendError, KeyError, ValueError, IndexError):
        return default


def source_of(session: Any, dev: int, address: int) -> tuple[str, int] | None:
    where = safe(session.source_line, dev, address)
    if where is None or not where[1]:
        return None
    return where[0], int(where[1])


# Source texts known without a file on disk (a coredump's embedded sources).
EXTRA_SOURCES: dict[str, str] = {}


def register_sources(sources: dict[str, str]) -> None:
    EXTRA_SOURCES.update(sources)


def source_text(file: str, line: int) -> str | None:
    from gpudbg.compiler import source_line
    import os
    extra = EXTRA_SOURCES.get(file) or EXTRA_SOURCES.get(os.path.basename(file))
    if extra is not None:
        lines = extra.splitlines()
        return lines[line - 1] if 1 <= line <= len(lines) else None
    text = source_line(file, line)
    if text is None:
        text = source_line(os.path.basename(file), line)
    return text


def source_line_text(file: str | None, line: int | None) -> str:
    """`5\t    y[i] = ...` (gdb's listing of one line), or the location."""
    if file is None or line is None:
        return ""
    text = source_text(file, line)
    if text is None:
        return f"{line}\tin {file}"
    return f"{line}\t{text}"


def is_kernel(session: Any, dev: int, function: str, address: int) -> bool:
    program = safe(session.program_at, dev, address)
    info = getattr(program, "module", None)
    fn = info.functions.get(function) if info is not None else None
    return fn is not None and fn.kind == "entry"


def frames(session: Any, dev: int, lane: Any) -> list[Frame]:
    """Frame #0 at the lane's pc, then one per return address."""
    out = []
    addresses = [lane.pc] + [int(a) for a in lane.return_addresses]
    for level, pc in enumerate(addresses):
        look = pc if level == 0 else pc - INSTRUCTION_BYTES
        fn = safe(session.function_at, dev, look)
        name = fn[0] if fn else (lane.function if level == 0 else "??")
        where = source_of(session, dev, look)
        out.append(Frame(level, pc, name, where[0] if where else None, where[1] if where else None,
                         is_kernel(session, dev, name, look)))
    return out


def launch_shape(grid: Any) -> str:
    return f"<<<{dim(grid.grid_dim)},{dim(grid.block_dim)}>>>"


# ------------------------------------------------------------------ arguments
def ptx_kernel_args(session: Any, dev: int, grid: Any) -> list[tuple[str, str]]:
    """(name, text) of each .param of the grid's kernel, from its buffer."""
    program = safe(session.program_at, dev, grid.entry_address)
    if program is None:
        return []
    fn = program.module.functions.get(grid.kernel)
    if fn is None:
        return []
    out, off, buf = [], 0, bytes(grid.params)
    for p in fn.params:
        t = PTX_TYPES.get(p.type)
        if t is None:
            continue
        count = p.element_count or 1 if p.dims else 1
        size = t.size * count
        align = p.align or t.size
        off = (off + align - 1) // align * align
        raw = buf[off:off + size]
        off += size
        if len(raw) < size:
            break
        name = p.name[len(grid.kernel) + 1:] if p.name.startswith(grid.kernel + "_param_") else p.name
        out.append((name, _ptx_text(p, t, raw, count)))
    return out


def _ptx_text(p: Any, t: Any, raw: bytes, count: int) -> str:
    if count > 1 or t.dtype.kind == "V":
        return "{" + ", ".join(f"0x{b:02x}" for b in raw[:16]) + (", ..." if len(raw) > 16 else "") + "}"
    x = np.frombuffer(raw, dtype=t.dtype.newbyteorder("<"))[0]
    if t.kind == "f":
        return _float_text(float(x))
    if t.size == 8 and t.kind in ("u", "b"):
        return f"0x{int(x):x}"
    return str(int(x))


def _float_text(v: float) -> str:
    text = f"{v:.9g}"
    return text


def frame_args(session: Any, dev: int, ctx: Any, grid: Any | None, frame: Frame) -> str:
    """`n=1024, a=2.5, x=0x7000..., y=0x...` of any frame; empty for
    frames whose arguments are not known."""
    at = ctx.at_frame(frame.level) if hasattr(ctx, "at_frame") else ctx
    dwarf = _dwarf_args(session, dev, at)
    if dwarf is not None:
        return dwarf
    if frame.is_kernel and grid is not None:
        return ", ".join(f"{n}={v}" for n, v in ptx_kernel_args(session, dev, grid))
    return ""


def _dwarf_args(session: Any, dev: int, ctx: Any) -> str | None:
    visible = safe(session.variables, dev, ctx.sm, ctx.wp, ctx.ln, getattr(ctx, "frame", 0), default=None)
    if not visible:
        return None
    params = [v for v in visible if v.variable.is_parameter and v.depth >= 0 and not v.shadowed]
    if not params:
        return None
    from .formatting import format_value
    parts = []
    for v in params:
        value = ctx.variable(v.name)
        if value is None:
            parts.append(f"{v.name}=<optimized out>")
            continue
        try:
            parts.append(f"{v.name}={format_value(value)}")
        except Exception as e:  # a value the formatter cannot show still names the argument
            parts.append(f"{v.name}=<error: {e}>")
    return ", ".join(parts)


def describe_frame(session: Any, dev: int, ctx: Any, grid: Any | None, frame: Frame,
                   with_address: bool = False) -> str:
    """`saxpy<<<(4,1,1),(256,1,1)>>> (n=1024, ...) at saxpy.cu:5`, gdb's
    frame line (with `0x... in ` first when not at a line's start)."""
    from .breakpoints import source_name
    name = source_name(frame.function) + (launch_shape(grid) if frame.is_kernel and grid is not None else "")
    text = f"{name} ({frame_args(session, dev, ctx, grid, frame)})"
    if frame.file is not None:
        text += f" at {frame.file}:{frame.line}"
    if with_address:
        text = f"0x{frame.pc:016x} in {text}"
    return text


def at_line_start(session: Any, dev: int, pc: int) -> bool:
    """Whether pc is the first instruction of its source line."""
    here = source_of(session, dev, pc)
    before = source_of(session, dev, pc - INSTRUCTION_BYTES)
    fn_here = safe(session.function_at, dev, pc)
    return here is None or before != here or (fn_here is not None and fn_here[1] == 0)
