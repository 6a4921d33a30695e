"""Lexical scopes of one function body, and the resolution pass that
flattens them.

Every `{ }` block is a Scope holding its declarations by written name. A
declaration in the k-th nested block of a function gets the unique name
`name$k` (its written name stays in `display_name`); the function-level
block and the parameters keep their names. Resolution runs after the whole
body is read, walking each reference's scope chain outward, so shadowing
follows lexical scope and a use may precede its declaration in a block.

Names not found in the function (globals, functions, or names declared
later in the module) are handed back for the module-level check; labels
are function-wide and never renamed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import ir
from .lexer import Cursor, Token
from .operands import Ref, RefKind, rename_operand


@dataclass
class Scope:
    number: int                   # 0: parameters, 1: function block, k+1: k-th nested
    parent: "Scope | None"
    names: dict[str, tuple[str, bool]] = field(default_factory=dict)  # written -> (unique, is_reg)


@dataclass
class Pending:
    instr: ir.Instruction
    scope: Scope
    refs: list[Ref]


class FunctionScopes:
    """Declarations, labels and instructions of one function being read."""

    def __init__(self, cur: Cursor, func: ir.Function) -> None:
        self.cur = cur
        self.func = func
        self.params = Scope(0, None)
        for p in func.params + func.returns:
            self.params.names[p.name] = (p.name, p.space == "reg")
            if p.space == "reg":
                func.registers[p.name] = ir.RegisterDecl(p.name, p.type, p.loc, p.vector)
        self.scope = self.params
        self.nested = 0
        self.pending: list[Pending] = []
        self.label_toks: dict[str, Token] = {}
        self.label_refs: list[Ref] = []
        self.protos: dict[str, str] = {}      # written prototype label -> module key
        self.outside: list[Ref] = []          # names left for the module check

    # ------------------------------------------------------------ blocks

    def open(self) -> None:
        if self.scope is self.params:
            self.scope = Scope(1, self.params)
        else:
            self.nested += 1
            self.scope = Scope(self.nested + 1, self.scope)

    def close(self) -> bool:
        """Leave a block; True when that was the function's own block."""
        parent = self.scope.parent
        assert parent is not None
        self.scope = parent
        return parent is self.params

    # ------------------------------------------------------------ declarations

    def _unique(self, name: str, tok: Token) -> str | None:
        if name in self.scope.names:
            raise self.cur.error_at(tok, f"duplicate declaration of {name} in function "
                                         f"{self.func.name}")
        if self.scope.number <= 1:
            return None
        unique = f"{name}${self.scope.number - 1}"
        while unique in self.func.registers or unique in self.func.locals:
            unique += "$"
        return unique

    def declare_register(self, decl: ir.RegisterDecl, tok: Token) -> None:
        unique = self._unique(decl.name, tok)
        if unique is None:
            if decl.name in self.func.registers:
                raise self.cur.error_at(tok, f"duplicate declaration of {decl.name}")
            unique = decl.name
        else:
            decl.display_name = decl.name
            decl.name = unique
        self.scope.names[decl.display_name or decl.name] = (unique, True)
        self.func.registers[unique] = decl

    def declare_variable(self, decl: ir.VariableDecl, tok: Token) -> None:
        unique = self._unique(decl.name, tok)
        if unique is None:
            unique = decl.name
        else:
            decl.display_name = decl.name
            decl.name = unique
        self.scope.names[decl.display_name or decl.name] = (unique, False)
        self.func.locals[unique] = decl

    def declare_label(self, tok: Token) -> None:
        if tok.text in self.label_toks:
            raise self.cur.error_at(tok, f"duplicate label {tok.text} in function "
                                         f"{self.func.name}")
        self.label_toks[tok.text] = tok

    def add(self, instr: ir.Instruction, refs: list[Ref]) -> None:
        self.pending.append(Pending(instr, self.scope, refs))

    # ------------------------------------------------------------ resolution

    def _lookup(self, scope: Scope, name: str) -> tuple[str, bool] | None:
        s: Scope | None = scope
        while s is not None:
            hit = s.names.get(name)
            if hit is not None:
                return hit
            s = s.parent
        return None

    def resolve(self) -> None:
        """Check every reference and rewrite operands to unique names."""
        cur, fname = self.cur, self.func.name
        for p in self.pending:
            regs: dict[str, str] = {}
            syms: dict[str, str | ir.Register] = {}
            for ref in p.refs:
                if ref.kind is RefKind.LABEL:
                    self.label_refs.append(ref)
                    continue
                if ref.kind is RefKind.PROTOTYPE:
                    if ref.name in self.protos:
                        syms.setdefault("proto:" + ref.name, self.protos[ref.name])
                    else:
                        self.outside.append(ref)
                    continue
                hit = self._lookup(p.scope, ref.name)
                if ref.kind is RefKind.REGISTER:
                    if hit is None:
                        raise cur.error_at(ref.tok, f"register {ref.name} used but not "
                                                    f"declared in function {fname}")
                    if not hit[1]:
                        raise cur.error_at(ref.tok, f"{ref.name} is a variable, not a "
                                                    f"register, in function {fname}")
                    regs[ref.name] = hit[0]
                elif hit is None:
                    self.outside.append(ref)
                elif hit[1]:
                    if ref.offset:
                        raise cur.error_at(ref.tok, f"register {ref.name} cannot take "
                                                    "an offset")
                    syms[ref.name] = ir.Register(hit[0])
                else:
                    syms[ref.name] = hit[0]
            if any(regs[k] != k for k in regs) or any(
                    v != k for k, v in syms.items()):
                self._rewrite(p.instr, regs, syms)
        for ref in self.label_refs:
            if ref.name not in self.label_toks:
                raise cur.error_at(ref.tok, f"label {ref.name} used but not defined in "
                                            f"function {fname}")

    @staticmethod
    def _rewrite(instr: ir.Instruction, regs: dict[str, str],
                 syms: dict[str, str | ir.Register]) -> None:
        def reg(name: str) -> str:
            return regs.get(name, name)

        def sym(name: str) -> str | ir.Register:
            return syms.get(name, name)

        instr.operands = tuple(rename_operand(op, reg, sym) for op in instr.operands)
        if instr.guard is not None:
            instr.guard = ir.Register(reg(instr.guard.name))
        for i, op in enumerate(instr.operands):
            if isinstance(op, ir.CallTarget) and op.prototype is not None:
                key = syms.get("proto:" + op.prototype)
                if isinstance(key, str) and key != op.prototype:
                    instr.operands = instr.operands[:i] + (ir.CallTarget(
                        op.returns, op.target, op.args, key),) + instr.operands[i + 1:]
