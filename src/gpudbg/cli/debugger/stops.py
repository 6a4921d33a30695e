"""What the debugger says when the device stops, in cuda-gdb's words.

The one idea: a STOPPED event names the lanes that caused it (breakpoint
lanes, or the exception's lane); the focus moves to one of them (kept if
the current focus is among them, else the lowest), the switch is
announced, and the stop is told as cuda-gdb tells it: `Thread 1 "python"
hit Breakpoint N, <frame>` or the `CUDA Exception:` block with the
faulting pc, the precise fault message and address the simulator knows,
then `received signal CUDA_EXCEPTION_<n>`. Temporary breakpoints (tbreak
and break_on_launch's) are deleted once reported.
"""
from __future__ import annotations

from typing import Any

from gpudbg.sim.faults import EXCEPTION_TITLES, CUDBGException

from .focus import LaneSite
from .frames import safe, source_of



def _site_for(dbg: Any, ev: Any) -> LaneSite | None:
    all_sites = dbg.all_sites()
    if not all_sites:
        return None
    by_phys = {(s.dev, s.sm, s.wp, s.ln): s for s in all_sites}
    lanes = [(ev.dev, int(sm), int(wp), int(ln)) for sm, wp, ln in ev.lanes]
    if not lanes:
        for sm, wp in ev.warps:
            w = safe(dbg.session.warp, ev.dev, int(sm), int(wp))
            if w is not None:
                active = [lv.ln for lv in w.lanes if lv.active] or [lv.ln for lv in w.lanes]
                lanes += [(ev.dev, w.sm, w.wp, ln) for ln in active]
    f = dbg.focus
    if f is not None and (f.dev, f.sm, f.wp, f.ln) in lanes and (f.dev, f.sm, f.wp, f.ln) in by_phys:
        return by_phys[(f.dev, f.sm, f.wp, f.ln)]
    from .cuda_settings import current
    if current(dbg, "thread_selection") == "logical":    # the lowest block, then thread
        def logical(key):
            s = by_phys[key]
            return (s.block[::-1], s.thread[::-1], key)
        resident = sorted((k for k in lanes if k in by_phys), key=logical)
        if resident:
            return by_phys[resident[0]]
    for key in sorted(lanes):
        if key in by_phys:
            return by_phys[key]
    broken_warps = {(d, w.sm, w.wp) for d in {s.dev for s in all_sites}
                    for w in dbg.session.warps(d) if w.broken}
    broken = [s for s in all_sites if (s.dev, s.sm, s.wp) in broken_warps]
    return (broken or all_sites)[0]


def _exception_kind(ev: Any, dbg: Any, site: LaneSite | None) -> CUDBGException | None:
    kind = ev.exception
    if kind in (None, CUDBGException.CUDBG_EXCEPTION_NONE) and site is not None:
        w = safe(dbg.session.warp, site.dev, site.sm, site.wp)
        lane = safe(w.lane, site.ln) if w is not None else None
        kind = getattr(lane, "exception", None)
    return kind


def thread(dbg: Any) -> str:
    """gdb's name of the host thread: `Thread 1 "python"` (a native
    program: its own name)."""
    return f'Thread 1 "{getattr(dbg, "thread_name", "python")}"'


def report_stop(dbg: Any, ev: Any) -> None:
    from gpudbg.debug.backend import StopReason
    site = _site_for(dbg, ev)
    reason = ev.reason
    dbg.stops += 1
    if reason is StopReason.EXCEPTION:
        _report_exception(dbg, ev, site)
        return
    if site is not None:
        dbg.set_focus(site)
    if reason is StopReason.BREAKPOINT:
        _report_breakpoint(dbg, ev)
        return
    if reason is StopReason.WATCHPOINT:
        from .watchpoints import report_watch
        report_watch(dbg, ev)
        return
    print()
    if reason is StopReason.SUSPENDED:
        print(f"{thread(dbg)} received signal SIGINT, Interrupt.")
    else:
        print(f"{thread(dbg)} stopped: every runnable thread is held.")
    if dbg.focus is not None:
        dbg.print_location(full=True, with_address=True)


def _report_breakpoint(dbg: Any, ev: Any) -> None:
    s = dbg.session
    user = [i for i in ev.breakpoints if i in dbg.user_breakpoints]
    if dbg.condition_errors:
        for msg in dict.fromkeys(dbg.condition_errors):
            print(msg)
        dbg.condition_errors.clear()
    print()
    if dbg.focus is None:
        print(f"{thread(dbg)} hit a breakpoint, but no lane of it is resident any more.")
        return
    if user:
        bp = dbg.user_breakpoints[user[0]]
        label = "Temporary breakpoint" if bp.temporary else "Breakpoint"
        print(f"{thread(dbg)} hit {label} {user[0]}, ", end="")
    dbg.print_location(full=True)
    live = {b.id for b in s.breakpoints()}
    for i in user:       # the Session removes a temporary breakpoint when it is hit
        if i not in live:
            dbg.user_breakpoints.pop(i, None)
            dbg.conditions.pop(i, None)


def _report_exception(dbg: Any, ev: Any, site: LaneSite | None) -> None:
    s = dbg.session
    kind = _exception_kind(ev, dbg, site)
    title = EXCEPTION_TITLES.get(kind, kind.name if kind is not None else "Unknown Exception")
    pc = ev.address
    if pc is None and site is not None:
        w = safe(s.warp, site.dev, site.sm, site.wp)
        pc = (w.error_pc if w is not None and w.error_pc is not None else getattr(w, "pc", None))
    from .cuda_settings import memcheck_line
    line = memcheck_line(dbg, getattr(ev, "report", None))
    if line is not None:
        print(f"\n{line}")
    print(f"\nCUDA Exception: {title}")
    if pc is not None:
        where = source_of(s, ev.dev, pc)
        print(f"The exception was triggered at PC 0x{pc:x}" + (f" ({where[0]}:{where[1]})" if where else ""))
    for line in _fault_details(dbg, ev, site):
        print(line)
    number = int(kind) if kind is not None else 0
    print(f"\n{thread(dbg)} received signal CUDA_EXCEPTION_{number}, {title}.")
    if site is not None:
        dbg.set_focus(site)
        dbg.print_location(full=True, with_address=True)
    dbg._page_fault = None


def _fault_details(dbg: Any, ev: Any, site: LaneSite | None) -> list[str]:
    """The precise part the simulator knows: the fault's sentence, the
    lane, and the address (from the FaultReport when the event has one)."""
    out = []
    r = getattr(ev, "report", None)
    if r is not None:
        out.append(f"  {r.message}")
        if r.block is not None and r.thread is not None:
            out.append(f"  by thread ({','.join(map(str, r.thread))}) in block "
                       f"({','.join(map(str, r.block))}) [sm {r.sm}, warp {r.warp}, lane {r.lane}]")
        if r.address is not None:
            extra = f" ({r.access_size} bytes, {r.space})" if r.access_size else ""
            out.append(f"  address 0x{r.address:x}{extra}")
        out.append(f"  at pc 0x{r.pc:x} in {r.function}: {r.instruction}")
        return out
    pf = dbg._page_fault
    for m in dict.fromkeys(m for m in (ev.message, getattr(pf, "message", "")) if m):
        out.append(f"  {m}")
    if site is not None:
        out.append(f"  by thread ({','.join(map(str, site.thread))}) in block "
                   f"({','.join(map(str, site.block))}) [sm {site.sm}, warp {site.wp}, lane {site.ln}]")
    if pf is not None and pf.address is not None:
        out.append(f"  address 0x{pf.address:x}")
    return out
