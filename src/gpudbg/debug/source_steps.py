"""Source-level stepping (gdb's step, next and finish) of one warp, built
from warp single-steps and the line table.

The one idea: a source step is a loop of instruction steps of the warp
with a stop rule over (line, call depth) of its active lanes: `next` stops
at the first statement start of a different line at the same or a lower
call depth (calls made on the way run through), `step` also stops at the
first line of a called function's body (past its prologue, as gdb does, so
its arguments show the passed values), and `finish` stops when the depth
drops below where it started. Barriers need nothing special: a warp step
over bar.sync already lets the rest of the block reach it.

It deliberately stops, rather than loops forever, when the warp exits, the
device stops at an exception, or a step budget runs out.
"""
from __future__ import annotations

from typing import Any

from gpudbg.debug.backend import BackendError

MAX_STEPS = 1 << 20


def _where(session: Any, dev: int, sm: int, wp: int):
    """(program, pc index, call depth) of the warp's active lanes, or None
    once the warp is gone."""
    from gpudbg.debug.session import DebugError
    try:
        w = session.warp(dev, sm, wp)
    except (BackendError, DebugError):
        return None
    lane = next(lv for lv in w.lanes if lv.active)
    prog = session.program_at(dev, w.pc)
    return prog, (prog.pc_of_address(w.pc) if prog is not None else None), lane.call_depth


def _line(session: Any, prog: Any, pc: int):
    if prog is None or pc is None:
        return None
    return session.debug_info(prog).lines.at(pc)


def _stopped_at_exception(session: Any, dev: int) -> bool:
    """Whether the last warp step stopped the device by itself: at an
    exception, or at a watchpoint it triggered (both reported as stops)."""
    reason = getattr(session.backend, "stop_reason", lambda d: None)(dev)
    return reason == "EXCEPTION" or bool(getattr(session.backend, "step_hit_watchpoint", lambda d: False)(dev))


def _steps(session: Any, dev: int, sm: int, wp: int):
    """Single-step the warp, yielding (program, pc index, call depth) after
    each instruction; ends when the warp is gone, the device stopped by
    itself (an exception, a watchpoint) or the step budget is spent."""
    for _ in range(MAX_STEPS):
        if not session.single_step_warp(dev, sm, wp, 1) or _stopped_at_exception(session, dev):
            return
        now = _where(session, dev, sm, wp)
        if now is None:
            return
        yield now


def step_line(session: Any, dev: int, sm: int, wp: int, over_calls: bool) -> None:
    start = _where(session, dev, sm, wp)
    if start is None:
        return
    prog, pc, depth0 = start
    e0 = _line(session, prog, pc)
    origin = (e0.file, e0.line) if e0 is not None else None
    for prog, pc, depth in _steps(session, dev, sm, wp):
        if depth > depth0 and over_calls:
            continue
        e = _line(session, prog, pc)
        if e is None:
            if origin is None:
                return      # no line info at all: one instruction is the step
            continue
        lines = session.debug_info(prog).lines
        if depth < depth0:
            return          # returned into the caller
        if depth > depth0:
            body = _body_pc(prog, lines, pc)
            if body is not None and pc < body:
                continue    # gdb stops a step into a call after the callee's prologue
            if pc == body:
                return      # (a one-line function's body is no new statement: stop there too)
        if (e.file, e.line) != origin and lines.is_stmt(pc):
            return


def _body_pc(prog: Any, lines: Any, pc: int) -> int | None:
    """Where the body of pc's function starts: before it are the parameter
    loads NVVM attributes to the declaration line, where the arguments'
    registers do not hold the passed values yet (`break function` stops
    there too: lines.function_body_pc)."""
    info = prog.function_list[int(prog.function_of_pc[pc])]
    try:
        return lines.function_body_pc(info.name)
    except ValueError:
        return None


def finish(session: Any, dev: int, sm: int, wp: int) -> None:
    start = _where(session, dev, sm, wp)
    if start is None:
        return
    depth0 = start[2]
    if depth0 == 0:
        raise BackendError("INVALID_ARGS", '"finish" not meaningful in the outermost frame.')
    for _prog, _pc, depth in _steps(session, dev, sm, wp):
        if depth < depth0:
            return


def _in_wave(session: Any):
    """The backend's own warp runner (the simulator steps in the wave, with
    no round trip per instruction), or None: step from here."""
    return getattr(session.backend, "run_warp_until", None)


def until_next(session: Any, dev: int, sm: int, wp: int) -> None:
    """gdb's `until` without argument: `next`, except that a jump back to
    a lower address in the same frame (a loop's back edge) keeps going, so
    a loop is left rather than iterated line by line: the warp runs to the
    first statement of another line at a higher address in its frame, or
    until the frame returns."""
    start = _where(session, dev, sm, wp)
    if start is None:
        return
    prog, pc0, depth0 = start
    e0 = _line(session, prog, pc0)
    fast = _in_wave(session)
    if e0 is None or fast is None:
        _until_next_stepped(session, dev, sm, wp, start)
        return
    lines = session.debug_info(prog).lines
    end = prog.function_list[int(prog.function_of_pc[pc0])].end_pc
    targets = {prog.code_address(p) for p in range(pc0 + 1, end)
               if lines.is_stmt(p) and (lines.at(p).file, lines.at(p).line) != (e0.file, e0.line)}
    fast(dev, sm, wp, targets, depth0, depth0)


def _until_next_stepped(session: Any, dev: int, sm: int, wp: int, start: tuple) -> None:
    prog, pc0, depth0 = start
    e0 = _line(session, prog, pc0)
    origin = (e0.file, e0.line) if e0 is not None else None
    for prog, pc, depth in _steps(session, dev, sm, wp):
        if depth > depth0:
            continue
        if depth < depth0:
            return
        e = _line(session, prog, pc)
        if e is None:
            if origin is None:
                return
            continue
        if pc > pc0 and (e.file, e.line) != origin and session.debug_info(prog).lines.is_stmt(pc):
            return


def run_to(session: Any, dev: int, sm: int, wp: int, addresses: set[int], any_frame: bool) -> None:
    """gdb's `until LOCATION` (any_frame False: the location counts only in
    the current frame or an outer one) and `advance LOCATION` (any frame):
    the warp runs until its pc is one of `addresses`, or the current frame
    returns."""
    start = _where(session, dev, sm, wp)
    if start is None:
        return
    depth0 = start[2]
    fast = _in_wave(session)
    if fast is not None:
        fast(dev, sm, wp, set(addresses), None if any_frame else depth0, depth0)
        return
    taken = 0
    for prog, pc, depth in _steps(session, dev, sm, wp):
        taken += 1
        if depth < depth0:
            return
        if prog is not None and pc is not None and prog.code_address(pc) in addresses \
                and (any_frame or depth <= depth0):
            return
    if taken < MAX_STEPS:
        return      # the warp exited or the device stopped on its own
    raise BackendError("TIMEOUT", f"the location was not reached within {MAX_STEPS} instructions of the warp")
