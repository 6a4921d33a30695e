"""until and advance: run the focused warp to a place, gdb's way.

The one idea: like step and next, these move only the focused warp
(cuda-gdb's rule for execution commands), by the Session's warp stepping
(debug/source_steps.py), and report what they led to as a step does.
`until` alone is `next` that does not go back round a loop; `until
LOCATION` runs to LOCATION in the current frame (or an outer one) and
`advance LOCATION` to LOCATION in any frame; both also stop when the
current frame returns. LOCATION is what `break` takes. The simulator runs
the warp in the wave (no round trip per instruction); other warps do not
move (except those of its block at a barrier), so a breakpoint elsewhere
is not reported on the way, as with step.
"""
from __future__ import annotations

from typing import Any

from .commands import Command, CommandError


def register(dbg: Any) -> None:
    add = dbg.add
    add(Command("until", lambda rest: _until(dbg, rest, any_frame=False),
                "until [LOCATION]: the focused warp runs past the current line without going round a loop, "
                "or to LOCATION in this frame; stops when the frame returns", aliases=("u",),
                repeatable=True))
    add(Command("advance", lambda rest: _until(dbg, rest, any_frame=True),
                "advance LOCATION: the focused warp runs to LOCATION (in any frame) or until the "
                "current frame returns"))


def _until(dbg: Any, rest: str, any_frame: bool) -> None:
    from .breakpoints import location_request
    from .execution import _after_step, _remember_function, _stopped_focus
    location = rest.strip()
    if any_frame and not location:
        raise CommandError("Argument required (a location).")
    f = _stopped_focus(dbg)
    s = dbg.session
    addresses = None
    if location:
        kind, where = location_request(dbg, location)
        addresses = s.resolve_location(kind, **where)
        if not addresses:
            raise CommandError(f'No code is loaded at "{location}".')
    _remember_function(dbg, f)
    s.until(f.dev, f.sm, f.wp, addresses, any_frame)
    _after_step(dbg, f, "line")
