"""Instruction operands: tokens -> ir operand objects, plus the references
they make.

Operands are built with names exactly as written; every register, symbol,
label and prototype name used is also recorded as a `Ref` with its token.
The function-level pass (scopes.py) resolves those references through the
lexical scopes afterwards and, only where an inner-scope declaration is
hit, rebuilds the frozen operand with `rename_operand`. Keeping parsing and
resolution apart lets a declaration follow its first use in a block, as
PTX allows.

Texture/surface operands (`[tex, {x, y}]`) and vector-register element
access (`%v.x`) have no IR form and are reported as errors.
"""
from __future__ import annotations

import enum
import re
from typing import Callable, NamedTuple

from . import ir
from .lexer import Cursor, Tok, Token
from .literals import WARP_SZ, const_unary, is_number_start, number

_MAX_DEPTH = 32

_VECTOR_SPECIALS = frozenset({
    "%tid", "%ntid", "%ctaid", "%nctaid", "%cluster_ctaid", "%cluster_nctaid",
    "%clusterid", "%nclusterid",
})
_SCALAR_SPECIALS = frozenset({
    "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid",
    "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt",
    "%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo",
    "%globaltimer_hi", "%dynamic_smem_size", "%total_smem_size", "%aggr_smem_size",
    "%is_explicit_cluster", "%cluster_ctarank", "%cluster_nctarank",
    "%current_graph_exec",
})
_PATTERN_SPECIALS = re.compile(
    r"%envreg(?:[0-9]|[12][0-9]|3[01])|%pm[0-7](?:_64)?|%reserved_smem_offset_\w+")


def is_special_register(name: str) -> bool:
    return (name in _SCALAR_SPECIALS or name in _VECTOR_SPECIALS
            or _PATTERN_SPECIALS.fullmatch(name) is not None)


_REG_CACHE: dict[str, "ir.Register | ir.SpecialRegister"] = {}


class RefKind(enum.Enum):
    REGISTER = "register"    # %r1, or a bare name that must be a register
    SYMBOL = "symbol"        # a variable, parameter or function used as a value
    LABEL = "label"          # a branch target
    PROTOTYPE = "prototype"  # a .callprototype / .calltargets label in call


class Ref(NamedTuple):
    kind: RefKind
    name: str
    tok: Token
    offset: int = 0  # a symbol's `+N`; non-zero is an error if it names a register


class OperandParser:
    """Parses the operands of one instruction, collecting its references."""

    def __init__(self, cur: Cursor) -> None:
        self.cur = cur
        self.refs: list[Ref] = []

    # ------------------------------------------------------------ entry points

    def operand_list(self, labels: bool) -> tuple[ir.Operand, ...]:
        cur = self.cur
        if cur.at(";"):
            return ()
        ops = [self.operand(labels, 0)]
        while cur.accept(","):
            ops.append(self.operand(labels, 0))
        return tuple(ops)

    def call(self) -> ir.CallTarget:
        cur = self.cur
        returns: tuple[ir.Operand, ...] = ()
        if cur.at("("):
            returns = self._paren_list("call return list")
            cur.expect(",", "after call return list")
        tok = cur.peek()
        target: ir.Symbol | ir.Register
        if tok.kind is Tok.REG:
            op = self._register(cur.next())
            if not isinstance(op, ir.Register):
                cur.fail("expected a function or register as call target", tok)
            target = op
        elif tok.kind is Tok.WORD and "." not in tok.text:
            cur.next()
            self.refs.append(Ref(RefKind.SYMBOL, tok.text, tok))
            target = ir.Symbol(tok.text)
        else:
            cur.fail("expected a function name or register as call target")
        args: tuple[ir.Operand, ...] = ()
        prototype = None
        if cur.accept(","):
            if cur.at("("):
                args = self._paren_list("call argument list")
                if cur.accept(","):
                    prototype = self._prototype()
            else:
                prototype = self._prototype()
        return ir.CallTarget(returns, target, args, prototype)

    # ------------------------------------------------------------ pieces

    def _prototype(self) -> str:
        tok = self.cur.peek()
        if tok.kind is not Tok.WORD or "." in tok.text:
            self.cur.fail("expected a .callprototype or .calltargets label")
        self.cur.next()
        self.refs.append(Ref(RefKind.PROTOTYPE, tok.text, tok))
        return tok.text

    def _paren_list(self, what: str) -> tuple[ir.Operand, ...]:
        cur = self.cur
        cur.expect("(", f"to open {what}")
        items: list[ir.Operand] = []
        if not cur.at(")"):
            items.append(self.operand(False, 1))
            while cur.accept(","):
                items.append(self.operand(False, 1))
        cur.expect(")", f"to close {what}")
        return tuple(items)

    def operand(self, labels: bool, depth: int) -> ir.Operand:
        first = self._primary(labels, depth)
        if self.cur.accept("|"):
            second = self._primary(labels, depth)
            return ir.PredicatePair(first, second)
        return first

    def _primary(self, labels: bool, depth: int) -> ir.Operand:
        cur = self.cur
        if depth > _MAX_DEPTH:
            cur.fail("operand nested too deeply")
        tok = cur.peek()
        kind = tok.kind
        if kind is Tok.REG:
            cur.next()
            return self._register(tok)
        if kind is Tok.WORD and not (tok.text == WARP_SZ and not labels):
            return self._name(labels)
        if kind is Tok.PUNCT:
            text = tok.text
            if text == "[":
                return self._address()
            if text == "{":
                return self._vector(labels, depth)
            if text == "!" and cur.peek(1).kind in (Tok.REG, Tok.WORD):
                cur.next()
                return ir.Negated(self._primary(labels, depth + 1))
        if is_number_start(cur):
            value = number(cur)
            return value if isinstance(value, ir.Immediate) else ir.Immediate(value)
        cur.fail("expected an operand")

    def _register(self, tok: Token) -> ir.Register | ir.SpecialRegister:
        text = tok.text
        hit = _REG_CACHE.get(text)
        if hit is not None:  # operands are frozen: one object per spelling is safe
            if type(hit) is ir.Register:
                self.refs.append(Ref(RefKind.REGISTER, text, tok))
            return hit
        op = self._new_register(tok)
        if len(_REG_CACHE) < 65536:
            _REG_CACHE[text] = op
        return op

    def _new_register(self, tok: Token) -> ir.Register | ir.SpecialRegister:
        text = tok.text
        name, dot, component = text.partition(".")
        if is_special_register(name):
            if dot:
                if name not in _VECTOR_SPECIALS or component not in ("x", "y", "z"):
                    raise self.cur.error_at(
                        tok, f"special register {name} has no component .{component}")
                return ir.SpecialRegister(name, component)
            return ir.SpecialRegister(name)
        if dot:
            raise self.cur.error_at(
                tok, f"vector element access {text} is not supported; "
                     "use a vector operand {...} instead")
        self.refs.append(Ref(RefKind.REGISTER, text, tok))
        return ir.Register(text)

    def _name(self, labels: bool) -> ir.Operand:
        cur = self.cur
        tok = cur.next()
        if "." in tok.text:
            cur.fail("expected an operand", tok)
        if tok.text == "_":
            return ir.Sink()
        if labels:
            self.refs.append(Ref(RefKind.LABEL, tok.text, tok))
            return ir.LabelRef(tok.text)
        offset = self._offset()
        self.refs.append(Ref(RefKind.SYMBOL, tok.text, tok, offset))
        return ir.Symbol(tok.text, offset)

    def _offset(self) -> int:
        """`+8`, `+-8`, `-8` (repeatable) after a symbol or address base."""
        cur = self.cur
        total = 0
        while True:
            tok = cur.peek()
            if tok.kind is not Tok.PUNCT or tok.text not in "+-":
                return total
            cur.next()
            value = const_unary(cur)
            total += value if tok.text == "+" else -value

    def _address(self) -> "ir.Address | ir.ImageOperand":
        cur = self.cur
        cur.next()  # '['
        tok = cur.peek()
        base: ir.Register | ir.Symbol | None
        if tok.kind is Tok.REG:
            cur.next()
            reg = self._register(tok)
            if not isinstance(reg, ir.Register):
                raise cur.error_at(tok, f"special register {tok.text} cannot be a memory base")
            base = reg
            offset = self._offset()
        elif tok.kind is Tok.WORD and "." not in tok.text:
            cur.next()
            self.refs.append(Ref(RefKind.SYMBOL, tok.text, tok))
            base = ir.Symbol(tok.text)
            offset = self._offset()
        elif is_number_start(cur):
            base = None
            offset = const_unary(cur) + self._offset()
        else:
            cur.fail("expected a register, symbol or address inside '[ ]'")
        if cur.at(","):
            return self._image_rest(base, offset)
        cur.expect("]", "after memory operand")
        return ir.Address(base, offset)

    def _image_rest(self, handle: "ir.Register | ir.Symbol | None", offset: int) -> ir.ImageOperand:
        """The rest of `[handle, {coords}]` or `[tex, sampler, {coords}]`."""
        cur = self.cur
        if handle is None or offset:
            cur.fail("a texture/surface operand starts with a handle register or a .texref/.surfref name")
        parts: list[ir.Operand] = []
        while cur.accept(","):
            parts.append(self.operand(False, 1))
        cur.expect("]", "after texture/surface operand")
        if len(parts) > 2:
            cur.fail("a texture/surface operand has a handle, an optional sampler and coordinates")
        sampler = None
        if len(parts) == 2:
            if not isinstance(parts[0], (ir.Register, ir.Symbol)):
                cur.fail("the sampler of a texture operand must be a register or a .samplerref name")
            sampler = parts[0]
        return ir.ImageOperand(handle, sampler, parts[-1])

    def _vector(self, labels: bool, depth: int) -> ir.Vector:
        cur = self.cur
        cur.next()  # '{'
        elements = [self.operand(labels, depth + 1)]
        while cur.accept(","):
            elements.append(self.operand(labels, depth + 1))
        cur.expect("}", "to close vector operand")
        return ir.Vector(tuple(elements))


RegRenamer = Callable[[str], str]
SymRenamer = Callable[[str], "str | ir.Register"]


def rename_operand(op: ir.Operand, reg: RegRenamer, sym: SymRenamer) -> ir.Operand:
    """Rebuild `op` with register names mapped by `reg` and symbol names
    (including address bases) mapped by `sym`; `sym` returns a Register
    where a bare name turned out to be a register (`p` in inline asm)."""
    if isinstance(op, ir.Register):
        return ir.Register(reg(op.name))
    if isinstance(op, ir.Symbol):
        new = sym(op.name)
        return new if isinstance(new, ir.Register) else ir.Symbol(new, op.offset)
    if isinstance(op, ir.Address):
        if op.base is None:
            return op
        return ir.Address(rename_operand(op.base, reg, sym), op.offset)  # type: ignore[arg-type]
    if isinstance(op, ir.ImageOperand):
        return ir.ImageOperand(rename_operand(op.handle, reg, sym),  # type: ignore[arg-type]
                               None if op.sampler is None else rename_operand(op.sampler, reg, sym),  # type: ignore[arg-type]
                               rename_operand(op.coords, reg, sym))
    if isinstance(op, ir.Vector):
        return ir.Vector(tuple(rename_operand(e, reg, sym) for e in op.elements))
    if isinstance(op, ir.Negated):
        return ir.Negated(rename_operand(op.operand, reg, sym))
    if isinstance(op, ir.PredicatePair):
        return ir.PredicatePair(rename_operand(op.first, reg, sym),
                                rename_operand(op.second, reg, sym))
    if isinstance(op, ir.CallTarget):
        return ir.CallTarget(
            tuple(rename_operand(r, reg, sym) for r in op.returns),
            rename_operand(op.target, reg, sym),  # type: ignore[arg-type]
            tuple(rename_operand(a, reg, sym) for a in op.args),
            op.prototype)
    return op
