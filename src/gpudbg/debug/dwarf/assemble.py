"""The DWARF sections embedded in `-G` PTX, assembled into real bytes.

NVVM writes DWARF as PTX data directives (`.b8 17`, `.b64 $L__func_begin0`,
`.b32 .debug_abbrev`, `.b32 .debug_loc+133`) and leaves the symbolic values
to ptxas. The one idea: we are the assembler, so each value is resolved
against our own layout — code labels to the simulator's code addresses
(`code_base + 16 * pc`), labels inside a debug section to their offset in
that section, section names to offset 0 — and the bytes then read as an
ordinary little-endian, 32-bit-offset DWARF image that pyelftools parses.

Names of data symbols that have no fixed device address (a function's local
depot, shared or param variables) cannot become real addresses, so they get
*symbolic* addresses: a reserved high range, one 4 GiB slot per symbol, that
the reader maps back to (symbol, offset). This keeps `DW_OP_addr
__local_depot1` meaningful without pretending local memory has one address.

It does not interpret DWARF and does not synthesise sections NVVM leaves to
ptxas (`.debug_line`): the line table comes from `.loc` instead.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field

from gpudbg.ptx import ir

SYMBOLIC_BASE = 0xFFFF_0000_0000_0000
SYMBOLIC_SLOT = 1 << 32


class DwarfAssemblyError(ValueError):
    """A debug-section value cannot be resolved or does not fit its width."""


@dataclass
class Assembled:
    """Section bytes by name (`.debug_info` ...), where each data label sits,
    and the symbolic addresses handed out for symbols without a device
    address (see the module docstring)."""

    sections: dict[str, bytes]
    data_labels: dict[str, tuple[str, int]] = field(default_factory=dict)
    symbolic: dict[str, int] = field(default_factory=dict)

    def symbol_at(self, address: int) -> tuple[str, int] | None:
        """The (symbol, byte offset) a symbolic address stands for."""
        if address < SYMBOLIC_BASE:
            return None
        slot, off = divmod(address - SYMBOLIC_BASE, SYMBOLIC_SLOT)
        for name, base in self.symbolic.items():
            if base == SYMBOLIC_BASE + slot * SYMBOLIC_SLOT:
                return name, off
        return None


@dataclass
class Symbols:
    """What names resolve to: code labels and functions to code addresses,
    global/const variables to device addresses; any other known data
    symbol (locals, shared) to a symbolic address."""

    code: dict[str, int]
    data: dict[str, int]
    symbolic_names: set[str]


def symbols_of(program) -> Symbols:
    """The name table of a loaded simulator Program. Labels are per function
    in PTX; NVVM numbers them module-wide, so a name defined in two functions
    is ambiguous and is left out (a reference to it then fails clearly)."""
    code: dict[str, int] = {}
    dup: set[str] = set()
    for (_fname, label), pc in program.labels().items():
        if label in code:
            dup.add(label)
        code[label] = program.code_address(pc)
    for label in dup:
        del code[label]
    for name in program.functions:
        code[name] = program.function_address(name)
    symbolic: set[str] = set()
    module = program.module
    for f in module.functions.values():
        symbolic.update(f.locals)
        symbolic.update(p.name for p in f.params + f.returns)
    for v in module.globals.values():
        if v.name not in program.symbols:
            symbolic.add(v.name)
    return Symbols(code, dict(program.symbols), symbolic)


def assemble(module: ir.Module, symbols: Symbols) -> Assembled:
    """All debug sections of `module` as bytes. Raises DwarfAssemblyError
    naming the section and the value when something does not resolve."""
    out = Assembled({})
    layout: list[tuple[ir.DebugSection, list[int]]] = []
    for sec in module.debug_sections:
        if sec.name in out.sections:
            raise DwarfAssemblyError(f"{sec.loc}: debug section {sec.name} appears twice")
        offsets, off = [], 0
        for item in sec.items:
            offsets.append(off)
            if item.width == 0:
                for label in item.values:
                    if label in out.data_labels:
                        raise DwarfAssemblyError(f"{sec.loc}: label {label} defined twice in debug sections")
                    out.data_labels[label] = (sec.name, off)
            elif item.width in (1, 2, 4, 8):
                off += item.width * len(item.values)
            else:
                raise DwarfAssemblyError(f"{sec.loc}: data width {item.width} in {sec.name} is not 1, 2, 4 or 8")
        out.sections[sec.name] = b""
        layout.append((sec, offsets))
    for name in sorted(symbols.symbolic_names):
        out.symbolic[name] = SYMBOLIC_BASE + len(out.symbolic) * SYMBOLIC_SLOT

    def resolve(name: str) -> int:
        if name in out.data_labels:
            return out.data_labels[name][1]
        if name in out.sections:
            return 0
        if name.startswith(".debug_"):
            return 0  # a section ptxas would create (.debug_line): offset 0 of it
        if name in symbols.code:
            return symbols.code[name]
        if name in symbols.data:
            return symbols.data[name]
        if name in out.symbolic:
            return out.symbolic[name]
        raise KeyError(name)

    for sec, _offsets in layout:
        buf = bytearray()
        for item in sec.items:
            for v in item.values if item.width else ():
                try:
                    n = v if isinstance(v, int) else evaluate(v, resolve)
                except KeyError as e:
                    raise DwarfAssemblyError(
                        f"{sec.loc}: {sec.name}: unknown symbol {e.args[0]} in value {v!r}") from None
                buf += encode(n, item.width, f"{sec.loc}: {sec.name}: value {v!r}")
        out.sections[sec.name] = bytes(buf)
    return out


def encode(value: int, width: int, what: str = "value") -> bytes:
    """Little-endian two's complement in `width` bytes; a value that does
    not fit (signed or unsigned) is an error, never silently truncated."""
    bits = 8 * width
    if not -(1 << (bits - 1)) <= value < (1 << bits):
        raise DwarfAssemblyError(f"{what} = {value} does not fit in {width} bytes")
    return (value & ((1 << bits) - 1)).to_bytes(width, "little")


_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)|([A-Za-z_$.%][\w$.%]*)|(<<|>>|[-+*/&|^~()]))")
_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": lambda a, b: (abs(a) // abs(b)) * (1 if (a >= 0) == (b >= 0) else -1),
        "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift}
_PREC = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6}


def evaluate(expr: str, resolve) -> int:
    """An integer label expression (`$L__func_end0-$L__func_begin0`,
    `.debug_loc+133`) with C precedence; names go through `resolve`, which
    raises KeyError for unknown ones."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(expr):
        if expr[pos:].strip() == "":
            break
        m = _TOKEN.match(expr, pos)
        if m is None:
            raise DwarfAssemblyError(f"cannot read expression {expr!r} at {expr[pos:]!r}")
        kind = "num" if m.group(1) else "name" if m.group(2) else "op"
        tokens.append((kind, m.group(m.lastindex)))
        pos = m.end()
    state = {"i": 0}

    def peek() -> tuple[str, str] | None:
        return tokens[state["i"]] if state["i"] < len(tokens) else None

    def take() -> tuple[str, str]:
        t = peek()
        if t is None:
            raise DwarfAssemblyError(f"expression {expr!r} ends early")
        state["i"] += 1
        return t

    def unary() -> int:
        kind, text = take()
        if kind == "num":
            return int(text, 0)
        if kind == "name":
            return resolve(text)
        if text == "-":
            return -unary()
        if text == "~":
            return ~unary()
        if text == "(":
            v = binary(0)
            if take() != ("op", ")"):
                raise DwarfAssemblyError(f"unbalanced parentheses in {expr!r}")
            return v
        raise DwarfAssemblyError(f"unexpected {text!r} in expression {expr!r}")

    def binary(min_prec: int) -> int:
        left = unary()
        while True:
            t = peek()
            if t is None or t[0] != "op" or t[1] not in _PREC or _PREC[t[1]] <= min_prec:
                return left
            take()
            right = binary(_PREC[t[1]])
            op = t[1]
            if op == "/" and right == 0:
                raise DwarfAssemblyError(f"division by zero in {expr!r}")
            if op in ("<<", ">>") and right < 0:
                raise DwarfAssemblyError(f"negative shift in {expr!r}")
            left = _OPS[op](left, right)

    value = binary(0)
    if peek() is not None:
        raise DwarfAssemblyError(f"trailing {peek()[1]!r} in expression {expr!r}")
    return value
