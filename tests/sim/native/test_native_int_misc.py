"""dp4a/dp2a, bmsk, szext, fns, vabsdiff4 and isspacep: native against the interpreter on
edge and hypothesis values; each form must run compiled."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from int_forms import LANES, check, edge_grid, form_tests, lanes

FORMS = [
    ("dp4a.u32.u32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("dp4a.s32.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("dp4a.s32.u32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("dp4a.u32.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("dp2a.lo.s32.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("dp2a.hi.u32.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("dp2a.hi.u32.u32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("bmsk.clamp.b32 {d}, {a}, {b};", [32, 32], [32]),
    ("bmsk.wrap.b32 {d}, {a}, {b};", [32, 32], [32]),
    ("szext.clamp.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("szext.wrap.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("szext.clamp.u32 {d}, {a}, {b};", [32, 32], [32]),
    ("szext.wrap.u32 {d}, {a}, {b};", [32, 32], [32]),
    ("fns.b32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("fns.b32 {d}, {a}, {b}, -3;", [32, 32], [32]),
]


test_edge_values, test_random_values = form_tests(FORMS)


SHARED, LOCAL, SIZE = 0x7E00_0000_0000, 0x7F00_0000_0000, 1 << 32
ADDRESSES = [0, 1, SHARED - 1, SHARED, SHARED + 8, SHARED + SIZE - 1, SHARED + SIZE, LOCAL - 1, LOCAL,
             LOCAL + SIZE - 1, LOCAL + SIZE, 2**64 - 1, 0x7000_0000_0000]


@pytest.mark.parametrize("space", ["global", "shared", "local", "const", "param"])
def test_isspacep(space):
    a = np.array([ADDRESSES[i % len(ADDRESSES)] for i in range(LANES)], dtype=np.uint64)
    p, = check(f"isspacep.{space} {{d}}, {{a}};", [64], ["pred"], [a])
    if space == "shared":
        assert list(p[:8]) == [0, 0, 0, 1, 1, 1, 0, 0]


def test_dp4a_sums_signed_bytes():
    a = np.full(LANES, 0xFF_80_7F_01, dtype=np.uint64)      # bytes 1, 127, -128, -1
    b = np.full(LANES, 0x02_02_02_02, dtype=np.uint64)
    c = np.full(LANES, 10, dtype=np.uint64)
    d, = check("dp4a.s32.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32], [a, b, c])
    assert d[0] == 10 + 2 * (1 + 127 - 128 - 1) + 2**32 & 0xFFFFFFFF


VABSDIFF = [
    "vabsdiff4.u32.u32.u32 {d}, {a}, {b}, {c};",
    "vabsdiff4.s32.s32.s32 {d}, {a}, {b}, {c};",
    "vabsdiff4.u32.u32.s32.sat {d}, {a}, {b}, {c};",
    "vabsdiff4.s32.s32.s32.sat {d}, {a}, {b}, {c};",
    "vabsdiff4.u32.u32.u32.add {d}, {a}, {b}, {c};",
    "vabsdiff4.s32.s32.u32.add {d}, {a}, {b}, {c};",
    "vabsdiff4.s32.s32.s32.sat.add {d}, {a}, {b}, {c};",
    "vabsdiff4.u32.u32.u32.sat.add {d}, {a}, {b}, {c};",
]


@pytest.mark.parametrize("body", VABSDIFF)
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_vabsdiff4(body, data):
    check(body, [32, 32, 32], [32], edge_grid([32, 32, 32]))
    check(body, [32, 32, 32], [32], [data.draw(lanes(32)) for _ in range(3)])


def test_vabsdiff4_sums_byte_differences():
    a = np.full(LANES, 0x01020304, dtype=np.uint64)
    b = np.full(LANES, 0x04030201, dtype=np.uint64)
    c = np.full(LANES, 10, dtype=np.uint64)
    d, = check("vabsdiff4.u32.u32.u32.add {d}, {a}, {b}, {c};", [32, 32, 32], [32], [a, b, c])
    assert d[0] == 18


def test_fns_counts_from_base_in_both_directions():
    mask = np.full(LANES, 0b1011_0110, dtype=np.uint64)
    base = np.resize(np.array([0, 3, 7, 40], dtype=np.uint64), LANES)
    off = np.resize(np.array([2, 1, (-2) & 0xFFFFFFFF, 1], dtype=np.uint64), LANES)
    d, = check("fns.b32 {d}, {a}, {b}, {c};", [32, 32, 32], [32], [mask, base, off])
    assert list(d[:4]) == [2, 4, 5, 0xFFFFFFFF]
