"""display, undisplay, info display: expressions shown at every stop.

The one idea: a display is a numbered (format, expression) pair that is
evaluated afresh, for whatever lane has the focus and in its selected
frame, each time the program stops (the debugger counts stops and runs
`show_all` after a command that produced one). gdb's two kinds are kept:
`display/FMT EXPR` with a print format (`x`, `d`, ...) prints like
`print/FMT`, and one with a size, count or the `i`/`s` formats examines
memory like `x/FMT` (`display/i $pc`). A display whose expression cannot
be evaluated at a stop shows gdb's `<error: ...>` and stays enabled. As
in gdb, a display that uses a function's local names is shown only while
the focus is in that function (it is tied to the selected frame's function
when it is made, unless it evaluates without any lane).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .commands import Command, CommandError

_EXAMINE_ONLY = re.compile(r"[0-9isbhgw]")


@dataclass
class Display:
    number: int
    expression: str
    format: str | None          # print format letter, or an x/ spec when `examine`
    examine: bool
    enabled: bool = True
    function: str | None = None  # PTX function whose locals it uses (None: it needs none)

    @property
    def spec(self) -> str:
        return f"/{self.format} " if self.format else ""


def register(dbg: Any) -> None:
    dbg.displays = []
    dbg.display_counter = 0
    add = dbg.add
    add(Command("display", lambda rest: _display(dbg, rest),
                "display[/FMT] EXPR: print EXPR (for the focus) at every stop; without EXPR show them all",
                aliases=("disp",)))
    add(Command("undisplay", lambda rest: _undisplay(dbg, rest),
                "undisplay [N...]: stop displaying expressions N (all without arguments)"))


def _parse(rest: str) -> tuple[str | None, bool, str]:
    from .formatting import parse_examine_spec, parse_print_format
    text = rest.strip()
    if not text.startswith("/"):
        return None, False, text
    spec, _, expr = text[1:].partition(" ")
    if _EXAMINE_ONLY.search(spec):
        parse_examine_spec(spec)               # gdb's errors for a bad x/ spec
        return spec, True, expr.strip()
    return parse_print_format(spec), False, expr.strip()


def _display(dbg: Any, rest: str) -> None:
    if not rest.strip():
        show_all(dbg)
        return
    fmt, examine, expr = _parse(rest)
    if not expr:
        raise CommandError("Argument required (expression to compute).")
    from .expr import parse
    parse(expr)                # a syntax error is refused now, not at every stop
    dbg.display_counter += 1
    d = Display(dbg.display_counter, expr, fmt, examine, function=_scope(dbg, expr, examine))
    if dbg.focus is not None and dbg.state_readable(dbg.focus.dev):
        _first_show(dbg, d)
    else:
        dbg.displays.append(d)


def _scope(dbg: Any, expr: str, examine: bool) -> str | None:
    """The function a new display is tied to (see the module docstring)."""
    from .debugger import _errors
    from .evaluate import evaluate
    from .inspection import _NoFocus
    f = dbg.focus
    if f is None or not dbg.state_readable(f.dev) or examine:
        return None
    try:
        evaluate(expr, _NoFocus(dbg.store))
        return None
    except _errors():
        pass
    return _function(dbg)


def _function(dbg: Any) -> str | None:
    from .debugger import _errors
    f = dbg.focus
    try:
        return dbg.session.frames(f.dev, f.sm, f.wp, f.ln)[dbg.frame_level].function
    except (IndexError, *_errors()):
        return None


def _undisplay(dbg: Any, rest: str) -> None:
    each_display(dbg, rest, "delete")


def each_display(dbg: Any, rest: str, action: str) -> None:
    """undisplay / delete|disable|enable display [N...] (all without N)."""
    words = rest.replace(",", " ").split()
    if words and words[0] == "display":
        words = words[1:]
    chosen: list[int] = []
    for w in words:
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", w)
        if m is None:
            raise CommandError(f'Arguments must be display numbers: "{w}".')
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        for n in range(lo, hi + 1):
            if not any(d.number == n for d in dbg.displays):
                print(f"No display number {n}.")
            chosen.append(n)
    hit = [d for d in dbg.displays if not words or d.number in chosen]
    if action == "delete":
        dbg.displays[:] = [d for d in dbg.displays if d not in hit]
    for d in hit:
        d.enabled = action == "enable"


def _first_show(dbg: Any, d: Display) -> None:
    """Show a new display at once; an unknown name refuses it (gdb's
    rule: a display is parsed where it is made), other errors do not."""
    from .debugger import _errors
    from .evaluate import evaluate
    from .inspection import eval_context
    if not d.examine:
        try:
            evaluate(d.expression, eval_context(dbg))
        except _errors() as e:
            message = getattr(e, "message", None) or str(e)
            if message.startswith("No symbol"):
                dbg.display_counter -= 1
                raise CommandError(message) from None
    dbg.displays.append(d)
    _show(dbg, d)


def _show(dbg: Any, d: Display) -> None:
    from .formatting import ExamineState, examine, format_value
    from .evaluate import evaluate
    from .debugger import _errors
    from .inspection import eval_context
    ctx = eval_context(dbg)
    if d.examine:
        head = f"{d.number}: x/{d.format} {d.expression}"
        try:
            lines = examine(ctx, d.format or "", d.expression, ExamineState())
        except _errors() as e:     # a display that fails never stops the others
            print(f"{head}\n<error: {getattr(e, 'message', None) or e}>")
            return
        print(head)
        for line in lines:
            print(line)
        return
    label = f"{d.number}: {d.spec}{d.expression} = "
    try:
        text = format_value(evaluate(d.expression, ctx), d.format, ctx)
    except _errors() as e:         # shown as gdb shows a display that fails
        text = f"<error: {getattr(e, 'message', None) or e}>"
    print(label + text)


def show_all(dbg: Any) -> None:
    here = _function(dbg) if dbg.focus is not None else None
    for d in list(getattr(dbg, "displays", [])):
        if d.enabled and (d.function is None or d.function == here):
            _show(dbg, d)


def info_display(dbg: Any) -> str:
    if not dbg.displays:
        return "There are no auto-display expressions now."
    lines = ["Auto-display expressions now in effect:", "Num Enb Expression"]
    for d in dbg.displays:
        spec = f"/{d.format} " if d.format else ""
        lines.append(f"{d.number}:   {'y' if d.enabled else 'n'}  {spec}{d.expression}")
    return "\n".join(lines)
