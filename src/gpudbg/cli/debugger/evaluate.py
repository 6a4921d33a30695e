"""Evaluation of parsed expressions against one focus thread, with C's
integer promotions and usual arithmetic conversions.

The one idea: every operation works on Values (typed bytes) and produces
Values, and every side of the device is reached through the small
EvalContext protocol (variables, PTX registers, CUDA builtins, memory by
space, convenience variables, writes), so the evaluator is the same for a
live simulator, a coredump or the tests' fake. Integer arithmetic is done on
Python ints and wrapped to the result type's width; float arithmetic is done
in numpy at the result type's precision (float stays float32, as C does).
Pointers carry their address space in their type, so `p[i]` on an
`@shared int *` reads shared memory and `&x` of a local variable is an
`@local` pointer, as in cuda-gdb.

It does not print values (formatting.py) and does not call functions in
the debuggee.
"""
from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

from gpudbg.cli.debugger import expr as ast
from gpudbg.cli.debugger.expr import ExpressionError, TypeName, parse
from gpudbg.cli.debugger.values import (
    STANDARD_TYPEDEFS, TYPE_WORDS, Lval, Value, ValueError_, array_length, array_of, base_type,
    canonical_type_name, component, element_type, int_type, is_aggregate, is_arithmetic, is_array,
    is_bool, is_float, is_integral, is_pointer, is_scalar, is_signed, is_void, memory_space, pointer_to,
    type_name, void_type,
)
from gpudbg.debug.backend import MemorySpace
from gpudbg.debug.dwarf.model import AddressSpace, Type, TypeKind


class EvalContext(Protocol):
    """What the evaluator needs from the debugger at the focus thread.

    Names are given without '$' or '%'. History values are asked for by
    convenience() with the text after the first '$': `$N` as "N", `$` as
    "", `$$` as "$", `$$N` as "$N".
    write_register gets the new value already converted to the register's
    type. Optional, looked up with getattr: `lookup_type(name) -> Type|None`
    (typedef names, and tags spelled "struct Pair" / "union U" / "enum E"),
    and `disassemble(address, count) -> list[tuple[int, str]]` for x/i."""

    def variable(self, name: str) -> Value | None: ...
    def register(self, name: str) -> Value | None: ...
    def builtin(self, name: str) -> Value | None: ...
    def read_memory(self, space: MemorySpace, address: int, size: int) -> bytes: ...
    def convenience(self, name: str) -> Value | None: ...
    def set_convenience(self, name: str, value: Value) -> None: ...
    def write_register(self, name: str, value: Value) -> None: ...
    def write_memory(self, space: MemorySpace, address: int, data: bytes) -> None: ...
    def write_variable(self, name: str, data: bytes) -> None: ...


def evaluate(text: str, ctx: EvalContext) -> Value:
    """Parse and evaluate one expression; ExpressionError on any problem."""
    node = parse(text, _type_name_predicate(ctx))
    return _Evaluator(ctx, text).eval(node)


def type_of(text: str, ctx: EvalContext) -> Type:
    """The type of an expression (or of a type name), without side effects
    and without reading memory: what `whatis` / `ptype` show."""
    node = parse(text, _type_name_predicate(ctx))
    ev = _Evaluator(ctx, text, lazy=True)
    if isinstance(node, ast.TypeExpr):
        return ev.resolve_type(node.type)
    return ev.eval(node).type


def read_memory(ctx: EvalContext, space: MemorySpace, address: int, size: int) -> bytes:
    """ctx.read_memory with gdb's message for a bad address."""
    try:
        data = ctx.read_memory(space, address, size)
    except ExpressionError:
        raise
    except Exception as e:  # the backend's own error type varies (BackendError, DebugError)
        detail = str(e)
        msg = detail if detail.startswith("Cannot access memory") else \
            f"Cannot access memory at address {address:#x}" + (f" ({detail})" if detail else "")
        raise ExpressionError(msg) from e
    if len(data) != size:
        raise ExpressionError(f"Cannot access memory at address {address + len(data):#x}")
    return bytes(data)


def _type_name_predicate(ctx: EvalContext) -> Callable[[str], bool]:
    lookup = getattr(ctx, "lookup_type", None)
    if lookup is None:
        return lambda name: False
    return lambda name: lookup(name) is not None and ctx.variable(name) is None


def pointer_space(t: Type) -> MemorySpace:
    return memory_space(t.strip().space)


# ---------------------------------------------------------------- C arithmetic

def promote(t: Type) -> Type:
    """Integer promotion: everything narrower than int (and bool, enums)
    becomes int; unsigned int stays."""
    s = t.strip()
    size = s.byte_size or 4
    if s.kind is TypeKind.ENUM:
        return int_type(max(size, 4), is_signed(s) or size < 4)
    if size < 4:
        return base_type("int")
    return s


def arithmetic_type(a: Type, b: Type) -> Type:
    """The usual arithmetic conversions of C."""
    if is_float(a) or is_float(b):
        sizes = [t.strip().byte_size for t in (a, b) if is_float(t)]
        return base_type("double" if max(sizes) >= 8 else "float" if max(sizes) == 4 else "__half")
    pa, pb = promote(a), promote(b)
    sa, sb = pa.byte_size, pb.byte_size
    ua, ub = not is_signed(pa), not is_signed(pb)
    if ua == ub:
        return pa if sa >= sb else pb
    uns, sig = (pa, pb) if ua else (pb, pa)
    if uns.byte_size >= sig.byte_size:
        return uns
    return sig


def convert(v: Value, t: Type) -> Value:
    """C conversion of a scalar (or an array decaying to its address) to
    the scalar type `t` (a cast or an assignment)."""
    s = t.strip()
    src = v.type.strip()
    if s.kind is TypeKind.VOID:
        return Value.void()
    if s.kind in (TypeKind.STRUCT, TypeKind.UNION, TypeKind.CLASS, TypeKind.ARRAY):
        if src is s or (src.kind is s.kind and src.name == s.name and src.byte_size == s.byte_size
                        and s.kind is not TypeKind.ARRAY):
            return Value(t, v.data)
        raise ExpressionError("Invalid cast.")
    if src.kind is TypeKind.ARRAY:
        if v.address is None:
            raise ExpressionError("Attempt to take address of value not located in memory.")
        v = Value.from_int(v.address, pointer_to(element_type(src), v.space))
    elif not is_scalar(src):
        raise ExpressionError("Invalid cast.")
    if is_float(s):
        return Value.from_float(v.as_float(), t)
    if is_float(src):
        x = v.as_float()
        if x != x or x in (float("inf"), float("-inf")):
            return Value.from_int(0, t)
        return Value.from_int(1 if is_bool(s) and x != 0 else int(x), t)
    n = v.as_int()
    return Value.from_int(n != 0 if is_bool(s) else n, t)


def _float_op(op: str, a: float, b: float, t: Type) -> Value:
    dt = {2: np.float16, 4: np.float32, 8: np.float64}[t.byte_size]
    x, y = dt(a), dt(b)
    with np.errstate(all="ignore"):
        r = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[op](x, y)
    return Value(t, np.asarray(r, dtype=dt).astype(np.dtype(dt).newbyteorder("<")).tobytes())


def _int_op(op: str, a: int, b: int, t: Type) -> Value:
    bits = 8 * t.byte_size
    if op in ("/", "%"):
        if b == 0:
            raise ExpressionError("Division by zero")
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)   # C truncates toward zero
        return Value.from_int(q if op == "/" else a - q * b, t)
    if op in ("<<", ">>"):
        if b < 0 or b >= bits:
            return Value.from_int(-1 if op == ">>" and a < 0 else 0, t)
        return Value.from_int(a << b if op == "<<" else a >> b, t)
    r = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op]
    return Value.from_int(r, t)


_COMPARE = {"<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
            ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def _truth(v: Value) -> bool:
    if not is_scalar(v.type):
        raise ExpressionError(f"Cannot convert value of type `{type_name(v.type)}' to a truth value.")
    return v.as_float() != 0 if is_float(v.type) else v.as_int() != 0


class _Evaluator:
    def __init__(self, ctx: EvalContext, text: str, lazy: bool = False):
        self.ctx = ctx
        self.text = text
        self.lazy = lazy   # type-only: no memory reads, no writes (sizeof, whatis)

    def error(self, message: str, node: ast.Expr | None = None) -> ExpressionError:
        return ExpressionError(message, None if node is None else node.pos, self.text)

    def eval(self, node: ast.Expr) -> Value:
        method = getattr(self, "e_" + type(node).__name__)
        try:
            return method(node)
        except ValueError_ as e:
            raise self.error(str(e), node) from None
        except ExpressionError as e:
            if e.column is None:
                e.column, e.text = node.pos, self.text
            raise

    # ---- memory and types

    def read(self, space: MemorySpace, address: int, size: int) -> bytes:
        if self.lazy:
            return bytes(size)
        return read_memory(self.ctx, space, address, size)

    def resolve_type(self, tn: TypeName) -> Type:
        words = tn.words
        lookup = getattr(self.ctx, "lookup_type", None)
        if words[0] in ("struct", "union", "enum", "class"):
            t = lookup(" ".join(words)) if lookup else None
            if t is None:
                raise ExpressionError(f"No {words[0]} type named {words[1]}.", tn.pos, self.text)
        elif all(w in TYPE_WORDS for w in words):
            try:
                t = base_type(canonical_type_name(words))
            except ValueError_ as e:
                raise ExpressionError(str(e), tn.pos, self.text) from None
        elif words[0] in STANDARD_TYPEDEFS and not (lookup and lookup(words[0])):
            t = base_type(words[0])
        else:
            t = lookup(words[0]) if lookup else None
            if t is None:
                raise ExpressionError(f"No symbol \"{words[0]}\" in current context.", tn.pos, self.text)
        for d in tn.dims[::-1]:
            t = array_of(t, d)
        for level in range(tn.pointers):
            outer = level == tn.pointers - 1
            t = pointer_to(t, AddressSpace(tn.space) if outer and tn.space else None)
        if tn.space and not tn.pointers:
            raise ExpressionError(f"The @{tn.space} qualifier needs a pointer type.", tn.pos, self.text)
        return t

    def deref(self, ptr: Value, node: ast.Expr) -> Value:
        target = ptr.type.strip().target or void_type()
        size = target.byte_size
        if is_void(target) or target.strip().kind is TypeKind.FUNCTION:
            raise self.error("Attempt to take contents of a non-pointer value.", node)
        if size is None:
            raise self.error(f"Cannot dereference a pointer to the incomplete type `{target}'.", node)
        space, addr = pointer_space(ptr.type), ptr.as_int()
        return Value(target, self.read(space, addr, size), address=addr, space=space)

    def coerce_ref(self, v: Value) -> Value:
        s = v.type.strip()
        if s.kind is not TypeKind.REFERENCE:
            return v
        t = s.target or void_type()
        space, addr = memory_space(s.space), v.as_int()
        return Value(t, self.read(space, addr, t.byte_size or 0), address=addr, space=space)

    def decay(self, v: Value, node: ast.Expr) -> Value:
        """Arrays used as values become pointers to their first element."""
        v = self.coerce_ref(v)
        if is_array(v.type):
            if v.address is None:
                raise self.error("Attempt to take address of value not located in memory.", node)
            return Value.from_int(v.address, pointer_to(element_type(v.type), v.space))
        return v

    # ---- leaves

    def e_IntLit(self, n: ast.IntLit) -> Value:
        return Value.from_int(n.value, n.type_name)

    def e_FloatLit(self, n: ast.FloatLit) -> Value:
        return Value.from_float(n.value, n.type_name)

    def e_CharLit(self, n: ast.CharLit) -> Value:
        return Value.from_int(n.value, "char")

    def e_BoolLit(self, n: ast.BoolLit) -> Value:
        return Value.from_bool(n.value)

    def e_StringLit(self, n: ast.StringLit) -> Value:
        return Value(array_of(base_type("char"), len(n.value) + 1), n.value + b"\0")

    def e_TypeExpr(self, n: ast.TypeExpr) -> Value:
        raise self.error("Attempt to use a type name as an expression", n)

    def e_Name(self, n: ast.Name) -> Value:
        v = self.ctx.variable(n.name)
        if v is not None:
            return v if v.address is not None else v.replace(lval=Lval.VARIABLE, origin=n.name, offset=0)
        v = self.ctx.builtin(n.name)
        if v is not None:
            return v.rvalue()
        raise self.error(f"No symbol \"{n.name}\" in current context.", n)

    def e_Dollar(self, n: ast.Dollar) -> Value:
        name = n.name
        if name == "" or name.startswith("$") or name.isdigit():
            v = self.ctx.convenience(name)
            if v is None:
                if name.isdigit():
                    raise self.error(f"History has not yet reached ${name}.", n)
                return Value.void()
            return v.rvalue()
        v = self.ctx.register(name)
        if v is not None:
            return v.replace(lval=Lval.REGISTER, origin=name, offset=0, address=None, space=None)
        v = self.ctx.convenience(name)
        if v is None:
            v = Value.void()
        return v.rvalue().replace(lval=Lval.CONVENIENCE, origin=name)

    # ---- unary

    def e_Unary(self, n: ast.Unary) -> Value:
        op = n.op
        if op in ("++", "--"):
            target = self.eval(n.operand)
            return self.assign(target, self.add(target, Value.from_int(1), "+" if op == "++" else "-", n), n)
        if op == "&":
            v = self.eval(n.operand)
            if v.lval is not Lval.MEMORY or v.address is None:
                raise self.error("Attempt to take address of value not located in memory.", n)
            if v.bit_size is not None:
                raise self.error("Attempt to take address of a bitfield.", n)
            return Value.from_int(v.address, pointer_to(v.type, v.space))
        v = self.decay(self.eval(n.operand), n)
        if op == "*":
            if not is_pointer(v.type):
                raise self.error("Attempt to take contents of a non-pointer value.", n)
            return self.deref(v, n)
        if op == "!":
            return Value.from_int(0 if _truth(v) else 1, "int")
        if not is_arithmetic(v.type):
            raise self.error(f"Argument to {'arithmetic' if op != '~' else 'complement'} operation "
                             f"not a number or boolean.", n)
        if op == "~":
            if is_float(v.type):
                raise self.error("Argument to complement operation not an integer, boolean.", n)
            t = promote(v.type)
            return Value.from_int(~convert(v, t).as_int(), t)
        t = arithmetic_type(v.type, v.type)
        v = convert(v, t)
        if op == "+":
            return v
        if is_float(t):
            return Value.from_float(-v.as_float(), t)
        return Value.from_int(-v.as_int(), t)

    def e_Postfix(self, n: ast.Postfix) -> Value:
        target = self.eval(n.operand)
        old = self.decay(target, n).rvalue()
        self.assign(target, self.add(target, Value.from_int(1), "+" if n.op == "++" else "-", n), n)
        return old

    def e_SizeOf(self, n: ast.SizeOf) -> Value:
        if isinstance(n.operand, TypeName):
            t = self.resolve_type(n.operand)
        else:
            t = _Evaluator(self.ctx, self.text, lazy=True).eval(n.operand).type
        size = t.byte_size
        if size is None or is_void(t):
            raise self.error(f"sizeof applied to the incomplete type `{type_name(t)}'.", n)
        return Value.from_int(size, "unsigned long")

    def e_Cast(self, n: ast.Cast) -> Value:
        t = self.resolve_type(n.type)
        v = self.coerce_ref(self.eval(n.operand))
        if is_pointer(t) and t.strip().space is None:
            src = self.decay(v, n) if is_array(v.type) else v
            if is_pointer(src.type) and src.type.strip().space is not None:
                # cast without a qualifier keeps the space the address is in
                t = pointer_to(t.strip().target, src.type.strip().space)
        return convert(v, t)

    def e_SpaceQualified(self, n: ast.SpaceQualified) -> Value:
        v = self.decay(self.eval(n.operand), n)
        space = AddressSpace(n.space)
        if is_pointer(v.type):
            return Value(pointer_to(v.type.strip().target or void_type(), space), v.data)
        if is_integral(v.type):
            return Value.from_int(v.as_int(), pointer_to(void_type(), space))
        raise self.error(f"The @{n.space} qualifier needs an address or a pointer, not `{type_name(v.type)}'.", n)

    # ---- postfix

    def e_Index(self, n: ast.Index) -> Value:
        base = self.coerce_ref(self.eval(n.base))
        idx = self.coerce_ref(self.eval(n.index))
        if not (is_array(base.type) or is_pointer(base.type)) and (is_array(idx.type) or is_pointer(idx.type)):
            base, idx = idx, base
        if not is_integral(idx.type):
            raise self.error("Argument to arithmetic operation not a number or boolean.", n.index)
        i = idx.as_int()
        if is_array(base.type):
            el = element_type(base.type)
            es = el.byte_size or 0
            length = array_length(base.type)
            if 0 <= i and (i + 1) * es <= len(base.data) and (length is None or i < length):
                return Value(el, base.data[i * es:(i + 1) * es],
                             address=None if base.address is None else base.address + i * es,
                             space=base.space, lval=base.lval, origin=base.origin, offset=base.offset + i * es)
            if base.address is None:
                raise self.error("no such vector element", n)
            addr = base.address + i * es
            return Value(el, self.read(base.space, addr, es), address=addr, space=base.space)
        if is_pointer(base.type):
            return self.deref(self.add(base, idx, "+", n), n)
        raise self.error(f"cannot subscript something of type `{type_name(base.type)}'", n)

    def e_Member(self, n: ast.Member) -> Value:
        base = self.coerce_ref(self.eval(n.base))
        if is_pointer(base.type):
            target = base.type.strip().target
            if target is None or not is_aggregate(target):
                raise self.error("The -> operator needs a pointer to a structure or union, not "
                                 f"`{type_name(base.type)}'.", n)
            base = self.deref(base, n)
        if not is_aggregate(base.type):
            raise self.error("Attempt to extract a component of a value that is not a structure"
                             + (" pointer." if n.arrow else "."), n)
        found = self.find_member(base, n.name)
        if found is None:
            raise self.error(f"There is no member named {n.name}.", n)
        return found

    def find_member(self, v: Value, name: str) -> Value | None:
        for m in v.type.strip().members:
            if m.name == name:
                return component(v, m)
            if m.name is None and is_aggregate(m.type):
                inner = self.find_member(component(v, m), name)
                if inner is not None:
                    return inner
        return None

    # ---- binary

    def e_Comma(self, n: ast.Comma) -> Value:
        self.eval(n.left)
        return self.eval(n.right)

    def e_Binary(self, n: ast.Binary) -> Value:
        op = n.op
        if op in ("&&", "||"):
            left = _truth(self.decay(self.eval(n.left), n.left))
            if (op == "&&" and not left) or (op == "||" and left):
                return Value.from_int(int(left), "int")
            return Value.from_int(int(_truth(self.decay(self.eval(n.right), n.right))), "int")
        if op == "@":
            return self.artificial_array(n)
        a = self.eval(n.left)
        b = self.eval(n.right)
        return self.binop(op, a, b, n)

    def binop(self, op: str, a: Value, b: Value, n: ast.Expr) -> Value:
        a, b = self.decay(a, n), self.decay(b, n)
        if op in ("+", "-"):
            return self.add(a, b, op, n)
        if op in _COMPARE:
            return self.compare(op, a, b, n)
        return self.arith(op, a, b, n)

    def arith(self, op: str, a: Value, b: Value, n: ast.Expr) -> Value:
        if not (is_arithmetic(a.type) and is_arithmetic(b.type)):
            raise self.error("Argument to arithmetic operation not a number or boolean.", n)
        if op in ("<<", ">>"):
            if is_float(a.type) or is_float(b.type):
                raise self.error(f"Integer only operation {op}.", n)
            t = promote(a.type)
            return _int_op(op, convert(a, t).as_int(), b.as_int(), t)
        t = arithmetic_type(a.type, b.type)
        if is_float(t):
            if op in ("%", "&", "|", "^"):
                raise self.error(f"Integer only operation {op}.", n)
            return _float_op(op, convert(a, t).as_float(), convert(b, t).as_float(), t)
        return _int_op(op, convert(a, t).as_int(), convert(b, t).as_int(), t)

    def add(self, a: Value, b: Value, op: str, n: ast.Expr) -> Value:
        a, b = self.decay(a, n), self.decay(b, n)
        pa, pb = is_pointer(a.type), is_pointer(b.type)
        if pa and pb:
            if op == "+":
                raise self.error("Cannot add two pointers.", n)
            sa, sb = self._scale(a.type), self._scale(b.type)
            if sa != sb:
                raise self.error("First argument of `-' is a pointer and second argument is neither\n"
                                 "an integer nor a pointer of the same type.", n)
            diff = a.as_int() - b.as_int()
            return Value.from_int(int(diff / sa) if diff % sa else diff // sa, "long")
        if pa or pb:
            ptr, other = (a, b) if pa else (b, a)
            if not is_integral(other.type) or (pb and op == "-"):
                raise self.error("Argument to arithmetic operation not a number or boolean.", n)
            delta = other.as_int() * self._scale(ptr.type)
            return Value(ptr.type, Value.from_int(ptr.as_int() + (delta if op == "+" else -delta),
                                                  "unsigned long").data)
        return self.arith(op, a, b, n)

    @staticmethod
    def _scale(t: Type) -> int:
        target = t.strip().target
        size = None if target is None or is_void(target) else target.byte_size
        return size or 1

    def compare(self, op: str, a: Value, b: Value, n: ast.Expr) -> Value:
        if is_pointer(a.type) or is_pointer(b.type):
            if not all(is_pointer(v.type) or is_integral(v.type) for v in (a, b)):
                raise self.error("Argument to comparison operation not a number, boolean or pointer.", n)
            x, y = (v.as_int() % (1 << 64) for v in (a, b))
        else:
            if not (is_arithmetic(a.type) and is_arithmetic(b.type)):
                raise self.error("Argument to comparison operation not a number, boolean or pointer.", n)
            t = arithmetic_type(a.type, b.type)
            if is_float(t):
                x, y = convert(a, t).as_float(), convert(b, t).as_float()
            else:
                x, y = convert(a, t).as_int(), convert(b, t).as_int()
        return Value.from_int(int(_COMPARE[op](x, y)), "int")

    def artificial_array(self, n: ast.Binary) -> Value:
        left = self.coerce_ref(self.eval(n.left))
        count = self.eval(n.right)
        if not is_integral(count.type):
            raise self.error("Right operand of `@' must be an integer.", n)
        k = count.as_int()
        if k <= 0:
            raise self.error("Only values in memory can be extended with '@'." if left.address is None
                             else f"Invalid number {k} of repetitions.", n)
        if left.address is None:
            raise self.error("Only values in memory can be extended with '@'.", n)
        t = array_of(left.type, k)
        return Value(t, self.read(left.space, left.address, (left.type.byte_size or 0) * k),
                     address=left.address, space=left.space)

    def e_Conditional(self, n: ast.Conditional) -> Value:
        cond = _truth(self.decay(self.eval(n.cond), n.cond))
        chosen = self.eval(n.then if cond else n.otherwise)
        if is_arithmetic(chosen.type):
            other = _Evaluator(self.ctx, self.text, lazy=True).eval(n.otherwise if cond else n.then)
            if is_arithmetic(other.type):
                return convert(chosen, arithmetic_type(chosen.type, other.type))
        return chosen

    # ---- assignment

    def e_Assign(self, n: ast.Assign) -> Value:
        target = self.eval(n.target)
        value = self.eval(n.value)
        if n.op != "=":
            value = self.binop(n.op, target, value, n)
        return self.assign(target, value, n)

    def assign(self, target: Value, value: Value, n: ast.Expr) -> Value:
        if target.lval is Lval.CONVENIENCE:
            new = self.coerce_ref(value).rvalue()   # a convenience variable takes the value's type
            if not self.lazy:
                self.ctx.set_convenience(target.origin, new)
            return new.replace(lval=Lval.CONVENIENCE, origin=target.origin)
        if target.lval is Lval.NONE:
            raise self.error("Left operand of assignment is not an lvalue.", n)
        value = self.coerce_ref(value)
        if is_scalar(target.type):
            new = convert(value, target.type)
        elif is_aggregate(target.type) and value.type.strip().byte_size == target.type.byte_size \
                and is_aggregate(value.type):
            new = Value(target.type, value.data)
        else:
            raise self.error("Invalid cast.", n)
        data = new.data
        if target.bit_size is not None:
            field = new.as_int() & ((1 << target.bit_size) - 1)
            storage_len = max(target.type.byte_size or 1, (target.bit_offset + target.bit_size + 7) // 8)
            if target.lval is Lval.MEMORY:
                raw = int.from_bytes(self.read(target.space, target.address, storage_len), "little")
            else:
                whole = self._origin_bytes(target, n)
                raw = int.from_bytes(whole[target.offset:target.offset + storage_len], "little")
            mask = ((1 << target.bit_size) - 1) << target.bit_offset
            raw = (raw & ~mask) | (field << target.bit_offset)
            data = raw.to_bytes(storage_len, "little")
            if is_signed(target.type) and field >> (target.bit_size - 1):
                field -= 1 << target.bit_size
            new = Value.from_int(field, target.type)   # the value a bitfield assignment yields
        if not self.lazy:
            self._write(target, data, new, n)
        return Value(target.type, new.data, address=target.address, space=target.space, lval=target.lval,
                     origin=target.origin, offset=target.offset, bit_offset=target.bit_offset,
                     bit_size=target.bit_size)

    def _origin_bytes(self, target: Value, n: ast.Expr) -> bytes:
        whole = self.ctx.variable(target.origin) if target.lval is Lval.VARIABLE \
            else self.ctx.register(target.origin)
        if whole is None:
            raise self.error(f"No symbol \"{target.origin}\" in current context.", n)
        return whole.data

    def _write(self, target: Value, data: bytes, new: Value, n: ast.Expr) -> None:
        try:
            if target.lval is Lval.MEMORY:
                self.ctx.write_memory(target.space, target.address, data)
            elif target.lval is Lval.REGISTER:
                if target.offset or target.bit_size is not None:
                    whole = bytearray(self._origin_bytes(target, n))
                    whole[target.offset:target.offset + len(data)] = data
                    reg = self.ctx.register(target.origin)
                    new = Value(reg.type, bytes(whole))
                self.ctx.write_register(target.origin, new)
            else:
                whole = bytearray(self._origin_bytes(target, n))
                whole[target.offset:target.offset + len(data)] = data
                self.ctx.write_variable(target.origin, bytes(whole))
        except ExpressionError:
            raise
        except Exception as e:  # the backend's error type varies
            where = f"address {target.address:#x}" if target.lval is Lval.MEMORY else f"{target.origin}"
            raise self.error(f"Cannot write {where}: {e}", n) from e
