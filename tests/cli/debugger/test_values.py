"""Synthesized C types and Value construction / reading."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.cli.debugger.values import (
    Lval, Value, ValueError_, array_of, base_type, canonical_type_name, element_type, int_type,
    memory_space, pointer_to, struct_type, type_name, vector3_type,
)
from gpudbg.debug.backend import MemorySpace
from gpudbg.debug.dwarf.model import AddressSpace, Encoding, TypeKind


@pytest.mark.parametrize("words,canon", [
    ("unsigned", "unsigned int"), ("long unsigned int", "unsigned long"), ("short int", "short"),
    ("signed", "int"), ("long long int", "long long"), ("unsigned long long", "unsigned long long"),
    ("signed char", "signed char"), ("char", "char"), ("unsigned char", "unsigned char"), ("_Bool", "bool"),
    ("int long", "long"), ("double", "double"), ("void", "void"),
])
def test_canonical_names(words, canon):
    assert canonical_type_name(words.split()) == canon


@pytest.mark.parametrize("words", ["short long", "unsigned signed", "long long long", "char int float",
                                   "unsigned float", "short double", "long double", "int int"])
def test_invalid_type_words(words):
    with pytest.raises(ValueError_):
        canonical_type_name(words.split())


def test_base_types_sizes_and_encodings():
    assert (base_type("int").size, base_type("int").encoding) == (4, Encoding.SIGNED)
    assert base_type("unsigned long").size == 8 and base_type("long").size == 8
    assert base_type("char").encoding == Encoding.SIGNED_CHAR and base_type("bool").size == 1
    assert base_type("double").encoding == Encoding.FLOAT
    u32 = base_type("uint32_t")
    assert u32.kind is TypeKind.TYPEDEF and u32.byte_size == 4 and str(u32) == "uint32_t"
    assert base_type("void").kind is TypeKind.VOID
    assert str(int_type(2, False)) == "unsigned short"


def test_pointer_array_struct_types():
    f = base_type("float")
    assert type_name(pointer_to(f)) == "float *"
    assert type_name(pointer_to(f, MemorySpace.GLOBAL)) == "@global float *"
    assert type_name(pointer_to(f, AddressSpace.GENERIC)) == "float *"
    assert str(array_of(f, 3)) == "float [3]" and array_of(f, 3).byte_size == 12
    s = struct_type("S", [("c", base_type("char")), ("d", base_type("double")), ("i", base_type("int"))])
    assert [m.offset for m in s.members] == [0, 8, 16] and s.size == 24
    u = vector3_type("dim3")
    assert u.size == 12 and [m.name for m in u.members] == ["x", "y", "z"] and str(u) == "struct dim3"
    grid = array_of(array_of(f, 3), 2)
    assert str(element_type(grid)) == "float [3]"


def test_memory_space_mapping():
    assert memory_space(None) is MemorySpace.GENERIC
    assert memory_space(AddressSpace.SHARED) is MemorySpace.SHARED
    with pytest.raises(ValueError_, match="@reg"):
        memory_space(AddressSpace.REG)


def test_value_constructors_and_views():
    assert Value.from_int(-1, "unsigned int").to_python() == 0xFFFFFFFF
    assert Value.from_int(300, "char").to_python() == 44
    assert Value.from_int(5, "bool").to_python() is True
    assert Value.from_float(0.1, "float").to_python() == float(np.float32(0.1))
    assert Value.from_float(1e300, "float").to_python() == float("inf")
    assert Value.from_pointer(0x10, base_type("int"), MemorySpace.SHARED).to_python() == 0x10
    assert Value.from_int(2, "double").to_python() == 2.0
    v = Value.struct_of(vector3_type(), {"x": 1, "y": 2, "z": 3})
    assert v.to_python() == {"x": 1, "y": 2, "z": 3}
    arr = Value(array_of(base_type("short"), 3), np.array([1, -2, 3], "<i2").tobytes())
    assert arr.to_python() == [1, -2, 3]
    assert Value.void().to_python() is None
    with pytest.raises(ValueError_, match="not a floating-point"):
        Value.from_float(1.0, "int")
    with pytest.raises(ValueError_, match="not an integer"):
        Value.from_float(1.0).as_int()


def test_lvalue_bookkeeping():
    v = Value(base_type("int"), b"\0" * 4, address=0x40)
    assert v.lval is Lval.MEMORY and v.space is MemorySpace.GENERIC
    assert v.rvalue().lval is Lval.NONE and v.rvalue().address is None


@pytest.mark.parametrize("dtype,cname", [("uint32", "unsigned int"), ("int32", "int"), ("float32", "float"),
                                         ("float64", "double"), ("bool", "bool"), ("uint64", "unsigned long"),
                                         ("int16", "short"), ("uint8", "unsigned char")])
def test_from_numpy(dtype, cname):
    x = np.array(1, dtype=dtype)[()]
    v = Value.from_numpy(x)
    assert str(v.type) == cname and v.to_python() == 1


@settings(max_examples=100, deadline=None)
@given(st.integers(-(1 << 70), 1 << 70), st.sampled_from(["char", "unsigned char", "short", "unsigned short",
                                                         "int", "unsigned int", "long", "unsigned long"]))
def test_from_int_wraps_like_numpy(n, cname):
    dt = {"char": np.int8, "unsigned char": np.uint8, "short": np.int16, "unsigned short": np.uint16,
          "int": np.int32, "unsigned int": np.uint32, "long": np.int64, "unsigned long": np.uint64}[cname]
    expected = int(np.array(n % (1 << 64), dtype=np.uint64).astype(dt))
    assert Value.from_int(n, cname).to_python() == expected
