"""Lexer and parser for the C-subset expressions gdb / cuda-gdb users type
(`print a[i] + 1`, `x/4xw (@shared int *)0`, `$r1 = 7`), to a small AST.

The parser is a Pratt (precedence-climbing) parser over gdb's own operator
table, including gdb's binary `@` (`*p@5`, an artificial array) between the
shift and additive levels. The one C ambiguity, `(T)x` versus `(a)*b`, is
settled by asking `is_type_name` (the evaluator passes the program's
typedefs and tags); C keywords and the <stdint.h> names are types without
it. cuda-gdb's `@global`/`@shared`/`@local`/... qualifier is a prefix: on a
cast type it sets the pointer's space, on an expression it makes a pointer
into that space. Every node records its column so errors can point there.
Nesting is bounded (the parser's recursion while parsing, the depth of the
finished tree after: MAX_NESTING levels), so an expression too deep for
Python's stack is an ExpressionError at its column, never a RecursionError.

It does not evaluate, look up symbols or know any types' sizes.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable

from gpudbg.cli.debugger.values import STANDARD_TYPEDEFS, TYPE_WORDS

SPACE_NAMES = frozenset({"global", "shared", "local", "generic", "const", "param", "code"})
# Deepest expression tree accepted: the parser and the evaluator recurse per
# level (a few Python frames each), so past this a clear error is given
# instead of a RecursionError (gdb users rarely nest past a dozen).
MAX_NESTING = 128
_TOO_DEEP = f"Expression nested too deeply (more than {MAX_NESTING} levels)."


class ExpressionError(Exception):
    """A bad expression. `column` (0-based, None when not about one place)
    points at the problem; caret() draws it under the text."""

    def __init__(self, message: str, column: int | None = None, text: str | None = None):
        super().__init__(message)
        self.message = message
        self.column = column
        self.text = text

    def caret(self) -> str:
        if self.text is None or self.column is None:
            return self.message
        return f"{self.text}\n{' ' * self.column}^\n{self.message}"


# ---------------------------------------------------------------- tokens

@dataclass(frozen=True)
class Token:
    kind: str          # "int" "float" "char" "string" "ident" "dollar" "op" "end"
    text: str
    pos: int
    value: object = None
    suffix: str = ""   # integer suffix (lower case, "u", "l", "ul", "ll", "ull") / "f" for floats


_OPS = sorted("""<<= >>= -> ++ -- << >> <= >= == != && || += -= *= /= %= &= ^= |=
+ - * / % < > = ! ~ & ^ | ? : ( ) [ ] . , @""".split(), key=len, reverse=True)

_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "e": 27,
            "\\": 92, "'": 39, '"': 34, "?": 63}


def _char_escape(text: str, i: int) -> tuple[int, int]:
    """Decode one (possibly escaped) character at text[i]; returns (code, next i)."""
    c = text[i]
    if c != "\\":
        return ord(c), i + 1
    if i + 1 >= len(text):
        raise ExpressionError("Unmatched single quote.", i, text)
    c = text[i + 1]
    if c in _ESCAPES:
        return _ESCAPES[c], i + 2
    if c in "01234567":
        j = i + 1
        while j < len(text) and j < i + 4 and text[j] in "01234567":
            j += 1
        return int(text[i + 1:j], 8) & 0xFF, j
    if c == "x":
        j = i + 2
        while j < len(text) and text[j] in "0123456789abcdefABCDEF":
            j += 1
        if j == i + 2:
            raise ExpressionError("\\x escape without a following hex digit", i, text)
        return int(text[i + 2:j], 16) & 0xFF, j
    return ord(c), i + 2


def _lex_number(text: str, i: int) -> Token:
    j = i
    while j < len(text) and (text[j].isalnum() or text[j] in "._"
                             or (text[j] in "+-" and text[j - 1] in "eE" and not text[i:j].lower().startswith("0x"))):
        j += 1
    word = text[i:j]
    low = word.lower()
    is_hex = low.startswith("0x")
    if not is_hex and ("." in low or "e" in low.rstrip("f")):
        body, suffix = (low[:-1], "f") if low.endswith("f") else (low, "")
        try:
            return Token("float", word, i, float(body), suffix)
        except ValueError:
            raise ExpressionError(f"Invalid number \"{word}\".", i, text) from None
    k = len(low)
    while k > 0 and low[k - 1] in "ul":
        k -= 1
    digits, suffix = low[:k], low[k:]
    if suffix.count("u") > 1 or suffix.replace("u", "") not in ("", "l", "ll"):
        raise ExpressionError(f"Invalid number \"{word}\".", i, text)
    try:
        if is_hex:
            value = int(digits[2:], 16)
        elif digits.startswith("0b") and len(digits) > 2:
            value = int(digits[2:], 2)
        elif len(digits) > 1 and digits.startswith("0"):
            value = int(digits[1:], 8)
        else:
            value = int(digits, 10)
    except ValueError:
        raise ExpressionError(f"Invalid number \"{word}\".", i, text) from None
    if value >= 1 << 64:
        raise ExpressionError("Numeric constant too large.", i, text)
    radix = "dec" if digits.isdigit() and not (len(digits) > 1 and digits[0] == "0") else "other"
    return Token("int", word, i, (value, radix), "".join(sorted(suffix, reverse=True)))


def tokenize(text: str) -> list[Token]:
    toks: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            tok = _lex_number(text, i)
            toks.append(tok)
            i += len(tok.text)
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            toks.append(Token("ident", text[i:j], i))
            i = j
        elif c == "$":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "_$"):
                j += 1
            toks.append(Token("dollar", text[i:j], i, text[i + 1:j]))
            i = j
        elif c == "'":
            if i + 1 >= n or text[i + 1] == "'":
                raise ExpressionError("Empty character constant." if i + 1 < n else "Unmatched single quote.", i, text)
            code, j = _char_escape(text, i + 1)
            if j >= n or text[j] != "'":
                raise ExpressionError("Unmatched single quote.", i, text)
            toks.append(Token("char", text[i:j + 1], i, code))
            i = j + 1
        elif c == '"':
            j, out = i + 1, bytearray()
            while j < n and text[j] != '"':
                code, j = _char_escape(text, j)
                out.append(code & 0xFF)
            if j >= n:
                raise ExpressionError("Unterminated string in expression.", i, text)
            toks.append(Token("string", text[i:j + 1], i, bytes(out)))
            i = j + 1
        else:
            for op in _OPS:
                if text.startswith(op, i):
                    toks.append(Token("op", op, i))
                    i += len(op)
                    break
            else:
                raise ExpressionError(f"Invalid character '{c}' in expression.", i, text)
    toks.append(Token("end", "", n))
    return toks


# ---------------------------------------------------------------- AST

@dataclass(frozen=True)
class Expr:
    pos: int


@dataclass(frozen=True)
class IntLit(Expr):
    value: int
    type_name: str


@dataclass(frozen=True)
class FloatLit(Expr):
    value: float
    type_name: str


@dataclass(frozen=True)
class CharLit(Expr):
    value: int


@dataclass(frozen=True)
class StringLit(Expr):
    value: bytes


@dataclass(frozen=True)
class BoolLit(Expr):
    value: bool


@dataclass(frozen=True)
class Name(Expr):
    name: str


@dataclass(frozen=True)
class Dollar(Expr):
    name: str          # without the '$': "r1", "pc", "1", "", "$", "$2", "foo"


@dataclass(frozen=True)
class TypeName:
    """A parsed type: base words (`unsigned int`) or a tag/typedef name,
    `pointers` levels of `*`, array extents, and the cuda-gdb space of the
    outermost pointer."""

    words: tuple[str, ...]
    pointers: int = 0
    dims: tuple[int, ...] = ()
    space: str | None = None
    pos: int = 0

    def __str__(self) -> str:
        s = " ".join(self.words) + (" " + "*" * self.pointers if self.pointers else "")
        s += "".join(f"[{d}]" for d in self.dims)
        return f"@{self.space} {s}" if self.space else s


@dataclass(frozen=True)
class Unary(Expr):
    op: str            # - + ! ~ * & ++ -- (prefix)
    operand: Expr


@dataclass(frozen=True)
class Postfix(Expr):
    op: str            # ++ --
    operand: Expr


@dataclass(frozen=True)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Conditional(Expr):
    cond: Expr
    then: Expr
    otherwise: Expr


@dataclass(frozen=True)
class Assign(Expr):
    op: str            # "=" or the compound operator without '=' ("+", "<<", ...)
    target: Expr
    value: Expr


@dataclass(frozen=True)
class Index(Expr):
    base: Expr
    index: Expr


@dataclass(frozen=True)
class Member(Expr):
    base: Expr
    name: str
    arrow: bool


@dataclass(frozen=True)
class Cast(Expr):
    type: TypeName
    operand: Expr


@dataclass(frozen=True)
class SizeOf(Expr):
    operand: Expr | TypeName


@dataclass(frozen=True)
class SpaceQualified(Expr):
    space: str
    operand: Expr


@dataclass(frozen=True)
class Comma(Expr):
    left: Expr
    right: Expr


@dataclass(frozen=True)
class TypeExpr(Expr):
    """A bare type where an expression was expected (`whatis unsigned int`,
    `sizeof(int)` is SizeOf instead)."""
    type: TypeName


# binding powers (higher binds tighter), gdb's c-exp.y order
_BINARY = {"||": 4, "&&": 5, "|": 6, "^": 7, "&": 8, "==": 9, "!=": 9,
           "<": 10, ">": 10, "<=": 10, ">=": 10, "<<": 11, ">>": 11, "@": 12,
           "+": 13, "-": 13, "*": 14, "/": 14, "%": 14}
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="}
_COMMA_BP, _ASSIGN_BP, _COND_BP = 1, 2, 3


class _Parser:
    def __init__(self, text: str, is_type_name: Callable[[str], bool] | None):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.is_typedef = is_type_name or (lambda name: False)
        self.depth = 0     # expression()/unary() calls active (see _enter)

    # -- token helpers
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def advance(self) -> Token:
        t = self.toks[self.i]
        self.i = min(self.i + 1, len(self.toks) - 1)
        return t

    def is_op(self, text: str, tok: Token | None = None) -> bool:
        t = tok or self.tok
        return t.kind == "op" and t.text == text

    def expect(self, text: str) -> Token:
        if not self.is_op(text):
            self.syntax_error()
        return self.advance()

    def syntax_error(self, tok: Token | None = None) -> None:
        t = tok or self.tok
        raise ExpressionError(f"A syntax error in expression, near `{self.text[t.pos:]}'.", t.pos, self.text)

    # -- types
    def starts_type(self, k: int = 0) -> bool:
        t = self.peek(k)
        if t.kind != "ident":
            if self.is_op("@", t):
                nxt = self.peek(k + 1)
                return nxt.kind == "ident" and nxt.text in SPACE_NAMES and self.starts_type(k + 2)
            return False
        return (t.text in TYPE_WORDS or t.text in ("struct", "union", "enum", "class", "const", "volatile")
                or t.text in STANDARD_TYPEDEFS or self.is_typedef(t.text))

    def type_name(self) -> TypeName:
        start = self.tok.pos
        space = None
        if self.is_op("@"):
            self.advance()
            space = self.advance().text
        words: list[str] = []
        while self.tok.kind == "ident" and self.tok.text in ("const", "volatile"):
            self.advance()
        if self.tok.kind == "ident" and self.tok.text in ("struct", "union", "enum", "class"):
            tag = self.advance().text
            if self.tok.kind != "ident":
                self.syntax_error()
            words = [tag, self.advance().text]
        elif self.tok.kind == "ident" and self.tok.text in TYPE_WORDS:
            while self.tok.kind == "ident" and self.tok.text in TYPE_WORDS | {"const", "volatile"}:
                w = self.advance().text
                if w not in ("const", "volatile"):
                    words.append(w)
        elif self.tok.kind == "ident":
            words = [self.advance().text]
        else:
            self.syntax_error()
        pointers = 0
        while True:
            if self.is_op("*"):
                self.advance()
                pointers += 1
            elif self.tok.kind == "ident" and self.tok.text in ("const", "volatile", "restrict", "__restrict__"):
                self.advance()
            else:
                break
        dims: list[int] = []
        while self.is_op("["):
            self.advance()
            if self.tok.kind != "int":
                self.syntax_error()
            dims.append(self.advance().value[0])
            self.expect("]")
        return TypeName(tuple(words), pointers, tuple(dims), space, start)

    # -- expressions
    def parse(self) -> Expr:
        if self.tok.kind == "end":
            raise ExpressionError("Empty expression.", 0, self.text)
        if self.starts_type():
            ty = self.type_name()
            if self.tok.kind == "end":
                return TypeExpr(ty.pos, ty)
            self.syntax_error()
        e = self.expression(_COMMA_BP)
        if self.tok.kind != "end":
            self.syntax_error()
        _check_depth(e, self.text)
        return e

    def _enter(self, t: Token) -> None:
        """One more active expression()/unary() call: the parser's own
        recursion, bounded at two per level (a parenthesis costs both)."""
        self.depth += 1
        if self.depth > 2 * MAX_NESTING:
            raise ExpressionError(_TOO_DEEP, t.pos, self.text)

    def expression(self, min_bp: int) -> Expr:
        self._enter(self.tok)
        try:
            left = self.unary()
            while True:
                t = self.tok
                if t.kind != "op":
                    return left
                op = t.text
                if op == "," and min_bp <= _COMMA_BP:
                    self.advance()
                    left = Comma(t.pos, left, self.expression(_COMMA_BP + 1))
                elif op in _ASSIGN and min_bp <= _ASSIGN_BP:
                    self.advance()
                    left = Assign(t.pos, op[:-1] or "=", left, self.expression(_ASSIGN_BP))
                elif op == "?" and min_bp <= _COND_BP:
                    self.advance()
                    then = self.expression(_COMMA_BP)
                    self.expect(":")
                    left = Conditional(t.pos, left, then, self.expression(_COND_BP))
                elif op in _BINARY and _BINARY[op] >= min_bp:
                    self.advance()
                    left = Binary(t.pos, op, left, self.expression(_BINARY[op] + 1))
                else:
                    return left
        finally:
            self.depth -= 1

    def unary(self) -> Expr:
        t = self.tok
        self._enter(t)
        try:
            if t.kind == "op":
                if t.text in ("-", "+", "!", "~", "*", "&", "++", "--"):
                    self.advance()
                    return Unary(t.pos, t.text, self.unary())
                if t.text == "@":
                    nxt = self.peek()
                    if nxt.kind != "ident" or nxt.text not in SPACE_NAMES:
                        raise ExpressionError(
                            f"Unknown address space \"{nxt.text}\" after '@' (expected one of "
                            f"{', '.join(sorted(SPACE_NAMES))}).", nxt.pos, self.text)
                    self.advance()
                    self.advance()
                    return SpaceQualified(t.pos, nxt.text, self.unary())
                if t.text == "(" and self.starts_type(1):
                    self.advance()
                    ty = self.type_name()
                    self.expect(")")
                    return Cast(t.pos, ty, self.unary())
            if t.kind == "ident" and t.text == "sizeof":
                self.advance()
                if self.is_op("(") and self.starts_type(1):
                    self.advance()
                    ty = self.type_name()
                    self.expect(")")
                    return SizeOf(t.pos, ty)
                return SizeOf(t.pos, self.unary())
            return self.postfix(self.primary())
        finally:
            self.depth -= 1

    def postfix(self, e: Expr) -> Expr:
        while True:
            t = self.tok
            if self.is_op("["):
                self.advance()
                idx = self.expression(_COMMA_BP)
                self.expect("]")
                e = Index(t.pos, e, idx)
            elif self.is_op(".") or self.is_op("->"):
                self.advance()
                if self.tok.kind != "ident":
                    self.syntax_error()
                e = Member(t.pos, e, self.advance().text, t.text == "->")
            elif self.is_op("++") or self.is_op("--"):
                self.advance()
                e = Postfix(t.pos, t.text, e)
            else:
                return e

    def primary(self) -> Expr:
        t = self.advance()
        if t.kind == "int":
            value, radix = t.value
            return IntLit(t.pos, value, _int_literal_type(value, radix, t.suffix, t, self.text))
        if t.kind == "float":
            return FloatLit(t.pos, t.value, "float" if t.suffix == "f" else "double")
        if t.kind == "char":
            return CharLit(t.pos, t.value)
        if t.kind == "string":
            return StringLit(t.pos, t.value)
        if t.kind == "dollar":
            return Dollar(t.pos, t.value)
        if t.kind == "ident":
            if t.text in ("true", "false"):
                return BoolLit(t.pos, t.text == "true")
            return Name(t.pos, t.text)
        if self.is_op("(", t):
            e = self.expression(_COMMA_BP)
            self.expect(")")
            return e
        self.syntax_error(t)
        raise AssertionError("unreachable")


def _check_depth(e: Expr, text: str) -> None:
    """Left-deep chains (`1+1+...`, `a[0][0]...`) are built by loops, not
    recursion; the evaluator recurses on them, so the tree's depth is
    bounded too (walked with a list, not recursively)."""
    stack = [(e, 1)]
    while stack:
        node, d = stack.pop()
        if d > MAX_NESTING:
            raise ExpressionError(_TOO_DEEP, node.pos, text)
        for f in fields(node):
            child = getattr(node, f.name)
            if isinstance(child, Expr):
                stack.append((child, d + 1))


def _int_literal_type(value: int, radix: str, suffix: str, tok: Token, text: str) -> str:
    """C's rule: the first type of the suffix's list that holds the value
    (decimal literals without `u` skip the unsigned types)."""
    unsigned = "u" in suffix
    longs = suffix.count("l")
    candidates = []
    if longs == 0:
        candidates += ["unsigned int"] if unsigned else ["int"] if radix == "dec" else ["int", "unsigned int"]
    candidates += ["unsigned long"] if unsigned else ["long"] if radix == "dec" else ["long", "unsigned long"]
    if radix == "dec" and not unsigned:
        candidates.append("unsigned long")   # gdb accepts 2^63..2^64-1 as unsigned long
    limits = {"int": 1 << 31, "unsigned int": 1 << 32, "long": 1 << 63, "unsigned long": 1 << 64}
    for c in candidates:
        if value < limits[c]:
            return "unsigned long long" if c == "unsigned long" and longs == 2 else \
                "long long" if c == "long" and longs == 2 else c
    raise ExpressionError("Numeric constant too large.", tok.pos, text)


def parse(text: str, is_type_name: Callable[[str], bool] | None = None) -> Expr:
    """Parse one expression (or a bare type name, as a TypeExpr).
    `is_type_name(ident)` says whether an identifier names a typedef or
    struct; without it only C's type words and <stdint.h> names do."""
    return _Parser(text, is_type_name).parse()


def parse_type(text: str, is_type_name: Callable[[str], bool] | None = None) -> TypeName | None:
    """The type `text` spells, or None when it is not a type name."""
    try:
        e = parse(text, is_type_name)
    except ExpressionError:
        return None
    return e.type if isinstance(e, TypeExpr) else None
