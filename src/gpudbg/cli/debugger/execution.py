"""Execution commands: run, continue, kill, quit, step, next, stepi,
nexti, finish (`set cuda` settings: cuda_settings.py).

The one idea: stepping is always the focused warp's (cuda-gdb's rule),
done by the Session (`step_line`, `finish`, `single_step_warp`); after it
the debugger looks at what happened: an exception raised while stepping
is reported as a stop, a warp that ran off the end of the kernel lets the
program continue to the next stop (cuda-gdb does the same), and a focused
lane that is no longer active (divergence) moves the focus to an active
lane of the warp, announced. `nexti` over a `call` steps until the call
depth is back, so it steps over the callee whatever its length.
"""
from __future__ import annotations

from typing import Any

from .commands import Command, CommandError
from .focus import LaneSite
from .frames import at_line_start, frames, safe, source_line_text

NEXTI_LIMIT = 1_000_000   # instructions `nexti` will step inside one call


def register(dbg: Any) -> None:
    add = dbg.add
    add(Command("run", lambda rest: _run(dbg, rest), "start the program (arguments replace the previous ones; a native program runs once, with the arguments "
                "gpudbg debug was given)",
                aliases=("r",)))
    add(Command("continue", lambda rest: _continue(dbg, rest), "resume the program until the next stop",
                aliases=("c", "cont", "fg"), repeatable=True))
    add(Command("kill", lambda rest: _kill(dbg), "kill the running program (a native program: gpudbg ends with it)",
                aliases=("k",)))
    add(Command("quit", lambda rest: _quit(dbg), "leave the debugger (killing the program; a native program ends with it)",
                aliases=("q", "exit")))
    add(Command("step", lambda rest: _step_line(dbg, rest, over=False),
                "step the focused warp to the next source line, into calls", aliases=("s",), repeatable=True))
    add(Command("next", lambda rest: _step_line(dbg, rest, over=True),
                "step the focused warp to the next source line, over calls", aliases=("n",), repeatable=True))
    add(Command("stepi", lambda rest: _stepi(dbg, rest, over=False),
                "step the focused warp one PTX instruction", aliases=("si",), repeatable=True))
    add(Command("nexti", lambda rest: _stepi(dbg, rest, over=True),
                "step the focused warp one PTX instruction, over calls", aliases=("ni",), repeatable=True))
    add(Command("generate-core-file", lambda rest: _gcore(dbg, rest),
                "write a GPU coredump of the stopped device: generate-core-file [FILE]", aliases=("gcore",)))
    add(Command("finish", lambda rest: _finish(dbg), "run the focused warp until its frame returns",
                aliases=("fin",)))


def _count(rest: str) -> int:
    rest = rest.strip()
    if not rest:
        return 1
    try:
        n = int(rest, 0)
    except ValueError:
        raise CommandError(f'Invalid number "{rest}".') from None
    if n < 1:
        raise CommandError("The count must be at least 1.")
    return n


def _run(dbg: Any, rest: str) -> None:
    if rest.strip():
        import shlex
        dbg.args = shlex.split(rest)
    if dbg.can_execute and dbg.program:
        print(f"Starting program: {dbg.program} {' '.join(dbg.args)}".rstrip())
    dbg.start()


def _continue(dbg: Any, rest: str) -> None:
    dbg.require_process()
    print("Continuing.")
    dbg.resume()


def _kill(dbg: Any) -> None:
    dbg.require_process()
    dbg.kill_inferior()


def _quit(dbg: Any) -> None:
    dbg.quit_requested = True


def _stopped_focus(dbg: Any):
    dbg.require_process()
    if dbg.api_stopped is not None:
        raise CommandError("The program is stopped in a host API call; there is no CUDA focus to step.")
    dbg.frame_level = 0        # gdb steps the innermost frame whichever is selected
    return dbg.need_focus()


def _warp_gone(dbg: Any, f: Any) -> bool:
    w = safe(dbg.session.warp, f.dev, f.sm, f.wp)
    return w is None or w.grid_id != f.grid or not w.lanes


def _after_step(dbg: Any, f: Any, show: str) -> None:
    """Report what the step led to (see the module docstring). `show` is
    "line" (source stepping), "insn" (stepi) or "frame" (finish)."""
    from gpudbg.debug.events import EventKind
    s = dbg.session
    while True:   # an exception while stepping arrives as a STOPPED event
        ev = s.next_event(timeout=0.0)
        if ev is None:
            break
        if ev.kind is EventKind.STOPPED:
            if dbg.dispatch(ev):
                return
        else:
            dbg.dispatch(ev)
    if _warp_gone(dbg, f):
        dbg.focus = None
        for dev in dbg.devices():
            if safe(s.is_stopped, dev, default=False):
                s.resume(dev)
        dbg.wait()
        return
    warp = s.warp(f.dev, f.sm, f.wp)
    lanes = {lv.ln: lv for lv in warp.lanes}
    if f.ln not in lanes or not lanes[f.ln].active:
        active = [lv for lv in warp.lanes if lv.active] or list(warp.lanes)
        lv = active[0]
        dbg.set_focus(LaneSite(f.dev, f.sm, f.wp, lv.ln, warp.grid_id, tuple(warp.block_idx),
                               tuple(lv.thread_idx)))
    else:
        dbg.refresh_focus()
    new = dbg.need_focus()
    dbg.stops += 1
    lane = s.warp(new.dev, new.sm, new.wp).lane(new.ln)
    top = frames(s, new.dev, lane)[0]
    if show == "frame" or top.function != f_function(dbg, f):
        dbg.print_location(full=True, with_address=not at_line_start(s, new.dev, lane.pc))
    elif show == "insn" and not at_line_start(s, new.dev, lane.pc):
        text = source_line_text(top.file, top.line)
        print(f"0x{lane.pc:016x}\t{text}" if text else f"0x{lane.pc:016x} in {top.function} ()")
    else:
        dbg.print_location(full=False)
    dbg.last_function = top.function


def f_function(dbg: Any, f: Any) -> str:
    return getattr(dbg, "last_function", None) or ""


def _remember_function(dbg: Any, f: Any) -> None:
    lane = dbg.session.warp(f.dev, f.sm, f.wp).lane(f.ln)
    dbg.last_function = frames(dbg.session, f.dev, lane)[0].function


def _step_line(dbg: Any, rest: str, over: bool) -> None:
    for _ in range(_count(rest)):
        f = _stopped_focus(dbg)
        _remember_function(dbg, f)
        dbg.session.step_line(f.dev, f.sm, f.wp, over)
        _after_step(dbg, f, "line")
        if dbg.focus is None or dbg.focus.grid != f.grid:
            return


def _instruction_at(dbg: Any, dev: int, address: int):
    program = safe(dbg.session.program_at, dev, address)
    pc = program.pc_of_address(address) if program is not None else None
    return None if pc is None else program.code[pc].inst


def _stepi(dbg: Any, rest: str, over: bool) -> None:
    s = dbg.session
    for _ in range(_count(rest)):
        f = _stopped_focus(dbg)
        _remember_function(dbg, f)
        lane = s.warp(f.dev, f.sm, f.wp).lane(f.ln)
        inst = _instruction_at(dbg, f.dev, lane.pc)
        s.single_step_warp(f.dev, f.sm, f.wp, 1)
        if over and inst is not None and inst.opcode == "call":
            depth = lane.call_depth
            for _ in range(NEXTI_LIMIT):
                if _warp_gone(dbg, f):
                    break
                now = s.warp(f.dev, f.sm, f.wp)
                lv = next((x for x in now.lanes if x.ln == f.ln), None) or (now.lanes[0] if now.lanes else None)
                if lv is None or lv.call_depth <= depth or lv.exception:
                    break
                s.single_step_warp(f.dev, f.sm, f.wp, 1)
            else:
                raise CommandError(f"nexti: the call did not return within {NEXTI_LIMIT} instructions.")
        _after_step(dbg, f, "insn")
        if dbg.focus is None or dbg.focus.grid != f.grid:
            return


def _gcore(dbg: Any, rest: str) -> None:
    import os
    dbg.require_process()
    path = rest.strip() or f"core.cuda.{os.getpid()}.nvcudmp"
    written = dbg.session.generate_coredump(path)
    print(f"Saved corefile {written}")


def _finish(dbg: Any) -> None:
    """gdb's finish: run until the selected frame (after `up`: an outer
    one) returns to its caller."""
    from .frames import describe_frame
    level = dbg.frame_level
    f = _stopped_focus(dbg)
    s = dbg.session
    warp = s.warp(f.dev, f.sm, f.wp)
    lane = warp.lane(f.ln)
    stack = frames(s, f.dev, lane)
    if level + 1 >= len(stack):
        dbg.frame_level = level
        raise CommandError('"finish" not meaningful in the outermost frame.')
    grid = safe(s.grid, f.dev, warp.grid_id)
    text = describe_frame(s, f.dev, dbg.context(f).at_frame(level), grid, stack[level], with_address=level > 0)
    print(f"Run till exit from #{level:<2} {text}")
    _remember_function(dbg, f)
    for _ in range(level + 1):      # each finish returns one frame
        s.finish(f.dev, f.sm, f.wp)
        if _warp_gone(dbg, f) or safe(s.warp(f.dev, f.sm, f.wp).lane, f.ln) is None:
            break
    _after_step(dbg, f, "frame")
