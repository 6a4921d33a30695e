"""Line-level grammar shared by every section parser of a devcoredump.

The format is YAML-looking but not YAML, so the parser works on lines with
their indentation: a section body is a list of `Line`s, and the helpers here
read the four shapes that occur (`key: value`, `- key: value` list item
starts, `- { offset: .., value: .. }` register lines and the two-line
`data: !!ascii85 |` blob) and turn every malformed one into a
DevcoredumpError at its line. `flat_list` covers the sections whose items
are one `- key:` line plus fields two spaces deeper (rings, bos, indexed
registers, debugbus). Section meaning lives in sections.py, not here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpudbg.dump.ascii85 import Ascii85Error, bytes_from_dwords, decode
from gpudbg.dump.devcoredump.errors import DevcoredumpError
from gpudbg.dump.devcoredump.model import Register

DATA_HEADER = "!!ascii85 |"
_REG = re.compile(r"- \{ ?offset: ?0x([0-9a-fA-F]+), ?value: ?0x([0-9a-fA-F]+) ?\}")
_DEC = re.compile(r"-?[0-9]+")
MAX_DIGITS = 20          # a decimal field is at most a 64-bit number (20 digits)
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_BARE_HEX = re.compile(r"[0-9a-fA-F]+")


@dataclass
class Line:
    no: int         # 1-based
    indent: int
    text: str       # without indentation and trailing spaces
    raw: str


def make_line(no: int, raw: str) -> Line:
    stripped = raw.lstrip(" ")
    return Line(no, len(raw) - len(stripped), stripped.rstrip(" "), raw)


def split_kv(line: Line, what: str) -> tuple[str, str | None]:
    """`key: value` -> (key, value); `key:` -> (key, None)."""
    text = line.text
    if text.startswith("- "):
        text = text[2:]
    if text.endswith(":") and ": " not in text:
        return text[:-1], None
    key, sep, value = text.partition(": ")
    if not sep or not key or " " in key:
        raise DevcoredumpError(line.no, f"{what}: expected 'key: value', got {show(line.text, 80)}")
    return key, value


def show(value: str | None, limit: int = 40) -> str:
    """A value for an error message: repr, cut to `limit` characters."""
    if value is None or len(value) <= limit:
        return repr(value)
    return f"{value[:limit - 12]!r}... ({len(value)} characters)"


def dec(line: Line, value: str | None, what: str, bits: int = 64) -> int:
    """A decimal that fits in a signed `bits`-bit field."""
    if value is None or not _DEC.fullmatch(value):
        raise DevcoredumpError(line.no, f"{what}: expected a decimal number, got {show(value)}")
    if len(value.lstrip("-")) > MAX_DIGITS:
        raise DevcoredumpError(line.no, f"{what}: {show(value)} has {len(value.lstrip('-'))} digits, "
                               f"too many for a {bits}-bit number")
    n = int(value)
    if not -(1 << (bits - 1)) <= n < 1 << bits:
        raise DevcoredumpError(line.no, f"{what}: {value} does not fit in {bits} bits")
    return n


def udec(line: Line, value: str | None, what: str, bits: int = 64) -> int:
    """A non-negative decimal below 2**bits."""
    n = dec(line, value, what, bits)
    if n < 0:
        raise DevcoredumpError(line.no, f"{what}: must not be negative, got {n}")
    return n


def hex0x(line: Line, value: str | None, what: str, bits: int = 64) -> int:
    if value is None or not _HEX.fullmatch(value):
        raise DevcoredumpError(line.no, f"{what}: expected 0x-prefixed hex, got {show(value)}")
    n = int(value, 16)
    if n >> bits:
        raise DevcoredumpError(line.no, f"{what}: {show(value)} does not fit in {bits} bits")
    return n


def bare_hex(line: Line, value: str | None, what: str, bits: int = 64) -> int:
    if value is None or not _BARE_HEX.fullmatch(value):
        raise DevcoredumpError(line.no, f"{what}: expected hex digits, got {show(value)}")
    n = int(value, 16)
    if n >> bits:
        raise DevcoredumpError(line.no, f"{what}: {show(value)} does not fit in {bits} bits")
    return n


def register(line: Line, slice_: int | None = None) -> Register:
    m = _REG.fullmatch(line.text)
    if m is None:
        raise DevcoredumpError(line.no, f"bad register line {show(line.text, 80)} "
                               "(expected '- { offset: 0x..., value: 0x... }')")
    offset, value = int(m.group(1), 16), int(m.group(2), 16)
    if value > 0xFFFF_FFFF:
        raise DevcoredumpError(line.no, f"register value 0x{show(m.group(2))} does not fit in 32 bits")
    if offset > 0xFFFF_FFFF:
        raise DevcoredumpError(line.no, f"register offset 0x{show(m.group(1))} does not fit in 32 bits")
    return Register(offset, value, slice_)


def is_register(line: Line) -> bool:
    return line.text.startswith("- {")


def read_blob(body: list[Line], i: int, what: str) -> tuple[bytes, int]:
    """Decode the blob whose `data:` header is body[i]; returns (bytes, next index)."""
    header = body[i]
    _, value = split_kv(header, what)
    if value != DATA_HEADER:
        raise DevcoredumpError(header.no, f"{what}: unsupported data encoding {show(value)} "
                               f"(expected {DATA_HEADER!r})")
    if i + 1 >= len(body):
        raise DevcoredumpError(header.no, f"{what}: 'data: {DATA_HEADER}' without its payload line "
                               "(truncated?)")
    payload = body[i + 1]
    try:
        dwords = decode(payload.text)
    except Ascii85Error as exc:
        raise DevcoredumpError(payload.no, f"{what}: bad ascii85 data at column "
                               f"{payload.indent + exc.column + 1}: {exc.reason}") from None
    if not dwords.size:
        raise DevcoredumpError(payload.no, f"{what}: empty data payload")
    return bytes_from_dwords(dwords), i + 2


@dataclass
class Item:
    """One `- key: value` element with its fields and optional blob."""

    line: Line
    fields: dict[str, tuple[str | None, Line]] = field(default_factory=dict)
    data: bytes | None = None
    data_line: int = 0

    def has(self, key: str) -> bool:
        return key in self.fields

    def raw(self, key: str, what: str) -> tuple[str | None, Line]:
        try:
            return self.fields[key]
        except KeyError:
            raise DevcoredumpError(self.line.no, f"{what} is missing {show(key + ':')}") from None

    def dec(self, key: str, what: str, bits: int = 64) -> int:
        v, ln = self.raw(key, what)
        return dec(ln, v, f"{what} {key}", bits)

    def udec(self, key: str, what: str, bits: int = 64) -> int:
        v, ln = self.raw(key, what)
        return udec(ln, v, f"{what} {key}", bits)

    def hex(self, key: str, what: str, bits: int = 64) -> int:
        v, ln = self.raw(key, what)
        return hex0x(ln, v, f"{what} {key}", bits)

    def text(self, key: str, what: str) -> str:
        v, _ = self.raw(key, what)
        return "" if v is None else v


def add_field(item: Item, line: Line, what: str) -> None:
    key, value = split_kv(line, what)
    if key in item.fields:
        raise DevcoredumpError(line.no, f"{what}: duplicate {show(key + ':')} (first at line "
                               f"{item.fields[key][1].no})")
    item.fields[key] = (value, line)


def flat_list(body: list[Line], what: str) -> list[Item]:
    """Items at indent 2 (`- k: v`), fields and `data:` at indent 4."""
    items: list[Item] = []
    i = 0
    while i < len(body):
        line = body[i]
        if line.indent == 2 and line.text.startswith("- "):
            item = Item(line)
            add_field(item, line, what)
            items.append(item)
            i += 1
            continue
        if line.indent != 4 or line.text.startswith("- "):
            raise DevcoredumpError(line.no, f"{what}: unexpected line {show(line.text, 80)} at indent "
                                   f"{line.indent} (items start '  - ', fields are indented 4)")
        if not items:
            raise DevcoredumpError(line.no, f"{what}: field before the first '- ' item")
        item = items[-1]
        if line.text.startswith("data:"):
            if item.data is not None:
                raise DevcoredumpError(line.no, f"{what}: second data blob in one item")
            item.data, i = read_blob(body, i, what)
            item.data_line = line.no
            continue
        add_field(item, line, what)
        i += 1
    return items


def check_length(data: bytes, declared_bytes: int, line: int, what: str) -> None:
    if len(data) > declared_bytes:
        raise DevcoredumpError(line, f"{what}: data has {len(data) // 4} dwords but the declared "
                               f"size is {declared_bytes // 4} dwords")
