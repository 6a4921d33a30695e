"""Shifts, bit counts, bit fields, byte permutes, funnel shifts and lop3:
native against the interpreter, bit for bit, on edge values (shift counts
and field positions 0, width-1, width, width+1, 255, 256, 2^31, all ones)
and hypothesis values; every form must run in a compiled segment."""
from __future__ import annotations


from int_forms import LANES, check, form_tests

FORMS = [
    ("shl.b16 {d}, {a}, {b};", [16, 32], [16]),
    ("shl.b32 {d}, {a}, {b};", [32, 32], [32]),
    ("shl.b64 {d}, {a}, {b};", [64, 32], [64]),
    ("shl.b32 {d}, {a}, 33;", [32], [32]),
    ("shr.u16 {d}, {a}, {b};", [16, 32], [16]),
    ("shr.s16 {d}, {a}, {b};", [16, 32], [16]),
    ("shr.u32 {d}, {a}, {b};", [32, 32], [32]),
    ("shr.s32 {d}, {a}, {b};", [32, 32], [32]),
    ("shr.b32 {d}, {a}, {b};", [32, 32], [32]),
    ("shr.u64 {d}, {a}, {b};", [64, 32], [64]),
    ("shr.s64 {d}, {a}, {b};", [64, 32], [64]),
    ("shr.s32 {d}, {a}, 40;", [32], [32]),
    ("shr.u64 {d}, {a}, 63;", [64], [64]),
    ("shl.b32 {d}, {a}, {b};", [32, 16], [32]),          # a 16-bit amount register
    ("popc.b32 {d}, {a};", [32], [32]),
    ("popc.b64 {d}, {a};", [64], [32]),
    ("clz.b32 {d}, {a};", [32], [32]),
    ("clz.b64 {d}, {a};", [64], [32]),
    ("brev.b32 {d}, {a};", [32], [32]),
    ("brev.b64 {d}, {a};", [64], [64]),
    ("bfind.u32 {d}, {a};", [32], [32]),
    ("bfind.s32 {d}, {a};", [32], [32]),
    ("bfind.u64 {d}, {a};", [64], [32]),
    ("bfind.s64 {d}, {a};", [64], [32]),
    ("bfind.shiftamt.u32 {d}, {a};", [32], [32]),
    ("bfind.shiftamt.s64 {d}, {a};", [64], [32]),
    ("bfe.u32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("bfe.s32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("bfe.u64 {d}, {a}, {b}, {c};", [64, 32, 32], [64]),
    ("bfe.s64 {d}, {a}, {b}, {c};", [64, 32, 32], [64]),
    ("bfe.s32 {d}, {a}, 8, 8;", [32], [32]),
    ("bfi.b32 {d}, {a}, {b}, {c}, {e};", [32, 32, 32, 32], [32]),
    ("bfi.b64 {d}, {a}, {b}, {c}, {e};", [64, 64, 32, 32], [64]),
    ("bfi.b32 {d}, {a}, {b}, 4, 12;", [32, 32], [32]),
    ("prmt.b32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("prmt.b32 {d}, {a}, {b}, 0x3210;", [32, 32], [32]),
    ("prmt.b32.f4e {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("prmt.b32.b4e {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("prmt.b32.rc8 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("prmt.b32.ecl {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("prmt.b32.ecr {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("prmt.b32.rc16 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("shf.l.wrap.b32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("shf.l.clamp.b32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("shf.r.wrap.b32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("shf.r.clamp.b32 {d}, {a}, {b}, {c};", [32, 32, 32], [32]),
    ("lop3.b32 {d}, {a}, {b}, {c}, 0x96;", [32, 32, 32], [32]),
    ("lop3.b32 {d}, {a}, {b}, {c}, 0xe8;", [32, 32, 32], [32]),
    ("lop3.b32 {d}, {a}, {b}, {c}, 0x0;", [32, 32, 32], [32]),
    ("lop3.b32 {d}, {a}, {b}, {c}, 0xff;", [32, 32, 32], [32]),
    ("lop3.b32 {d}, {a}, {b}, {c}, 0x1e;", [32, 32, 32], [32]),
    ("lop3.b32 {d}, {a}, {b}, {c}, 0xca;", [32, 32, 32], [32]),
    ("cnot.b32 {d}, {a};", [32], [32]),
    ("cnot.b16 {d}, {a};", [16], [16]),
    ("cnot.b64 {d}, {a};", [64], [64]),
    ("not.b32 {d}, {a};", [32], [32]),
    ("and.b16 {d}, {a}, {b};", [16, 16], [16]),
    ("or.b64 {d}, {a}, {b};", [64, 64], [64]),
    ("xor.b32 {d}, {a}, 0x80000001;", [32], [32]),
    ("and.pred {d}, {a}, !{b};", ["pred", "pred"], ["pred"]),
    ("xor.pred {d}, {a}, {b};", ["pred", "pred"], ["pred"]),
]


test_edge_values, test_random_values = form_tests(FORMS)


def test_prmt_replicates_the_sign_of_the_selected_byte():
    import numpy as np
    a = np.full(LANES, 0x80_7F_01_FF, dtype=np.uint64)
    b = np.zeros(LANES, dtype=np.uint64)
    c = np.resize(np.array([0x8888, 0x9999, 0xBBBB, 0x3210], dtype=np.uint64), LANES)
    d, = check("prmt.b32 {d}, {a}, {b}, {c};", [32, 32, 32], [32], [a, b, c])
    assert list(d[:4]) == [0xFFFFFFFF, 0, 0xFFFFFFFF, 0x807F01FF]
