"""setBreakpoints, setFunctionBreakpoints and setExceptionBreakpoints
over the Session's breakpoint table.

The one idea: a DAP breakpoint is a Session breakpoint (same id), made
with the CLI's own machinery (file:line, kernel names through
`ptx_function_name`, conditions through `make_condition`), and its three
DAP options compose into the one per-lane filter the Session asks at a
hit: the condition selects lanes, the hit condition counts the selected
threads (gpudbg.dap.hits), and a logpoint prints one line per remaining
lane and stops none. A breakpoint whose kernel is not loaded yet is
unverified ("pending"); module loads re-resolve it and a `breakpoint`
event tells the client when it becomes verified or moves.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import hits, logpoints
from .protocol import FILTER_KINDS, DapError, list_arg, obj_arg

PENDING = "Pending: no loaded module has code for this location yet (it resolves when the kernel's module loads)."


class Breakpoints:
    def __init__(self, engine: Any, send: Callable[[str, dict], None], output: Callable[[str, str], None]):
        self.engine = engine
        self.send = send
        self.output = output
        self.by_source: dict[str, list[int]] = {}
        self.functions: list[int] = []
        self.shown: dict[int, dict] = {}       # id -> the DAP breakpoint last told to the client
        self.requested: dict[int, int | None] = {}   # id -> the line the client asked for
        engine.on_modules.append(self.refresh)

    # ------------------------------------------------------------ requests
    def set_source(self, args: dict) -> dict:
        dbg = self._dbg()
        source = obj_arg(args, "source")
        path = source.get("path") or source.get("name")
        if not isinstance(path, str) or not path:
            raise DapError("setBreakpoints: source.path is required.")
        wanted = list_arg(args, "breakpoints") if args.get("breakpoints") is not None else \
            [{"line": ln} for ln in list_arg(args, "lines")]
        if not all(isinstance(spec, dict) for spec in wanted):
            raise DapError("setBreakpoints: each breakpoint must be an object with a 'line'.")
        for i in self.by_source.pop(path, []):
            self._delete(i)
        made, out = [], []
        for spec in wanted:
            line = spec.get("line")
            if isinstance(line, bool) or not isinstance(line, int) or self.engine.line_in(line) < 1:
                out.append({"verified": False, "message": f"line {line!r} is not a line number"})
                continue
            line = self.engine.line_in(line)
            dap = self._make(spec, lambda cond: dbg.session.break_at_line(path, line, condition=cond), "line",
                             source, line)
            if "id" in dap:
                made.append(dap["id"])
            out.append(dap)
        self.by_source[path] = made
        return {"breakpoints": out}

    def set_functions(self, args: dict) -> dict:
        from gpudbg.cli.debugger.breakpoints import ptx_function_name
        from gpudbg.cli.debugger.commands import CommandError
        dbg = self._dbg()
        for i in self.functions:
            self._delete(i)
        self.functions = []
        out = []
        for spec in list_arg(args, "breakpoints"):
            if not isinstance(spec, dict):
                out.append({"verified": False, "message": f"a function breakpoint must be an object, got {spec!r}"})
                continue
            name = spec.get("name")
            if not isinstance(name, str) or not name.strip():
                out.append({"verified": False, "message": "a function breakpoint needs a kernel name"})
                continue
            try:
                ptx = ptx_function_name(dbg, name.strip())
            except CommandError as e:
                out.append({"verified": False, "message": str(e)})
                continue
            dap = self._make(spec, lambda cond: dbg.session.break_at_kernel(ptx, condition=cond), "kernel",
                             None, None)
            if "id" in dap:
                self.functions.append(dap["id"])
            out.append(dap)
        return {"breakpoints": out}

    def set_exceptions(self, args: dict) -> dict:
        filters, options = args.get("filters") or [], args.get("filterOptions") or []
        if not isinstance(filters, list) or not isinstance(options, list):
            raise DapError("setExceptionBreakpoints: 'filters' and 'filterOptions' must be lists.")
        filters = list(filters) + [o.get("filterId") for o in options if isinstance(o, dict)]
        if not all(isinstance(f, str) for f in filters):
            raise DapError("setExceptionBreakpoints: every filter (and filterId) must be a string.")
        unknown = [f for f in filters if f not in FILTER_KINDS]
        chosen = {f for f in filters if f in FILTER_KINDS}
        self.engine.exception_filters = chosen
        return {"breakpoints": [{"verified": f not in unknown,
                                 **({"message": f"unknown exception filter {f!r}"} if f in unknown else {})}
                                for f in filters]}

    # ------------------------------------------------------------ making
    def _dbg(self):
        dbg = self.engine.need_dbg()
        if self.engine.core:
            raise DapError("Breakpoints cannot be set in a GPU coredump: the program is not being run.")
        return dbg

    def _make(self, spec: dict, create: Callable[[Any], Any], kind: str, source: dict | None,
              line: int | None) -> dict:
        from gpudbg.cli.debugger.breakpoints import check_condition
        from .engine import _debug_errors, error_text
        dbg = self.engine.dbg
        cond_text = spec.get("condition") or None
        hit_text = spec.get("hitCondition") or None
        log_text = spec.get("logMessage") or None
        for name, v in (("condition", cond_text), ("hitCondition", hit_text), ("logMessage", log_text)):
            if v is not None and not isinstance(v, str):
                return {"verified": False, "message": f"{name} must be a string, got {v!r}"}
        try:
            if cond_text is not None:
                check_condition(cond_text)
            counter = hits.HitCounter(hit_text) if hit_text is not None else None
            log = logpoints.parse(log_text) if log_text is not None else None
            if log is not None:
                logpoints.check(log)
        except (hits.HitConditionError, logpoints.TemplateError) as e:
            return {"verified": False, "message": str(e)}
        except _debug_errors() as e:
            return {"verified": False, "message": f"condition: {error_text(e)}"}
        ref: list[int] = []
        filt = self._filter(cond_text, counter, log, ref)
        try:
            bp = create(filt)
        except _debug_errors() as e:
            return {"verified": False, "message": error_text(e)}
        ref.append(bp.id)
        dbg.user_breakpoints[bp.id] = bp
        if cond_text is not None:
            dbg.conditions[bp.id] = cond_text
            bp.condition_text = cond_text
        dap = self._describe(bp, source, line)
        self.shown[bp.id] = dap
        self.requested[bp.id] = line
        return dap

    def _filter(self, cond_text: str | None, counter: Any, log: Any, ref: list[int]):
        """The Session condition: lanes that stop (see the module docstring)."""
        if cond_text is None and counter is None and log is None:
            return None
        from gpudbg.cli.debugger.breakpoints import make_condition
        from gpudbg.cli.debugger.context import LaneContext
        dbg = self.engine.dbg
        cond = make_condition(dbg, cond_text, ref) if cond_text is not None else None

        def condition(coords) -> np.ndarray:
            n = len(coords)
            m = np.ones(n, dtype=bool) if cond is None else np.asarray(cond(coords), dtype=bool)
            if counter is not None:
                picked = np.flatnonzero(m)
                m = np.zeros(n, dtype=bool)
                m[picked] = counter.take(len(picked))
            if log is None:
                return m
            for i in np.flatnonzero(m):
                ctx = LaneContext(dbg.session, dbg.condition_device, int(coords.sm[i]), int(coords.wp[i]),
                                  int(coords.ln[i]), dbg.store,
                                  block=tuple(int(a[i]) for a in coords.block_idx),
                                  thread=tuple(int(a[i]) for a in coords.thread_idx))
                self.output("console", logpoints.render(log, logpoints.lane_value(ctx)) + "\n")
            return np.zeros(n, dtype=bool)
        return condition

    def _describe(self, bp: Any, source: dict | None, line: int | None) -> dict:
        dap: dict[str, Any] = {"id": bp.id, "verified": not bp.pending}
        if source is not None:
            dap["source"] = {k: source[k] for k in ("name", "path", "sourceReference") if k in source}
        if bp.pending:
            dap["message"] = PENDING
            if line is not None:
                dap["line"] = self.engine.line_out(line)
        else:
            dap["line"] = self.engine.line_out(bp.resolved_line or line)
            if dap["line"] is None:
                from gpudbg.cli.debugger.frames import source_of
                where = source_of(self.engine.dbg.session, 0, min(bp.addresses))
                if where:
                    dap["line"] = self.engine.line_out(where[1])
                    dap["source"] = {"name": where[0].rsplit("/", 1)[-1], "path": where[0]}
            dap["instructionReference"] = f"0x{min(bp.addresses):x}"
        return {k: v for k, v in dap.items() if v is not None}

    def _delete(self, i: int) -> None:
        dbg = self.engine.dbg
        try:
            dbg.session.delete_breakpoint(i)
        except Exception:          # deleted already (a temporary one that was hit)
            pass
        dbg.user_breakpoints.pop(i, None)
        dbg.conditions.pop(i, None)
        self.shown.pop(i, None)
        self.requested.pop(i, None)

    # ------------------------------------------------------------ events
    def refresh(self) -> None:
        """After a module load: tell the client which breakpoints changed."""
        dbg = self.engine.dbg
        live = {b.id: b for b in dbg.session.breakpoints()}
        for i, old in list(self.shown.items()):
            bp = live.get(i)
            if bp is None:
                continue
            new = self._describe(bp, old.get("source"), self.requested.get(i))
            if (new.get("verified"), new.get("line")) != (old.get("verified"), old.get("line")):
                self.shown[i] = new
                self.send("breakpoint", {"reason": "changed", "breakpoint": new})
