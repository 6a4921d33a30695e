"""DAP data breakpoints on device memory: dataBreakpointInfo and
setDataBreakpoints over the Session's watchpoints.

The one idea: a data breakpoint is the CLI's `watch -l EXPR` made from
the editor: the variable's expression (its evaluateName, or the text the
user typed) is evaluated once in the lane the editor shows, to bytes in
global, shared or local memory, and the Session watches exactly those
(shared memory of that lane's block, local memory of that thread, both
until their grid ends). `dataBreakpointInfo` answers a dataId naming
that memory, or none with the reason (a -G scalar held in a register
has no memory to watch); `setDataBreakpoints` replaces the set. The
watchpoints are recorded like the CLI's, so the stop is told (and
Old/New values typed) the same way.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .protocol import DapError, list_arg
from .stack import FrameKey

ACCESS = {"write": "write", "read": "read", "readWrite": "access"}


@dataclass(frozen=True)
class Target:
    space: Any
    address: int
    size: int
    key: FrameKey
    expression: str
    type: Any


class DataBreakpoints:
    def __init__(self, engine: Any, breakpoints: Any):
        self.engine = engine
        self.bps = breakpoints
        self.targets: dict[str, Target] = {}
        self.live: list[int] = []

    def info(self, refs: Any, frames: Any, args: dict) -> dict:
        from gpudbg.cli.debugger.context import LaneContext
        from gpudbg.cli.debugger.evaluate import evaluate
        from gpudbg.cli.debugger.values import Lval
        from gpudbg.debug.watchpoints import MAX_WATCH_BYTES
        from .engine import _debug_errors, error_text
        from .stack import frame_of
        dbg = self.engine.require_executing()
        name = args.get("name")
        if not isinstance(name, str) or not name.strip():
            raise DapError("dataBreakpointInfo: 'name' is required.")
        if args.get("variablesReference") is not None:
            node = refs.get(args.get("variablesReference"), "variablesReference")
            expr, key = node.expression_of(name, self.engine), node.key
        else:
            expr = name
            if args.get("frameId") is not None:
                key = frame_of(self.engine, frames, args.get("frameId"))
            else:
                f = dbg.need_focus()
                key = FrameKey(f.dev, f.sm, f.wp, f.ln, 0)
        ctx = LaneContext(dbg.session, key.dev, key.sm, key.wp, key.ln, dbg.store, frame=key.level)
        try:
            value = evaluate(expr, ctx)
        except _debug_errors() as e:
            return {"dataId": None, "description": f"{expr}: {error_text(e)}"}
        if value.lval is not Lval.MEMORY or value.address is None:
            why = "it is held in a register, not in device memory" if value.lval in (Lval.REGISTER, Lval.VARIABLE) \
                else "it is not an lvalue in memory"
            return {"dataId": None, "description": f"{expr} cannot be watched: {why}."}
        if not 1 <= value.size <= MAX_WATCH_BYTES:
            return {"dataId": None, "description": f"{expr} is {value.size} bytes; a data breakpoint covers 1 to "
                                                   f"{MAX_WATCH_BYTES}."}
        data_id = f"{value.space.value}:0x{value.address:x}:{value.size}@{key.dev},{key.sm},{key.wp},{key.ln}"
        self.targets[data_id] = Target(value.space, value.address, value.size, key, expr, value.type)
        return {"dataId": data_id, "description": f"{expr} ({value.size} bytes of {value.space.value} memory)",
                "accessTypes": list(ACCESS), "canPersist": False}

    def set(self, args: dict) -> dict:
        from gpudbg.cli.debugger.watchpoints import WatchRecord, records
        from gpudbg.debug.watch import WatchKind
        from .engine import _debug_errors, error_text
        from . import hits
        dbg = self.engine.require_executing()
        wanted = list_arg(args, "breakpoints")
        for i in self.live:
            try:
                dbg.session.delete_watchpoint(i)
            except _debug_errors():
                pass                      # a shared/local watch ended with its grid
            records(dbg).pop(i, None)
            dbg.conditions.pop(i, None)
        self.live = []
        out = []
        for spec in wanted:
            if not isinstance(spec, dict):
                out.append({"verified": False, "message": f"a data breakpoint must be an object, got {spec!r}"})
                continue
            target = self.targets.get(spec.get("dataId"))
            access = spec.get("accessType") or "write"
            if target is None:
                out.append({"verified": False, "message": f"unknown dataId {spec.get('dataId')!r} (ask "
                                                          f"dataBreakpointInfo while stopped)"})
                continue
            if access not in ACCESS:
                out.append({"verified": False, "message": f"accessType {access!r} is not one of {', '.join(ACCESS)}"})
                continue
            cond_text, hit_text = spec.get("condition") or None, spec.get("hitCondition") or None
            try:
                for n, v in (("condition", cond_text), ("hitCondition", hit_text)):
                    if v is not None and not isinstance(v, str):
                        raise hits.HitConditionError(f"{n} must be a string, got {v!r}")
                if cond_text is not None:
                    from gpudbg.cli.debugger.breakpoints import check_condition
                    check_condition(cond_text)
                counter = hits.HitCounter(hit_text) if hit_text is not None else None
            except (hits.HitConditionError,) + _debug_errors() as e:
                out.append({"verified": False, "message": error_text(e)})
                continue
            ref: list[int] = []
            kind = WatchKind(ACCESS[access])
            k = target.key
            try:
                wp = dbg.session.watch(target.address, target.size, kind, target.space, dev=k.dev,
                                       lane=(k.sm, k.wp, k.ln), condition=self.bps._filter(cond_text, counter, None, ref),
                                       changes_only=kind is WatchKind.WRITE, expression=target.expression)
            except _debug_errors() as e:
                out.append({"verified": False, "message": error_text(e)})
                continue
            ref.append(wp.id)
            records(dbg)[wp.id] = WatchRecord(target.expression, target.type)
            if cond_text is not None:
                dbg.conditions[wp.id] = cond_text
                wp.condition_text = cond_text
            self.live.append(wp.id)
            out.append({"id": wp.id, "verified": True, "description": f"{access} {target.expression}"})
        return {"breakpoints": out}

    def stop_text(self, ev: Any) -> tuple[list[int], str]:
        """The watchpoints a WATCHPOINT stop hit, and gdb's Old/New words."""
        from gpudbg.cli.debugger.formatting import format_value
        from gpudbg.cli.debugger.values import Value
        from gpudbg.cli.debugger.watchpoints import records
        recs = records(self.engine.dbg)
        ids, parts = [], []
        for h in ev.watch_hits:
            ids.append(h.watch)
            rec = recs.get(h.watch)

            def text(data: bytes) -> str:
                if rec is not None and rec.type is not None and rec.type.byte_size == len(data):
                    try:
                        return format_value(Value(rec.type, data))
                    except Exception:           # a value the formatter cannot show: its bytes
                        pass
                return "{" + ", ".join(f"0x{b:02x}" for b in data) + "}"
            what = rec.expression if rec is not None else f"watchpoint {h.watch}"
            parts.append(f"{what}: Old value = {text(h.old)}, New value = {text(h.new)}" if h.changed
                         else f"{what}: Value = {text(h.new)}")
        return sorted(set(ids)), "; ".join(parts)
