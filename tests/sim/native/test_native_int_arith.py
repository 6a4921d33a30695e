"""Integer arithmetic, moves and conversions: native against the
interpreter, bit for bit, on edge values (0, +-1, INT_MIN/MAX and their
neighbours, all ones) and on hypothesis-chosen values; every form must
really run in a compiled segment (int_forms.check)."""
from __future__ import annotations

import numpy as np

from int_forms import LANES, check, form_tests

# (body, input widths, output widths)
FORMS = [
    ("add.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("add.u16 {d}, {a}, {b};", [16, 16], [16]),
    ("sub.s64 {d}, {a}, {b};", [64, 64], [64]),
    ("add.sat.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("sub.sat.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("mul.lo.s16 {d}, {a}, {b};", [16, 16], [16]),
    ("mul.lo.u64 {d}, {a}, {b};", [64, 64], [64]),
    ("mul.hi.s16 {d}, {a}, {b};", [16, 16], [16]),
    ("mul.hi.u16 {d}, {a}, {b};", [16, 16], [16]),
    ("mul.hi.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("mul.hi.u32 {d}, {a}, {b};", [32, 32], [32]),
    ("mul.hi.s64 {d}, {a}, {b};", [64, 64], [64]),
    ("mul.hi.u64 {d}, {a}, {b};", [64, 64], [64]),
    ("mul.wide.s16 {d}, {a}, {b};", [16, 16], [32]),
    ("mul.wide.u16 {d}, {a}, {b};", [16, 16], [32]),
    ("mul.wide.s32 {d}, {a}, {b};", [32, 32], [64]),
    ("mul.wide.u32 {d}, {a}, {b};", [32, 32], [64]),
    ("mad.lo.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("mad.hi.u32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("mad.hi.s64 {d}, {a}, {b}, {c};", [64, 64, 64], [64]),
    ("mad.hi.sat.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("mad.wide.s32 {d}, {a}, {b}, {c};", [32, 32, 64], [64]),
    ("mad.wide.u16 {d}, {a}, {b}, {c};", [16, 16, 32], [32]),
    ("mul24.lo.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("mul24.hi.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("mul24.hi.u32 {d}, {a}, {b};", [32, 32], [32]),
    ("mad24.lo.u32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("mad24.hi.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("mad24.hi.sat.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("sad.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("sad.u32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("sad.s64 {d}, {a}, {b}, {c};", [64, 64, 64], [64]),
    ("div.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("div.u32 {d}, {a}, {b};", [32, 32], [32]),
    ("div.s64 {d}, {a}, {b};", [64, 64], [64]),
    ("div.u64 {d}, {a}, {b};", [64, 64], [64]),
    ("div.s16 {d}, {a}, {b};", [16, 16], [16]),
    ("rem.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("rem.u32 {d}, {a}, {b};", [32, 32], [32]),
    ("rem.s64 {d}, {a}, {b};", [64, 64], [64]),
    ("rem.u16 {d}, {a}, {b};", [16, 16], [16]),
    ("abs.s32 {d}, {a};", [32], [32]),
    ("abs.s16 {d}, {a};", [16], [16]),
    ("abs.s64 {d}, {a};", [64], [64]),
    ("neg.s32 {d}, {a};", [32], [32]),
    ("neg.s64 {d}, {a};", [64], [64]),
    ("min.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("min.u32 {d}, {a}, {b};", [32, 32], [32]),
    ("max.s64 {d}, {a}, {b};", [64, 64], [64]),
    ("max.u16 {d}, {a}, {b};", [16, 16], [16]),
    ("min.relu.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("max.relu.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("cvt.s32.s16 {d}, {a};", [16], [32]),
    ("cvt.u64.s32 {d}, {a};", [32], [64]),
    ("cvt.s16.u64 {d}, {a};", [64], [16]),
    ("cvt.u8.u32 {d}, {a};", [32], [8]),
    ("cvt.s8.s32 {d}, {a};", [32], [8]),
    ("cvt.sat.s8.s32 {d}, {a};", [32], [8]),
    ("cvt.sat.u8.s32 {d}, {a};", [32], [8]),
    ("cvt.sat.u16.s64 {d}, {a};", [64], [16]),
    ("cvt.sat.s32.u64 {d}, {a};", [64], [32]),
    ("cvt.sat.u32.s32 {d}, {a};", [32], [32]),
    ("cvt.sat.s64.u64 {d}, {a};", [64], [64]),
    ("cvt.sat.u64.s64 {d}, {a};", [64], [64]),
    ("cvt.sat.s16.u16 {d}, {a};", [16], [16]),
    ("mov.b64 {d}, {{{a}, {b}}};", [32, 32], [64]),
    ("mov.b64 {{{d}, {d1}}}, {a};", [64], [32, 32]),
    ("mov.b32 {d}, {{{a}, {b}}};", [16, 16], [32]),
    ("mov.b32 {{{d}, _, {d1}, {d2}}}, {a};", [32], [8, 8, 8]),
    ("mov.b16 {d}, {{{a}, {b}}};", [8, 8], [16]),
    ("mov.b64 {d}, {{{a}, {b}, {c}, {e}}};", [16, 16, 16, 16], [64]),
    ("selp.b32 {d}, {a}, {b}, {c};", [32, 32, "pred"], [32]),
    ("selp.s64 {d}, {a}, 5, !{c};", [64, 64, "pred"], [64]),
    ("@{c} mul.hi.u32 {d}, {a}, {b};", [32, 32, "pred"], [32]),
    ("@!{c} div.s32 {d}, {a}, {b};", [32, 32, "pred"], [32]),
    ("cvta.global.u64 {d}, {a};", [64], [64]),
    ("cvta.to.global.u64 {d}, {a};", [64], [64]),
    ("cvta.shared.u64 {d}, {a};", [64], [64]),
    ("cvta.to.shared.u64 {d}, {a};", [64], [64]),
    ("cvta.local.u64 {d}, {a};", [64], [64]),
    ("cvta.to.local.u64 {d}, {a};", [64], [64]),
]


test_edge_values, test_random_values = form_tests(FORMS)


def test_division_corner_cases_are_the_interpreters():
    """div/rem by zero and INT_MIN / -1 (arith.integer's hardware rules)."""
    a = np.resize(np.array([5, 2**31, 2**32 - 7, 0, 2**31], dtype=np.uint64), LANES)
    b = np.resize(np.array([0, 2**32 - 1, 0, 0, 1], dtype=np.uint64), LANES)
    q, = check("div.s32 {d}, {a}, {b};", [32, 32], [32], [a, b])
    assert list(q[:5].astype(np.uint32)) == [0xFFFFFFFF, 0x80000000, 1, 0xFFFFFFFF, 0x80000000]
    r, = check("rem.s32 {d}, {a}, {b};", [32, 32], [32], [a, b])
    assert list(r[:5].astype(np.uint32)) == [5, 0, 2**32 - 7, 0, 0]
