"""CUDA threads in DAP's thread view: one DAP thread per warp, shown
by the lane the user looks at, and the custom `cuda/threads` tree.

The one idea: an editor's thread list holds tens of entries, a stopped
grid has up to a million threads, and stepping is per warp anyway
(cuda-gdb's rule), so a DAP thread is a warp: its id is computed from
its physical coordinates (no table to keep in step with the device),
and its stack is that of one chosen lane (the focus, or what
`cuda/focus` picked for the warp, else its first active lane). The
list shows the warps stopped at the breakpoint or exception plus the
focused one; every other warp, block and lane is reachable through
`cuda/threads` and `cuda/focus`. Thread 1 is the host program, listed
while no device thread is stopped.
"""
from __future__ import annotations

from typing import Any

from .protocol import DapError

HOST_THREAD_ID = 1
MAX_LISTED_WARPS = 256
_SM_SHIFT, _DEV_SHIFT = 10, 24


def warp_thread_id(dev: int, sm: int, wp: int) -> int:
    return 2 + ((dev << _DEV_SHIFT) | (sm << _SM_SHIFT) | wp)


def decode_thread_id(tid: int) -> tuple[int, int, int]:
    if tid < 2:
        raise DapError(f"thread {tid} is the host program: it has no device state.")
    code = int(tid) - 2
    return code >> _DEV_SHIFT, (code >> _SM_SHIFT) & ((1 << (_DEV_SHIFT - _SM_SHIFT)) - 1), code & ((1 << _SM_SHIFT) - 1)


def focus_thread_id(engine: Any) -> int | None:
    f = engine.dbg.focus if engine.dbg is not None else None
    return None if f is None else warp_thread_id(f.dev, f.sm, f.wp)


def warp_of(engine: Any, tid: int):
    """The WarpView of DAP thread `tid` (a clear error when it is gone)."""
    from .engine import _debug_errors, error_text
    dev, sm, wp = decode_thread_id(tid)
    try:
        return engine.dbg.session.warp(dev, sm, wp)
    except _debug_errors() as e:
        raise DapError(f"thread {tid} (device {dev}, sm {sm}, warp {wp}) has no resident warp now: "
                       f"{error_text(e)}") from None


def chosen_lane(engine: Any, warp: Any) -> int:
    f = engine.dbg.focus
    valid = {lv.ln for lv in warp.lanes}
    if f is not None and (f.dev, f.sm, f.wp) == (warp.dev, warp.sm, warp.wp) and f.ln in valid:
        return f.ln
    ln = engine.lane_choice.get((warp.dev, warp.sm, warp.wp))
    if ln in valid:
        return ln
    active = [lv.ln for lv in warp.lanes if lv.active]
    if active:
        return active[0]
    if not warp.lanes:
        raise DapError(f"warp {warp.wp} of sm {warp.sm} has no valid lane.")
    return warp.lanes[0].ln


def _dim(t: Any) -> str:
    return "(" + ",".join(str(int(v)) for v in t) + ")"


def thread_name(engine: Any, warp: Any) -> str:
    ln = chosen_lane(engine, warp)
    lane = warp.lane(ln)
    return (f"block {_dim(warp.block_idx)} thread {_dim(lane.thread_idx)} "
            f"[sm {warp.sm} warp {warp.wp} lane {ln}, {len(warp.lanes)} lanes]")


def threads(engine: Any) -> list[dict]:
    dbg = engine.dbg
    if dbg is None or engine.state != "stopped":
        return [{"id": HOST_THREAD_ID, "name": "host program"}]
    from gpudbg.cli.debugger.frames import safe
    s = dbg.session
    listed: list[Any] = []
    f = dbg.focus
    for dev in dbg.devices():
        if not dbg.state_readable(dev):
            continue
        warps = safe(s.warps, dev, default=[]) or []
        for w in warps:
            if w.broken or (f is not None and (f.dev, f.sm, f.wp) == (dev, w.sm, w.wp)):
                listed.append(w)
    if not listed:
        return [{"id": HOST_THREAD_ID, "name": "host program"}]
    listed.sort(key=lambda w: (w.dev, w.sm, w.wp))
    if len(listed) > MAX_LISTED_WARPS:
        keep = listed[:MAX_LISTED_WARPS]
        if f is not None and not any((w.dev, w.sm, w.wp) == (f.dev, f.sm, f.wp) for w in keep):
            keep[-1] = next(w for w in listed if (w.dev, w.sm, w.wp) == (f.dev, f.sm, f.wp))
        listed = keep
    return [{"id": warp_thread_id(w.dev, w.sm, w.wp), "name": thread_name(engine, w)} for w in listed]


# ------------------------------------------------------------------ custom requests
def focus_request(engine: Any, args: dict) -> dict:
    """`cuda/focus`: switch the focus as `cuda block ... thread ...` does.
    Arguments: any of kernel, grid, block, thread (logical) or device,
    sm, warp, lane (physical); block/thread as [x, y, z] or a number.
    Answers the new focus and the DAP thread that shows it."""
    from gpudbg.cli.debugger.commands import CommandError
    from gpudbg.cli.debugger.focus import FIELDS, resolve
    dbg = engine.require_stopped()
    request: dict[str, object] = {}
    for name in FIELDS:
        if name not in args or args[name] is None:
            continue
        v = args[name]
        if name in ("block", "thread"):
            vals = list(v) if isinstance(v, (list, tuple)) else [v]
            if not 1 <= len(vals) <= 3 or not all(isinstance(x, int) and x >= 0 for x in vals):
                raise DapError(f"cuda/focus: {name} must be 1 to 3 non-negative integers, got {v!r}.")
            request[name] = tuple(vals + [0] * (3 - len(vals)))
        else:
            if not isinstance(v, int) or v < 0:
                raise DapError(f"cuda/focus: {name} must be a non-negative integer, got {v!r}.")
            request[name] = v
    if not request:
        f = dbg.need_focus() if dbg.focus is not None else None
        if f is None:
            raise DapError("cuda/focus: no focus (no kernel is stopped).")
        return _focus_body(dbg.focus)
    try:
        site = resolve(request, dbg.focus, dbg.all_sites(), dbg.grid_of_kernel)
    except CommandError as e:
        raise DapError(f"cuda/focus: {e}") from None
    dbg.set_focus(site, announce=False)
    engine.lane_choice[(site.dev, site.sm, site.wp)] = site.ln
    return _focus_body(dbg.focus)


def _focus_body(f: Any) -> dict:
    return {"threadId": warp_thread_id(f.dev, f.sm, f.wp),
            "focus": {"kernel": f.kernel, "grid": f.grid, "block": list(f.block), "thread": list(f.thread),
                      "device": f.dev, "sm": f.sm, "warp": f.wp, "lane": f.ln}}


def tree_request(engine: Any, args: dict) -> dict:
    """`cuda/threads`: the stopped device's kernels -> blocks -> warps ->
    lanes. `maxBlocks` (default 64) bounds the answer; `lanes: false`
    leaves the lanes out (warp summaries only)."""
    from gpudbg.cli.debugger.frames import safe
    dbg = engine.require_stopped()
    max_blocks = args.get("maxBlocks", 64)
    with_lanes = args.get("lanes", True)
    if not isinstance(max_blocks, int) or max_blocks < 1:
        raise DapError(f"cuda/threads: maxBlocks must be a positive integer, got {max_blocks!r}.")
    s = dbg.session
    kernels: dict[tuple[int, int], dict] = {}
    truncated = False
    for dev in dbg.devices():
        if not dbg.state_readable(dev):
            continue
        for w in sorted(safe(s.warps, dev, default=[]) or [], key=lambda w: (w.grid_id, w.block_idx, w.wp)):
            key = (dev, w.grid_id)
            if key not in kernels:
                g = safe(s.grid, dev, w.grid_id)
                kernels[key] = {"device": dev, "grid": w.grid_id, "kernel": dbg.kernel_of(dev, w.grid_id),
                                "name": getattr(g, "kernel", w.function),
                                "gridDim": list(getattr(g, "grid_dim", ())), "blockDim": list(getattr(g, "block_dim", ())),
                                "blocks": {}}
            blocks = kernels[key]["blocks"]
            b = tuple(w.block_idx)
            if b not in blocks:
                if len(blocks) >= max_blocks:
                    truncated = True
                    continue
                blocks[b] = {"block": list(b), "warps": []}
            entry: dict[str, Any] = {"threadId": warp_thread_id(dev, w.sm, w.wp), "sm": w.sm, "warp": w.wp,
                                     "pc": f"0x{w.pc:x}", "broken": bool(w.broken),
                                     "activeMask": f"0x{w.active_mask:08x}", "validMask": f"0x{w.valid_mask:08x}"}
            if with_lanes:
                entry["lanes"] = [{"lane": lv.ln, "thread": list(lv.thread_idx), "pc": f"0x{lv.pc:x}",
                                   "active": bool(lv.active),
                                   **({"exception": lv.exception.name} if int(lv.exception) else {})}
                                  for lv in w.lanes]
            blocks[b]["warps"].append(entry)
    out = []
    for k in kernels.values():
        k["blocks"] = list(k["blocks"].values())
        out.append(k)
    return {"kernels": out, "truncated": truncated}
