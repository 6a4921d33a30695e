"""State commands of the focused lane: print, set var, x, the `cuda`
focus command, backtrace, list, disassemble, registers, locals.

The one idea: every one of them is a question about exactly one lane,
the focus, answered through a LaneContext (the evaluator's view of that
lane) or the Session's per-address tables, so they work the same on a
live stopped device and on a coredump. Expressions that need no device
state (`print 6*7`, `print $1`) work without a focus.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .commands import Command, CommandError
from .focus import FIELDS, parse_request, resolve
from .frames import describe_frame, frames, safe, source_of, source_text


def register(dbg: Any) -> None:
    add = dbg.add
    dbg.examine_state = None
    add(Command("print", lambda rest: _print(dbg, rest), "print [/FMT] EXPR: evaluate and print for the focus",
                aliases=("p", "inspect", "call")))
    add(Command("output", lambda rest: _output(dbg, rest), "like print, without history or newline"))
    add(Command("whatis", lambda rest: _whatis(dbg, rest, expand=False), "whatis EXPR: the type of an expression"))
    add(Command("ptype", lambda rest: _whatis(dbg, rest, expand=True),
                "ptype EXPR|TYPE: the type, with struct members spelled out"))
    add(Command("set", lambda rest: _set(dbg, rest),
                "set var EXPR=VALUE | set cuda SETTING VALUE (show cuda lists the settings)"))
    add(Command("show", lambda rest: _show(dbg, rest), "show cuda [SETTING]: the CUDA settings"))
    add(Command("x", lambda rest: _examine(dbg, rest), "x/NFU ADDRESS: examine memory", repeatable=True))
    add(Command("cuda", lambda rest: focus_command(dbg, rest),
                "cuda [kernel|grid|block|thread|device|sm|warp|lane] [N | (x,y,z)]...: show or switch the focus",
                completions={f: None for f in FIELDS}))
    add(Command("backtrace", lambda rest: _backtrace(dbg), "print the focused lane's call stack",
                aliases=("bt", "where")))
    add(Command("list", lambda rest: _list(dbg, rest), "list source lines around the focus or LINE/FILE:LINE",
                aliases=("l",), repeatable=True))
    add(Command("disassemble", lambda rest: _disassemble(dbg, rest),
                "PTX of the focused function (or FUNCTION), `=>` at the pc", aliases=("disas",)))


class _NoFocus:
    """An EvalContext with no lane: constants and the value history only."""

    def __init__(self, store: Any):
        self.store = store

    def variable(self, name): return None
    def register(self, name): return None
    def builtin(self, name): return None
    def convenience(self, name): return self.store.get(name)
    def set_convenience(self, name, value): self.store.set(name, value)

    def read_memory(self, space, address, size):
        raise CommandError("Focus not set on any active CUDA kernel: no memory to read.")

    def write_memory(self, space, address, data):
        raise CommandError("Focus not set on any active CUDA kernel: no memory to write.")

    def write_register(self, name, value):
        raise CommandError("Focus not set on any active CUDA kernel: no registers.")

    def write_variable(self, name, data):
        raise CommandError("Focus not set on any active CUDA kernel: no variables.")


def eval_context(dbg: Any):
    f = dbg.focus
    if f is not None and dbg.state_readable(f.dev):
        return dbg.context(f)
    return _NoFocus(dbg.store)


def _split_format(rest: str) -> tuple[str | None, str]:
    from .formatting import parse_print_format
    rest = rest.strip()
    if rest.startswith("/"):
        spec, _, expr = rest.partition(" ")
        return parse_print_format(spec[1:]), expr.strip()
    return None, rest


def _print(dbg: Any, rest: str) -> None:
    from .evaluate import evaluate
    from .formatting import format_value
    fmt, text = _split_format(rest)
    ctx = eval_context(dbg)
    value = evaluate(text if text else "$", ctx)
    n = dbg.store.record(value)
    print(f"${n} = {format_value(value, fmt, ctx)}")


def _whatis(dbg: Any, rest: str, expand: bool) -> None:
    """gdb's whatis/ptype: the type without evaluating (no memory is read)."""
    from .evaluate import type_of
    from .values import type_name
    if not rest.strip():
        raise CommandError("Argument required (one or more choices).")
    t = type_of(rest.strip(), eval_context(dbg))
    s = t.strip() if expand else t
    kind = getattr(s.kind, "value", "")
    if expand and kind in ("struct", "union", "class") and s.members:
        tag = f"{kind} {s.name}" if s.name else kind
        body = "".join(f"    {type_name(m.type)} {m.name};\n" for m in s.members)
        print(f"type = {tag} {{\n{body}}}")
        return
    print(f"type = {type_name(t)}")


def _output(dbg: Any, rest: str) -> None:
    from .evaluate import evaluate
    from .formatting import format_value
    fmt, text = _split_format(rest)
    if not text:
        raise CommandError("Argument required (expression to compute).")
    ctx = eval_context(dbg)
    print(format_value(evaluate(text, ctx), fmt, ctx), end="")


def _set(dbg: Any, rest: str) -> None:
    from .evaluate import evaluate
    from .cuda_settings import set_cuda
    words = rest.split(None, 1)
    if not words:
        raise CommandError('"set" must be followed by "var EXPR", "cuda SETTING VALUE" or an assignment.')
    head = words[0]
    tail = words[1] if len(words) > 1 else ""
    if head == "cuda":
        set_cuda(dbg, tail)
        return
    if head in ("var", "variable"):
        if not tail.strip():
            raise CommandError("Argument required (expression to compute).")
        evaluate(tail, eval_context(dbg))
        return
    if "=" not in rest:
        raise CommandError(f'Undefined set command: "{head}".  Try "help set".')
    evaluate(rest, eval_context(dbg))


def _show(dbg: Any, rest: str) -> None:
    from .cuda_settings import show_cuda
    words = rest.split(None, 1)
    if not words or words[0] != "cuda":
        raise CommandError('"show" knows only "show cuda [SETTING]".')
    print(show_cuda(dbg, words[1] if len(words) > 1 else ""))


def _examine(dbg: Any, rest: str) -> None:
    from .formatting import ExamineState, examine
    if dbg.examine_state is None:
        dbg.examine_state = ExamineState()
    rest = rest.strip()
    spec, addr = "", rest
    if rest.startswith("/"):
        spec, _, addr = rest[1:].partition(" ")
    ctx = eval_context(dbg)
    try:
        lines = examine(ctx, spec, addr.strip(), dbg.examine_state)
    except Exception as e:
        for line in getattr(e, "partial", None) or []:
            print(line)
        raise
    for line in lines:
        print(line)


# ------------------------------------------------------------------ focus
def focus_command(dbg: Any, rest: str) -> None:
    if not rest.strip():
        raise CommandError('"cuda" must be followed by focus coordinates '
                           "(kernel grid block thread device sm warp lane).")
    request = parse_request(rest)
    if all(v is None for v in request.values()):
        dbg.need_focus()
        dbg.refresh_focus()
        print(dbg.need_focus().describe(request.keys()))
        return
    if dbg.focus is not None:
        dbg.refresh_focus()
    site = resolve(request, dbg.focus if dbg.focus and dbg.state_readable(dbg.focus.dev) else None,
                   dbg.all_sites(), dbg.grid_of_kernel)
    dbg.set_focus(site)
    dbg.print_location(full=True, with_address=False)


# ------------------------------------------------------------------ stack
def _backtrace(dbg: Any) -> None:
    f = dbg.need_focus()
    s = dbg.session
    warp = s.warp(f.dev, f.sm, f.wp)
    lane = warp.lane(f.ln)
    grid = safe(s.grid, f.dev, warp.grid_id)
    ctx = dbg.context(f)
    for fr in frames(s, f.dev, lane):
        print(f"#{fr.level:<2} {describe_frame(s, f.dev, ctx, grid, fr, with_address=fr.level > 0)}")


# ------------------------------------------------------------------ list
def _program_and_pc(dbg: Any):
    f = dbg.need_focus()
    lane = dbg.session.warp(f.dev, f.sm, f.wp).lane(f.ln)
    program = dbg.session.program_at(f.dev, lane.pc)
    if program is None:
        raise CommandError(f"No code is loaded at 0x{lane.pc:x}.")
    return f, lane, program


def _list(dbg: Any, rest: str) -> None:
    rest = rest.strip()
    if rest:
        if ":" in rest:
            file, _, line = rest.rpartition(":")
        else:
            file, line = (dbg.list_next[0] if dbg.list_next else None), rest
        if not line.isdigit():
            raise CommandError(f'Function "{rest}" not defined; list takes LINE or FILE:LINE.')
        if not file:
            raise CommandError("No default source file; use list FILE:LINE.")
        start = max(1, int(line) - 5)
    elif dbg.list_next is not None:
        file, start = dbg.list_next
    else:
        f = dbg.focus
        if f is None:
            raise CommandError("No symbol table is loaded.  Use the \"file\" command.")
        _list_ptx(dbg)
        return
    shown = 0
    for n in range(start, start + 10):
        text = source_text(file, n)
        if text is None:
            break
        print(f"{n}\t{text}")
        shown += 1
    if shown == 0:
        if start == 1 or source_text(file, 1) is None:
            if dbg.focus is not None and dbg.state_readable(dbg.focus.dev):
                _list_ptx(dbg)
                return
            raise CommandError(f"{file}: source is not available.")
        raise CommandError(f'Line number {start} out of range; "{file}" has fewer lines.')
    dbg.list_next = (file, start + 10)


def _list_ptx(dbg: Any) -> None:
    """The PTX around the pc, by PTX line, when the source is not readable."""
    f, lane, program = _program_and_pc(dbg)
    pc = program.pc_of_address(lane.pc)
    lo, hi = max(0, pc - 5), min(len(program.code), pc + 5)
    for i in range(lo, hi):
        inst = program.code[i].inst
        print(f"{inst.loc.line}\t{inst.text}")


# ------------------------------------------------------------------ disassemble
def _disassemble(dbg: Any, rest: str) -> None:
    f, lane, program = _program_and_pc(dbg)
    name = rest.strip() or None
    if name is None:
        fn = dbg.session.function_at(f.dev, lane.pc)
        name = fn[0] if fn else lane.function
    info = program.functions.get(name)
    if info is None or info.end_pc <= info.entry_pc:
        raise CommandError(f'No function contains specified address, or "{name}" has no code.')
    print(f"Dump of assembler code for function {name}:")
    base = program.code_address(info.entry_pc)
    for i in range(info.entry_pc, info.end_pc):
        a = program.code_address(i)
        mark = "=> " if a == lane.pc else "   "
        print(f"{mark}0x{a:016x} <+{a - base}>:\t{program.code[i].inst.text}")
    print("End of assembler dump.")


# ------------------------------------------------------------------ registers
def _hex_bits(value: Any) -> str:
    x = np.asarray(value)
    if x.dtype == np.bool_:
        return f"0x{int(bool(x))}"
    bits = x.view(f"u{x.dtype.itemsize}") if x.dtype.kind in "fi" else x
    return f"0x{int(bits):x}"


def _natural(value: Any) -> str:
    x = np.asarray(value)
    if x.dtype == np.bool_:
        return "1" if bool(x) else "0"
    if x.dtype.kind == "f":
        return f"{float(x):.9g}" if x.dtype.itemsize <= 4 else f"{float(x):.17g}"
    return str(int(x))


def info_registers(dbg: Any, rest: str) -> str:
    f = dbg.need_focus()
    s = dbg.session
    level = dbg.frame_level          # after `up`: that frame's registers and pc, as gdb shows them
    regs = s.frame_registers(f.dev, f.sm, f.wp, f.ln, level) if level else s.registers(f.dev, f.sm, f.wp, f.ln)
    wanted = [w.lstrip("$%") for w in rest.split()]
    lines = []
    by_name = {r.name.lstrip("%"): r for r in regs}
    lane = s.warp(f.dev, f.sm, f.wp).lane(f.ln)
    for w in wanted:
        if w not in by_name and w not in ("pc", "errorpc"):
            raise CommandError(f"Invalid register `{w}'")
    for r in regs:
        n = r.name.lstrip("%")
        if wanted and n not in wanted:
            continue
        if r.available:
            lines.append(f"{r.name:<15}{_hex_bits(r.value):<19}{_natural(r.value)}")
        elif s.value_extrapolation:      # cuda-gdb marks an extrapolated value so
            lines.append(f"{r.name:<15}{'(possibly) ' + _hex_bits(r.value):<29} {_natural(r.value)}")
        else:
            lines.append(f"{r.name:<15}<optimized out>")
    if not wanted or "pc" in wanted:
        pc = s.frames(f.dev, f.sm, f.wp, f.ln)[level].pc if level else lane.pc
        fn = safe(s.function_at, f.dev, pc - (16 if level else 0))
        sym = f" <{fn[0]}+{fn[1] + (16 if level else 0)}>" if fn else ""
        lines.append(f"{'pc':<15}{f'0x{pc:x}':<19}0x{pc:x}{sym}")
    if "errorpc" in wanted:
        epc = s.warp(f.dev, f.sm, f.wp).error_pc
        lines.append(f"{'errorpc':<15}" + (f"0x{epc:x}" if epc is not None else "<not set>"))
    return "\n".join(lines)


def info_variables(dbg: Any, parameters: bool) -> str:
    from .formatting import format_value
    f = dbg.need_focus()
    ctx = dbg.context(f)
    visible = dbg.session.variables(f.dev, f.sm, f.wp, f.ln, ctx.frame)
    chosen = [v for v in visible if v.variable.is_parameter == parameters and v.depth >= 0 and not v.shadowed]
    if not chosen:
        return "No arguments." if parameters else "No locals."
    out = []
    for v in chosen:
        value = ctx.variable(v.name)
        out.append(f"{v.name} = {format_value(value, None, ctx) if value is not None else '<optimized out>'}")
    return "\n".join(out)


def info_frame_line(dbg: Any) -> str:
    f = dbg.need_focus()
    lane = dbg.session.warp(f.dev, f.sm, f.wp).lane(f.ln)
    where = source_of(dbg.session, f.dev, lane.pc)
    if where is None:
        return f"No line number information available for address 0x{lane.pc:x}"
    return f'Line {where[1]} of "{where[0]}" is at address 0x{lane.pc:x}.'

