"""State-space variable, register and parameter declarations.

A declaration is a run of dot-options (`.align 8`, `.v4`, a type,
`.ptr.global.align 16`, `.attribute(...)`) in any order, then one or more
names, each with optional array dimensions and initializer. Register
ranges `%r<6>` are expanded here into separate RegisterDecls; nested
initializer braces are flattened into element order.

It records the symbols initializers refer to, but does not check them (the
module pass does, once every name is known), and it does not check that an
initializer fits its type or size (that is the loader's job).
"""
from __future__ import annotations

from typing import NamedTuple

from . import ir
from .lexer import Cursor, Tok, Token
from .literals import const_unary, is_number_start, number, small_int
from .types import is_type_name

SPACES = ("global", "shared", "local", "const", "param")
OPAQUE_TYPES = ("texref", "samplerref", "surfref")
MAX_REGISTER_RANGE = 1 << 16
_MAX_BRACE_DEPTH = 32


class SymbolUse(NamedTuple):
    """A symbol named in an initializer, checked once the module is read."""

    name: str
    tok: Token


class VarOptions(NamedTuple):
    type: str
    align: int | None
    vector: int | None
    ptr_space: str | None
    ptr_align: int | None
    attributes: tuple[str, ...] = ()


def loc_of(cur: Cursor, tok: Token) -> ir.SourceLoc:
    line, col = cur.src.line_col(tok.pos)
    return ir.SourceLoc(cur.src.filename, line, col)


def read_attribute(cur: Cursor) -> tuple[str, ...]:
    """`.attribute(.managed)` / `.attribute(.unified(...))`: the attribute
    names at the outer level (managed, unified); their arguments are skipped."""
    cur.expect("(", "after .attribute")
    depth = 1
    names = []
    while depth:
        tok = cur.next()
        if tok.kind is Tok.EOF:
            cur.fail("unterminated .attribute(...)", tok)
        if tok.kind is Tok.PUNCT:
            depth += {"(": 1, ")": -1}.get(tok.text, 0)
        elif tok.kind is Tok.DIRECTIVE and depth == 1:
            names.append(tok.text[1:])
    return tuple(names)


def var_options(cur: Cursor, what: str) -> VarOptions:
    typ = align = vector = ptr_space = ptr_align = None
    attributes: tuple[str, ...] = ()
    while cur.peek().kind is Tok.DIRECTIVE:
        tok = cur.next()
        name = tok.text[1:]
        if name == "align":
            align = small_int(cur, "alignment", 1)
        elif name in ("v2", "v4", "v8"):
            vector = int(name[1:])
        elif name == "attribute":
            attributes += read_attribute(cur)
        elif name == "ptr":
            if cur.peek().kind is Tok.DIRECTIVE and cur.peek().text[1:] in SPACES:
                ptr_space = cur.next().text[1:]
            if cur.accept(".align"):
                ptr_align = small_int(cur, "alignment", 1)
        elif is_type_name(name) or name in OPAQUE_TYPES:
            if typ is not None:
                raise cur.error_at(tok, f"second type {tok.text} in {what}")
            typ = name
        else:
            raise cur.error_at(tok, f"unexpected {tok.text} in {what}")
    if typ is None:
        cur.fail(f"expected a type in {what}")
    return VarOptions(typ, align, vector, ptr_space, ptr_align, attributes)


def decl_name(cur: Cursor, what: str) -> Token:
    tok = cur.peek()
    if (tok.kind is Tok.WORD and "." not in tok.text) or (
            tok.kind is Tok.REG and "." not in tok.text):
        return cur.next()
    cur.fail(f"expected a name in {what}")


def dims(cur: Cursor) -> tuple[int | None, ...]:
    out: list[int | None] = []
    while cur.accept("["):
        if cur.accept("]"):
            out.append(None)
            continue
        out.append(small_int(cur, "array size", 0, 1 << 40))
        cur.expect("]", "after array size")
    return tuple(out)


def variable(cur: Cursor, space: str, linkage: str | None, start: Token,
             uses: list[SymbolUse], single: bool = False) -> list[ir.VariableDecl]:
    """After the state-space directive: options, names, dims, initializers.
    With `single` (parameters) exactly one name and no `;`."""
    what = f".{space} declaration"
    opts = var_options(cur, what)
    decls = []
    while True:
        name_tok = decl_name(cur, what)
        decl = ir.VariableDecl(
            name=name_tok.text, space=space, type=opts.type, loc=loc_of(cur, start),
            dims=dims(cur), align=opts.align, vector=opts.vector, linkage=linkage,
            ptr_space=opts.ptr_space, ptr_align=opts.ptr_align, attributes=opts.attributes)
        if not single and cur.accept("="):
            decl.initializer = ir.Initializer(initializer(cur, uses))
        decls.append(decl)
        if single or not cur.accept(","):
            break
    if not single:
        cur.expect(";", f"after {what}")
    return decls


def initializer(cur: Cursor, uses: list[SymbolUse]) -> list:
    items: list = []
    _init_value(cur, uses, items, 0)
    return items


def _init_value(cur: Cursor, uses: list[SymbolUse], items: list, depth: int) -> None:
    if depth > _MAX_BRACE_DEPTH:
        cur.fail("initializer nested too deeply")
    if cur.accept("{"):
        if cur.accept("}"):
            return
        _init_value(cur, uses, items, depth + 1)
        while cur.accept(","):
            _init_value(cur, uses, items, depth + 1)
        cur.expect("}", "to close initializer")
        return
    tok = cur.peek()
    if tok.kind is Tok.WORD and tok.text == "generic" and cur.peek(1).text == "(":
        cur.next()
        cur.next()
        sym = _init_symbol(cur, uses)
        cur.expect(")", "after generic(symbol")
        extra = _sym_offset(cur)
        items.append(ir.GenericSymbol(ir.Symbol(sym.name, sym.offset + extra)))
        return
    if tok.kind is Tok.WORD:
        items.append(_init_symbol(cur, uses))
        return
    if is_number_start(cur):
        value = number(cur)
        items.append(value.value if isinstance(value, ir.Immediate) else value)
        return
    cur.fail("expected an initializer value")


def _init_symbol(cur: Cursor, uses: list[SymbolUse]) -> ir.Symbol:
    tok = cur.peek()
    if tok.kind is not Tok.WORD or "." in tok.text:
        cur.fail("expected a symbol name")
    cur.next()
    uses.append(SymbolUse(tok.text, tok))
    return ir.Symbol(tok.text, _sym_offset(cur))


def _sym_offset(cur: Cursor) -> int:
    total = 0
    while cur.peek().kind is Tok.PUNCT and cur.peek().text in "+-":
        sign = cur.next().text
        value = const_unary(cur)
        total += value if sign == "+" else -value
    return total


def registers(cur: Cursor, start: Token) -> list[ir.RegisterDecl]:
    """After `.reg`: `[.vN] .type name[<N>], ...;` with ranges expanded."""
    vector = None
    typ = None
    while cur.peek().kind is Tok.DIRECTIVE:
        tok = cur.next()
        name = tok.text[1:]
        if name in ("v2", "v4", "v8"):
            vector = int(name[1:])
        elif is_type_name(name):
            if typ is not None:
                raise cur.error_at(tok, f"second type {tok.text} in .reg declaration")
            typ = name
        elif name == "align":
            small_int(cur, "alignment", 1)
        else:
            raise cur.error_at(tok, f"unexpected {tok.text} in .reg declaration")
    if typ is None:
        cur.fail("expected a type in .reg declaration")
    loc = loc_of(cur, start)
    out: list[ir.RegisterDecl] = []
    while True:
        name_tok = decl_name(cur, ".reg declaration")
        if cur.accept("<"):
            count_tok = cur.peek()
            count = const_unary(cur)
            if not 0 <= count <= MAX_REGISTER_RANGE:
                raise cur.error_at(count_tok, f"register range <{count}> out of range "
                                              f"0..{MAX_REGISTER_RANGE}")
            cur.expect(">", "to close register range")
            base = name_tok.text
            out.extend(ir.RegisterDecl(f"{base}{i}", typ, loc, vector) for i in range(count))
        else:
            out.append(ir.RegisterDecl(name_tok.text, typ, loc, vector))
        if not cur.accept(","):
            break
    cur.expect(";", "after .reg declaration")
    return out


def param_list(cur: Cursor, what: str, uses: list[SymbolUse]) -> list[ir.VariableDecl]:
    """`( .param ... name, .reg .b32 x, ... )`; the '(' is next."""
    cur.expect("(", f"to open {what}")
    params: list[ir.VariableDecl] = []
    if cur.accept(")"):
        return params
    while True:
        tok = cur.peek()
        if tok.kind is Tok.DIRECTIVE and tok.text in (".param", ".reg"):
            cur.next()
            params.extend(variable(cur, tok.text[1:], None, tok, uses, single=True))
        else:
            cur.fail(f"expected .param or .reg in {what}")
        if cur.accept(")"):
            return params
        cur.expect(",", f"or ')' in {what}")
