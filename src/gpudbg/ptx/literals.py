"""PTX numeric literals and integer constant expressions.

Integers become exact Python ints (hex, octal, binary, decimal, optional U
suffix); `0f`/`0d` hex floats keep their raw bits so no precision is lost;
decimal floats become Python floats. Constant expressions (`(8*4)`, `-1`,
`~0`) are evaluated with range checks after every step, so hostile input
such as `1<<99999999` is a positioned error instead of a hang.

Only integer arithmetic is folded; float expressions are not part of PTX.
"""
from __future__ import annotations

import math
import struct

from . import ir
from .lexer import Cursor, Tok, Token

_LIMIT = 1 << 64
_MAX_DEPTH = 64


_MAX_DIGITS = {16: 16, 2: 64, 8: 22, 10: 20}  # digits of 2**64 - 1 per base


def shown(text: str) -> str:
    """A token as quoted in a message, shortened if it is huge."""
    return text if len(text) <= 40 else text[:37] + "..."


def int_literal(cur: Cursor, tok: Token) -> int:
    text = tok.text
    if text[-1] in "uU":
        text = text[:-1]
    if text[:2] in ("0x", "0X"):
        base, digits = 16, text[2:]
    elif text[:2] in ("0b", "0B"):
        base, digits = 2, text[2:]
    elif len(text) > 1 and text[0] == "0":
        base, digits = 8, text[1:]
    else:
        base, digits = 10, text
    digits = digits.lstrip("0") or "0"
    try:
        value = int(digits, base) if len(digits) <= _MAX_DIGITS[base] else _LIMIT
    except ValueError:
        raise cur.error_at(tok, f"malformed integer literal {shown(tok.text)!r}") from None
    if value >= _LIMIT:
        raise cur.error_at(tok, f"integer literal {shown(tok.text)} does not fit in 64 bits")
    return value


def hexfloat_literal(cur: Cursor, tok: Token) -> ir.Immediate:
    digits = tok.text[2:]
    wide = tok.text[1] in "dD"
    want = 16 if wide else 8
    if len(digits) != want:
        raise cur.error_at(
            tok, f"hex float literal {shown(tok.text)} must have exactly {want} hex digits")
    bits = int(digits, 16)
    if wide:
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        return ir.Immediate(value, bits=bits, width=64)
    value = struct.unpack("<f", struct.pack("<I", bits))[0]
    return ir.Immediate(value, bits=bits, width=32)


def negate_immediate(imm: ir.Immediate) -> ir.Immediate:
    if imm.bits is None:
        return ir.Immediate(-imm.value)
    sign = 1 << (imm.width - 1)  # type: ignore[operator]
    return ir.Immediate(-imm.value, bits=imm.bits ^ sign, width=imm.width)


def _check(cur: Cursor, tok: Token, value: int) -> int:
    if not -_LIMIT <= value < _LIMIT:
        raise cur.error_at(tok, "constant expression overflows 64 bits")
    return value


_BINARY = {  # operator -> precedence (higher binds tighter)
    "*": 5, "/": 5, "%": 5, "+": 4, "-": 4, "<<": 3, ">>": 3,
    "&": 2, "^": 1, "|": 0,
}


def _binary_op(cur: Cursor) -> str | None:
    tok = cur.peek()
    if tok.kind is not Tok.PUNCT:
        return None
    if tok.text in "<>":
        nxt = cur.peek(1)
        if nxt.text == tok.text and nxt.pos == tok.pos + 1:
            return tok.text * 2
        return None
    return tok.text if tok.text in _BINARY else None


def const_expr(cur: Cursor, depth: int = 0, min_prec: int = 0) -> int:
    """A full integer constant expression (used inside parentheses)."""
    left = const_unary(cur, depth)
    while True:
        op = _binary_op(cur)
        if op is None or _BINARY[op] < min_prec:
            return left
        tok = cur.next()
        if len(op) == 2:
            cur.next()
        right = const_expr(cur, depth + 1, _BINARY[op] + 1)
        left = _apply(cur, tok, op, left, right)


def _apply(cur: Cursor, tok: Token, op: str, a: int, b: int) -> int:
    if op in ("/", "%"):
        if b == 0:
            raise cur.error_at(tok, "division by zero in constant expression")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # truncating, as C
        return _check(cur, tok, q if op == "/" else a - q * b)
    if op in ("<<", ">>"):
        if not 0 <= b < 64:
            raise cur.error_at(tok, f"shift count {b} out of range 0..63")
        return _check(cur, tok, a << b if op == "<<" else a >> b)
    result = {"*": a * b, "+": a + b, "-": a - b, "&": a & b, "^": a ^ b, "|": a | b}[op]
    return _check(cur, tok, result)


# PTX's one predefined identifier: a constant (the warp size), usable wherever
# an integer constant is, e.g. `mov.u32 %r1, WARP_SZ;` from nvcc's warpSize
WARP_SZ = "WARP_SZ"
WARP_SIZE = 32


def const_unary(cur: Cursor, depth: int = 0) -> int:
    """A unary constant: an integer literal or WARP_SZ with prefix `-`, `~`,
    `!`, or a parenthesized expression."""
    if depth > _MAX_DEPTH:
        cur.fail("constant expression nested too deeply")
    tok = cur.peek()
    if tok.kind is Tok.INT:
        cur.next()
        return int_literal(cur, tok)
    if tok.kind is Tok.WORD and tok.text == WARP_SZ:
        cur.next()
        return WARP_SIZE
    if tok.kind is Tok.PUNCT and tok.text in "-~!":
        cur.next()
        value = const_unary(cur, depth + 1)
        if tok.text == "-":
            return _check(cur, tok, -value)
        return ~value if tok.text == "~" else int(value == 0)
    if tok.kind is Tok.PUNCT and tok.text == "(":
        cur.next()
        value = const_expr(cur, depth + 1)
        cur.expect(")", "to close constant expression")
        return value
    cur.fail("expected an integer constant")


def number(cur: Cursor) -> int | float | ir.Immediate:
    """A numeric value in an operand or initializer: an int (possibly a
    constant expression), a float, or an Immediate for hex floats."""
    tok = cur.peek()
    negate = False
    if tok.kind is Tok.PUNCT and tok.text == "-" and cur.peek(1).kind in (Tok.FLOAT, Tok.HEXFLOAT):
        cur.next()
        negate = True
        tok = cur.peek()
    if tok.kind is Tok.FLOAT:
        cur.next()
        value = float(tok.text)
        if not math.isfinite(value):   # 1e999: PTX decimal floats are .f64 values
            raise cur.error_at(tok, f"floating-point constant {shown(tok.text)} is out of range for .f64")
        return -value if negate else value
    if tok.kind is Tok.HEXFLOAT:
        cur.next()
        imm = hexfloat_literal(cur, tok)
        return negate_immediate(imm) if negate else imm
    return const_unary(cur)


def is_number_start(cur: Cursor) -> bool:
    tok = cur.peek()
    if tok.kind in (Tok.INT, Tok.FLOAT, Tok.HEXFLOAT) or (tok.kind is Tok.WORD and tok.text == WARP_SZ):
        return True
    nxt = cur.peek(1)
    return tok.kind is Tok.PUNCT and tok.text in "-~!(" and (
        nxt.kind in (Tok.INT, Tok.FLOAT, Tok.HEXFLOAT, Tok.PUNCT) or (nxt.kind is Tok.WORD and nxt.text == WARP_SZ))


def small_int(cur: Cursor, what: str, low: int = 0, high: int = 1 << 32) -> int:
    """An integer directive argument (alignment, array size, thread count)."""
    tok = cur.peek()
    value = const_unary(cur)
    if not low <= value < high:
        raise cur.error_at(tok, f"{what} {value} out of range")
    return value
