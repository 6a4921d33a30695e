"""Property tests of gpudbg.cabi: scalars, strings and structs written by
address read back as they were written, and NULL is refused."""
from __future__ import annotations

import ctypes
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudbg import cabi

KINDS = {"i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64, "u64": 64}


@given(st.sampled_from(sorted(KINDS)), st.integers(min_value=-(2**70), max_value=2**70))
def test_integer_store_load_wraps_like_c(kind, value):
    buf = ctypes.create_string_buffer(8)
    addr = ctypes.addressof(buf)
    cabi.store(addr, kind, value)
    bits = KINDS[kind]
    expect = value & ((1 << bits) - 1)
    if kind[0] == "i" and expect >= 1 << (bits - 1):
        expect -= 1 << bits
    assert cabi.load(addr, kind) == expect
    assert buf.raw[bits // 8:] == b"\0" * (8 - bits // 8)      # nothing written past the scalar


@given(st.floats(allow_nan=False, width=32), st.floats(allow_nan=False))
def test_float_store_load(f32, f64):
    buf = ctypes.create_string_buffer(8)
    cabi.store(ctypes.addressof(buf), "f32", f32)
    assert cabi.load(ctypes.addressof(buf), "f32") == f32
    cabi.store(ctypes.addressof(buf), "f64", f64)
    assert cabi.load(ctypes.addressof(buf), "f64") == f64


@given(st.lists(st.integers(min_value=0, max_value=2**64 - 1), max_size=32))
def test_load_array(values):
    arr = (ctypes.c_uint64 * max(len(values), 1))(*values)
    assert cabi.load_array(ctypes.addressof(arr), "u64", len(values)) == values


@given(st.text(alphabet=st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), max_size=200))
def test_c_string_round_trip(text):
    data = text.encode()
    buf = ctypes.create_string_buffer(len(data) + 1)
    cabi.store_c_string(ctypes.addressof(buf), len(buf), text)
    assert cabi.c_string(ctypes.addressof(buf)) == text


@given(st.binary(max_size=64).filter(lambda b: b"\0" not in b), st.integers(min_value=1, max_value=80))
def test_c_string_truncates_to_capacity(data, capacity):
    buf = ctypes.create_string_buffer(b"\xff" * 90, 90)
    text = data.decode("latin-1")
    cabi.store_c_string(ctypes.addressof(buf), capacity, text)
    written = ctypes.string_at(ctypes.addressof(buf))
    assert written == text.encode()[:capacity - 1]
    assert buf.raw[capacity:] == b"\xff" * (90 - capacity)     # nothing past the buffer


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1), st.integers(min_value=0, max_value=2**64 - 1))
def test_struct_round_trip(a, b):
    class S(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_uint64)]
    buf = ctypes.create_string_buffer(ctypes.sizeof(S))
    cabi.store_struct(ctypes.addressof(buf), S(a, b))
    back = cabi.struct_at(ctypes.addressof(buf), S)
    assert (back.a, back.b) == (a, b)
    assert buf.raw == struct.pack("<iiQ", a, 0, b)


@given(st.binary(min_size=1, max_size=256))
def test_host_view_aliases_the_bytes(data):
    buf = ctypes.create_string_buffer(data, len(data))
    view = cabi.host_view(ctypes.addressof(buf), len(data))
    assert view.tobytes() == data
    view[:] = 0x5A
    assert buf.raw == b"\x5a" * len(data)


def test_null_is_refused():
    for call in (lambda: cabi.store(0, "u32", 1), lambda: cabi.load(0, "u32"),
                 lambda: cabi.c_string(0), lambda: cabi.host_view(0, 4), lambda: cabi.read(0, 1)):
        with pytest.raises(cabi.NullPointer):
            call()
    assert cabi.read(0, 0) == b"" and cabi.host_view(0, 0).size == 0
