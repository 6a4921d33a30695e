"""PTX module parser: text -> ir.Module.

A recursive-descent parser over the token list from lexer.py. Module-level
statements (`.version`, `.target`, `.file`, `.section`, variables,
`.entry`/`.func`) are read here; function bodies go to body.py, operands
to operands.py, declarations to declarations.py. Names that a function
could not resolve itself are checked at the end, against everything the
module declares, so a use may precede a declaration elsewhere in the file.

Only syntax and name references are checked; opcodes, modifiers and types
of operands are left to the translator.
"""
from __future__ import annotations

from pathlib import Path

from . import ir
from .body import PERF_DIRECTIVES, BodyParser, perf_directive, pragma_strings
from .debug_sections import section
from .declarations import SPACES, SymbolUse, loc_of, param_list, read_attribute, variable
from .errors import PTXParseError
from .lexer import Cursor, SourceText, Tok, Token, token_chunks
from .literals import int_literal, shown, small_int
from .operands import RefKind

_LINKAGES = ("visible", "extern", "weak", "common")


def _signature(f: ir.Function) -> tuple:
    def sig(ps: list[ir.VariableDecl]) -> tuple:
        return tuple((p.space, p.type, p.dims, p.align, p.vector) for p in ps)
    return sig(f.returns), sig(f.params), tuple(sorted(f.directives))


class ModuleBuilder:
    KNOWN_DIRECTIVES = frozenset({
        "version", "target", "address_size", "file", "section", "pragma", "entry",
        "func", "visible", "extern", "weak", "common", "alias", "loc", "reg",
        "callprototype", "calltargets", "branchtargets", "tex", "sreg", "attribute",
        *SPACES, *PERF_DIRECTIVES,
    })

    def __init__(self, cur: Cursor) -> None:
        self.cur = cur
        self.module = ir.Module(cur.src.filename)
        self.uses: list[SymbolUse] = []             # symbols from initializers, bodies
        self.pending_functions: list[SymbolUse] = []  # .calltargets entries
        self.pending_protos: list[tuple[str, Token]] = []
        self.declared: set[str] = set()

    # ------------------------------------------------------------ module level

    def parse(self) -> ir.Module:
        cur = self.cur
        while cur.peek().kind is not Tok.EOF:
            tok = cur.peek()
            if tok.kind is Tok.DIRECTIVE:
                self.statement()
            elif tok.kind is Tok.PUNCT and tok.text == ";":
                cur.next()
            else:
                cur.fail("expected a directive at module level")
        self.check_references()
        return self.module

    def statement(self) -> None:
        cur, mod = self.cur, self.module
        tok = cur.next()
        name = tok.text[1:]
        if name == "version":
            vtok = cur.peek()
            if vtok.kind not in (Tok.FLOAT, Tok.INT):
                cur.fail("expected a version number after .version")
            cur.next()
            major, _, minor = vtok.text.partition(".")
            if not (major.isdigit() and (minor.isdigit() or not minor)):
                raise cur.error_at(vtok, f"malformed version {shown(vtok.text)}")
            if len(major) > 4 or len(minor) > 4:   # PTX ISA versions are 1.0 .. 9.x
                raise cur.error_at(vtok, f"version {shown(vtok.text)} out of range (at most 4 digits "
                                         f"per component)")
            mod.version = (int(major), int(minor or 0))
        elif name == "target":
            targets = [self._word("a target name after .target")]
            while cur.accept(","):
                targets.append(self._word("a target name"))
            mod.targets = tuple(targets)
        elif name == "address_size":
            atok = cur.peek()
            size = small_int(cur, ".address_size")
            if size not in (32, 64):
                raise cur.error_at(atok, f".address_size must be 32 or 64, not {size}")
            mod.address_size = size
        elif name == "file":
            self.file_directive(tok)
        elif name == "section":
            mod.debug_sections.append(section(cur, tok))
        elif name == "pragma":
            mod.pragmas.extend(pragma_strings(cur))
        elif name in _LINKAGES or name in ("entry", "func") or name in SPACES:
            self.declaration(tok)
        elif name in self.KNOWN_DIRECTIVES:
            raise cur.error_at(tok, f"directive {tok.text} is not supported at module level")
        else:
            raise cur.error_at(tok, f"unknown directive {tok.text}")

    def _word(self, what: str) -> str:
        tok = self.cur.peek()
        if tok.kind is not Tok.WORD:
            self.cur.fail(f"expected {what}")
        return self.cur.next().text

    def file_directive(self, tok: Token) -> None:
        cur = self.cur
        index = small_int(cur, ".file index")
        path = cur.expect_kind(Tok.STRING, "a file name string after .file index")
        extras = 0
        while cur.accept(","):
            itok = cur.expect_kind(Tok.INT, "a timestamp or size in .file")
            int_literal(cur, itok)
            extras += 1
            if extras > 2:
                raise cur.error_at(itok, "too many values in .file")
        self.module.files[index] = path.text[1:-1]

    def declaration(self, first: Token) -> None:
        cur = self.cur
        linkage = None
        tok = first
        if first.text[1:] in _LINKAGES:
            linkage = first.text[1:]
            tok = cur.next()
            if tok.kind is not Tok.DIRECTIVE:
                cur.fail(f"expected .entry, .func or a state space after {first.text}", tok)
        kind = tok.text[1:]
        if kind in ("entry", "func"):
            self.function(first, kind, linkage)
        elif kind in SPACES and kind != "param":
            for decl in variable(cur, kind, linkage, first, self.uses):
                self.add_global(decl, first)
        else:
            raise cur.error_at(tok, f"unexpected {tok.text} after {first.text}"
                               if tok is not first else f"unexpected {tok.text} at module level")

    def add_global(self, decl: ir.VariableDecl, tok: Token) -> None:
        """An `.extern` declaration and its definition may both appear;
        `.weak`/`.common` duplicates keep the initialized one."""
        old = self.module.globals.get(decl.name)
        if old is None or old.linkage == "extern":
            self.module.globals[decl.name] = decl
        elif decl.linkage == "extern":
            return
        elif "weak" in (old.linkage, decl.linkage) or "common" in (old.linkage, decl.linkage):
            if decl.initializer is not None and old.initializer is None:
                self.module.globals[decl.name] = decl
        else:
            raise self.cur.error_at(tok, f"duplicate definition of {decl.name}")

    # ------------------------------------------------------------ functions

    def function(self, start: Token, kind: str, linkage: str | None) -> None:
        cur = self.cur
        while cur.at(".attribute"):
            cur.next()
            read_attribute(cur)      # function attributes change nothing here
        returns: list[ir.VariableDecl] = []
        if cur.at("("):
            if kind == "entry":
                cur.fail("an .entry cannot have return parameters")
            returns = param_list(cur, "return parameter list", self.uses)
        name_tok = cur.peek()
        if name_tok.kind is not Tok.WORD or "." in name_tok.text:
            cur.fail(f"expected a name after .{kind}")
        cur.next()
        func = ir.Function(name_tok.text, kind, loc_of(cur, start), linkage)
        func.returns = returns
        if cur.at("("):
            func.params = param_list(cur, f"parameter list of {func.name}", self.uses)
        while cur.peek().kind is Tok.DIRECTIVE:
            dtok = cur.peek()
            dname = dtok.text[1:]
            if dname in PERF_DIRECTIVES:
                perf_directive(cur, cur.next(), func.directives)
            elif dname == "pragma":
                cur.next()
                func.pragmas.extend(pragma_strings(cur))
            else:
                cur.fail(f"expected a performance directive, '{{' or ';' after "
                         f"function {func.name} header")
        if cur.accept(";"):
            self.add_function(func, name_tok)
            return
        if not cur.at("{"):
            cur.fail(f"expected '{{' or ';' after function {func.name} header")
        self.add_function(func, name_tok, defining=True)
        body = BodyParser(cur, self, func)
        body.parse()
        self.uses.extend(body.uses)
        for ref in body.scopes.outside:
            if ref.kind is RefKind.PROTOTYPE:
                self.pending_protos.append((ref.name, ref.tok))
            else:
                self.uses.append(SymbolUse(ref.name, ref.tok))
        self.declared.update(body.scopes.label_toks)
        for decl in func.locals.values():
            self.declared.add(decl.name)

    def add_function(self, func: ir.Function, tok: Token, defining: bool = False) -> None:
        funcs = self.module.functions
        old = funcs.get(func.name)
        if old is None:
            funcs[func.name] = func
        elif defining:
            if old.body is not None:
                raise self.cur.error_at(tok, f"function {func.name} defined twice")
            funcs[func.name] = func
        for p in func.params + func.returns:
            self.declared.add(p.name)

    def add_callprototype(self, proto: ir.Function, owner: str) -> str:
        return self._unique_key(self.module.callprototypes, proto.name, proto, owner,
                                lambda old: _signature(old) == _signature(proto))

    def add_calltargets(self, label: str, names: list[tuple[str, Token]], owner: str) -> str:
        value = tuple(n for n, _ in names)
        return self._unique_key(self.module.calltargets, label, value, owner,
                                lambda old: old == value)

    @staticmethod
    def _unique_key(table: dict, label: str, value, owner: str, same) -> str:
        """Prototype labels are function-scoped in PTX but keyed module-wide in
        the IR: reuse an identical entry, else qualify the label."""
        key = label
        n = 0
        while key in table and not same(table[key]):
            n += 1
            key = f"{label}${owner}" + (f"${n}" if n > 1 else "")
        if key != label and hasattr(value, "name"):
            value.name = key
        table.setdefault(key, value)
        return key

    # ------------------------------------------------------------ references

    def check_references(self) -> None:
        mod = self.module
        known = self.declared | set(mod.globals) | set(mod.functions) | set(
            mod.callprototypes) | set(mod.calltargets)
        for use in self.uses:
            if use.name not in known:
                raise self.cur.error_at(use.tok, f"symbol {use.name} used but not declared")
        for use in self.pending_functions:
            if use.name not in mod.functions:
                raise self.cur.error_at(use.tok, f"function {use.name} in .calltargets "
                                                 "is not declared")
        for name, tok in self.pending_protos:
            if name not in mod.callprototypes and name not in mod.calltargets:
                raise self.cur.error_at(tok, f"call prototype {name} is not declared")


def parse(text: str, filename: str = "<ptx>") -> ir.Module:
    """Parse PTX source text. Raises PTXParseError on any bad input."""
    if not isinstance(text, str):
        raise TypeError(f"parse() needs str text, not {type(text).__name__}")
    src = SourceText(text, filename)
    cur = Cursor(src, token_chunks(src))
    return ModuleBuilder(cur).parse()


def parse_file(path: str | Path) -> ir.Module:
    """Read and parse a .ptx file; undecodable bytes are a PTXParseError."""
    p = Path(path)
    data = p.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise PTXParseError(str(p), line, col, "file is not valid UTF-8 text") from None
    return parse(text, str(p))
