"""A fake EvalContext for the evaluator and formatter tests: a few typed
variables in registers, local, shared and global memory, PTX registers,
CUDA builtins and a convenience store, with every write recorded."""
from __future__ import annotations

import struct

from gpudbg.cli.debugger.values import (
    Value, array_of, base_type, pointer_to, struct_type, vector3_type,
)
from gpudbg.debug.backend import BackendError, MemorySpace
from gpudbg.debug.dwarf.model import Member, Type, TypeKind

GLOBAL_BASE = 0x700000002000
INTS_AT = GLOBAL_BASE + 0x100       # int[8]   10, 20, ..., 80
FLOATS_AT = GLOBAL_BASE + 0x200     # float[4] 0.0, 1.0, 2.5, -4.0
HELLO_AT = GLOBAL_BASE + 0x300      # "hello\0world\0"


def pair_type() -> Type:
    return struct_type("Pair", [("a", base_type("int")), ("b", base_type("float"))])


def color_type() -> Type:
    return Type(TypeKind.ENUM, name="Color", size=4, enumerators={"RED": 0, "GREEN": 1, "BLUE": 2})


def flags_type() -> Type:
    u = base_type("unsigned int")
    return Type(TypeKind.STRUCT, name="Flags", size=4,
                members=[Member("lo", u, 0, bit_size=3, bit_offset=0), Member("hi", u, 0, bit_size=5, bit_offset=3)])


class FakeContext:
    def __init__(self) -> None:
        self.memory = {
            MemorySpace.GLOBAL: (GLOBAL_BASE, bytearray(0x1000)),
            MemorySpace.SHARED: (0, bytearray(0x100)),
            MemorySpace.LOCAL: (0, bytearray(0x200)),
        }
        self.writes: list[tuple] = []
        self.conv: dict[str, Value] = {}
        self.history: list[Value] = []
        self.types = {"struct Pair": pair_type(), "Pair": pair_type(), "enum Color": color_type(),
                      "struct Flags": flags_type()}
        g = self.memory[MemorySpace.GLOBAL][1]
        for k in range(8):
            struct.pack_into("<i", g, INTS_AT - GLOBAL_BASE + 4 * k, 10 * (k + 1))
        for k, x in enumerate([0.0, 1.0, 2.5, -4.0]):
            struct.pack_into("<f", g, FLOATS_AT - GLOBAL_BASE + 4 * k, x)
        g[HELLO_AT - GLOBAL_BASE:HELLO_AT - GLOBAL_BASE + 12] = b"hello\0world\0"
        loc = self.memory[MemorySpace.LOCAL][1]
        struct.pack_into("<4i", loc, 0x10, 1, 2, 3, 4)
        struct.pack_into("<if", loc, 0x40, 7, 0.5)
        loc[0x80:0x88] = b"hi\0\0\0\0\0\0"
        struct.pack_into("<I", loc, 0xF0, 0b10110_101)
        struct.pack_into("<i", self.memory[MemorySpace.SHARED][1], 4, 99)
        self.registers = {
            "r1": Value.from_int(7, "unsigned int"),
            "r2": Value.from_int(-3 % (1 << 32), "unsigned int"),
            "rd3": Value.from_int(0x123456789, "unsigned long"),
            "f2": Value.from_float(1.5, "float"),
            "p1": Value.from_bool(True),
            "pc": Value.from_int(0x1010, pointer_to(Type(TypeKind.FUNCTION))),
        }
        self.reg_vars = {
            "i": Value.from_int(42, "int"),
            "f": Value.from_float(3.5, "float"),
            "c": Value.from_int(65, "char"),
            "u": Value.from_int(4000000000, "unsigned int"),
            "flag": Value.from_bool(True),
            "color": Value.from_int(1, color_type()),
            "dbl": Value.from_float(0.1, "double"),
            "gp": Value.from_int(FLOATS_AT, pointer_to(base_type("float"), MemorySpace.GLOBAL)),
            "p": Value.from_int(INTS_AT, pointer_to(base_type("int"))),
            "name": Value.from_int(HELLO_AT, pointer_to(base_type("char"), MemorySpace.GLOBAL)),
            "sp": Value.from_int(0x40, pointer_to(pair_type(), MemorySpace.LOCAL)),
            "np": Value.from_int(0, pointer_to(base_type("int"))),
            "rpair": Value.struct_of(pair_type(), {"a": 5, "b": 2.0}),
        }
        self.mem_vars = {
            "arr": (array_of(base_type("int"), 4), MemorySpace.LOCAL, 0x10),
            "s": (pair_type(), MemorySpace.LOCAL, 0x40),
            "buf": (array_of(base_type("char"), 8), MemorySpace.LOCAL, 0x80),
            "zeros": (array_of(base_type("int"), 16), MemorySpace.LOCAL, 0xA0),
            "fl": (flags_type(), MemorySpace.LOCAL, 0xF0),
            "sh": (base_type("int"), MemorySpace.SHARED, 4),
            "garr": (array_of(base_type("int"), 8), MemorySpace.GLOBAL, INTS_AT),
        }

    # ---- EvalContext
    def variable(self, name: str) -> Value | None:
        if name in self.reg_vars:
            return self.reg_vars[name]
        if name in self.mem_vars:
            t, space, addr = self.mem_vars[name]
            return Value(t, self.read_memory(space, addr, t.byte_size), address=addr, space=space)
        return None

    def register(self, name: str) -> Value | None:
        return self.registers.get(name)

    def builtin(self, name: str) -> Value | None:
        vec = {"threadIdx": (1, 0, 0), "blockIdx": (2, 0, 0), "blockDim": (32, 1, 1), "gridDim": (4, 1, 1)}
        if name in vec:
            return Value.struct_of(vector3_type("dim3" if "Dim" in name else "uint3"), dict(zip("xyz", vec[name])))
        if name == "warpSize":
            return Value.from_int(32, "int")
        return None

    def _where(self, space: MemorySpace, address: int, size: int) -> tuple[bytearray, int]:
        if space is MemorySpace.GENERIC:
            space = MemorySpace.GLOBAL
        if space not in self.memory:
            raise BackendError("INVALID_MEMORY_SEGMENT", f"no {space.value} memory in the fake")
        base, mem = self.memory[space]
        off = address - base
        if off < 0 or off + size > len(mem):
            raise BackendError("MEMORY_MAPPING_FAILED",
                               f"{space.value} address {address:#x} is outside [{base:#x}, {base + len(mem):#x})")
        return mem, off

    def read_memory(self, space: MemorySpace, address: int, size: int) -> bytes:
        mem, off = self._where(space, address, size)
        return bytes(mem[off:off + size])

    def write_memory(self, space: MemorySpace, address: int, data: bytes) -> None:
        mem, off = self._where(space, address, len(data))
        mem[off:off + len(data)] = data
        self.writes.append(("memory", space, address, bytes(data)))

    def convenience(self, name: str) -> Value | None:
        if name == "":
            return self.history[-1] if self.history else None
        if name.startswith("$"):
            back = int(name[1:] or 1)
            return self.history[-1 - back] if back < len(self.history) else None
        if name.isdigit():
            k = int(name)
            return self.history[k - 1] if 0 < k <= len(self.history) else None
        return self.conv.get(name)

    def set_convenience(self, name: str, value: Value) -> None:
        self.conv[name] = value
        self.writes.append(("convenience", name, value))

    def write_register(self, name: str, value: Value) -> None:
        self.registers[name] = Value(self.registers[name].type, value.data)
        self.writes.append(("register", name, value))

    def write_variable(self, name: str, data: bytes) -> None:
        old = self.reg_vars[name]
        self.reg_vars[name] = Value(old.type, data)
        self.writes.append(("variable", name, bytes(data)))

    def lookup_type(self, name: str) -> Type | None:
        return self.types.get(name)

    def disassemble(self, address: int, count: int) -> list[tuple[int, str]]:
        return [(address + 16 * k, f"mov.u32 %r{k}, {k};") for k in range(count)]


class MinimalContext(FakeContext):
    """No lookup_type / disassemble (the optional protocol methods)."""

    lookup_type = None  # type: ignore[assignment]
    disassemble = None  # type: ignore[assignment]
