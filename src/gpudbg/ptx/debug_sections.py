"""`.section .debug_* { ... }` blocks: DWARF bytes as PTX data directives.

Each `.b8/.b16/.b32/.b64` directive becomes a DebugItem with its values:
ints stay ints, label and section references (`$L__func_begin0`,
`.debug_abbrev`) and label arithmetic (`$L__func_end0-$L__func_begin0`,
`.debug_loc+131`) are kept as written, for the DWARF reader to resolve
once code addresses exist. A label inside a section (`$L__info_string0:`)
becomes a DebugItem of width 0 whose single value is the label name: the
IR has no other place for it, and the `.loc ... function_name` form refers
to such labels by name.

It does not interpret DWARF.
"""
from __future__ import annotations

import codecs

from . import ir
from .declarations import loc_of
from .lexer import Cursor, Tok, Token
from .literals import int_literal

_WIDTHS = {"b8": 1, "b16": 2, "b32": 4, "b64": 8, "u8": 1, "u16": 2, "u32": 4,
           "u64": 8, "s8": 1, "s16": 2, "s32": 4, "s64": 8}
_BINARY_OPS = ("+", "-", "*", "/", "&", "|", "^")


def section(cur: Cursor, start: Token) -> ir.DebugSection:
    """After `.section`: the name, then the braced body."""
    name_parts: list[str] = []
    end = None
    while not cur.at("{"):
        tok = cur.peek()
        if tok.kind not in (Tok.DIRECTIVE, Tok.WORD) or (end is not None and tok.pos != end):
            cur.fail("expected a section name and '{'")
        cur.next()
        name_parts.append(tok.text)
        end = tok.pos + len(tok.text)
    if not name_parts:
        cur.fail("expected a section name after .section")
    cur.expect("{", "to open section body")
    items: list[ir.DebugItem] = []
    while not cur.accept("}"):
        tok = cur.peek()
        if tok.kind is Tok.WORD and cur.peek(1).text == ":" and "." not in tok.text:
            cur.next()
            cur.next()
            items.append(ir.DebugItem(0, [tok.text]))
        elif tok.kind is Tok.DIRECTIVE and tok.text[1:] in _WIDTHS:
            cur.next()
            width = _WIDTHS[tok.text[1:]]
            values = _values(cur, width)
            items.append(ir.DebugItem(width, values))
        else:
            cur.fail(f"expected a data directive or label in section {''.join(name_parts)}")
    return ir.DebugSection("".join(name_parts), items, loc_of(cur, start))


def _values(cur: Cursor, width: int) -> list:
    values: list = []
    while True:
        tok = cur.peek()
        if tok.kind is Tok.STRING:
            cur.next()
            if width != 1:
                raise cur.error_at(tok, "string data needs .b8")
            values.extend(_string_bytes(cur, tok))
        else:
            values.append(_value(cur))
        if not cur.accept(","):
            return values


def _string_bytes(cur: Cursor, tok: Token) -> list[int]:
    try:
        text = codecs.decode(tok.text[1:-1], "unicode_escape")
        return list(text.encode("latin-1"))
    except (UnicodeError, ValueError):
        raise cur.error_at(tok, "bad escape or non-byte character in string") from None


def _term(cur: Cursor) -> Token:
    tok = cur.peek()
    if tok.kind in (Tok.INT, Tok.WORD) or (
            tok.kind is Tok.DIRECTIVE and tok.text[1:] not in _WIDTHS):
        return cur.next()
    cur.fail("expected a number, label or section name")


def _value(cur: Cursor) -> int | str:
    parts: list[Token] = []
    depth = 0
    while True:
        while cur.peek().kind is Tok.PUNCT and cur.peek().text in ("-", "~", "("):
            tok = cur.next()
            depth += tok.text == "("
            parts.append(tok)
        parts.append(_term(cur))
        while depth and cur.at(")"):
            parts.append(cur.next())
            depth -= 1
        nxt = cur.peek()
        if nxt.kind is Tok.PUNCT and nxt.text in _BINARY_OPS:
            parts.append(cur.next())
            continue
        break
    if depth:
        cur.expect(")", "in debug data expression")
    if len(parts) == 1 and parts[0].kind is Tok.INT:
        return int_literal(cur, parts[0])
    if len(parts) == 2 and parts[0].text == "-" and parts[1].kind is Tok.INT:
        return -int_literal(cur, parts[1])
    return "".join(t.text for t in parts)
