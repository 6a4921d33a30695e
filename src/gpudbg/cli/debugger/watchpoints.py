"""watch, rwatch, awatch, info watchpoints, and how a watchpoint stop is told.

The one idea: gdb's hardware watchpoint is exactly what the simulator can
offer on device memory, for every space: the expression is evaluated
once, at the focus, to an lvalue in memory (a `-G` variable through its
DWARF location, as `print &v` finds it, or `*(float *)0xADDR`), and the
Session watches those bytes (`-l`/`-location` is therefore the only
behaviour, and is accepted). A shared-memory lvalue means the focused
block's copy and a local one the focused thread's, in the focused grid;
both end with that grid. At a stop the lanes that touched the bytes are
named and the values printed in gdb's words: `Old value`/`New value` for a
write watchpoint (which, as in gdb, ignores writes that leave the value
unchanged), `Value` for a read, either for an access watchpoint.

It does not watch values held in registers (a `-G` scalar usually is):
there is no memory to watch, and it says so.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .commands import Command, CommandError
from .frames import at_line_start, safe

_LOCATION = re.compile(r"-l(?:ocation)?(?:\s+|$)")
_LANES_SHOWN = 4


@dataclass
class WatchRecord:
    """What the CLI keeps about a watchpoint it set: the text and the
    type, to print values the way `print` does."""

    expression: str
    type: Any


def _kinds():
    from gpudbg.debug.watch import WatchKind
    return {"watch": WatchKind.WRITE, "rwatch": WatchKind.READ, "awatch": WatchKind.ACCESS}


LABELS = {"write": "Hardware watchpoint", "read": "Hardware read watchpoint",
          "access": "Hardware access (read/write) watchpoint"}
TYPES = {"write": "hw watchpoint", "read": "read watchpoint", "access": "acc watchpoint"}


def register(dbg: Any) -> None:
    helps = {"watch": "stop when an expression's bytes in device memory change: watch [-l] EXPR [if COND]",
             "rwatch": "stop when an expression's bytes are read: rwatch [-l] EXPR [if COND]",
             "awatch": "stop when an expression's bytes are read or written: awatch [-l] EXPR [if COND]"}
    for name, kind in _kinds().items():
        dbg.add(Command(name, lambda rest, k=kind: set_watch(dbg, rest, k), helps[name]))


def records(dbg: Any) -> dict[int, WatchRecord]:
    got = getattr(dbg, "watch_records", None)
    if got is None:
        got = dbg.watch_records = {}
    return got


def set_watch(dbg: Any, rest: str, kind: Any) -> None:
    from gpudbg.cli.debugger.values import Lval
    from gpudbg.debug.watch import WatchKind
    from .breakpoints import check_condition, make_condition, split_condition
    from .evaluate import evaluate
    if not dbg.can_execute:
        raise CommandError("Watchpoints cannot be set in a GPU coredump: the program is not being run.")
    text, cond_text = split_condition(rest)
    m = _LOCATION.match(text)
    location = m is not None
    if m is not None:
        text = text[m.end():].strip()
    if not text:
        raise CommandError("Argument required (expression to compute).")
    if cond_text is not None:
        check_condition(cond_text)
    f = dbg.need_focus()
    value = evaluate(text, dbg.context(f))
    if value.lval is not Lval.MEMORY or value.address is None:
        if value.lval in (Lval.REGISTER, Lval.VARIABLE):
            raise CommandError(f"Cannot watch {text}: it is held in a register, not in device memory "
                               f"(watch memory: global data, a __shared__ or -G local array, "
                               f"or *(TYPE *)ADDRESS).")
        raise CommandError(f"Cannot watch constant value `{text}'.")
    if not value.size:
        raise CommandError(f"Cannot watch {text}: it has no size.")
    ref: list[int] = []
    cond = make_condition(dbg, cond_text, ref) if cond_text is not None else None
    shown = ("-location " if location else "") + text
    wp = dbg.session.watch(value.address, value.size, kind, value.space, dev=f.dev, lane=(f.sm, f.wp, f.ln),
                           condition=cond, changes_only=kind is WatchKind.WRITE, expression=shown)
    ref.append(wp.id)
    wp.condition_text = cond_text
    records(dbg)[wp.id] = WatchRecord(shown, value.type)
    if cond_text is not None:
        dbg.conditions[wp.id] = cond_text
    print(f"{LABELS[kind.value]} {wp.id}: {shown}")


def user_watchpoints(dbg: Any) -> list[Any]:
    """The watchpoints the user set that still exist (a shared or local
    one ends with its grid)."""
    mine = records(dbg)
    return [w for w in safe(dbg.session.watchpoints, default=[]) if w.id in mine]


def apply(dbg: Any, number: int, action: str) -> bool:
    """delete/disable/enable watchpoint `number`; False when it is none."""
    if number not in {w.id for w in user_watchpoints(dbg)}:
        return False
    if action == "delete":
        dbg.session.delete_watchpoint(number)
        records(dbg).pop(number, None)
        dbg.conditions.pop(number, None)
    else:
        dbg.session.enable_watchpoint(number, action == "enable")
    return True


def table_rows(dbg: Any) -> list[tuple[int, list[str]]]:
    """(number, lines) of each watchpoint in `info breakpoints` form."""
    out = []
    for w in user_watchpoints(dbg):
        lines = [f"{w.id:<7} {TYPES[w.kind.value]:<14} keep {'y' if w.enabled else 'n'}   {'':<18} "
                 f"{records(dbg)[w.id].expression}"]
        if w.space.value != "global":
            owner = f"thread ({','.join(map(str, w.thread_idx))}) in " if w.thread_idx is not None else ""
            lines.append(f"\t{w.space.value} memory of {owner}block ({','.join(map(str, w.block_idx))})")
        cond = dbg.conditions.get(w.id)
        if cond:
            lines.append(f"\tstop only if {cond}")
        if w.hits:
            lines.append(f"\tbreakpoint already hit {w.hits} time{'s' if w.hits != 1 else ''}")
        out.append((w.id, lines))
    return out


def info_watchpoints(dbg: Any) -> str:
    rows = table_rows(dbg)
    if not rows:
        return "No watchpoints."
    return "\n".join(["Num     Type           Disp Enb Address            What"]
                     + [line for _n, lines in rows for line in lines])


# ------------------------------------------------------------------ stops
def _value_text(dbg: Any, rec: WatchRecord | None, data: bytes) -> str:
    from .formatting import format_value
    from .values import Value
    if not data:
        return "<unreadable>"
    if rec is not None and rec.type is not None and rec.type.byte_size == len(data):
        try:
            return format_value(Value(rec.type, data))
        except Exception:
            pass
    return "{" + ", ".join(f"0x{b:02x}" for b in data) + "}"


def _lanes_text(dbg: Any, dev: int, lanes: tuple) -> list[str]:
    s = dbg.session
    out = []
    for sm, wp, ln in lanes[:_LANES_SHOWN]:
        w = safe(s.warp, dev, sm, wp)
        lv = safe(w.lane, ln) if w is not None else None
        if lv is None:
            out.append(f"  by [sm {sm}, warp {wp}, lane {ln}]")
            continue
        out.append(f"  by thread ({','.join(map(str, lv.thread_idx))}) in block "
                   f"({','.join(map(str, w.block_idx))}) [sm {sm}, warp {wp}, lane {ln}]")
    if len(lanes) > _LANES_SHOWN:
        out.append(f"  and {len(lanes) - _LANES_SHOWN} more thread{'s' if len(lanes) - _LANES_SHOWN != 1 else ''}")
    return out


def report_watch(dbg: Any, ev: Any) -> None:
    """gdb's report of triggered watchpoints, then the CUDA lanes that
    touched the bytes, then the frame of the focus."""
    from .stops import thread
    recs = records(dbg)
    kinds = {w.id: w.kind.value for w in safe(dbg.session.watchpoints, default=[])}
    if dbg.condition_errors:
        for msg in dict.fromkeys(dbg.condition_errors):
            print(msg)
        dbg.condition_errors.clear()
    first = True
    for hit in ev.watch_hits:
        rec = recs.get(hit.watch)
        kind = kinds.get(hit.watch, "access" if hit.readers and hit.writers else
                         "read" if hit.readers else "write")
        what = rec.expression if rec is not None else f"0x{hit.pc:x}"
        print()
        print(f"{thread(dbg) + ' hit ' if first else ''}{LABELS[kind]} {hit.watch}: {what}")
        first = False
        print()
        if kind == "read" or (kind == "access" and not hit.changed):
            print(f"Value = {_value_text(dbg, rec, hit.new)}")
        else:
            print(f"Old value = {_value_text(dbg, rec, hit.old)}")
            print(f"New value = {_value_text(dbg, rec, hit.new)}")
        for line in _lanes_text(dbg, ev.dev, hit.lanes):
            print(line)
    if dbg.focus is None:
        print("(no lane that touched it is resident any more)")
        return
    f = dbg.focus
    lane = safe(lambda: dbg.session.warp(f.dev, f.sm, f.wp).lane(f.ln))
    mid_line = lane is not None and not at_line_start(dbg.session, f.dev, lane.pc)
    dbg.print_location(full=True, with_address=mid_line)


def find(dbg: Any, number: int) -> Any | None:
    """The user's watchpoint `number` (for `condition N`), or None."""
    return next((w for w in user_watchpoints(dbg) if w.id == number), None)


def merged(lines: list[str], dbg: Any) -> list[str]:
    """`info breakpoints`: the breakpoint table's lines (header, then rows
    that start with their number, each followed by its indented detail
    lines) with the watchpoints' rows put in number order."""
    header, rows = lines[:1], []
    for line in lines[1:]:
        if line[:1].isdigit():
            rows.append((int(line.split()[0]), [line]))
        elif rows:
            rows[-1][1].append(line)
    rows += table_rows(dbg)
    if not header:
        header = ["Num     Type           Disp Enb Address            What"]
    return header + [line for _n, group in sorted(rows, key=lambda r: r[0]) for line in group]


def grid_ended(dbg: Any, ev: Any) -> None:
    """gdb's notice for the watchpoints the Session deleted when their grid
    (whose shared or local memory they watched) ended."""
    ended = dbg.session.__dict__.get("ended_watchpoints")
    if not ended:
        return
    recs = records(dbg)
    for w in [w for w in ended if w.dev == ev.dev and w.grid_id == ev.grid.grid_id]:
        ended.remove(w)
        if recs.pop(w.id, None) is not None:
            dbg.conditions.pop(w.id, None)
            print(f"\nWatchpoint {w.id} deleted because the program has left the block in\n"
                  f"which its expression is valid.")
