"""Integer comparisons and selects: setp (signed, unsigned-only and bit
comparisons, the .and/.or/.xor combination, the p|q pair), set with an
integer destination (integer and f32/f64 sources) and slct, native
against the interpreter on edge and hypothesis values; each form must run
compiled."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from int_forms import LANES, check, form_tests, lanes

FORMS = [
    ("setp.lt.s32 {d}, {a}, {b};", [32, 32], ["pred"]),
    ("setp.lo.s32 {d}, {a}, {b};", [32, 32], ["pred"]),
    ("setp.ge.u16 {d}, {a}, {b};", [16, 16], ["pred"]),
    ("setp.hi.u64 {d}, {a}, {b};", [64, 64], ["pred"]),
    ("setp.le.s64 {d}, {a}, {b};", [64, 64], ["pred"]),
    ("setp.gt.s16 {d}, {a}, {b};", [16, 16], ["pred"]),
    ("setp.hs.u32 {d}, {a}, 7;", [32], ["pred"]),
    ("setp.eq.b32 {d}, {a}, {b};", [32, 32], ["pred"]),
    ("setp.ne.b64 {d}, {a}, {b};", [64, 64], ["pred"]),
    ("setp.lt.and.s32 {d}, {a}, {b}, {c};", [32, 32, "pred"], ["pred"]),
    ("setp.ge.or.u32 {d}, {a}, {b}, !{c};", [32, 32, "pred"], ["pred"]),
    ("setp.gt.s32 {d}|{d1}, {a}, {b};", [32, 32], ["pred", "pred"]),
    ("setp.ls.xor.u64 {d}|{d1}, {a}, {b}, {c};", [64, 64, "pred"], ["pred", "pred"]),
    ("set.lt.u32.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("set.hi.s32.u64 {d}, {a}, {b};", [64, 64], [32]),
    ("set.eq.u16.u16 {d}, {a}, {b};", [16, 16], [16]),
    ("set.ne.and.u32.s32 {d}, {a}, {b}, {c};", [32, 32, "pred"], [32]),
    ("slct.s32.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("slct.u64.s32 {d}, {a}, {b}, {c};", [64, 64, 32], [64]),
    ("slct.u16.s32 {d}, {a}, {b}, {c};", [16, 16, 32], [16]),
]

# f32/f64 bit patterns: zeros, subnormals, normals, infinities, NaNs with payloads
F32 = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x80800000, 0x3F800000,
       0xBF800000, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC12345, 0x40490FDB]
F64 = [0, 1 << 63, 1, (1 << 63) | 0xFFFFFFFFFFFFF, 0x0010000000000000, 0x3FF0000000000000,
       0xBFF0000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
       0x7FF0000000000001, 0xFFF8000000001234, 0x400921FB54442D18]
FLOAT_FORMS = [
    ("set.lt.u32.f32 {d}, {a}, {b};", [32, 32], [32], F32),
    ("set.gtu.u32.f32 {d}, {a}, {b};", [32, 32], [32], F32),
    ("set.neu.s32.f64 {d}, {a}, {b};", [64, 64], [32], F64),
    ("set.num.u32.f32 {d}, {a}, {b};", [32, 32], [32], F32),
    ("set.nan.u32.f64 {d}, {a}, {b};", [64, 64], [32], F64),
    ("set.equ.or.u32.f32 {d}, {a}, {b}, {c};", [32, 32, "pred"], [32], F32),
    ("slct.b32.f32 {d}, {a}, {b}, {c};", [32, 32, 32], [32], F32),
    ("slct.ftz.u32.f32 {d}, {a}, {b}, {c};", [32, 32, 32], [32], F32),
    ("slct.f32.f32 {d}, {a}, {b}, {c};", [32, 32, 32], [32], F32),
    ("slct.s64.f64 {d}, {a}, {b}, {c};", [64, 64, 64], [64], F64),
]
FIDS = [f[0].split(" ")[0] + f"-{i}" for i, f in enumerate(FLOAT_FORMS)]


test_edge_values, test_random_values = form_tests(FORMS)


@pytest.mark.parametrize("form", FLOAT_FORMS, ids=FIDS)
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_float_sources(form, data):
    body, ins, outs, pool = form
    values = []
    for w in ins:
        if w == "pred":
            values.append(data.draw(lanes("pred")))
        else:
            one = st.one_of(st.sampled_from(pool), st.integers(0, (1 << w) - 1))
            values.append(data.draw(st.lists(one, min_size=LANES, max_size=LANES)))
    check(body, ins, outs, values)


def test_a_pair_gets_the_combination_of_the_result_and_its_complement():
    a = np.arange(LANES, dtype=np.uint64)
    b = np.full(LANES, 10, dtype=np.uint64)
    c = np.array([i % 2 for i in range(LANES)], dtype=np.uint64)
    p, q = check("setp.lt.and.u32 {d}|{d1}, {a}, {b}, {c};", [32, 32, "pred"], ["pred", "pred"], [a, b, c])
    assert list(p[:12]) == [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0]
    assert list(q[8:14]) == [0, 0, 0, 1, 0, 1]
