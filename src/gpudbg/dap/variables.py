"""Scopes, variables, evaluate and setVariable for one lane.

The one idea: every variable the client sees carries the C expression
that names it (`tile[3]`, `p->x`, `$r5`, `threadIdx`), so reading a
child, hovering, the watch view and assignment all go through the CLI's
evaluator (gpudbg.cli.debugger.evaluate) against that lane's
LaneContext: setVariable is `EXPR = VALUE` evaluated, exactly what `set
var` does, so registers, register-resident -G variables, shared and
local memory are all written the way the CLI writes them. Children are
built from the bytes already read (struct members and array elements are
views of the parent Value), so expanding a 256-element shared array
reads memory once; arrays are paged (indexedVariables + start/count).

Scopes: Locals (DWARF variables at the pc, or the kernel's PTX
parameters without -G), Registers (the lane's PTX registers), Shared
memory (__shared__ variables and the block's raw shared window) and
Built-ins (threadIdx, blockIdx, blockDim, gridDim, warpSize, and the
lane's physical coordinates). A caller's frame shows its own locals and
registers as its activation sees them (the Session's frame state), and
evaluate/setVariable with its frameId work there, as after `up` in the CLI.
"""
from __future__ import annotations

from typing import Any

from .protocol import DapError, int_arg, obj_arg
from .stack import FrameKey, Handles

SHARED_WORDS_MAX = 1 << 16        # the raw shared window shown, in 4-byte words


def _ctx(engine: Any, key: FrameKey):
    from gpudbg.cli.debugger.context import LaneContext
    return LaneContext(engine.dbg.session, key.dev, key.sm, key.wp, key.ln, engine.dbg.store, frame=key.level)


def _fmt(args: dict) -> str | None:
    return "x" if obj_arg(args, "format").get("hex") else None


# ------------------------------------------------------------------ nodes
class Node:
    """A variables container: `items(engine, args)` -> DAP variables."""

    settable = True

    def __init__(self, key: FrameKey):
        self.key = key

    def expression_of(self, name: str, engine: Any) -> str:
        raise DapError(f"setVariable: {name} cannot be assigned here.")


class ValueNode(Node):
    """The children of a struct, array or pointer value."""

    def __init__(self, key: FrameKey, expr: str, value: Any):
        super().__init__(key)
        self.expr, self.value = expr, value

    def items(self, engine: Any, args: dict, refs: Handles) -> list[dict]:
        from gpudbg.cli.debugger.values import (
            Value, array_length, component, element_type, is_aggregate, is_array, is_pointer,
        )
        v, ctx, fmt = self.value, _ctx(engine, self.key), _fmt(args)
        t = v.type.strip()
        out = []
        if is_aggregate(t):
            for m in t.members:
                if m.name is None:
                    continue
                out.append(make_variable(self.key, m.name, f"({self.expr}).{m.name}", component(v, m), ctx, fmt, refs))
            return out
        if is_array(t):
            el = element_type(t)
            es = el.byte_size or 0
            n = len(v.data) // es if es else 0
            length = array_length(t)
            n = min(n, length) if length is not None else n
            start = max(0, int_arg(args, "start"))
            count = int_arg(args, "count") or n - start
            for i in range(start, min(n, start + count)):
                ev = Value(el, v.data[i * es:(i + 1) * es],
                           address=None if v.address is None else v.address + i * es, space=v.space)
                out.append(make_variable(self.key, f"[{i}]", f"({self.expr})[{i}]", ev, ctx, fmt, refs))
            return out
        if is_pointer(t):
            from gpudbg.cli.debugger.evaluate import evaluate
            expr = f"*({self.expr})"
            try:
                target = evaluate(expr, ctx)
            except Exception as e:
                return [{"name": "*", "value": f"<error: {getattr(e, 'message', None) or e}>",
                         "variablesReference": 0}]
            return [make_variable(self.key, "*" + self.expr, expr, target, ctx, fmt, refs)]
        return out

    def expression_of(self, name: str, engine: Any) -> str:
        from gpudbg.cli.debugger.values import is_aggregate, is_array
        t = self.value.type.strip()
        if is_array(t) and name.startswith("[") and name.endswith("]"):
            return f"({self.expr}){name}"
        if is_aggregate(t):
            return f"({self.expr}).{name}"
        return f"*({self.expr})"


def make_variable(key: FrameKey, name: str, expr: str | None, value: Any, ctx: Any, fmt: str | None,
                  refs: Handles) -> dict:
    from gpudbg.cli.debugger.formatting import format_value
    from gpudbg.cli.debugger.values import (
        array_length, element_type, is_aggregate, is_array, is_pointer, is_void, type_name,
    )
    t = value.type.strip()
    try:
        text = format_value(value, fmt, ctx)
    except Exception as e:            # a value the formatter cannot show still names the variable
        text = f"<error: {getattr(e, 'message', None) or e}>"
    var: dict[str, Any] = {"name": name, "value": text, "type": type_name(value.type), "variablesReference": 0}
    if expr is not None:
        var["evaluateName"] = expr
    expandable = False
    if is_aggregate(t):
        var["namedVariables"] = len([m for m in t.members if m.name is not None])
        expandable = var["namedVariables"] > 0
    elif is_array(t):
        es = element_type(t).byte_size or 0
        n = len(value.data) // es if es else 0
        length = array_length(t)
        var["indexedVariables"] = min(n, length) if length is not None else n
        expandable = var["indexedVariables"] > 0
    elif is_pointer(t):
        target = t.target
        expandable = expr is not None and target is not None and not is_void(target) and bool(target.byte_size)
        addr = value.as_int()
        if addr:
            var["memoryReference"] = memory_reference(addr, getattr(t, "space", None))
        expandable = expandable and addr != 0
    if value.address is not None and "memoryReference" not in var:
        var["memoryReference"] = memory_reference(value.address, value.space)
    if expandable and expr is not None:
        var["variablesReference"] = refs.add(ValueNode(key, expr, value))
    return var


def memory_reference(address: int, space: Any) -> str:
    """`0x7000...` for a generic/global address, `shared:0x10` and the like
    for one in a specific space (readMemory/writeMemory parse it back)."""
    name = getattr(space, "value", None)
    if name in (None, "generic", "global"):
        return f"0x{int(address):x}"
    return f"{name}:0x{int(address):x}"


class LocalsNode(Node):
    def items(self, engine: Any, args: dict, refs: Handles) -> list[dict]:
        from gpudbg.cli.debugger.frames import ptx_kernel_args, safe
        s, ctx, fmt = engine.dbg.session, _ctx(engine, self.key), _fmt(args)
        k = self.key
        visible = safe(s.variables, k.dev, k.sm, k.wp, k.ln, k.level, default=None) or []
        chosen = [v for v in visible if v.depth >= 0 and not v.shadowed]
        if not chosen:                  # no -G: the kernel frame's PTX parameters, from the launch
            warp = s.warp(k.dev, k.sm, k.wp)
            grid = safe(s.grid, k.dev, warp.grid_id)
            stack = safe(s.frames, k.dev, k.sm, k.wp, k.ln, default=None) or []
            in_kernel = grid is not None and k.level < len(stack) and stack[k.level].function == grid.kernel
            return [{"name": n, "value": text, "variablesReference": 0, "presentationHint": {"attributes": ["readOnly"]}}
                    for n, text in (ptx_kernel_args(s, k.dev, grid) if in_kernel else [])]
        out = []
        for v in sorted(chosen, key=lambda v: (not v.variable.is_parameter, v.depth)):
            value = ctx.variable(v.name)
            if value is None:
                out.append({"name": v.name, "value": "<optimized out>", "variablesReference": 0})
                continue
            out.append(make_variable(k, v.name, v.name, value, ctx, fmt, refs))
        return out

    def expression_of(self, name: str, engine: Any) -> str:
        return name


class RegistersNode(Node):
    def items(self, engine: Any, args: dict, refs: Handles) -> list[dict]:
        from gpudbg.cli.debugger.formatting import format_value
        from gpudbg.cli.debugger.values import Value
        k = self.key
        s = engine.dbg.session
        if k.level:                     # a caller's registers as its activation sees them
            pc = s.frames(k.dev, k.sm, k.wp, k.ln)[k.level].pc
            regs = s.frame_registers(k.dev, k.sm, k.wp, k.ln, k.level)
        else:
            pc = s.warp(k.dev, k.sm, k.wp).lane(k.ln).pc
            regs = s.registers(k.dev, k.sm, k.wp, k.ln)
        out = [{"name": "pc", "value": f"0x{pc:x}", "variablesReference": 0, "evaluateName": "$pc",
                "memoryReference": f"0x{pc:x}", "presentationHint": {"attributes": ["readOnly"]}}]
        fmt = _fmt(args)
        for r in regs:
            name = r.name.lstrip("%")
            try:
                text = format_value(Value.from_numpy(r.value), fmt)
            except Exception:
                text = str(r.value)
            if not r.available:      # dead at this pc in optimized code (Session.register_value)
                text = f"(possibly) {text}" if s.value_extrapolation else "<optimized out>"
            out.append({"name": r.name, "value": text, "type": r.dtype, "variablesReference": 0,
                        "evaluateName": f"${name}"})
        return out

    def expression_of(self, name: str, engine: Any) -> str:
        if name == "pc":
            raise DapError("setVariable: $pc cannot be written.")
        return "$" + name.lstrip("%$")


class SharedNode(Node):
    def items(self, engine: Any, args: dict, refs: Handles) -> list[dict]:
        from gpudbg.cli.debugger.frames import safe
        from gpudbg.cli.debugger.values import Value, array_of, base_type
        from gpudbg.debug.backend import MemorySpace
        k = self.key
        s, ctx, fmt = engine.dbg.session, _ctx(engine, self.key), _fmt(args)
        out = []
        visible = safe(s.variables, k.dev, k.sm, k.wp, k.ln, k.level, default=None) or []
        for v in visible:
            loc = v.location
            space = getattr(getattr(loc, "space", None), "value", None)
            if space != "shared" or v.shadowed:
                continue
            value = ctx.variable(v.name)
            if value is not None:
                out.append(make_variable(k, v.name, v.name, value, ctx, fmt, refs))
        size = shared_window(engine, k)
        if size:
            words = min(size // 4, SHARED_WORDS_MAX)
            data = ctx.read_memory(MemorySpace.SHARED, 0, words * 4)
            t = array_of(base_type("unsigned int"), words)
            value = Value(t, data, address=0, space=MemorySpace.SHARED)
            expr = f"((@shared unsigned int *)0)[0]@{words}"
            var = make_variable(k, f"[block window: {size} bytes]", expr, value, ctx, fmt, refs)
            out.append(var)
        return out

    def expression_of(self, name: str, engine: Any) -> str:
        return name


SHARED_PROBE_LIMIT = 1 << 20      # no block has a megabyte of shared memory


def shared_window(engine: Any, k: FrameKey) -> int:
    """Bytes of shared memory the lane's block has (static __shared__
    variables plus the launch's dynamic part): the end of the readable
    window, found by bisection with one-byte reads, so it is right for a
    live device and a coredump alike without knowing either's layout."""
    from gpudbg.debug.backend import MemorySpace
    from .engine import _debug_errors
    ctx = _ctx(engine, k)

    def readable(n: int) -> bool:          # whether byte n-1 is in the window
        try:
            ctx.read_memory(MemorySpace.SHARED, n - 1, 1)
            return True
        except _debug_errors():
            return False
    if not readable(1):
        return 0
    lo, hi = 1, SHARED_PROBE_LIMIT
    if readable(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if readable(mid) else (lo, mid)
    return lo


class BuiltinsNode(Node):
    NAMES = ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize")

    def items(self, engine: Any, args: dict, refs: Handles) -> list[dict]:
        k = self.key
        ctx, fmt = _ctx(engine, self.key), _fmt(args)
        out = []
        for name in self.NAMES:
            value = ctx.builtin(name)
            if value is not None:
                out.append(make_variable(k, name, name, value, ctx, fmt, refs))
        for name, v in (("device", k.dev), ("sm", k.sm), ("warp", k.wp), ("lane", k.ln)):
            out.append({"name": f"({name})", "value": str(v), "variablesReference": 0,
                        "presentationHint": {"attributes": ["readOnly"]}})
        return out

    def expression_of(self, name: str, engine: Any) -> str:
        raise DapError(f"setVariable: {name} is a built-in variable; it is read-only.")


SCOPES = (("Locals", "locals", LocalsNode, False), ("Registers", "registers", RegistersNode, True),
          ("Shared memory", None, SharedNode, True), ("Built-ins", None, BuiltinsNode, True))


def scopes(key: FrameKey, refs: Handles) -> list[dict]:
    return [{"name": name, **({"presentationHint": hint} if hint else {}),
             "variablesReference": refs.add(cls(key)), "expensive": expensive}
            for name, hint, cls, expensive in SCOPES]


# ------------------------------------------------------------------ requests
def variables(engine: Any, refs: Handles, args: dict) -> list[dict]:
    node = refs.get(args.get("variablesReference"), "variablesReference")
    if not isinstance(node, Node):
        raise DapError(f"variablesReference {args.get('variablesReference')!r} is not a container.")
    out = node.items(engine, args, refs)
    if not isinstance(node, ValueNode) and (args.get("start") or args.get("count")):
        start = int_arg(args, "start")
        count = int_arg(args, "count")
        out = out[start:start + count] if count else out[start:]
    return out


def set_variable(engine: Any, refs: Handles, args: dict) -> dict:
    from gpudbg.cli.debugger.evaluate import evaluate
    node = refs.get(args.get("variablesReference"), "variablesReference")
    name, text = args.get("name"), args.get("value")
    if not isinstance(name, str) or not isinstance(text, str) or not text.strip():
        raise DapError("setVariable: 'name' and a non-empty 'value' are required.")
    if engine.core:
        raise DapError("setVariable: a GPU coredump is read-only.")
    expr = node.expression_of(name, engine)
    ctx = _ctx(engine, node.key)
    evaluate(f"{expr} = ({text})", ctx)
    value = evaluate(expr, ctx)
    fresh = make_variable(node.key, name, expr, value, ctx, _fmt(args), refs)
    return {k: fresh[k] for k in ("value", "type", "variablesReference", "namedVariables", "indexedVariables",
                                  "memoryReference") if k in fresh}


EXEC_COMMANDS = frozenset({"run", "continue", "kill", "quit", "step", "next", "stepi", "nexti", "finish"})


def evaluate_request(engine: Any, refs: Handles, key: FrameKey | None, args: dict) -> dict:
    from gpudbg.cli.debugger.evaluate import evaluate
    from gpudbg.cli.debugger.inspection import eval_context
    text = args.get("expression")
    if not isinstance(text, str) or not text.strip():
        raise DapError("evaluate: 'expression' is required.")
    dbg = engine.need_dbg()
    if args.get("context") == "repl" and text.lstrip().startswith("-exec "):
        return _cli_command(engine, text.lstrip()[len("-exec "):])
    if key is None and dbg.focus is not None and engine.state == "stopped":
        f = dbg.focus
        key = FrameKey(f.dev, f.sm, f.wp, f.ln, 0)
    if key is not None:
        engine.require_stopped()
        ctx: Any = _ctx(engine, key)
    else:
        ctx = eval_context(dbg)          # no lane: constants and the value history
    value = evaluate(text, ctx)
    if key is None:
        from gpudbg.cli.debugger.formatting import format_value
        return {"result": format_value(value, _fmt(args)), "variablesReference": 0}
    var = make_variable(key, text, text, value, ctx, _fmt(args), refs)
    body = {"result": var["value"], "type": var.get("type"), "variablesReference": var["variablesReference"]}
    for k in ("namedVariables", "indexedVariables", "memoryReference"):
        if k in var:
            body[k] = var[k]
    return body


def _cli_command(engine: Any, line: str) -> dict:
    """`-exec CMD` in the debug console: a cuda-gdb command (not one that
    runs the program: those are the editor's buttons)."""
    import contextlib
    import io
    dbg = engine.need_dbg()
    from gpudbg.cli.debugger.commands import CommandError
    try:
        command, _ = dbg.table.split(line.strip())
    except CommandError as e:
        raise DapError(str(e)) from None
    if command.name in EXEC_COMMANDS:
        raise DapError(f"-exec {command.name}: use the debugger's run/step buttons (the adapter runs the program).")
    if engine.state == "running":
        raise DapError("-exec: the program is running; pause it first.")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        ok = dbg.execute(line)
    text = (out.getvalue() + err.getvalue()).rstrip("\n")
    if not ok:
        raise DapError(text or f"-exec {line}: failed")
    return {"result": text, "variablesReference": 0}
