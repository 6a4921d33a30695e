"""printf and dprintf: gdb's formatted output from debugger expressions.

The one idea: a format string is split once into literal text and C
conversions (`%[flags][width][.prec][length]conv`, gdb's set: d i o u x X
c s f F e E g G a A p %), and each conversion takes one argument evaluated
by the debugger's evaluator for one lane, converted as C's printf would
see it (an int conversion wraps the value to the length modifier's width;
`%s` reads a NUL-terminated string from the lane's memory, or takes a
quoted literal). `dprintf LOCATION,"format",args` is a breakpoint that,
when the device stops on it, prints the format for every lane that hit
it (in SM, warp, lane order) and lets the program continue; a stop at
the same place by an ordinary breakpoint still stops.

Not supported, as in gdb: `%n`, `*` widths; `%ls`/`%lc` wide strings.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .commands import Command, CommandError

_CONVERSION = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d+)?(?:\.(?P<prec>\d+))?"
                         r"(?P<length>hh|h|ll|l|L|z|j|t)?(?P<conv>.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "a": "\a", "b": "\b", "f": "\f",
            "r": "\r", "v": "\v", "e": "\x1b"}
_INT_BITS = {"hh": 8, "h": 16, None: 32, "l": 64, "ll": 64, "z": 64, "j": 64, "t": 64, "L": 64}
CONVERSIONS = "diouxXcsfFeEgGaAp"


@dataclass(frozen=True)
class Piece:
    text: str                     # literal text, or the whole conversion spec
    conv: str | None = None       # None: literal
    flags: str = ""
    width: str = ""
    prec: str | None = None
    length: str | None = None


def _unquote(text: str) -> tuple[str, str]:
    """The C string literal at the start of text (escapes decoded) and the rest."""
    text = text.lstrip()
    if not text.startswith('"'):
        raise CommandError("Bad format string, missing '\"'")
    out, i = [], 1
    while i < len(text):
        c = text[i]
        if c == '"':
            return "".join(out), text[i + 1:]
        if c == "\\":
            if i + 1 >= len(text):
                break
            e = text[i + 1]
            if e in "01234567":
                m = re.match(r"[0-7]{1,3}", text[i + 1:])
                out.append(chr(int(m.group(0), 8)))
                i += 1 + len(m.group(0))
                continue
            if e == "x":
                m = re.match(r"[0-9a-fA-F]+", text[i + 2:])
                if m is None:
                    raise CommandError("\\x escape without a following hex digit")
                out.append(chr(int(m.group(0), 16) & 0xFF))
                i += 2 + len(m.group(0))
                continue
            if e not in _ESCAPES:
                raise CommandError(f"Unrecognized escape character \\{e} in format string.")
            out.append(_ESCAPES[e])
            i += 2
            continue
        out.append(c)
        i += 1
    raise CommandError("Bad format string, non-terminated '\"'")


def split_arguments(text: str) -> list[str]:
    """Comma-separated expressions, commas inside (), [] or quotes kept."""
    args, depth, cur, quote = [], 0, [], None
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            cur.append(c)
            if c == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            cur.append(c)
        elif c in "([{":
            depth += 1
            cur.append(c)
        elif c in ")]}":
            depth -= 1
            cur.append(c)
        elif c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if quote:
        raise CommandError(f"Unterminated quoted string in arguments: {text.strip()}")
    last = "".join(cur).strip()
    if last or args:
        args.append(last)
    if any(not a for a in args):
        raise CommandError("Bad format string: an argument is empty.")
    return args


def parse_format(fmt: str) -> list[Piece]:
    pieces: list[Piece] = []
    pos = 0
    for m in _CONVERSION.finditer(fmt):
        if m.start() > pos:
            pieces.append(Piece(fmt[pos:m.start()]))
        conv = m.group("conv")
        if conv == "%":
            if m.group(0) != "%%":
                raise CommandError("Bad format string")
            pieces.append(Piece("%"))
        elif conv == "n":
            raise CommandError("Format specifier `n' not supported in printf")
        elif conv not in CONVERSIONS:
            raise CommandError(f"Unrecognized format specifier '{conv}' in printf")
        else:
            pieces.append(Piece(m.group(0), conv, m.group("flags") or "", m.group("width") or "",
                                m.group("prec"), m.group("length")))
        pos = m.end()
    if pos < len(fmt):
        if "%" in fmt[pos:]:
            raise CommandError("Incomplete format specifier at end of format string")
        pieces.append(Piece(fmt[pos:]))
    return pieces


def parse_printf(text: str) -> tuple[list[Piece], list[str]]:
    """`"fmt", a, b` -> (pieces, argument expressions), checked against
    each other (gdb's errors)."""
    fmt, rest = _unquote(text)
    rest = rest.strip()
    if rest and not rest.startswith(","):
        raise CommandError("Invalid argument syntax")
    if rest and not rest[1:].strip():
        raise CommandError("Bad format string: an argument is empty.")
    args = split_arguments(rest[1:]) if rest else []
    pieces = parse_format(fmt)
    if sum(1 for p in pieces if p.conv) != len(args):
        raise CommandError("Wrong number of arguments for specified format-string")
    for a in args:
        if not (a.startswith('"') or a.startswith("'")):
            from .expr import parse
            parse(a)
    return pieces, args


def _spec(p: Piece, conv: str) -> str:
    prec = f".{p.prec}" if p.prec is not None else ""
    return f"%{p.flags}{p.width}{prec}{conv}"


def _string_arg(arg: str, ctx: Any) -> str:
    if arg.startswith('"'):
        text, tail = _unquote(arg)
        if tail.strip():
            raise CommandError(f"Invalid string argument: {arg}")
        return text
    from .evaluate import evaluate
    from .formatting import read_c_string
    from .evaluate import pointer_space
    from .values import TypeKind
    v = evaluate(arg, ctx)
    t = v.type.strip()
    if t.kind is TypeKind.ARRAY:
        data = v.data.split(b"\0", 1)[0]
    elif t.kind is TypeKind.POINTER:
        data, _truncated = read_c_string(ctx, pointer_space(v.type), v.as_int(), limit=1 << 16)
    else:
        raise CommandError(f"Value of type {t.name or t.kind.value} can't be converted to a string for %s")
    return data.decode("utf-8", "replace")


def format_one(p: Piece, arg: str, ctx: Any) -> str:
    from .evaluate import evaluate
    if p.conv == "s":
        return _spec(p, "s") % _string_arg(arg, ctx)
    if arg.startswith("'") and p.conv == "c":
        text, _ = _unquote('"' + arg[1:-1] + '"')
        return _spec(p, "c") % text[:1]
    value = evaluate(arg, ctx)
    conv = p.conv
    if conv in "fFeEgGaA":
        x = value.as_float()
        if conv in "aA":
            text = float.hex(x)
            return (text.upper() if conv == "A" else text).rjust(int(p.width or 0))
        return _spec(p, conv) % x
    from .values import ValueError_
    try:
        n = value.as_int()
    except ValueError_:   # a float or an aggregate for %d: gdb refuses, naming the argument
        raise CommandError(f"Value can't be converted to integer for %{conv}: {arg}") from None
    if conv == "p":
        return _spec(p, "s") % f"0x{n % (1 << 64):x}"
    bits = _INT_BITS.get(p.length, 32)
    n %= 1 << bits
    if conv in "di" and n >= 1 << (bits - 1):
        n -= 1 << bits
    if conv == "c":
        return _spec(p, "c") % chr(n & 0xFF)
    return c_integer(p, n, conv)


def c_integer(p: Piece, n: int, conv: str) -> str:
    """C's integer conversions exactly (Python's % differs: `%#o` is
    `0o17` there, `017` in C; `%+u` has no sign in C; `%#x` of 0 is `0`)."""
    digits = {"x": "x", "X": "X", "o": "o"}.get(conv, "d")
    text = format(abs(n), digits)
    if p.prec is not None:
        text = "" if int(p.prec) == 0 and n == 0 else text.rjust(int(p.prec), "0")
    prefix = ""
    if conv in "di":
        prefix = "-" if n < 0 else "+" if "+" in p.flags else " " if " " in p.flags else ""
    if "#" in p.flags:
        if conv in "xX" and n != 0:
            prefix = "0" + conv
        elif conv == "o" and not text.startswith("0"):
            text = "0" + text
    width = int(p.width or 0)
    if "-" in p.flags:
        return (prefix + text).ljust(width)
    if "0" in p.flags and p.prec is None:
        return prefix + text.rjust(width - len(prefix), "0")
    return (prefix + text).rjust(width)


def render(pieces: list[Piece], args: list[str], ctx: Any) -> str:
    out, it = [], iter(args)
    for p in pieces:
        out.append(p.text if p.conv is None else format_one(p, next(it), ctx))
    return "".join(out)


# ------------------------------------------------------------------ commands
def register(dbg: Any) -> None:
    add = dbg.add
    add(Command("printf", lambda rest: _printf(dbg, rest), 'printf "FORMAT", ARG...: C-formatted output '
                "of expressions for the focus"))
    add(Command("dprintf", lambda rest: _dprintf(dbg, rest), 'dprintf LOCATION,"FORMAT",ARG...: a '
                "breakpoint that prints for each lane that reaches it and continues"))


def _printf(dbg: Any, rest: str) -> None:
    from .inspection import eval_context
    pieces, args = parse_printf(rest)
    import sys
    sys.stdout.write(render(pieces, args, eval_context(dbg)))
    sys.stdout.flush()


def _dprintf(dbg: Any, rest: str) -> None:
    from .breakpoints import announce, create_breakpoint
    location, sep, fmt = rest.partition(",")
    if not sep or not location.strip():
        raise CommandError("Format string required")
    parse_printf(fmt)
    bp = create_breakpoint(dbg, location.strip(), temporary=False, label="dprintf")
    dbg.dprintfs[bp.id] = fmt.strip()
    print(announce(dbg, bp))


def dprintf_only(dbg: Any, ev: Any) -> bool:
    """Print the dprintfs a breakpoint stop hit; True when nothing else
    stopped there (the program continues)."""
    hit = [i for i in ev.breakpoints if i in dbg.user_breakpoints]
    printing = [i for i in hit if i in dbg.dprintfs]
    if not printing:
        return False
    from .context import LaneContext
    from .debugger import _errors
    for i in printing:
        pieces, args = parse_printf(dbg.dprintfs[i])
        for sm, wp, ln in sorted(tuple(map(int, x)) for x in ev.lanes):
            ctx = LaneContext(dbg.session, ev.dev, sm, wp, ln, dbg.store)
            try:
                print(render(pieces, args, ctx), end="")
            except _errors() as e:
                print(f"<error in dprintf {i}: {getattr(e, 'message', None) or e}>")
    import sys
    sys.stdout.flush()
    return len(printing) == len(hit) and not dbg.condition_errors
