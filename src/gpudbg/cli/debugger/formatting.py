"""gdb-style printing of values (`print`, `print/FMT`) and memory
examination (`x/NFU ADDR`), in the exact shapes gdb and cuda-gdb print.

The one idea: a print format letter is a view of the value's bytes, not a
conversion, so /x /d /u /o /t /z show the binary representation of any
scalar (a float's bits too), /f reads integer bits of float width as a
float, and only /c casts (gdb's documented rules). Aggregates apply the
format element by element, with gdb's `<repeats N times>` for runs longer
than the repeat threshold (10) and its 200-element limit. Floats use gdb's
%g with 9 (float) or 17 (double) significant digits, so 0.1f prints
0.100000001. Pointers into a specific address space print cuda-gdb's
`(@global float *) 0x...` prefix.

It does not evaluate expressions beyond calling evaluate() for x's address
and reading strings behind `char *` when given a context, and knows no
symbols, so /a and x/a print bare addresses.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from gpudbg.cli.debugger.evaluate import EvalContext, evaluate, pointer_space, read_memory
from gpudbg.cli.debugger.expr import ExpressionError
from gpudbg.cli.debugger.values import (
    Value, array_length, component, element_type, is_bool, is_char, is_float, is_integral, is_signed,
    memory_space, type_name,
)
from gpudbg.debug.backend import MemorySpace
from gpudbg.debug.dwarf.model import TypeKind

REPEAT_THRESHOLD = 10   # gdb's `set print repeats`: runs longer than this are collapsed
PRINT_ELEMENTS = 200    # gdb's `set print elements`
PRINT_FORMATS = frozenset("xduotacfsz")
EXAMINE_FORMATS = frozenset("xduotacfsiz")
UNIT_SIZES = {"b": 1, "h": 2, "w": 4, "g": 8}
_PER_LINE = {"b": 8, "h": 8, "w": 4, "g": 2}
_NAMED_ESCAPES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 27: "\\033"}


# ---------------------------------------------------------------- scalars

def format_float(x: float, size: int) -> str:
    """gdb's %g with the digits that round-trip the format (9 float, 17 double)."""
    if x != x:
        bits = {2: "<e", 4: "<f", 8: "<d"}[size]
        raw = int.from_bytes(struct.pack(bits, x), "little")
        mant_bits = {2: 10, 4: 23, 8: 52}[size]
        sign = "-" if raw >> (8 * size - 1) else ""
        return f"{sign}nan({raw & ((1 << mant_bits) - 1):#x})"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return "%.*g" % ({2: 5, 4: 9, 8: 17}[size], x)


def _float_of_bits(raw: bytes) -> float:
    return struct.unpack({2: "<e", 4: "<f", 8: "<d"}[len(raw)], raw)[0]


def char_escape(code: int, quote: str) -> str:
    """One byte inside quotes, as gdb escapes it."""
    code &= 0xFF
    if code in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[code]
    if chr(code) in (quote, "\\"):
        return "\\" + chr(code)
    if 0x20 <= code < 0x7F:
        return chr(code)
    return f"\\{code:03o}"


def format_char(n: int) -> str:
    """`65 'A'`: the number as its type holds it, then the character."""
    return f"{n} '{char_escape(n, chr(39))}'"


def format_string(data: bytes, truncated: bool = False) -> str:
    """Quoted bytes with gdb's repeat blocks: `"hi", '\\000' <repeats 13 times>`."""
    if not data:
        return '""' + ("..." if truncated else "")
    parts: list[str] = []
    current = ""
    i = 0
    while i < len(data):
        j = i
        while j < len(data) and data[j] == data[i]:
            j += 1
        if j - i > REPEAT_THRESHOLD:
            if current:
                parts.append(f'"{current}"')
                current = ""
            parts.append(f"'{char_escape(data[i], chr(39))}' <repeats {j - i} times>")
        else:
            current += "".join(char_escape(c, '"') for c in data[i:j])
        i = j
    if current:
        parts.append(f'"{current}"')
    return ", ".join(parts) + ("..." if truncated else "")


def _scalar_formatted(v: Value, fmt: str, pad: bool = False) -> str:
    """One scalar in a print/x format letter (pad: x's fixed-width columns)."""
    raw = v.data
    size = len(raw)
    u = int.from_bytes(raw, "little")
    s = int.from_bytes(raw, "little", signed=True)
    if fmt in ("x", "z"):
        return f"0x{u:0{2 * size}x}" if pad or fmt == "z" else f"{u:#x}"
    if fmt == "o":
        return f"0{u:o}" if u else "0"
    if fmt == "t":
        return f"{u:0{8 * size}b}" if pad else f"{u:b}"
    if fmt == "d":
        return str(s)
    if fmt == "u":
        return str(u)
    if fmt == "a":
        return f"{u:#x}"
    if fmt == "c":
        x = v.as_float() if is_float(v.type) else 0.0
        n = (int(x) if math.isfinite(x) else 0) if is_float(v.type) else (v.as_int() if is_integral(v.type) else s)
        return format_char((n + 128) % 256 - 128)
    if fmt == "f":
        if is_float(v.type) or size in (2, 4, 8):
            return format_float(_float_of_bits(raw), size)
        return str(s if is_signed(v.type) else u)
    raise ExpressionError(f"Undefined output format \"{fmt}\".")


def _natural_scalar(v: Value) -> str:
    t = v.type.strip()
    if t.kind is TypeKind.ENUM:
        n = v.as_int()
        for name, val in t.enumerators.items():
            if val == n:
                return name
        return str(n)
    if is_bool(t):
        n = v.as_int()
        return "true" if n == 1 else "false" if n == 0 else str(n)
    if is_float(t):
        return format_float(v.as_float(), len(v.data))
    if is_char(t):
        return format_char(v.as_int())
    return str(v.as_int())


# ---------------------------------------------------------------- values

def format_value(value: Value, fmt: str | None = None, ctx: EvalContext | None = None) -> str:
    """What `print[/fmt]` shows after `$N = `. With a context, a `char *`
    shows the string it points to and a reference its referent."""
    if fmt is not None and fmt not in PRINT_FORMATS:
        raise ExpressionError(f"Undefined output format \"{fmt}\".")
    return _format(value, None if fmt == "s" else fmt, ctx, top=True)


def _format(v: Value, fmt: str | None, ctx: EvalContext | None, top: bool) -> str:
    t = v.type.strip()
    k = t.kind
    if k is TypeKind.VOID:
        return "void"
    if k in (TypeKind.STRUCT, TypeKind.UNION, TypeKind.CLASS):
        if not t.members:
            return "{<No data fields>}"
        parts = []
        for m in t.members:
            text = _format(component(v, m), fmt, ctx, top=False)
            parts.append(text if m.name is None else f"{m.name} = {text}")
        return "{" + ", ".join(parts) + "}"
    if k is TypeKind.ARRAY:
        return _format_array(v, fmt, ctx)
    if k is TypeKind.REFERENCE:
        addr = v.as_int()
        head = f"({type_name(v.type)}) @{addr:#x}" if top else f"@{addr:#x}"
        target = t.target
        if ctx is None or target is None or not target.byte_size:
            return head
        try:
            data = read_memory(ctx, memory_space(t.space), addr, target.byte_size)
        except ExpressionError as e:
            return f"{head}: <error: {e.message}>"
        return f"{head}: " + _format(Value(target, data), fmt, ctx, top=False)
    if k is TypeKind.POINTER:
        if fmt is not None:
            return _scalar_formatted(v, fmt)
        addr = v.as_int()
        target = t.target
        if target is not None and is_char(target) and ctx is not None and addr != 0:
            return f"{addr:#x} {_pointed_string(ctx, pointer_space(t), addr)}"
        return f"({type_name(v.type)}) {addr:#x}" if top else f"{addr:#x}"
    if k is TypeKind.FUNCTION:
        return f"{{{type_name(v.type)}}}"
    if fmt is not None:
        return _scalar_formatted(v, fmt)
    return _natural_scalar(v)


def _format_array(v: Value, fmt: str | None, ctx: EvalContext | None) -> str:
    el = element_type(v.type)
    es = el.byte_size or 0
    n = len(v.data) // es if es else 0
    length = array_length(v.type)
    if length is not None:
        n = min(n, length)
    if fmt is None and is_char(el) and len(el.strip().dims) == 0:
        data = v.data[:n]
        truncated = len(data) > PRINT_ELEMENTS
        data = data[:PRINT_ELEMENTS]
        if not truncated and data.endswith(b"\0"):
            data = data[:-1]
        return format_string(data, truncated)
    chunks = [v.data[i * es:(i + 1) * es] for i in range(n)]
    parts: list[str] = []
    printed = 0
    i = 0
    while i < n:
        if printed >= PRINT_ELEMENTS:
            break
        j = i
        while j < n and chunks[j] == chunks[i]:
            j += 1
        text = _format(Value(el, chunks[i]), fmt, ctx, top=False)
        if j - i > REPEAT_THRESHOLD:
            parts.append(f"{text} <repeats {j - i} times>")
            printed += REPEAT_THRESHOLD
            i = j
        else:
            parts.append(text)
            printed += 1
            i += 1
    return "{" + ", ".join(parts) + ("..." if i < n else "") + "}"


def read_c_string(ctx: EvalContext, space: MemorySpace, address: int,
                  limit: int = PRINT_ELEMENTS) -> tuple[bytes, bool]:
    """Bytes up to (not including) the NUL, at most `limit`; truncated flag.
    Reads in small chunks, then byte by byte where a chunk fails at the end
    of readable memory."""
    out = bytearray()
    addr = address
    while len(out) < limit:
        want = min(32, limit - len(out))
        try:
            chunk = read_memory(ctx, space, addr, want)
        except ExpressionError:
            chunk = read_memory(ctx, space, addr, 1)   # raises where memory really ends
        nul = chunk.find(b"\0")
        if nul >= 0:
            out += chunk[:nul]
            return bytes(out), False
        out += chunk
        addr += len(chunk)
    return bytes(out[:limit]), True


def _pointed_string(ctx: EvalContext, space: MemorySpace, addr: int) -> str:
    try:
        data, truncated = read_c_string(ctx, space, addr)
    except ExpressionError as e:
        return f"<error: {e.message}>"
    return format_string(data, truncated)


def parse_print_format(spec: str) -> str | None:
    """The letter of `print/FMT` (spec without the '/'); gdb's errors for a
    size or count, which print does not take."""
    spec = spec.lstrip("/")
    if not spec:
        return None
    if len(spec) != 1 or spec not in PRINT_FORMATS:
        bad = next((c for c in spec if c not in PRINT_FORMATS), spec[-1])
        if bad in UNIT_SIZES or bad.isdigit():
            raise ExpressionError("Item count other than 1 is meaningless in \"print\" command."
                                  if bad.isdigit() else "Size letters are meaningless in \"print\" command.")
        raise ExpressionError(f"Undefined output format \"{bad}\".")
    return spec


# ---------------------------------------------------------------- examine

@dataclass
class ExamineState:
    """gdb's memory of the last x command: format, unit size, and where a
    bare `x` continues."""

    format: str = "x"
    size: str = "w"
    next_address: int | None = None
    next_space: MemorySpace = MemorySpace.GLOBAL


def parse_examine_spec(spec: str) -> tuple[int, str | None, str | None]:
    """`4xw` -> (4, 'x', 'w'); letters in any order after the count."""
    spec = spec.lstrip("/")
    i = 0
    while i < len(spec) and spec[i].isdigit():
        i += 1
    count = int(spec[:i]) if i else 1
    fmt = size = None
    for c in spec[i:]:
        if c in UNIT_SIZES:
            if size is not None:
                raise ExpressionError(f"Invalid number of size letters in \"{spec}\".")
            size = c
        elif c in EXAMINE_FORMATS:
            if fmt is not None:
                raise ExpressionError(f"Invalid number of format letters in \"{spec}\".")
            fmt = c
        else:
            raise ExpressionError(f"Invalid format letter '{c}' in \"x/{spec}\" "
                                  f"(formats: {''.join(sorted(EXAMINE_FORMATS))}; sizes: bhwg).")
    if count <= 0:
        raise ExpressionError(f"Item count must be positive in \"x/{spec}\".")
    return count, fmt, size


def examine_address(ctx: EvalContext, address_expr: str) -> tuple[int, MemorySpace]:
    """Where `x ADDR` starts: a pointer's value in its space, an array's
    address, or an integer as a global address."""
    v = evaluate(address_expr, ctx)
    t = v.type.strip()
    if t.kind is TypeKind.POINTER:
        return v.as_int() % (1 << 64), pointer_space(v.type)
    if t.kind in (TypeKind.ARRAY, TypeKind.FUNCTION, TypeKind.STRUCT, TypeKind.UNION, TypeKind.CLASS):
        if v.address is None:
            raise ExpressionError("Attempt to take address of value not located in memory.")
        return v.address, v.space or MemorySpace.GLOBAL
    if is_integral(t):
        return v.as_int() % (1 << 64), MemorySpace.GLOBAL
    raise ExpressionError(f"Cannot use a value of type `{type_name(v.type)}' as an address.")


def examine(ctx: EvalContext, spec: str, address_expr: str, state: ExamineState | None = None) -> list[str]:
    """The lines `x/SPEC ADDR` prints. With `state`, defaults come from the
    previous x and an empty ADDR continues after it. A read that fails part
    way raises ExpressionError carrying the lines so far in `.partial`."""
    state = state if state is not None else ExamineState()
    count, fmt, size = parse_examine_spec(spec)
    fmt = fmt or state.format
    if size is None:
        size = {"a": "g", "c": "b", "s": "b"}.get(fmt)
        if size is None:
            size = state.size if fmt != "f" or state.size in ("w", "g") else "g"
    if address_expr.strip():
        address, space = examine_address(ctx, address_expr)
    elif state.next_address is not None:
        address, space = state.next_address, state.next_space
    else:
        raise ExpressionError("Argument required (starting display address).")
    state.format = fmt
    if fmt not in ("s", "i"):
        state.size = size
    if fmt == "i":
        lines, nxt = _examine_instructions(ctx, address, count)
    elif fmt == "s":
        lines, nxt = _examine_strings(ctx, space, address, count)
    else:
        lines, nxt = _examine_units(ctx, space, address, count, fmt, size)
    state.next_address, state.next_space = nxt, space
    return lines


def _unit_text(raw: bytes, fmt: str) -> str:
    size = len(raw)
    if fmt == "f":
        if size in (2, 4, 8):
            return format_float(_float_of_bits(raw), size)
        fmt = "d"
    if fmt == "c":
        return format_char(int.from_bytes(raw[:1], "little", signed=True))
    return _scalar_formatted(Value.from_int(int.from_bytes(raw, "little"), {1: "unsigned char", 2: "unsigned short",
                                            4: "unsigned int", 8: "unsigned long"}[size]),
                             fmt, pad=True)


def _examine_units(ctx: EvalContext, space: MemorySpace, address: int, count: int,
                   fmt: str, size: str) -> tuple[list[str], int]:
    unit = UNIT_SIZES[size]
    per_line = _PER_LINE[size]
    try:
        data = read_memory(ctx, space, address, unit * count)
        failure = None
    except ExpressionError as e:
        data, failure = bytearray(), e
        for k in range(count):   # find how far memory is readable, for gdb's partial output
            try:
                data += read_memory(ctx, space, address + k * unit, unit)
            except ExpressionError as e2:
                failure = e2
                break
        data = bytes(data)
    lines = []
    for start in range(0, len(data) // unit, per_line):
        items = [_unit_text(data[(start + k) * unit:(start + k + 1) * unit], fmt)
                 for k in range(min(per_line, len(data) // unit - start))]
        lines.append(f"{address + start * unit:#x}:\t" + "\t".join(items))
    if failure is not None:
        failure.partial = lines
        raise failure
    return lines, address + unit * count


def _examine_strings(ctx: EvalContext, space: MemorySpace, address: int, count: int) -> tuple[list[str], int]:
    lines = []
    for _ in range(count):
        try:
            data, truncated = read_c_string(ctx, space, address)
        except ExpressionError as e:
            lines.append(f"{address:#x}:\t<error: {e.message}>")
            return lines, address
        lines.append(f"{address:#x}:\t{format_string(data, truncated)}")
        address += len(data) + (0 if truncated else 1)
    return lines, address


def _examine_instructions(ctx: EvalContext, address: int, count: int) -> tuple[list[str], int | None]:
    disassemble = getattr(ctx, "disassemble", None)
    if disassemble is None:
        raise ExpressionError("x/i needs a disassembler, which this debugging target does not provide.")
    pc_value = ctx.register("pc")
    pc = pc_value.as_int() if pc_value is not None else None
    listing = list(disassemble(address, count + 1))
    lines = [f"{'=> ' if a == pc else '   '}{a:#x}:\t{text}" for a, text in listing[:count]]
    if not lines:
        raise ExpressionError(f"Cannot disassemble at address {address:#x}.")
    nxt = listing[count][0] if len(listing) > count else None
    return lines, nxt
