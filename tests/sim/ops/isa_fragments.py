"""The PTX ISA's fragment formulas for mma.sync ("Matrix Fragments for
mma.mXnYkZ"), transcribed independently of sim/ops/fragments.py in the
ISA's own groupID / threadID_in_group form, for the tests to check the
simulator's tables and to pack operands for it."""
from __future__ import annotations


def _g(lane: int) -> int:
    return lane >> 2


def _t(lane: int) -> int:
    return lane % 4


_ALIAS = {"bf16": "f16", "u8": "s8", "f16": "f16", "s8": "s8", "tf32": "tf32", "f64": "f64"}

_AB = {
    ("m16n8k16", "a", "f16"): lambda l, i: (_g(l) + 8 * ((i >> 1) & 1), 2 * _t(l) + (i & 1) + 8 * (i >= 4)),
    ("m16n8k16", "b", "f16"): lambda l, i: (2 * _t(l) + (i & 1) + 8 * (i >= 2), _g(l)),
    ("m16n8k8", "a", "f16"): lambda l, i: (_g(l) + 8 * (i >= 2), 2 * _t(l) + (i & 1)),
    ("m16n8k8", "b", "f16"): lambda l, i: (2 * _t(l) + i, _g(l)),
    ("m16n8k8", "a", "tf32"): lambda l, i: (_g(l) + 8 * (i % 2), _t(l) + 4 * (i >= 2)),
    ("m16n8k8", "b", "tf32"): lambda l, i: (_t(l) + 4 * i, _g(l)),
    ("m16n8k4", "a", "tf32"): lambda l, i: (_g(l) + 8 * i, _t(l)),
    ("m16n8k4", "b", "tf32"): lambda l, i: (_t(l), _g(l)),
    ("m8n8k16", "a", "s8"): lambda l, i: (_g(l), 4 * _t(l) + i),
    ("m8n8k16", "b", "s8"): lambda l, i: (4 * _t(l) + i, _g(l)),
    ("m16n8k16", "a", "s8"): lambda l, i: (_g(l) + 8 * (i >= 4), 4 * _t(l) + (i & 3)),
    ("m16n8k16", "b", "s8"): lambda l, i: (4 * _t(l) + i, _g(l)),
    ("m16n8k32", "a", "s8"): lambda l, i: (_g(l) + 8 * ((i >> 2) & 1), 4 * _t(l) + (i & 3) + 16 * (i >= 8)),
    ("m16n8k32", "b", "s8"): lambda l, i: (4 * _t(l) + (i & 3) + 16 * (i >= 4), _g(l)),
    ("m8n8k4", "a", "f64"): lambda l, i: (_g(l), _t(l)),
    ("m8n8k4", "b", "f64"): lambda l, i: (_t(l), _g(l)),
    ("m16n8k16", "a", "f64"): lambda l, i: (_g(l) + 8 * (i % 2), 2 * i + _t(l) if i % 2 == 0 else 2 * i - 2 + _t(l)),
    # sm_90 f64 shapes whose B fragments (and m16n8k4/k8 A) come from CUTLASS's
    # CuTe traits (mma_traits_sm90.hpp: e.g. SM90_16x8x8 A ((4,8),(2,2)):((16,1),(8,64)),
    # B ((4,8),2):((8,1),32) over column-major (M,K) and (N,K) coordinates)
    ("m16n8k4", "a", "f64"): lambda l, i: (_g(l) + 8 * i, _t(l)),
    ("m16n8k4", "b", "f64"): lambda l, i: (_t(l), _g(l)),
    ("m16n8k8", "a", "f64"): lambda l, i: (_g(l) + 8 * (i % 2), _t(l) + 4 * (i // 2)),
    ("m16n8k8", "b", "f64"): lambda l, i: (_t(l) + 4 * i, _g(l)),
    ("m16n8k16", "b", "f64"): lambda l, i: (_t(l) + 4 * i, _g(l)),
}


def isa_rc(shape: str, matrix: str, elem: str):
    """(lane, i) -> (row, col) of element i of `matrix` ('a', 'b', 'c')."""
    if matrix == "c":
        if shape.startswith("m8n8"):
            return lambda l, i: (_g(l), 2 * _t(l) + i)
        return lambda l, i: (_g(l) + 8 * (i >= 2), 2 * _t(l) + (i & 1))
    return _AB[(shape, matrix, _ALIAS[elem])]


#: the forms test_fragment_tables.py compares one by one
CASES = [("m16n8k16", "a", "f16"), ("m16n8k16", "b", "f16"), ("m16n8k16", "c", "f32"),
         ("m16n8k8", "a", "f16"), ("m16n8k8", "b", "f16"), ("m16n8k8", "a", "tf32"), ("m16n8k8", "b", "tf32"),
         ("m16n8k4", "a", "tf32"), ("m16n8k4", "b", "tf32"), ("m8n8k16", "a", "s8"), ("m8n8k16", "b", "s8"),
         ("m8n8k16", "c", "s32"), ("m16n8k16", "a", "s8"), ("m16n8k16", "b", "s8"), ("m16n8k32", "a", "s8"),
         ("m16n8k32", "b", "s8"), ("m16n8k32", "c", "s32"), ("m8n8k4", "a", "f64"), ("m8n8k4", "b", "f64"),
         ("m8n8k4", "c", "f64"), ("m16n8k16", "a", "f64"), ("m16n8k16", "a", "bf16"), ("m16n8k32", "b", "u8"),
         ("m16n8k4", "a", "f64"), ("m16n8k4", "b", "f64"), ("m16n8k8", "a", "f64"), ("m16n8k8", "b", "f64"),
         ("m16n8k16", "b", "f64"), ("m16n8k8", "c", "f64")]
