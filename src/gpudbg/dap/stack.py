"""Stack traces and sources: DAP stack frames for one lane of a warp,
and the `source` request for kernel sources that are not files.

The one idea: a DAP frame id names (device, sm, warp, lane, level), the
lane being the one the warp's DAP thread shows; ids are handed out per
stop from a table that maps the same coordinates to the same id, so a
client asking again (every step, every hover) does not grow it. Frames,
names and lines come from the CLI's frame model (gpudbg.cli.debugger.frames),
so the editor and `backtrace` always agree. A source compiled from a
Python string has no file: it gets a sourceReference whose text the
`source` request serves.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .protocol import DapError, int_arg, obj_arg


@dataclass(frozen=True)
class FrameKey:
    dev: int
    sm: int
    wp: int
    ln: int
    level: int


class Handles:
    """Per-stop integer handles for hashable keys (frames) or objects
    (variable containers); `clear` at every resume."""

    def __init__(self) -> None:
        self._by_id: dict[int, Any] = {}
        self._by_key: dict[Any, int] = {}
        self._next = 1

    def id_for(self, key: Any) -> int:
        found = self._by_key.get(key)
        if found is not None:
            return found
        i = self._next
        self._next += 1
        self._by_id[i] = key
        self._by_key[key] = i
        return i

    def add(self, obj: Any) -> int:
        i = self._next
        self._next += 1
        self._by_id[i] = obj
        return i

    def get(self, i: Any, what: str) -> Any:
        if not isinstance(i, int) or i not in self._by_id:
            raise DapError(f"{what} {i!r} is not valid now (handles last until the program resumes).")
        return self._by_id[i]

    def clear(self) -> None:
        self._by_id.clear()
        self._by_key.clear()


class Sources:
    """sourceReference numbers of sources that are not files on disk;
    kept for the whole session (an editor keeps the tab open)."""

    def __init__(self) -> None:
        self._ref: dict[str, int] = {}
        self._path: dict[int, str] = {}

    def describe(self, file: str | None) -> dict | None:
        if file is None:
            return None
        if os.path.isfile(file):
            return {"name": os.path.basename(file), "path": os.path.abspath(file)}
        if full_text(file) is None:
            return {"name": os.path.basename(file), "path": file, "presentationHint": "deemphasize",
                    "origin": "not available"}
        ref = self._ref.get(file)
        if ref is None:
            ref = len(self._ref) + 1
            self._ref[file], self._path[ref] = ref, file
        return {"name": os.path.basename(file), "sourceReference": ref, "origin": "compiled from a string"}

    def content(self, args: dict) -> dict:
        source = obj_arg(args, "source")
        ref = args.get("sourceReference") or source.get("sourceReference")
        if ref is not None and (isinstance(ref, bool) or not isinstance(ref, int)):
            raise DapError(f"source: sourceReference must be an integer, got {ref!r}.")
        path = source.get("path")
        if not isinstance(path, (str, type(None))):
            raise DapError(f"source: source.path must be a string, got {path!r}.")
        file = self._path.get(ref) if ref else path
        if file is None:
            raise DapError(f"source: unknown sourceReference {ref!r}.")
        text = full_text(file)
        if text is None:
            raise DapError(f"source: the text of {file} is not available.")
        return {"content": text, "mimeType": "text/x-cuda"}


def full_text(file: str) -> str | None:
    """A compiled-from-string source or a coredump's embedded one."""
    from gpudbg.cli.debugger.frames import source_text
    lines = []
    n = 1
    while True:
        t = source_text(file, n)
        if t is None:
            break
        lines.append(t)
        n += 1
    return "\n".join(lines) + "\n" if lines else None


def lane_frames(engine: Any, key_lane: tuple[int, int, int, int]):
    """(lane view, grid, Frame list) of one lane."""
    from gpudbg.cli.debugger.frames import frames, safe
    dev, sm, wp, ln = key_lane
    s = engine.dbg.session
    warp = s.warp(dev, sm, wp)
    lane = warp.lane(ln)
    return warp, lane, safe(s.grid, dev, warp.grid_id), frames(s, dev, lane)


def stack_trace(engine: Any, frames_handles: Handles, sources: Sources, args: dict) -> dict:
    from gpudbg.cli.debugger.breakpoints import source_name
    from gpudbg.cli.debugger.context import LaneContext
    from gpudbg.cli.debugger.frames import frame_args, launch_shape
    from .threads import chosen_lane, warp_of
    dbg = engine.require_stopped()
    tid = args.get("threadId")
    if not isinstance(tid, int):
        raise DapError(f"stackTrace: threadId must be an integer, got {tid!r}.")
    if tid == 1 and dbg.focus is None:
        return {"stackFrames": [], "totalFrames": 0}
    warp = warp_of(engine, tid)
    ln = chosen_lane(engine, warp)
    _, lane, grid, stack = lane_frames(engine, (warp.dev, warp.sm, warp.wp, ln))
    start = max(0, int_arg(args, "startFrame"))
    levels = int_arg(args, "levels")
    chosen = stack[start:start + levels] if levels > 0 else stack[start:]
    ctx = LaneContext(dbg.session, warp.dev, warp.sm, warp.wp, ln, dbg.store)
    fmt_hex = bool(obj_arg(args, "format").get("hex"))
    out = []
    for fr in chosen:
        name = source_name(fr.function) + (launch_shape(grid) if fr.is_kernel and grid is not None else "")
        params = frame_args(dbg.session, warp.dev, ctx, grid, fr)
        frame = {"id": frames_handles.id_for(FrameKey(warp.dev, warp.sm, warp.wp, ln, fr.level)),
                 "name": f"{name}({params})", "line": engine.line_out(fr.line) if fr.line else 0,
                 "column": engine.column_base if fr.line else 0,
                 "instructionPointerReference": f"0x{fr.pc:x}",
                 "moduleId": f"0x{getattr(grid, 'module_id', 0):x}" if grid is not None else None}
        if fmt_hex:
            frame["name"] += f" @0x{fr.pc:x}"
        src = sources.describe(fr.file)
        if src is not None:
            frame["source"] = src
        else:
            frame["presentationHint"] = "subtle"
        out.append({k: v for k, v in frame.items() if v is not None})
    return {"stackFrames": out, "totalFrames": len(stack)}


def frame_of(engine: Any, frames_handles: Handles, frame_id: Any) -> FrameKey:
    key = frames_handles.get(frame_id, "frameId")
    if not isinstance(key, FrameKey):
        raise DapError(f"frameId {frame_id!r} is not a stack frame.")
    return key
