"""The kernel's per-dword ascii85: round trips, exact kernel text, errors."""
from __future__ import annotations

import base64
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.dump import ascii85

dword_lists = st.lists(st.one_of(st.just(0), st.integers(0, 2**32 - 1)), max_size=200)


@settings(max_examples=80, deadline=None)
@given(dword_lists)
def test_round_trip_and_matches_stdlib(values):
    text = ascii85.encode(values)
    assert ascii85.decode(text).tolist() == values
    # the kernel's text is exactly what base64.a85encode gives for big-endian dwords
    assert text == base64.a85encode(struct.pack(f">{len(values)}I", *values)).decode()


@settings(max_examples=60, deadline=None)
@given(dword_lists)
def test_bytes_and_trim(values):
    arr = np.array(values, dtype=np.uint32)
    assert ascii85.dwords_from_bytes(ascii85.bytes_from_dwords(arr)).tolist() == values
    trimmed = ascii85.trim_trailing_zeros(arr).tolist()
    assert values[:len(trimmed)] == trimmed and not any(values[len(trimmed):])
    assert not trimmed or trimmed[-1] != 0


def test_known_values():
    assert ascii85.encode([0]) == "z"
    assert ascii85.encode([0xFFFFFFFF]) == "s8W-!"
    assert ascii85.encode_dword(1) == '!!!!"'
    # the first ring word of crash.devcore: CP_ME_INIT header 0x70c80008
    assert ascii85.decode('E6&"b').tolist() == [0x70C80008]


@pytest.mark.parametrize("text, column, fragment", [
    ("!!!", 0, "incomplete final group"),
    ("z!!!!!!", 6, "incomplete final group"),
    ("!!z!!", 2, "inside a group"),
    ("!!!!v", 4, "inside a group"),
    ("~", 0, "invalid character '~'"),
    ("s8W-\"", 0, "larger than 0xffffffff"),
    ("zs8W-\"", 1, "larger than 0xffffffff"),
    ("zé", 1, "non-ASCII"),
])
def test_errors_carry_column(text, column, fragment):
    with pytest.raises(ascii85.Ascii85Error) as err:
        ascii85.decode(text)
    assert err.value.column == column
    assert fragment in str(err.value)


def test_encode_rejects_out_of_range():
    with pytest.raises(ValueError):
        ascii85.encode([2**32])
    with pytest.raises(ValueError):
        ascii85.encode_dword(-1)
