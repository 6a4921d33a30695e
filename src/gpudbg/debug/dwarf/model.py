"""What the debug information says, in our own terms: types, locations,
variables, scopes and functions, with every address already a simulator
code address.

The one idea: the model is decoupled from pyelftools and from DWARF's
encodings, so the debugger and the CLI work with plain values (a Location
names a PTX register or a (space, symbol, offset) in memory) and never see
DIEs, forms or opcodes. Types form a graph that may be cyclic (a struct
holding a pointer to itself), so Type objects are mutable while the reader
builds them and printing a type never walks into struct members.

It does not read memory or registers: evaluating a variable for a thread
is the debugger's job, given a Location.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class AddressSpace(str, Enum):
    """PTX state spaces as NVIDIA's DWARF numbers them in
    DW_AT_address_class (the PTX writer's guide to interoperability)."""

    CODE = "code"
    REG = "reg"
    SREG = "sreg"
    CONST = "const"
    GLOBAL = "global"
    LOCAL = "local"
    PARAM = "param"
    SHARED = "shared"
    SURF = "surf"
    TEX = "tex"
    TEX_SAMPLER = "tex_sampler"
    GENERIC = "generic"

    @classmethod
    def from_dwarf(cls, code: int) -> "AddressSpace":
        try:
            return _DWARF_SPACES[code]
        except KeyError:
            raise ValueError(f"DW_AT_address_class {code} is not a PTX address class (1..12)") from None


_DWARF_SPACES = dict(enumerate(AddressSpace, start=1))


class TypeKind(str, Enum):
    BASE = "base"
    VOID = "void"
    POINTER = "pointer"
    REFERENCE = "reference"
    ARRAY = "array"
    STRUCT = "struct"
    UNION = "union"
    CLASS = "class"
    ENUM = "enum"
    TYPEDEF = "typedef"
    CONST = "const"
    VOLATILE = "volatile"
    RESTRICT = "restrict"
    FUNCTION = "function"


class Encoding(int, Enum):
    """DW_ATE base-type encodings that CUDA C++ produces."""

    ADDRESS = 0x1
    BOOLEAN = 0x2
    FLOAT = 0x4
    SIGNED = 0x5
    SIGNED_CHAR = 0x6
    UNSIGNED = 0x7
    UNSIGNED_CHAR = 0x8
    UTF = 0x10


@dataclass(eq=False)
class Member:
    name: str | None
    type: "Type"
    offset: int
    bit_size: int | None = None
    bit_offset: int | None = None


@dataclass(eq=False)
class Type:
    """A source type. `target` is the pointee / element / aliased type;
    `dims` are array extents (None for unknown); `space` is the address
    class of a pointer (generic for ordinary C++ pointers)."""

    kind: TypeKind
    name: str | None = None
    size: int | None = None
    encoding: Encoding | int | None = None
    target: "Type | None" = None
    members: list[Member] = field(default_factory=list)
    dims: tuple[int | None, ...] = ()
    space: AddressSpace | None = None
    enumerators: dict[str, int] = field(default_factory=dict)

    @property
    def byte_size(self) -> int | None:
        """Size in bytes, looking through typedefs and qualifiers, and
        multiplying array extents."""
        if self.size is not None:
            return self.size
        if self.kind in (TypeKind.TYPEDEF, TypeKind.CONST, TypeKind.VOLATILE, TypeKind.RESTRICT):
            return self.target.byte_size if self.target else None
        if self.kind is TypeKind.ARRAY and self.target is not None:
            n = self.target.byte_size
            for d in self.dims:
                if d is None or n is None:
                    return None
                n *= d
            return n
        return None

    def strip(self) -> "Type":
        """The type under typedefs and cv-qualifiers."""
        t = self
        while t.kind in (TypeKind.TYPEDEF, TypeKind.CONST, TypeKind.VOLATILE, TypeKind.RESTRICT) and t.target:
            t = t.target
        return t

    def __str__(self) -> str:
        return _spell(self, "")


def _spell(t: Type | None, inner: str) -> str:
    """C declarator spelling: `const float *`, `float [4]`, `struct Pair`."""
    if t is None:
        return ("void " + inner).strip()
    k = t.kind
    if k in (TypeKind.BASE, TypeKind.TYPEDEF, TypeKind.VOID):
        return f"{t.name or 'void'} {inner}".strip()
    if k in (TypeKind.STRUCT, TypeKind.UNION, TypeKind.CLASS, TypeKind.ENUM):
        return f"{k.value} {t.name or '<anonymous>'} {inner}".strip()
    if k in (TypeKind.CONST, TypeKind.VOLATILE, TypeKind.RESTRICT):
        q = k.value
        if t.target is not None and t.target.kind in (TypeKind.POINTER, TypeKind.REFERENCE):
            return _spell(t.target, f"{q} {inner}".strip())
        return f"{q} {_spell(t.target, inner)}".strip()
    if k in (TypeKind.POINTER, TypeKind.REFERENCE):
        mark = "*" if k is TypeKind.POINTER else "&"
        tgt = t.target
        wrapped = f"({mark}{inner})" if tgt is not None and tgt.kind in (TypeKind.ARRAY, TypeKind.FUNCTION) \
            else f"{mark}{inner}"
        return _spell(tgt, wrapped)
    if k is TypeKind.ARRAY:
        ext = "".join(f"[{'' if d is None else d}]" for d in t.dims)
        return _spell(t.target, f"{inner} {ext}".strip() if not inner else f"{inner}{ext}")
    if k is TypeKind.FUNCTION:
        return _spell(t.target, f"{inner}()")
    return inner


class LocationKind(str, Enum):
    REGISTER = "register"
    MEMORY = "memory"
    VALUE = "value"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class Location:
    """Where a variable lives. REGISTER: `name` is the PTX register as the
    simulator knows it (`%r5`). MEMORY: `space` plus `symbol` (a PTX
    variable such as `__local_depot1`, or None for an absolute address) and
    `offset` into it; `address` is set when the location is a device
    address. VALUE: the variable is the constant `value`. UNSUPPORTED:
    `detail` says which DWARF construct was not understood."""

    kind: LocationKind
    name: str | None = None
    space: AddressSpace | None = None
    symbol: str | None = None
    offset: int = 0
    address: int | None = None
    value: int | None = None
    detail: str | None = None

    def __str__(self) -> str:
        if self.kind is LocationKind.REGISTER:
            return self.name or "?"
        if self.kind is LocationKind.MEMORY:
            where = self.symbol if self.symbol is not None else f"{self.address:#x}"
            return f"@{self.space.value if self.space else 'generic'} {where}+{self.offset}"
        if self.kind is LocationKind.VALUE:
            return f"value {self.value}"
        return f"<{self.detail}>"


@dataclass(frozen=True)
class LocationRange:
    """A location valid for code addresses [low, high)."""

    low: int
    high: int
    location: Location


@dataclass(eq=False)
class Variable:
    """A local variable, formal parameter or (in a compile unit) global.
    `ranges` is empty when the variable has one location for its whole
    scope (`location`), else it is the location list."""

    name: str
    type: Type | None
    is_parameter: bool
    decl_file: str | None
    decl_line: int | None
    location: Location | None = None
    ranges: list[LocationRange] = field(default_factory=list)
    space: AddressSpace | None = None

    def location_at(self, address: int) -> Location | None:
        """The location at a code address; None where the variable is not
        available (optimised out, or outside its location list)."""
        if not self.ranges:
            return self.location
        for r in self.ranges:
            if r.low <= address < r.high:
                return r.location
        return None


@dataclass(eq=False)
class Scope:
    """A subprogram, lexical block or inlined call: the code address
    ranges it covers ([low, high) pairs), its variables in declaration
    order, nested scopes."""

    kind: str  # "subprogram", "lexical_block", "inlined_subroutine"
    ranges: list[tuple[int, int]]
    variables: list[Variable] = field(default_factory=list)
    children: list["Scope"] = field(default_factory=list)
    parent: "Scope | None" = None
    name: str | None = None

    def contains(self, address: int) -> bool:
        return any(lo <= address < hi for lo, hi in self.ranges)


@dataclass(eq=False)
class Subprogram:
    """A function with code: its names (source and linkage, the latter is
    the PTX function name), where it was declared, and its outer scope."""

    name: str
    linkage_name: str
    low_pc: int
    high_pc: int
    decl_file: str | None
    decl_line: int | None
    return_type: Type | None
    scope: Scope

    @property
    def parameters(self) -> list[Variable]:
        return [v for v in self.scope.variables if v.is_parameter]


@dataclass(eq=False)
class CompileUnit:
    name: str
    comp_dir: str | None
    producer: str | None
    language: int | None
    subprograms: list[Subprogram] = field(default_factory=list)
    globals: list[Variable] = field(default_factory=list)
    types: dict[str, Type] = field(default_factory=dict)
