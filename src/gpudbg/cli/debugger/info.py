"""`info ...`: the cuda-gdb tables (`info cuda devices|sms|warps|lanes|
kernels|blocks|threads|contexts|launch trace`) and gdb's info commands.

The one idea: every table is one rich Table with cuda-gdb's column names
and a leading marker column where `*` marks the row holding the focus;
cuda-gdb's group lines (`Device 0 SM 0`, `Kernel 0`) are inserted between
rows after rendering, so the columns stay aligned across groups. Ranges
are coalesced as cuda-gdb does: `info cuda threads` joins threads that
are consecutive in (block, thread) order and sit at the same pc,
`info cuda blocks` joins consecutive blocks in the same state. Filters
(`info cuda threads block 1`, `info cuda lanes warp 2`) take the focus
command's coordinates.
"""
from __future__ import annotations

import io
from typing import Any, Iterable

from rich.console import Console
from rich.table import Table

from .breakpoints import info_breakpoints
from .commands import Command, CommandError, resolve_word
from .focus import NO_FOCUS, dim, parse_request
from .frames import ptx_kernel_args, safe, source_of
from .inspection import info_frame_line, info_registers, info_variables

CUDA_TABLES = ("devices", "sms", "warps", "lanes", "kernels", "blocks", "threads", "contexts", "launch",
               "managed", "textures")
INFO_TOPICS = ("cuda", "breakpoints", "registers", "locals", "args", "line", "all-registers", "frame",
               "display", "watchpoints")
_STATUS = {0: "Invalid", 1: "Pending", 2: "Active", 3: "Sleeping", 4: "Terminated", 5: "Undetermined"}


def register(dbg: Any) -> None:
    completions = {"cuda": {t: ({"trace": None} if t == "launch" else None) for t in CUDA_TABLES},
                   **{t: None for t in INFO_TOPICS if t != "cuda"}}
    dbg.add(Command("info", lambda rest: print(info(dbg, rest)), "info cuda TABLE | breakpoints | registers "
                    "| locals | args | line | frame | display", aliases=("i", "inf"), completions=completions))


def info(dbg: Any, rest: str) -> str:
    words = rest.split(None, 1)
    if not words:
        raise CommandError('"info" must be followed by the name of an info command: '
                           + ", ".join(INFO_TOPICS) + ".")
    topic = resolve_word(words[0], INFO_TOPICS, "info command", {"b": "breakpoints", "br": "breakpoints",
                                                                  "r": "registers", "reg": "registers"})
    tail = words[1] if len(words) > 1 else ""
    if topic == "cuda":
        return info_cuda(dbg, tail)
    if topic == "breakpoints":
        return info_breakpoints(dbg)
    if topic == "watchpoints":
        from .watchpoints import info_watchpoints
        return info_watchpoints(dbg)
    if topic in ("registers", "all-registers"):
        return info_registers(dbg, tail)
    if topic == "locals":
        return info_variables(dbg, parameters=False)
    if topic == "args":
        return info_variables(dbg, parameters=True)
    if topic == "frame":
        from .frame_commands import info_frame
        return info_frame(dbg)
    if topic == "display":
        from .display import info_display
        return info_display(dbg)
    return info_frame_line(dbg)


def info_cuda(dbg: Any, rest: str) -> str:
    words = rest.split(None, 1)
    if not words:
        tables = ", ".join(t for t in CUDA_TABLES if t != "launch")
        raise CommandError(f'"info cuda" must be followed by one of: {tables}, launch trace.')
    what = resolve_word(words[0], CUDA_TABLES, "info cuda command")
    tail = words[1] if len(words) > 1 else ""
    if what == "launch":
        tw = tail.split(None, 1)
        if not tw or resolve_word(tw[0], ("trace", "children"), "info cuda launch command") != "trace":
            raise CommandError('"info cuda launch" must be followed by "trace".')
        return launch_trace(dbg)
    if what == "managed":
        from .managed import info_managed
        return info_managed(dbg)
    if what == "textures":
        from .textures import info_textures
        return info_textures(dbg)
    filters = {k: v for k, v in parse_request(tail).items() if v is not None} if tail.strip() else {}
    return {"devices": devices, "sms": sms, "warps": warps, "lanes": lanes, "kernels": kernels,
            "blocks": blocks, "threads": threads, "contexts": contexts}[what](dbg, filters)


# ------------------------------------------------------------------ rendering
def render(columns: Iterable[str], rows: list[tuple[str | None, list[str]]], right: Iterable[str] = ()) -> str:
    """rows: (group label starting here or None, cells with the marker first)."""
    table = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 1), header_style=None,
                  highlight=False)
    right = set(right)
    for c in columns:
        table.add_column(c, justify="right" if c in right else "left", no_wrap=True)
    for _label, cells in rows:
        table.add_row(*cells)
    buf = io.StringIO()
    Console(file=buf, width=400, color_system=None, force_terminal=False, highlight=False,
            soft_wrap=False).print(table)
    lines = [ln.rstrip() for ln in buf.getvalue().splitlines()]
    out = [lines[0]] if lines else []
    for (label, _cells), line in zip(rows, lines[1:]):
        if label is not None:
            out.append(label)
        out.append(line)
    return "\n".join(out)


def _mark(yes: bool) -> str:
    return "*" if yes else " "


def _readable_devices(dbg: Any) -> list[int]:
    return [d for d in dbg.devices() if dbg.state_readable(d)]


def _match(filters: dict, **coords: Any) -> bool:
    return all(coords.get(k, v) == v for k, v in filters.items())


def _pc_offset(dbg: Any, dev: int, pc: int) -> int:
    program = safe(dbg.session.program_at, dev, pc)
    return pc - program.code_base if program is not None else pc


# ------------------------------------------------------------------ tables
def devices(dbg: Any, filters: dict) -> str:
    f = dbg.focus
    rows = []
    for d in dbg.session.devices():
        if not _match(filters, device=d.dev):
            continue
        active = 0
        if dbg.state_readable(d.dev):
            for w in safe(dbg.session.warps, d.dev, default=[]):
                active |= 1 << w.sm
        rows.append((None, [_mark(f is not None and f.dev == d.dev), str(d.dev),
                            f"{d.pci_bus_id:02x}:{d.pci_dev_id:02x}.0", d.name, d.type_name, d.sm_type,
                            str(d.num_sms), str(d.num_warps), str(d.num_lanes), str(d.num_registers),
                            f"0x{active:0{max(8, (d.num_sms + 3) // 4)}x}"]))
    return render(["", "Dev", "PCI Bus/Dev ID", "Name", "Description", "SM Type", "SMs", "Warps/SM",
                   "Lanes/Warp", "Max Regs/Lane", "Active SMs Mask"], rows,
                  right={"Dev", "SMs", "Warps/SM", "Lanes/Warp", "Max Regs/Lane"})


def _need_any(dbg: Any) -> list[int]:
    devs = _readable_devices(dbg)
    if not devs or not any(safe(dbg.session.warps, d, default=[]) for d in devs):
        raise CommandError(NO_FOCUS)
    return devs


def sms(dbg: Any, filters: dict) -> str:
    devs = _need_any(dbg)
    f = dbg.focus
    rows = []
    for dev in devs:
        if "device" not in filters and f is not None and dev != f.dev:
            continue
        by_sm: dict[int, int] = {}
        for w in dbg.session.warps(dev):
            by_sm[w.sm] = by_sm.get(w.sm, 0) | (1 << w.wp)
        label = f"Device {dev}"
        for sm_id in sorted(by_sm):
            if not _match(filters, device=dev, sm=sm_id):
                continue
            rows.append((label, [_mark(f is not None and (f.dev, f.sm) == (dev, sm_id)), str(sm_id),
                                 f"0x{by_sm[sm_id]:016x}"]))
            label = None
    return render(["", "SM", "Active Warps Mask"], rows, right={"SM"})


def warps(dbg: Any, filters: dict) -> str:
    _need_any(dbg)
    f = dbg.need_focus()
    dev = filters.get("device", f.dev)
    sm_id = filters.get("sm", f.sm)
    rows = []
    label = f"Device {dev} SM {sm_id}"
    for w in sorted(dbg.session.warps(dev), key=lambda w: w.wp):
        if w.sm != sm_id or not _match(filters, warp=w.wp):
            continue
        active = [lv for lv in w.lanes if lv.active]
        first = active[0].thread_idx if active else (w.lanes[0].thread_idx if w.lanes else (0, 0, 0))
        rows.append((label, [_mark((f.dev, f.sm, f.wp) == (dev, sm_id, w.wp)), str(w.wp),
                             f"0x{w.active_mask:08x}", f"0x{w.valid_mask & ~w.active_mask:08x}",
                             f"0x{_pc_offset(dbg, dev, w.pc):016x}", str(dbg.kernel_of(dev, w.grid_id)),
                             dim(w.block_idx), dim(first)]))
        label = None
    return render(["", "Wp", "Active Lanes Mask", "Divergent Lanes Mask", "Active Physical PC", "Kernel",
                   "BlockIdx", "First Active ThreadIdx"], rows, right={"Wp", "Kernel"})


def lanes(dbg: Any, filters: dict) -> str:
    _need_any(dbg)
    f = dbg.need_focus()
    dev, sm_id, wp = filters.get("device", f.dev), filters.get("sm", f.sm), filters.get("warp", f.wp)
    w = dbg.session.warp(dev, sm_id, wp)
    rows = []
    label = f"Device {dev} SM {sm_id} Warp {wp}"
    for lv in w.lanes:
        if not _match(filters, lane=lv.ln):
            continue
        state = "active" if lv.active else ("barrier" if lv.at_barrier else "divergent")
        exc = "None" if not lv.exception else lv.exception.name.replace("CUDBG_EXCEPTION_", "")
        rows.append((label, [_mark((f.dev, f.sm, f.wp, f.ln) == (dev, sm_id, wp, lv.ln)), str(lv.ln), state,
                             f"0x{_pc_offset(dbg, dev, lv.pc):016x}", dim(lv.thread_idx), exc]))
        label = None
    return render(["", "Ln", "State", "Physical PC", "ThreadIdx", "Exception"], rows, right={"Ln"})


def invocation(dbg: Any, grid: Any) -> str:
    """`saxpy(n=1024, a=2.5, x=0x..., y=0x...)`, with DWARF parameter
    names (-G) over the PTX .param names when the counts agree."""
    s = dbg.session
    args = ptx_kernel_args(s, grid.dev, grid)
    program = safe(s.program_at, grid.dev, grid.entry_address)
    if program is not None:
        sp = safe(lambda: s.debug_info(program).function(grid.kernel))
        names = [p.name for p in sp.parameters] if sp is not None else []
        if len(names) == len(args):
            args = [(n, v) for n, (_, v) in zip(names, args)]
    from .breakpoints import source_name
    return f"{source_name(grid.kernel)}({', '.join(f'{n}={v}' for n, v in args)})"


def _grids(dbg: Any) -> list[Any]:
    out = []
    for dev in dbg.devices():
        for g in safe(dbg.session.grids, dev, default=[]):
            dbg.kernels.note(g)
            out.append(g)
    return sorted(out, key=lambda g: dbg.kernel_of(g.dev, g.grid_id))


def kernels(dbg: Any, filters: dict) -> str:
    grids = [g for g in _grids(dbg) if _match(filters, device=g.dev, grid=g.grid_id,
                                                kernel=dbg.kernel_of(g.dev, g.grid_id))]
    if not grids:
        return "No CUDA kernels."
    f = dbg.focus
    rows = []
    for g in grids:
        mask = 0
        if dbg.state_readable(g.dev):
            for w in safe(dbg.session.warps, g.dev, default=[]):
                if w.grid_id == g.grid_id:
                    mask |= 1 << w.sm
        rows.append((None, [_mark(f is not None and (f.dev, f.grid) == (g.dev, g.grid_id)),
                            str(dbg.kernel_of(g.dev, g.grid_id)),
                            str(dbg.kernel_of(g.dev, g.parent_grid_id)) if g.parent_grid_id else "-",
                            str(g.dev), str(g.grid_id),
                            _STATUS.get(int(g.status), str(g.status)), f"0x{mask:08x}", dim(g.grid_dim),
                            dim(g.block_dim), invocation(dbg, g)]))
    return render(["", "Kernel", "Parent", "Dev", "Grid", "Status", "SMs Mask", "GridDim", "BlockDim",
                   "Invocation"], rows, right={"Kernel", "Parent", "Dev", "Grid"})


def _linear(idx: tuple[int, int, int], extent: tuple[int, int, int]) -> int:
    return idx[0] + extent[0] * (idx[1] + extent[1] * idx[2])


def _resident(dbg: Any, filters: dict):
    """(dev, grid, block, thread, pc, lane site) of every resident thread."""
    out = []
    for dev in _need_any(dbg):
        for w in dbg.session.warps(dev):
            for lv in w.lanes:
                k = dbg.kernel_of(dev, w.grid_id)
                if _match(filters, device=dev, sm=w.sm, warp=w.wp, lane=lv.ln, grid=w.grid_id, kernel=k,
                          block=tuple(w.block_idx), thread=tuple(lv.thread_idx)):
                    out.append((dev, w.grid_id, tuple(w.block_idx), tuple(lv.thread_idx), lv.pc,
                                (w.sm, w.wp, lv.ln), lv))
    return out


def _coalescing(dbg: Any) -> bool:
    from .cuda_settings import current
    return current(dbg, "coalescing") == "on"


def _never(a: Any, b: Any) -> bool:
    return False


def _runs(items: list, same) -> list[list]:
    runs: list[list] = []
    for it in items:
        if runs and same(runs[-1][-1], it):
            runs[-1].append(it)
        else:
            runs.append([it])
    return runs


def threads(dbg: Any, filters: dict) -> str:
    items = _resident(dbg, filters)
    f = dbg.focus
    grids = {(g.dev, g.grid_id): g for g in _grids(dbg)}

    def order(it):
        g = grids.get((it[0], it[1]))
        gd, bd = (g.grid_dim, g.block_dim) if g is not None else ((1 << 20,) * 3, (1024,) * 3)
        return (dbg.kernel_of(it[0], it[1]), _linear(it[2], gd), _linear(it[3], bd))

    items.sort(key=order)

    def consecutive(a, b):
        if (a[0], a[1]) != (b[0], b[1]) or a[4] != b[4]:
            return False
        oa, ob = order(a), order(b)
        return ob == (oa[0], oa[1], oa[2] + 1) or (ob[1] == oa[1] + 1 and ob[2] == 0 and
                                                   _is_last_thread(grids.get((a[0], a[1])), a[3]))
    rows = []
    last_kernel = None
    for run in _runs(items, consecutive if _coalescing(dbg) else _never):
        a, b = run[0], run[-1]
        k = dbg.kernel_of(a[0], a[1])
        label = f"Kernel {k}" if k != last_kernel else None
        last_kernel = k
        where = source_of(dbg.session, a[0], a[4])
        has_focus = f is not None and any((it[0], it[5]) == (f.dev, (f.sm, f.wp, f.ln)) for it in run)
        rows.append((label, [_mark(has_focus), dim(a[2]), dim(a[3]), dim(b[2]), dim(b[3]), str(len(run)),
                             f"0x{a[4]:016x}", where[0] if where else "n/a", str(where[1]) if where else "n/a"]))
    return render(["", "BlockIdx", "ThreadIdx", "To BlockIdx", "ThreadIdx", "Count", "Virtual PC",
                   "Filename", "Line"], rows, right={"Count", "Line"})


def _is_last_thread(grid: Any, thread: tuple[int, int, int]) -> bool:
    if grid is None:
        return False
    bd = grid.block_dim
    return _linear(thread, bd) == bd[0] * bd[1] * bd[2] - 1


def blocks(dbg: Any, filters: dict) -> str:
    items = _resident(dbg, {k: v for k, v in filters.items() if k != "thread"})
    f = dbg.focus
    grids = {(g.dev, g.grid_id): g for g in _grids(dbg)}
    seen: dict[tuple, str] = {}
    for dev, grid_id, block, _thread, _pc, _site, lv in items:
        key = (dev, grid_id, block)
        state = seen.get(key, "running")
        if lv.exception:
            state = "exception"
        seen[key] = state

    def order(key):
        g = grids.get((key[0], key[1]))
        return (dbg.kernel_of(key[0], key[1]), _linear(key[2], g.grid_dim if g is not None else (1 << 20,) * 3))

    keys = sorted(seen, key=order)

    def consecutive(a, b):
        oa, ob = order(a), order(b)
        return oa[0] == ob[0] and ob[1] == oa[1] + 1 and seen[a] == seen[b]
    rows, last_kernel = [], None
    for run in _runs(keys, consecutive if _coalescing(dbg) else _never):
        a, b = run[0], run[-1]
        k = dbg.kernel_of(a[0], a[1])
        label = f"Kernel {k}" if k != last_kernel else None
        last_kernel = k
        has_focus = f is not None and any((key[0], key[1], key[2]) == (f.dev, f.grid, f.block) for key in run)
        rows.append((label, [_mark(has_focus), dim(a[2]), dim(b[2]), str(len(run)), seen[a]]))
    return render(["", "BlockIdx", "To BlockIdx", "Count", "State"], rows, right={"Count"})


def contexts(dbg: Any, filters: dict) -> str:
    f = dbg.focus
    known: dict[tuple[int, int], bool] = {}
    for rec in dbg.kernels.records():       # every launch seen names its context
        if rec.grid is not None:
            known[(rec.dev, rec.grid.context_id)] = False
    for g in _grids(dbg):
        active = int(g.status) == 2
        known[(g.dev, g.context_id)] = known.get((g.dev, g.context_id), False) or active
    if not known:
        return "No CUDA contexts."
    focus_ctx = None
    if f is not None:
        g = safe(dbg.session.grid, f.dev, f.grid)
        focus_ctx = (f.dev, g.context_id) if g is not None else None
    rows = [(None, [_mark(key == focus_ctx), f"0x{key[1]:016x}", str(key[0]), "active" if act else "inactive"])
            for key, act in sorted(known.items()) if _match(filters, device=key[0])]
    return render(["", "Context", "Dev", "State"], rows, right={"Dev"})


def launch_trace(dbg: Any) -> str:
    """The focused kernel and, for a kernel launched from the device, the
    chain of grids that launched it, innermost first (cuda-gdb's levels)."""
    f = dbg.need_focus()
    g = dbg.session.grid(f.dev, f.grid)
    rows = []
    while g is not None:
        rows.append((None, ["*" if not rows else "", str(len(rows)), str(dbg.kernel_of(g.dev, g.grid_id)),
                            str(g.dev), str(g.grid_id), _STATUS.get(int(g.status), str(g.status)),
                            dim(g.grid_dim), dim(g.block_dim), invocation(dbg, g)]))
        g = safe(dbg.session.grid, g.dev, g.parent_grid_id, default=None) if g.parent_grid_id else None
    return render(["", "Lvl", "Kernel", "Dev", "Grid", "Status", "GridDim", "BlockDim", "Invocation"], rows,
                  right={"Lvl", "Kernel", "Dev", "Grid"})
