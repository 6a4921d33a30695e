"""Frame selection: up, down, frame, info frame.

The one idea: the debugger keeps one selected frame level for the focused
lane (reset to the innermost at every stop, step and focus switch, as gdb
resets it), and every lane question goes through `Debugger.context()`,
which carries that level, so print, info locals/args, x and $pc answer in
the selected frame without knowing about frames. An outer frame's values
are its own (its registers, its local frame: debug/frame_state.py), read
at its call instruction, the line `up` shows.
"""
from __future__ import annotations

from typing import Any

from .commands import Command, CommandError
from .frames import describe_frame, frames, safe, source_line_text


def register(dbg: Any) -> None:
    add = dbg.add
    add(Command("up", lambda rest: _move(dbg, rest, +1), "select the frame N (default 1) levels out "
                "(the caller) of the focused lane"))
    add(Command("down", lambda rest: _move(dbg, rest, -1), "select the frame N (default 1) levels in "
                "(the callee)", aliases=("do",)))
    add(Command("frame", lambda rest: _frame(dbg, rest), "frame [N]: show the selected frame, or select "
                "frame N of the focused lane", aliases=("f",)))


def _stack(dbg: Any):
    f = dbg.need_focus()
    s = dbg.session
    warp = s.warp(f.dev, f.sm, f.wp)
    return f, warp, frames(s, f.dev, warp.lane(f.ln))


def _level(text: str, what: str) -> int:
    try:
        n = int(text, 0)
    except ValueError:
        raise CommandError(f'Invalid number "{text}".') from None
    if n < 0:
        raise CommandError(f"{what} must not be negative.")
    return n


def show_frame(dbg: Any) -> None:
    """`#1  0x... in caller<<<...>>> (out=...) at fn.cu:9` and its line."""
    f, warp, stack = _stack(dbg)
    fr = stack[dbg.frame_level]
    grid = safe(dbg.session.grid, f.dev, warp.grid_id)
    from .frames import at_line_start
    mid_line = fr.level > 0 or not at_line_start(dbg.session, f.dev, fr.pc)
    print(f"#{fr.level:<2} {describe_frame(dbg.session, f.dev, dbg.context(f), grid, fr, with_address=mid_line)}")
    text = source_line_text(fr.file, fr.line)
    if text:
        print(text)
    if fr.file is not None:
        dbg.list_next = (fr.file, max(1, fr.line - 5))


def _move(dbg: Any, rest: str, direction: int) -> None:
    _f, _warp, stack = _stack(dbg)
    n = _level(rest.strip(), "The count") if rest.strip() else 1
    target = dbg.frame_level + direction * n
    if target < 0:
        if dbg.frame_level == 0:
            raise CommandError("Bottom (innermost) frame selected; you cannot go down.")
        target = 0
    if target >= len(stack):
        if dbg.frame_level == len(stack) - 1:
            raise CommandError("Initial frame selected; you cannot go up.")
        target = len(stack) - 1
    dbg.frame_level = target
    show_frame(dbg)


def _frame(dbg: Any, rest: str) -> None:
    _f, _warp, stack = _stack(dbg)
    text = rest.strip()
    if text.startswith("level "):
        text = text[len("level "):].strip()
    if text:
        n = _level(text, "The frame level")
        if n >= len(stack):
            raise CommandError(f"No frame at level {text}.")
        dbg.frame_level = n
    show_frame(dbg)


def info_frame(dbg: Any) -> str:
    """gdb's `info frame`, in the terms a device frame has: its pc and
    return address, its frame in the lane's local memory, its arguments."""
    f, warp, stack = _stack(dbg)
    s = dbg.session
    level = dbg.frame_level
    fr = stack[level]
    states = s.frames(f.dev, f.sm, f.wp, f.ln)
    st = states[level]
    info = st.program.functions[st.function]
    from .breakpoints import source_name
    from .frames import frame_args
    where = f" ({fr.file}:{fr.line})" if fr.file is not None else ""
    saved = f"; saved pc = 0x{stack[level + 1].pc:016x}" if level + 1 < len(stack) else ""
    out = [f"Stack level {level}, frame at local 0x{st.frame_base:x}:",
           f" pc = 0x{fr.pc:016x} in {source_name(fr.function)}{where}{saved}"]
    if level + 1 < len(stack):
        out.append(f" called by frame at local 0x{states[level + 1].frame_base:x}")
    if level > 0:
        out.append(f" caller of frame at local 0x{states[level - 1].frame_base:x}")
    grid = safe(s.grid, f.dev, warp.grid_id)
    args = frame_args(s, f.dev, dbg.context(f), grid, fr)
    out.append(f" source language {'c++' if fr.file is not None else 'ptx'}.")
    out.append(f" Arglist at local 0x{st.frame_base:x}, args: {args}")
    out.append(f" Locals at local 0x{st.frame_base:x}, frame size {int(info.frame_size)} bytes")
    kind = "kernel" if fr.is_kernel else "device function"
    out.append(f" {kind} {st.function}, call depth {len(stack) - 1 - level}, "
               f"device {f.dev}, sm {f.sm}, warp {f.wp}, lane {f.ln}")
    return "\n".join(out)
