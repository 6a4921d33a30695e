"""Typed debugger values and the C types the expression language makes up.

A Value is a DWARF-model Type plus its bytes (little-endian, exactly as the
device holds them) plus, for an lvalue, where those bytes came from: device
memory (address and space), a PTX register, a source variable that lives in
a register, or a gdb convenience variable. Keeping the raw bytes rather than
a Python number is the one idea: every reinterpretation the debugger does
(casts, print/x showing the binary representation, x/FMT, member and
element slicing) is a view of the same bytes, so nothing is converted twice
and nothing is rounded on the way.

Types synthesized here (int, unsigned long, pointers in an address space,
arrays, uint3/dim3) are ordinary `gpudbg.debug.dwarf.model.Type` objects,
so values read from DWARF variables and values made up by the evaluator
mix freely. This module does no arithmetic and no printing.
"""
from __future__ import annotations

import dataclasses
import enum
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpudbg.debug.backend import MemorySpace
from gpudbg.debug.dwarf.model import AddressSpace, Encoding, Member, Type, TypeKind

POINTER_SIZE = 8

# canonical C spelling -> (size, encoding); `long` is 64-bit (CUDA on LP64 hosts)
_BASE_TYPES: dict[str, tuple[int, Encoding]] = {
    "char": (1, Encoding.SIGNED_CHAR),
    "signed char": (1, Encoding.SIGNED_CHAR),
    "unsigned char": (1, Encoding.UNSIGNED_CHAR),
    "short": (2, Encoding.SIGNED),
    "unsigned short": (2, Encoding.UNSIGNED),
    "int": (4, Encoding.SIGNED),
    "unsigned int": (4, Encoding.UNSIGNED),
    "long": (8, Encoding.SIGNED),
    "unsigned long": (8, Encoding.UNSIGNED),
    "long long": (8, Encoding.SIGNED),
    "unsigned long long": (8, Encoding.UNSIGNED),
    "float": (4, Encoding.FLOAT),
    "double": (8, Encoding.FLOAT),
    "bool": (1, Encoding.BOOLEAN),
    "__half": (2, Encoding.FLOAT),
}

# <stdint.h>/<stddef.h> names users type in casts, as typedefs of a base type
STANDARD_TYPEDEFS: dict[str, str] = {
    "int8_t": "signed char", "uint8_t": "unsigned char",
    "int16_t": "short", "uint16_t": "unsigned short",
    "int32_t": "int", "uint32_t": "unsigned int",
    "int64_t": "long", "uint64_t": "unsigned long",
    "size_t": "unsigned long", "ssize_t": "long", "ptrdiff_t": "long",
    "intptr_t": "long", "uintptr_t": "unsigned long",
}

TYPE_WORDS = frozenset({"unsigned", "signed", "int", "char", "short", "long", "float",
                        "double", "bool", "_Bool", "void", "__half"})


class ValueError_(Exception):
    """A value cannot be built or read as asked (the evaluator turns it into
    an ExpressionError); named apart from the builtin ValueError."""


def canonical_type_name(words: list[str] | tuple[str, ...]) -> str:
    """`long unsigned int` -> `unsigned long`; raises ValueError_ on
    combinations C does not have (`short double`)."""
    counts = {w: 0 for w in TYPE_WORDS}
    for w in words:
        if w not in counts:
            raise ValueError_(f"\"{w}\" is not a type word")
        counts[w] += 1
    unsigned, signed = counts["unsigned"], counts["signed"]
    longs, shorts = counts["long"], counts["short"]
    kinds = [k for k in ("char", "float", "double", "bool", "_Bool", "void", "__half") if counts[k]]
    if unsigned and signed or unsigned > 1 or signed > 1 or len(kinds) > 1 or counts["int"] > 1:
        raise ValueError_(f"Invalid type \"{' '.join(words)}\"")
    if kinds:
        k = kinds[0]
        if k == "char" and not (longs or shorts or counts["int"]):
            return "unsigned char" if unsigned else "signed char" if signed else "char"
        if k in ("float", "bool", "_Bool", "void", "__half") and not (unsigned or signed or longs or shorts or counts["int"]):
            return "bool" if k == "_Bool" else k
        if k == "double" and not (unsigned or signed or shorts or counts["int"]) and longs == 0:
            return "double"
        raise ValueError_(f"Invalid type \"{' '.join(words)}\"")
    if shorts and longs or shorts > 1 or longs > 2:
        raise ValueError_(f"Invalid type \"{' '.join(words)}\"")
    core = "short" if shorts else "long long" if longs == 2 else "long" if longs else "int"
    return f"unsigned {core}" if unsigned else core


def base_type(name: str) -> Type:
    """A fresh base type by C spelling (any word order: `unsigned`,
    `long unsigned int`), a standard typedef (`uint32_t`), or `void`."""
    if name in STANDARD_TYPEDEFS:
        return Type(TypeKind.TYPEDEF, name=name, target=base_type(STANDARD_TYPEDEFS[name]))
    canon = canonical_type_name(name.split())
    if canon == "void":
        return void_type()
    size, enc = _BASE_TYPES[canon]
    return Type(TypeKind.BASE, name=canon, size=size, encoding=enc)


def void_type() -> Type:
    return Type(TypeKind.VOID, name="void")


def int_type(size: int, signed: bool) -> Type:
    """The C base type of a size and signedness (8 bytes is `long`)."""
    names = {(1, True): "signed char", (1, False): "unsigned char", (2, True): "short",
             (2, False): "unsigned short", (4, True): "int", (4, False): "unsigned int",
             (8, True): "long", (8, False): "unsigned long"}
    try:
        return base_type(names[(size, signed)])
    except KeyError:
        raise ValueError_(f"no {size}-byte integer type") from None


def memory_space(space: AddressSpace | MemorySpace | None) -> MemorySpace:
    """The backend space a pointer of this DWARF address class reads."""
    if space is None:
        return MemorySpace.GENERIC
    if isinstance(space, MemorySpace):
        return space
    try:
        return MemorySpace(space.value)
    except ValueError:
        raise ValueError_(f"pointers into @{space.value} space cannot be read") from None


def address_space(space: MemorySpace | AddressSpace | None) -> AddressSpace | None:
    if space is None or isinstance(space, AddressSpace):
        return space
    return AddressSpace(space.value)


def pointer_to(target: Type, space: MemorySpace | AddressSpace | None = None) -> Type:
    """A pointer type; `space` None is an ordinary (generic) C++ pointer."""
    return Type(TypeKind.POINTER, size=POINTER_SIZE, target=target, space=address_space(space))


def array_of(element: Type, count: int | None) -> Type:
    return Type(TypeKind.ARRAY, target=element, dims=(count,))


def struct_type(name: str, fields: list[tuple[str, Type]], kind: TypeKind = TypeKind.STRUCT) -> Type:
    """A struct laid out with C alignment (each member aligned to its size)."""
    members, offset, align = [], 0, 1
    for fname, ftype in fields:
        size = ftype.byte_size or 1
        a = min(size, 8) if ftype.strip().kind is not TypeKind.ARRAY else min((ftype.strip().target.byte_size or 1), 8)
        offset = (offset + a - 1) // a * a
        members.append(Member(fname, ftype, 0 if kind is TypeKind.UNION else offset))
        align = max(align, a)
        if kind is not TypeKind.UNION:
            offset += size
        else:
            offset = max(offset, size)
    return Type(kind, name=name, size=(offset + align - 1) // align * align, members=members)


def vector3_type(name: str = "uint3") -> Type:
    """CUDA's uint3 / dim3: three unsigned ints x, y, z."""
    u = base_type("unsigned int")
    return struct_type(name, [("x", u), ("y", u), ("z", u)])


# ---- type predicates (all look through typedefs and cv-qualifiers)

def is_integral(t: Type) -> bool:
    s = t.strip()
    return s.kind is TypeKind.ENUM or (s.kind is TypeKind.BASE and s.encoding != Encoding.FLOAT
                                        and s.encoding is not None)


def is_float(t: Type) -> bool:
    s = t.strip()
    return s.kind is TypeKind.BASE and s.encoding == Encoding.FLOAT


def is_bool(t: Type) -> bool:
    s = t.strip()
    return s.kind is TypeKind.BASE and s.encoding == Encoding.BOOLEAN


def is_char(t: Type) -> bool:
    s = t.strip()
    return s.kind is TypeKind.BASE and s.encoding in (Encoding.SIGNED_CHAR, Encoding.UNSIGNED_CHAR) \
        and s.byte_size == 1


def is_pointer(t: Type) -> bool:
    return t.strip().kind is TypeKind.POINTER


def is_array(t: Type) -> bool:
    return t.strip().kind is TypeKind.ARRAY


def is_aggregate(t: Type) -> bool:
    return t.strip().kind in (TypeKind.STRUCT, TypeKind.UNION, TypeKind.CLASS)


def is_void(t: Type) -> bool:
    return t.strip().kind is TypeKind.VOID


def is_arithmetic(t: Type) -> bool:
    return is_integral(t) or is_float(t)


def is_scalar(t: Type) -> bool:
    return is_arithmetic(t) or is_pointer(t)


def is_signed(t: Type) -> bool:
    s = t.strip()
    if s.kind is TypeKind.ENUM:
        return any(v < 0 for v in s.enumerators.values())
    return s.encoding in (Encoding.SIGNED, Encoding.SIGNED_CHAR, Encoding.FLOAT)


def element_type(t: Type) -> Type:
    """What indexing an array (or dereferencing a pointer) gives: for a
    multi-dimensional array, the array of the remaining extents."""
    s = t.strip()
    if s.kind is TypeKind.ARRAY and len(s.dims) > 1:
        return Type(TypeKind.ARRAY, target=s.target, dims=s.dims[1:])
    if s.target is None:
        return void_type()
    return s.target


def array_length(t: Type) -> int | None:
    s = t.strip()
    return s.dims[0] if s.dims else None


def type_name(t: Type) -> str:
    """C spelling with cuda-gdb's address-space prefix on a pointer into a
    specific space: `@global float *`; generic pointers have none."""
    s = t.strip()
    text = str(t)
    if s.kind is TypeKind.POINTER and s.space not in (None, AddressSpace.GENERIC):
        return f"@{s.space.value} {text}"
    return text


class Lval(enum.Enum):
    """Where an lvalue's bytes live, i.e. how an assignment writes them."""

    NONE = "not an lvalue"
    MEMORY = "memory"            # address + space
    REGISTER = "register"        # origin = register name without '%'/'$'
    VARIABLE = "variable"        # origin = source variable held outside memory
    CONVENIENCE = "convenience"  # origin = gdb convenience variable name


@dataclass(frozen=True)
class Value:
    """A typed value. `offset`, `bit_offset`, `bit_size` locate a component
    inside a REGISTER/VARIABLE origin (the bytes to patch on assignment)."""

    type: Type
    data: bytes
    address: int | None = None
    space: MemorySpace | None = None
    lval: Lval = Lval.NONE
    origin: str | None = None
    offset: int = 0
    bit_offset: int | None = None
    bit_size: int | None = None

    def __post_init__(self) -> None:
        if self.address is not None and self.lval is Lval.NONE:
            object.__setattr__(self, "lval", Lval.MEMORY)
        if self.address is not None and self.space is None:
            object.__setattr__(self, "space", MemorySpace.GENERIC)

    # ---- constructors

    @classmethod
    def from_int(cls, v: int, type: Type | str = "int") -> "Value":
        """Wraps `v` to the type's width (C conversion to an integer type)."""
        t = base_type(type) if isinstance(type, str) else type
        size = t.byte_size
        if size is None:
            raise ValueError_(f"type {t} has no size")
        if is_float(t):
            return cls.from_float(float(v), t)
        if is_bool(t):
            v = 1 if v else 0
        return cls(t, (int(v) % (1 << (8 * size))).to_bytes(size, "little"))

    @classmethod
    def from_float(cls, v: float, type: Type | str = "double") -> "Value":
        t = base_type(type) if isinstance(type, str) else type
        fmt = {2: "<e", 4: "<f", 8: "<d"}.get(t.byte_size or 0)
        if fmt is None or not is_float(t):
            raise ValueError_(f"type {t} is not a floating-point type")
        try:
            return cls(t, struct.pack(fmt, v))
        except OverflowError:
            return cls(t, struct.pack(fmt, float("inf") if v > 0 else float("-inf")))

    @classmethod
    def from_bool(cls, v: bool) -> "Value":
        return cls(base_type("bool"), b"\x01" if v else b"\x00")

    @classmethod
    def from_pointer(cls, address: int, target: Type, space: MemorySpace | AddressSpace | None = None) -> "Value":
        return cls.from_int(address, pointer_to(target, space))

    @classmethod
    def from_numpy(cls, x: Any) -> "Value":
        """A register-like numpy scalar as the matching C base type."""
        dt = np.asarray(x).dtype
        names = {"bool": "bool", "int8": "signed char", "uint8": "unsigned char", "int16": "short",
                 "uint16": "unsigned short", "int32": "int", "uint32": "unsigned int",
                 "int64": "long", "uint64": "unsigned long", "float16": "__half",
                 "float32": "float", "float64": "double"}
        if dt.name not in names:
            raise ValueError_(f"no C type for numpy dtype {dt.name}")
        return cls(base_type(names[dt.name]), np.asarray(x).astype(dt.newbyteorder("<")).tobytes())

    @classmethod
    def struct_of(cls, t: Type, fields: dict[str, int | float]) -> "Value":
        """A struct value from member values (unnamed members are zero)."""
        size = t.byte_size or 0
        buf = bytearray(size)
        for m in t.strip().members:
            if m.name in fields:
                mv = (cls.from_float if is_float(m.type) else cls.from_int)(fields[m.name], m.type)
                buf[m.offset:m.offset + len(mv.data)] = mv.data
        return cls(t, bytes(buf))

    @classmethod
    def void(cls) -> "Value":
        return cls(void_type(), b"")

    # ---- views

    @property
    def size(self) -> int:
        return len(self.data)

    def replace(self, **changes: Any) -> "Value":
        return dataclasses.replace(self, **changes)

    def rvalue(self) -> "Value":
        """The same bytes, detached from where they came from."""
        return Value(self.type, self.data)

    def as_int(self) -> int:
        """The integer an integral, bool, enum or pointer value holds."""
        t = self.type
        if is_float(t):
            raise ValueError_(f"value of type {t} is not an integer")
        if not (is_integral(t) or is_pointer(t) or t.strip().kind is TypeKind.REFERENCE):
            raise ValueError_(f"value of type {type_name(t)} is not an integer")
        return int.from_bytes(self.data, "little", signed=is_signed(t) and not is_pointer(t))

    def as_float(self) -> float:
        if is_float(self.type):
            fmt = {2: "<e", 4: "<f", 8: "<d"}[len(self.data)]
            return struct.unpack(fmt, self.data)[0]
        return float(self.as_int())

    def to_python(self) -> Any:
        """int / float / bool for scalars (pointer: its address), list for
        arrays, dict for structs, None for void."""
        t = self.type.strip()
        if t.kind is TypeKind.VOID:
            return None
        if is_bool(t):
            return self.as_int() != 0
        if is_float(t):
            return self.as_float()
        if is_integral(t) or t.kind in (TypeKind.POINTER, TypeKind.REFERENCE):
            return self.as_int()
        if t.kind is TypeKind.ARRAY:
            el = element_type(t)
            es = el.byte_size or 0
            n = len(self.data) // es if es else 0
            return [Value(el, self.data[i * es:(i + 1) * es]).to_python() for i in range(n)]
        if t.kind in (TypeKind.STRUCT, TypeKind.UNION, TypeKind.CLASS):
            return {m.name: component(self, m).to_python() for m in t.members}
        return self.data


def component(v: Value, m: Member) -> Value:
    """A struct member of `v` as a value that keeps v's lvalue-ness."""
    size = m.type.byte_size or 0
    if m.bit_size is not None:
        bit = (m.bit_offset or 0)
        storage = max(size, (bit + m.bit_size + 7) // 8)
        raw = int.from_bytes(v.data[m.offset:m.offset + storage], "little")
        field = (raw >> bit) & ((1 << m.bit_size) - 1)
        if is_signed(m.type) and field >> (m.bit_size - 1):
            field -= 1 << m.bit_size
        out = Value.from_int(field, m.type)
        return out.replace(address=None if v.address is None else v.address + m.offset, space=v.space,
                           lval=v.lval, origin=v.origin, offset=v.offset + m.offset,
                           bit_offset=bit, bit_size=m.bit_size)
    if m.offset + size > len(v.data):
        raise ValueError_(f"member {m.name} lies outside the {len(v.data)}-byte value")
    return Value(m.type, v.data[m.offset:m.offset + size],
                 address=None if v.address is None else v.address + m.offset,
                 space=v.space, lval=v.lval, origin=v.origin, offset=v.offset + m.offset)
