"""Function bodies: the statement loop between an `.entry`/`.func`'s braces.

Statements are recognised by their first token: `{`/`}` open and close
scopes (callseq blocks, inline-asm temporaries), a directive is a
declaration or a `.loc`/`.pragma`/performance directive, `name:` is a label
(possibly introducing `.callprototype`, `.calltargets` or
`.branchtargets`), anything else is an instruction with optional guard.
The current `.loc` is attached to every instruction until the next one.

Opcodes and modifiers are split but never validated: the translator
decides what is supported.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from . import ir
from .declarations import SymbolUse, loc_of, param_list, registers, variable
from .lexer import Cursor, Tok, Token
from .literals import small_int
from .operands import OperandParser, Ref, RefKind
from .scopes import FunctionScopes

if TYPE_CHECKING:
    from .parser import ModuleBuilder

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_OPEN_SPACE = re.compile(r"([(])\s+")
_LIST_SPACE = re.compile(r"\s+([),])")
_DIM_DIRECTIVES = ("maxntid", "reqntid", "reqnctapercluster")
_INT_DIRECTIVES = ("minnctapersm", "maxnctapersm", "maxnreg", "maxclusterrank",
                   "abi_preserve", "abi_preserve_control")
_FLAG_DIRECTIVES = ("noreturn", "explicitcluster", "blocksareclusters")
PERF_DIRECTIVES = frozenset(_DIM_DIRECTIVES + _INT_DIRECTIVES + _FLAG_DIRECTIVES)
_LABEL_OPCODES = frozenset({"bra", "brx"})
_BODY_SPACES = ("local", "shared", "param", "const", "global")
_LINKAGES = (".extern", ".visible", ".weak", ".common")


def perf_directive(cur: Cursor, tok: Token, directives: dict[str, object]) -> None:
    name = tok.text[1:]
    if name in _FLAG_DIRECTIVES:
        directives[name] = True
    elif name in _INT_DIRECTIVES:
        directives[name] = small_int(cur, f".{name} value")
    else:
        values = [small_int(cur, f".{name} value", 1)]
        while len(values) < 3 and cur.accept(","):
            values.append(small_int(cur, f".{name} value", 1))
        directives[name] = tuple(values) + (1,) * (3 - len(values))


def pragma_strings(cur: Cursor) -> list[str]:
    out = [cur.expect_kind(Tok.STRING, "a string after .pragma").text[1:-1]]
    while cur.accept(","):
        out.append(cur.expect_kind(Tok.STRING, "a string in .pragma list").text[1:-1])
    cur.expect(";", "after .pragma")
    return out


class BodyParser:
    """Reads one function body (the '{' is next) into `func`."""

    def __init__(self, cur: Cursor, module: "ModuleBuilder", func: ir.Function) -> None:
        self.cur = cur
        self.mb = module
        self.func = func
        self.scopes = FunctionScopes(cur, func)
        self.line_info: ir.LineInfo | None = None
        self.body: list[ir.Statement] = []
        self.uses: list[SymbolUse] = []

    def parse(self) -> None:
        cur = self.cur
        cur.expect("{", "to open function body")
        self.scopes.open()
        while True:
            tok = cur.peek()
            kind = tok.kind
            if kind is Tok.PUNCT:
                if tok.text == "{":
                    cur.next()
                    self.scopes.open()
                    continue
                if tok.text == "}":
                    cur.next()
                    if self.scopes.close():
                        break
                    continue
                if tok.text == "@":
                    self.instruction()
                    continue
                if tok.text == ";":
                    cur.next()
                    continue
                cur.fail("expected an instruction, declaration or label")
            elif kind is Tok.WORD:
                if cur.peek(1).text == ":" and cur.peek(1).kind is Tok.PUNCT:
                    self.label()
                else:
                    self.instruction()
            elif kind is Tok.DIRECTIVE:
                self.directive()
            elif kind is Tok.EOF:
                cur.fail(f"unterminated body of function {self.func.name} (missing '}}')")
            else:
                cur.fail("expected an instruction, declaration or label")
        self.func.body = self.body
        self.scopes.resolve()

    # ------------------------------------------------------------ statements

    def label(self) -> None:
        cur = self.cur
        tok = cur.next()
        if "." in tok.text:
            raise cur.error_at(tok, f"invalid label name {tok.text}")
        cur.next()  # ':'
        nxt = cur.peek()
        if nxt.kind is Tok.DIRECTIVE and nxt.text == ".callprototype":
            cur.next()
            self.callprototype(tok)
            return
        if nxt.kind is Tok.DIRECTIVE and nxt.text in (".calltargets", ".branchtargets"):
            cur.next()
            names = self._name_list(nxt.text)
            if nxt.text == ".calltargets":
                key = self.mb.add_calltargets(tok.text, names, self.func.name)
                self.scopes.protos[tok.text] = key
                for name, ntok in names:
                    self.mb.pending_functions.append(SymbolUse(name, ntok))
            else:
                self.scopes.declare_label(tok)
                self.func.branchtargets[tok.text] = tuple(n for n, _ in names)
                self.scopes.label_refs.extend(Ref(RefKind.LABEL, n, t) for n, t in names)
            return
        self.scopes.declare_label(tok)
        self.body.append(ir.Label(tok.text, loc_of(cur, tok)))

    def _name_list(self, what: str) -> list[tuple[str, Token]]:
        cur = self.cur
        names = []
        while True:
            tok = cur.peek()
            if tok.kind is not Tok.WORD or "." in tok.text:
                cur.fail(f"expected a name in {what} list")
            names.append((cur.next().text, tok))
            if not cur.accept(","):
                break
        cur.expect(";", f"after {what} list")
        return names

    def callprototype(self, label: Token) -> None:
        cur = self.cur
        proto = ir.Function(label.text, "func", loc_of(cur, label))
        if cur.at("("):
            proto.returns = param_list(cur, ".callprototype return list", self.uses)
        sink = cur.peek()
        if sink.kind is not Tok.WORD or sink.text != "_":
            cur.fail("expected '_' in .callprototype")
        cur.next()
        if cur.at("("):
            proto.params = param_list(cur, ".callprototype parameter list", self.uses)
        while cur.peek().kind is Tok.DIRECTIVE and cur.peek().text[1:] in PERF_DIRECTIVES:
            perf_directive(cur, cur.next(), proto.directives)
        cur.expect(";", "after .callprototype")
        self.scopes.protos[label.text] = self.mb.add_callprototype(proto, self.func.name)

    def directive(self) -> None:
        cur = self.cur
        tok = cur.next()
        name = tok.text[1:]
        if name == "reg":
            for decl in registers(cur, tok):
                self.scopes.declare_register(decl, tok)
        elif name in _BODY_SPACES or tok.text in _LINKAGES:
            linkage = None
            space_tok = tok
            if tok.text in _LINKAGES:
                linkage = name
                space_tok = cur.next()
                if space_tok.kind is not Tok.DIRECTIVE or space_tok.text[1:] not in _BODY_SPACES:
                    cur.fail(f"expected a state space after {tok.text}", space_tok)
            for decl in variable(cur, space_tok.text[1:], linkage, tok, self.uses):
                self.scopes.declare_variable(decl, tok)
        elif name == "loc":
            self.line_info = self.loc()
        elif name == "pragma":
            texts = pragma_strings(cur)
            self.func.pragmas.extend(texts)
            self.func.pragma_at.extend((len(self.body), t) for t in texts)
        elif name in PERF_DIRECTIVES:
            perf_directive(cur, tok, self.func.directives)
        elif name == "file":
            self.mb.file_directive(tok)
        elif name in self.mb.KNOWN_DIRECTIVES:
            raise cur.error_at(tok, f"directive {tok.text} is not allowed in a function body")
        else:
            raise cur.error_at(tok, f"unknown directive {tok.text}")

    def loc(self) -> ir.LineInfo:
        cur = self.cur
        file_index = small_int(cur, ".loc file index")
        line = small_int(cur, ".loc line")
        col = small_int(cur, ".loc column") if cur.peek().kind is Tok.INT else 0
        function_name = None
        inlined_at = None
        while cur.accept(","):
            key = cur.peek()
            if key.kind is Tok.WORD and key.text == "function_name":
                cur.next()
                label = cur.expect_kind(Tok.WORD, "a label after function_name")
                function_name = label.text
                if cur.at("+"):
                    cur.next()
                    function_name += f"+{small_int(cur, 'function_name offset')}"
            elif key.kind is Tok.WORD and key.text == "inlined_at":
                cur.next()
                inlined_at = ir.LineInfo(small_int(cur, "inlined_at file index"),
                                         small_int(cur, "inlined_at line"),
                                         small_int(cur, "inlined_at column"))
            else:
                cur.fail("expected function_name or inlined_at in .loc")
        return ir.LineInfo(file_index, line, col, inlined_at, function_name)

    def instruction(self) -> None:
        cur = self.cur
        start = cur.peek()
        guard = None
        negated = False
        ops = OperandParser(cur)
        if cur.accept("@"):
            negated = cur.accept("!") is not None
            gtok = cur.peek()
            if gtok.kind not in (Tok.REG, Tok.WORD) or "." in gtok.text:
                cur.fail("expected a predicate register after '@'")
            cur.next()
            guard = ir.Register(gtok.text)
            ops.refs.append(Ref(RefKind.REGISTER, gtok.text, gtok))
        op_tok = cur.peek()
        if op_tok.kind is not Tok.WORD:
            cur.fail("expected an instruction opcode")
        cur.next()
        opcode, *mods = op_tok.text.split(".")
        if opcode == "call":
            if cur.at(";"):
                cur.fail("expected a call target")
            operands: tuple[ir.Operand, ...] = (ops.call(),)
        else:
            operands = ops.operand_list(opcode in _LABEL_OPCODES)
        end = cur.peek()
        if not cur.at(";"):
            cur.fail("expected ',' or ';' after operand" if operands else
                     "expected an operand or ';'")
        cur.next()
        text = cur.src.text[start.pos:end.pos]
        if "/" in text:
            text = _COMMENT.sub(" ", text)
        if "\n" in text:  # multi-line calls: tidy the list punctuation
            text = _LIST_SPACE.sub(r"\1", _OPEN_SPACE.sub(r"\1", text))
        instr = ir.Instruction(
            opcode=opcode, modifiers=tuple(mods), operands=operands,
            loc=loc_of(cur, start), text=" ".join(text.split()), guard=guard,
            guard_negated=negated, line_info=self.line_info)
        self.body.append(instr)
        self.scopes.add(instr, ops.refs)
