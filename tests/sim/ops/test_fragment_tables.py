"""The fragment-layout tables (sim/ops/fragments.py) against the PTX ISA's
own formulas ("Matrix Fragments for mma.mXnYkZ", transcribed
independently in isa_fragments.py), and the properties every
table must have: the first `distinct` elements of the 32 lanes cover the
matrix exactly once (a bijection), and the extra wmma elements repeat them."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudbg.sim.ops import fragments as F
from gpudbg.sim.ops.warp_matrix import pack, unpack
from isa_fragments import CASES as ISA_CASES
from isa_fragments import isa_rc


@pytest.mark.parametrize("case", ISA_CASES, ids=["-".join(c) for c in ISA_CASES])
def test_mma_tables_are_the_isa_formulas(case):
    layout = F.mma_layout(*case)
    formula = isa_rc(*case)
    for lane in range(32):
        for i in range(layout.elements):
            assert (layout.row[lane, i], layout.col[lane, i]) == formula(lane, i), (lane, i)


def _all_layouts():
    out = []
    for shape, types in F.MMA_SHAPES.items():
        for elem in types:
            acc = {"f16": "f32", "bf16": "f32", "tf32": "f32", "s8": "s32", "u8": "s32", "f64": "f64"}[elem]
            out += [("mma", shape, "a", elem), ("mma", shape, "b", elem), ("mma", shape, "c", acc)]
    for shape, types in F.WMMA_SHAPES.items():
        for elem in types:
            acc = {"f16": "f16", "bf16": "f32", "tf32": "f32", "s8": "s32", "u8": "s32", "f64": "f64"}[elem]
            out += [("wmma", shape, "a", elem), ("wmma", shape, "b", elem), ("wmma", shape, "c", acc)]
    return out


LAYOUTS = _all_layouts()


def _get(case):
    family, shape, matrix, elem = case
    return (F.mma_layout if family == "mma" else F.wmma_layout)(shape, matrix, elem)


@pytest.mark.parametrize("case", LAYOUTS, ids=["-".join(c) for c in LAYOUTS])
def test_every_table_covers_its_matrix_exactly_once(case):
    L = _get(case)
    d = L.distinct
    cells = L.row[:, :d] * L.cols + L.col[:, :d]
    assert sorted(cells.ravel().tolist()) == list(range(L.rows * L.cols))
    # repeated elements are copies of the first ones
    for i in range(d, L.elements):
        assert np.array_equal(L.row[:, i], L.row[:, i % d]) and np.array_equal(L.col[:, i], L.col[:, i % d])


def test_wmma_register_counts_are_the_isa_ones():
    regs = {(s, m, e): F.wmma_layout(s, m, e).regs for s, m, e in [
        ("m16n16k16", "a", "f16"), ("m8n32k16", "a", "f16"), ("m32n8k16", "b", "f16"), ("m16n16k16", "c", "f16"),
        ("m16n16k16", "c", "f32"), ("m16n16k16", "a", "bf16"), ("m8n32k16", "b", "bf16"),
        ("m16n16k16", "a", "s8"), ("m8n32k16", "a", "u8"), ("m32n8k16", "a", "s8"), ("m16n16k16", "c", "s32"),
        ("m16n16k8", "a", "tf32"), ("m16n16k8", "b", "tf32"), ("m8n8k4", "a", "f64"), ("m8n8k4", "c", "f64")]}
    assert list(regs.values()) == [8, 8, 8, 4, 8, 4, 8, 2, 1, 4, 8, 4, 4, 1, 2]


def test_ldmatrix_core_layouts():
    plain, trans = F.core_8x8(False), F.core_8x8(True)
    for lane in range(32):
        for e in range(2):
            assert (plain.row[lane, e], plain.col[lane, e]) == (lane >> 2, 2 * (lane % 4) + e)
            assert (trans.row[lane, e], trans.col[lane, e]) == (2 * (lane % 4) + e, lane >> 2)


@given(case=st.sampled_from(LAYOUTS), data=st.data())
def test_scatter_then_gather_is_the_identity(case, data):
    """Placing a random matrix in fragments and reading it back by the same
    table returns it (the table is a bijection on the first copies)."""
    L = _get(case)
    seed = data.draw(st.integers(0, 2**32 - 1))
    bits = 8 * L.elem_bytes
    M = np.random.default_rng(seed).integers(0, 2**bits, (L.rows, L.cols), dtype=np.uint64)
    frag = M[L.row, L.col]                               # (32, elements)
    back = np.zeros_like(M)
    back[L.row[:, :L.distinct], L.col[:, :L.distinct]] = frag[:, :L.distinct]
    assert np.array_equal(back, M)
    # packing into registers and unpacking is lossless
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[L.elem_bytes]
    regs = pack(frag.astype(dt), L)
    assert len(regs) == L.regs
    assert np.array_equal(unpack(regs, L), frag.astype(dt))


@given(rows=st.sampled_from([8, 16, 32]), cols=st.sampled_from([8, 16, 32]),
       elem_bytes=st.sampled_from([1, 2, 4, 8]), transposed=st.booleans(), accumulator=st.booleans())
def test_brick_layouts_of_any_grid_are_bijections(rows, cols, elem_bytes, transposed, accumulator):
    v = 2 if accumulator else max(4 // elem_bytes, 1)
    br, bc = (4 * v, 8) if transposed else (8, 4 * v)
    if rows % br or cols % bc:
        with pytest.raises(ValueError, match="core matrices"):
            F.make_layout(rows, cols, elem_bytes, transposed, accumulator)
        return
    L = F.make_layout(rows, cols, elem_bytes, transposed, accumulator)
    cells = (L.row[:, :L.distinct] * cols + L.col[:, :L.distinct]).ravel()
    assert len(set(cells.tolist())) == rows * cols
