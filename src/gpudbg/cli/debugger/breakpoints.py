"""break, tbreak, delete, disable, enable, condition, info breakpoints.

The one idea: a breakpoint's `if COND` is the evaluator run once per
candidate lane, against that lane's own builtins (from the hit's
LaneCoords, so `threadIdx.x == 3` costs no device query), registers and
variables; the Session asks the condition with all candidate lanes of a
hit and stops only those for which it holds. A condition that fails to
evaluate stops the lane and the error is printed at the stop (gdb's
rule). Locations are gdb's: `kernel`, `file:line`, `line`, `*address`;
a location whose code is not loaded yet is pending and resolves when the
module loads (the Session's job).
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from .commands import Command, CommandError
from .context import LaneContext
from .frames import safe, source_of

_IF = re.compile(r"(?:^|\s)if(?:\s+|(?=\())(.*)$", re.S)


def register(dbg: Any) -> None:
    add = dbg.add
    add(Command("break", lambda rest: set_breakpoint(dbg, rest, temporary=False),
                "set a breakpoint: break [KERNEL | FILE:LINE | LINE | *ADDRESS] [if COND]",
                aliases=("b", "br", "brea")))
    add(Command("tbreak", lambda rest: set_breakpoint(dbg, rest, temporary=True),
                "set a temporary breakpoint (deleted when hit)", aliases=("tb",)))
    add(Command("delete", lambda rest: _each(dbg, rest, "delete"),
                "delete breakpoints (all without arguments)", aliases=("d",)))
    add(Command("disable", lambda rest: _each(dbg, rest, "disable"), "disable breakpoints",
                aliases=("disa", "dis")))
    add(Command("enable", lambda rest: _each(dbg, rest, "enable"), "enable breakpoints", aliases=("en",)))
    add(Command("condition", lambda rest: _condition(dbg, rest),
                "condition N [COND]: stop at breakpoint N only where COND holds (none: always)"))
    from . import watchpoints
    watchpoints.register(dbg)


def truth(value: Any) -> bool:
    v = value.to_python()
    if isinstance(v, (list, dict)) or v is None:
        raise CommandError("The condition is not a scalar value.")
    return bool(v)


def make_condition(dbg: Any, text: str, bp_id_ref: list[int]):
    """The Breakpoint condition callable for COND (see the docstring)."""
    from .evaluate import evaluate

    def condition(coords) -> np.ndarray:
        n = len(coords)
        out = np.zeros(n, dtype=bool)
        for i in range(n):
            ctx = LaneContext(dbg.session, dbg.condition_device, int(coords.sm[i]), int(coords.wp[i]),
                              int(coords.ln[i]), dbg.store,
                              block=tuple(int(a[i]) for a in coords.block_idx),
                              thread=tuple(int(a[i]) for a in coords.thread_idx))
            try:
                out[i] = truth(evaluate(text, ctx))
            except Exception as e:   # gdb stops where a condition cannot be tested
                msg = getattr(e, "message", None) or str(e)
                dbg.condition_errors.append(
                    f"Error in testing condition for breakpoint {bp_id_ref[0] if bp_id_ref else '?'}:\n{msg}")
                out[i] = True
        return out
    return condition


def check_condition(text: str) -> None:
    from .expr import parse
    parse(text)


def split_condition(rest: str) -> tuple[str, str | None]:
    m = _IF.search(rest)
    if m is None:
        return rest.strip(), None
    cond = m.group(1).strip()
    if not cond:
        raise CommandError("Argument required (boolean expression).")
    return rest[:m.start()].strip(), cond


def _current_file(dbg: Any) -> str | None:
    f = dbg.focus
    if f is not None and dbg.state_readable(f.dev):
        lane = safe(lambda: dbg.session.warp(f.dev, f.sm, f.wp).lane(f.ln))
        where = source_of(dbg.session, f.dev, lane.pc) if lane is not None else None
        if where:
            return where[0]
    return dbg.list_next[0] if dbg.list_next else None


def _address(dbg: Any, text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        from .evaluate import evaluate
        v = evaluate(text, dbg.context())
        return v.as_int() % (1 << 64)


def set_breakpoint(dbg: Any, rest: str, temporary: bool) -> None:
    print(announce(dbg, create_breakpoint(dbg, rest, temporary)))


def create_breakpoint(dbg: Any, rest: str, temporary: bool, label: str | None = None) -> Any:
    """The breakpoint `break`'s argument asks for (rbreak and dprintf make
    theirs here too); `label` is how listings name it (dprintf)."""
    s = dbg.session
    if not dbg.can_execute:
        raise CommandError("Breakpoints cannot be set in a GPU coredump: the program is not being run.")
    location, cond_text = split_condition(rest)
    if cond_text is not None:
        check_condition(cond_text)
    ref: list[int] = []
    cond = make_condition(dbg, cond_text, ref) if cond_text is not None else None
    kind, where = location_request(dbg, location)
    if kind == "address":
        bp = s.break_at_address(where["address"], condition=cond, temporary=temporary)
    elif kind == "line":
        bp = s.break_at_line(where["file"], where["line"], condition=cond, temporary=temporary)
    else:
        bp = s.break_at_kernel(where["kernel"], condition=cond, temporary=temporary)
    ref.append(bp.id)
    dbg.user_breakpoints[bp.id] = bp
    if cond_text is not None:
        dbg.conditions[bp.id] = cond_text
        if getattr(bp, "condition_text", "missing") is None:
            bp.condition_text = cond_text
    if label is not None:
        dbg.breakpoint_labels[bp.id] = label
    return bp


def location_request(dbg: Any, location: str) -> tuple[str, dict]:
    """gdb's LOCATION (`kernel`, `file:line`, `line`, `*address`, empty: the
    focus's pc) as (breakpoint kind, its fields)."""
    s = dbg.session
    if not location:
        f = dbg.need_focus()
        return "address", {"address": s.warp(f.dev, f.sm, f.wp).lane(f.ln).pc}
    if location.startswith("*"):
        return "address", {"address": _address(dbg, location[1:].strip())}
    if re.fullmatch(r".+:\d+", location):
        file, line = location.rsplit(":", 1)
        return "line", {"file": file.strip(), "line": int(line)}
    if location.isdigit():
        file = _current_file(dbg)
        if file is None:
            raise CommandError("No default source file; use FILE:LINE.")
        return "line", {"file": file, "line": int(location)}
    if re.fullmatch(r"[A-Za-z_$][\w$.]*(?:::[A-Za-z_$][\w$.]*)*", location):
        return "kernel", {"kernel": ptx_function_name(dbg, location)}
    raise CommandError(f'Function "{location}" not defined.')


def source_name(linkage: str) -> str:
    """`_Z6helperi` -> `helper`, `_ZN8__main__4bodyB2v1...` -> `__main__::body`
    (the Itanium-mangled name's qualified name; others as they are)."""
    from gpudbg.debug.breakpoints import qualified_name
    return qualified_name(linkage) or linkage


def ptx_function_name(dbg: Any, name: str) -> str:
    """The PTX name of function `name` in the loaded code: itself when a
    module has it, else the one function whose C++ name it is. A name no
    loaded module knows stays as given (pending until a module has it)."""
    s = dbg.session
    from gpudbg.debug.breakpoints import functions_named
    candidates = set()
    for dev in dbg.devices():
        for program in safe(s.backend.programs, dev, default=[]):
            if name in program.functions:
                return name
            candidates |= set(functions_named(program, name))
    if len(candidates) > 1:
        raise CommandError(f'Function "{name}" is ambiguous: {", ".join(sorted(candidates))}.')
    return candidates.pop() if candidates else name


def announce(dbg: Any, bp: Any) -> str:
    """gdb's `Breakpoint 1 at 0x...: file saxpy.cu, line 5.`"""
    label = "Temporary breakpoint" if bp.temporary else "Breakpoint"
    if bp.id in getattr(dbg, "breakpoint_labels", {}):
        label = dbg.breakpoint_labels[bp.id].capitalize()
    if bp.pending:
        return f"{label} {bp.id} ({bp.describe() if hasattr(bp, 'describe') else bp.kernel}) pending."
    address = min(bp.addresses)
    where = source_of(dbg.session, 0, address)
    if where is None:
        return f"{label} {bp.id} at 0x{address:x}"
    return f"{label} {bp.id} at 0x{address:x}: file {where[0]}, line {where[1]}."


def _ids(rest: str) -> list[int]:
    out = []
    for tok in rest.replace(",", " ").split():
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", tok)
        if m is None:
            raise CommandError(f'Convenience variable must have integer value.\nArgs must be numbers '
                               f'or \'$\' variables: "{tok}".')
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise CommandError(f"inverted breakpoint range {tok}")
        out.extend(range(lo, hi + 1))
    return out


def _user_breakpoints(dbg: Any) -> list[Any]:
    """The breakpoints the user set that still exist (break_on_launch's
    per-launch ones are the Session's and are not listed)."""
    return [b for b in dbg.session.breakpoints() if b.id in dbg.user_breakpoints]


def _each(dbg: Any, rest: str, action: str) -> None:
    s = dbg.session
    words = rest.split()
    if words and words[0] == "display" and action in ("delete", "disable", "enable"):
        from .display import each_display
        each_display(dbg, " ".join(words[1:]), action)      # gdb's `delete display N`, ...
        return
    if words and words[0] in ("breakpoints", "br", "b"):
        rest = " ".join(words[1:])
    from . import watchpoints
    ids = _ids(rest) if rest.strip() else [b.id for b in _user_breakpoints(dbg)] + \
        [w.id for w in watchpoints.user_watchpoints(dbg)]
    known = {b.id for b in _user_breakpoints(dbg)}
    for i in ids:
        if i not in known and watchpoints.apply(dbg, i, action):
            continue
        if i not in known:
            print(f"No breakpoint number {i}.")
            continue
        if action == "delete":
            s.delete_breakpoint(i)
            dbg.conditions.pop(i, None)
            dbg.user_breakpoints.pop(i, None)
            dbg.dprintfs.pop(i, None)
        else:
            s.enable_breakpoint(i, action == "enable")


def _condition(dbg: Any, rest: str) -> None:
    words = rest.split(None, 1)
    if not words or not words[0].isdigit():
        raise CommandError("Argument required (breakpoint number).")
    i = int(words[0])
    from . import watchpoints
    bp = next((b for b in _user_breakpoints(dbg) if b.id == i), None) or watchpoints.find(dbg, i)
    if bp is None:
        raise CommandError(f"No breakpoint number {i}.")
    if len(words) == 1:
        bp.condition = None
        dbg.conditions.pop(i, None)
        print(f"Breakpoint {i} now unconditional.")
        return
    check_condition(words[1])
    bp.condition = make_condition(dbg, words[1], [i])
    dbg.conditions[i] = words[1]


def info_breakpoints(dbg: Any) -> str:
    from . import watchpoints
    bps = _user_breakpoints(dbg)
    if not bps and not watchpoints.user_watchpoints(dbg):
        return "No breakpoints or watchpoints."
    lines = ["Num     Type           Disp Enb Address            What"]
    for b in bps:
        disp = "del " if b.temporary else "keep"
        enb = "y" if b.enabled else "n"
        if b.pending:
            addr, what = "<PENDING>         ", b.describe() if hasattr(b, "describe") else str(b.kernel)
        else:
            a = min(b.addresses)
            addr = f"0x{a:016x}"
            fn = safe(dbg.session.function_at, 0, a)
            where = source_of(dbg.session, 0, a)
            what = (f"in {source_name(fn[0])} " if fn else "") + (f"at {where[0]}:{where[1]}" if where else "")
        kind = dbg.breakpoint_labels.get(b.id, "breakpoint")
        lines.append(f"{b.id:<7} {kind:<14} {disp} {enb}   {addr} {what}".rstrip())
        if b.id in dbg.dprintfs:
            lines.append(f"        printf {dbg.dprintfs[b.id]}")
        cond = dbg.conditions.get(b.id)
        if cond:
            lines.append(f"\tstop only if {cond}")
        if b.hits:
            lines.append(f"\tbreakpoint already hit {b.hits} time{'s' if b.hits != 1 else ''}")
    return "\n".join(watchpoints.merged(lines, dbg))
