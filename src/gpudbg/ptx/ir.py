"""The PTX intermediate representation: what the parser produces and the
simulator's translator consumes.

The IR keeps PTX's own vocabulary (opcode plus its dot-modifiers, operands as
written) and resolves only what is purely syntactic: register ranges are
expanded, nested `{ }` scopes are flattened with inner declarations renamed to
unique names, `.loc` directives are attached to the instructions they cover.
Type checking and the meaning of modifiers belong to the translator, so that
an unsupported instruction is reported once, by the component that knows what
is supported.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class SourceLoc:
    """A position in the PTX text itself (1-based line and column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class LineInfo:
    """A `.loc file line col` entry: a position in the CUDA source."""

    file_index: int
    line: int
    col: int
    inlined_at: "LineInfo | None" = None
    function_name: str | None = None


# ---------------------------------------------------------------- operands


@dataclass(frozen=True)
class Register:
    """A PTX register (`%r1`, `%SP`, `%p3`) by its unique name in the function."""

    name: str


@dataclass(frozen=True)
class SpecialRegister:
    """A special register such as `%tid.x` (name `%tid`, component `x`),
    `%laneid` (component None) or `%envreg3`."""

    name: str
    component: str | None = None


@dataclass(frozen=True)
class Immediate:
    """A literal. `value` is an int for integer literals and a float for
    floating literals; `bits`/`width` are set for hex float forms
    (`0f3F800000`: bits=0x3F800000, width=32; `0d...`: width=64) so no
    precision is lost."""

    value: int | float
    bits: int | None = None
    width: int | None = None


@dataclass(frozen=True)
class Symbol:
    """A variable or function name used as a value (`mov.u64 %rd1, $str;`),
    optionally with a constant byte offset (`arr+8`)."""

    name: str
    offset: int = 0


@dataclass(frozen=True)
class Address:
    """A memory operand `[base+offset]`. base is a Register, a Symbol or None
    (absolute address `[0x100]`)."""

    base: "Register | Symbol | None"
    offset: int = 0


@dataclass(frozen=True)
class ImageOperand:
    """A texture/surface operand: `[tex, {x, y}]`, `[tex, sampler, {x, y}]`
    (independent mode) or `[surf, x]`. `handle` (and `sampler`) is a 64-bit
    object register or a `.texref`/`.samplerref`/`.surfref` symbol; `coords`
    a Vector or one scalar operand."""

    handle: "Register | Symbol"
    sampler: "Register | Symbol | None"
    coords: "Operand"


@dataclass(frozen=True)
class Vector:
    """A vector operand `{%f1, %f2, _, %f4}`."""

    elements: tuple["Operand", ...]


@dataclass(frozen=True)
class Sink:
    """The `_` bit bucket."""


@dataclass(frozen=True)
class Negated:
    """A negated predicate source operand `!%p1`."""

    operand: "Operand"


@dataclass(frozen=True)
class PredicatePair:
    """A destination `%r2|%p1` (shfl, setp with two results)."""

    first: "Operand"
    second: "Operand"


@dataclass(frozen=True)
class LabelRef:
    """A branch target or a label used as a value (`bra $L__BB0_2;`,
    `brx.idx` tables, debug-section label references)."""

    name: str


@dataclass(frozen=True)
class CallTarget:
    """The operands of `call`: `call.uni (ret0), fname, (p0, p1), proto;`.
    `target` is a Symbol (direct call) or a Register (indirect call);
    `prototype` names the `.callprototype` label for indirect calls, or holds a
    LabelRef to a `.calltargets` list."""

    returns: tuple["Operand", ...]
    target: "Symbol | Register"
    args: tuple["Operand", ...]
    prototype: str | None = None


Operand = Union[
    Register,
    SpecialRegister,
    Immediate,
    Symbol,
    Address,
    ImageOperand,
    Vector,
    Sink,
    Negated,
    PredicatePair,
    LabelRef,
    CallTarget,
]


# ---------------------------------------------------------------- statements


@dataclass
class Instruction:
    """One PTX instruction. `opcode` is the base opcode (`add`, `ld`,
    `shfl`); `modifiers` are the dot-suffixes in written order, without dots
    (`ld.global.v4.f32` -> ("global", "v4", "f32")). `guard` is the `@%p` /
    `@!%p` predicate register, if any."""

    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    loc: SourceLoc
    text: str
    guard: Register | None = None
    guard_negated: bool = False
    line_info: LineInfo | None = None

    @property
    def full_opcode(self) -> str:
        return ".".join((self.opcode,) + self.modifiers)


@dataclass
class Label:
    name: str
    loc: SourceLoc


Statement = Union[Instruction, Label]


# ---------------------------------------------------------------- declarations


@dataclass
class RegisterDecl:
    """One register (ranges like `%r<6>` are expanded by the parser).
    `type` is the PTX type without the dot (`b32`, `pred`, `f16x2`);
    `vector` is 2 or 4 for `.reg .v4 .f32 %v;`, else None."""

    name: str
    type: str
    loc: SourceLoc
    vector: int | None = None
    display_name: str | None = None  # name as written, if renamed for scope


@dataclass
class Initializer:
    """A variable initializer, flattened in element order. Each item is an
    int, a float, a Symbol (address of a variable or function), or a
    `generic(sym)` reference (Symbol wrapped in GenericSymbol)."""

    items: list


@dataclass(frozen=True)
class GenericSymbol:
    """`generic(sym)` inside an initializer: the generic address of sym."""

    symbol: Symbol


@dataclass
class VariableDecl:
    """A state-space variable: `.global .align 4 .b8 buf[16] = {...};`.
    `space` is one of global, shared, local, const, param. `dims` lists the
    array dimensions (None for `[]`, which `extern .shared` uses); `() ` for a
    scalar. `linkage` is visible, extern, weak, common or None."""

    name: str
    space: str
    type: str
    loc: SourceLoc
    dims: tuple[int | None, ...] = ()
    align: int | None = None
    vector: int | None = None
    initializer: Initializer | None = None
    linkage: str | None = None
    ptr_space: str | None = None  # .ptr.global etc. on kernel params
    ptr_align: int | None = None
    display_name: str | None = None
    attributes: tuple[str, ...] = ()    # .attribute(.managed) -> ("managed",)

    @property
    def managed(self) -> bool:
        """A __managed__ variable: one address for host and device."""
        return "managed" in self.attributes

    @property
    def element_count(self) -> int | None:
        n = 1
        for d in self.dims:
            if d is None:
                return None
            n *= d
        return n


@dataclass
class Function:
    """An `.entry` (kind "entry") or `.func` (kind "func"). `params` and
    `returns` are VariableDecls in the param space. `body` is None for a
    declaration without a body (`.extern .func vprintf(...);`).
    `directives` holds performance directives (`maxntid`: (x, y, z),
    `reqntid`, `minnctapersm`, `maxnreg`, `noreturn`: True, ...).
    `registers` and `locals` (local/shared/param variables declared in the
    body, all scopes flattened) are keyed by their unique names."""

    name: str
    kind: str
    loc: SourceLoc
    linkage: str | None = None
    params: list[VariableDecl] = field(default_factory=list)
    returns: list[VariableDecl] = field(default_factory=list)
    body: list[Statement] | None = None
    registers: dict[str, RegisterDecl] = field(default_factory=dict)
    locals: dict[str, VariableDecl] = field(default_factory=dict)
    directives: dict[str, object] = field(default_factory=dict)
    pragmas: list[str] = field(default_factory=list)
    #: (index into body of the statement that follows, pragma) of each
    #: .pragma in the body: `nounroll` applies to the loop it starts
    pragma_at: list[tuple[int, str]] = field(default_factory=list)
    branchtargets: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def instructions(self) -> list[Instruction]:
        return [s for s in (self.body or []) if isinstance(s, Instruction)]


@dataclass
class DebugItem:
    """One data directive inside a `.section .debug_*` block: width in bytes
    (1, 2, 4, 8) and its values, each an int, a label name (str) or a label
    expression as written (str, e.g. "$L__tmp1-$L__func_begin0")."""

    width: int
    values: list


@dataclass
class DebugSection:
    name: str
    items: list[DebugItem]
    loc: SourceLoc


@dataclass
class Module:
    filename: str
    version: tuple[int, int] | None = None
    targets: tuple[str, ...] = ()
    address_size: int = 64
    globals: dict[str, VariableDecl] = field(default_factory=dict)
    functions: dict[str, Function] = field(default_factory=dict)
    files: dict[int, str] = field(default_factory=dict)
    debug_sections: list[DebugSection] = field(default_factory=list)
    pragmas: list[str] = field(default_factory=list)
    callprototypes: dict[str, "Function"] = field(default_factory=dict)
    calltargets: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def debug(self) -> bool:
        return "debug" in self.targets
