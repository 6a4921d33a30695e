"""Matrix fragment layouts of the warp-level matrix instructions, as data:
for each (instruction family, shape, matrix, element type) a table mapping
(lane, element index) -> (row, col) of the matrix the warp holds.

The one idea: every layout the PTX ISA documents for `mma` ("Matrix
Fragments for mma.m16n8k16" and its siblings) and for `ldmatrix`/
`movmatrix` is built from one brick, the 8-row "core matrix" of 4 bytes per
lane: lane l holds row l>>2 and the `v` consecutive columns v*(l%4) ..
v*(l%4)+v-1 (v = 4 / element bytes, so 2 for f16, 4 for s8, 1 for tf32/f64),
or, transposed for the B operands, rows v*(l%4).. of column l>>2. A matrix
is a grid of such bricks taken in column order (row blocks first), and
element i of a lane's fragment is element i%v of brick i//v. This reproduces
the ISA's formulas exactly (tests/sim/ops/test_fragment_tables.py checks them
against the ISA's groupID/threadID_in_group formulas, transcribed
independently), e.g. mma.m16n8k16 .f16 A: a0,a1 row g, a2,a3 row g+8,
a4..a7 the same rows 8 columns further.

wmma fragments are not specified by the ISA, and NVIDIA documents none for
sm_80, so the simulator chooses the same brick layout for them (A is MxK
with the A bricks, B KxN with the transposed bricks, C/D MxN with the
accumulator bricks): the m16n16k16 accumulator is two m16n8 accumulators
side by side (the layout commonly reported for sm_80) and A is exactly the
m16n8k16 A fragment. Only consistency between wmma.load, wmma.mma and
wmma.store is required of it. Where the ISA gives a wmma fragment more registers than
the matrix has elements per lane (.f16 A/B always have eight .f16x2
registers, i.e. 16 elements, for a 16x16 matrix's 8), the extra elements
repeat the first ones (element i holds the value of element i % distinct):
wmma.load fills every copy, wmma.mma reads the first.

What it deliberately does not hold: the m8n8k4 .f16 quad-pair layouts of
Volta and the sub-byte (.s4/.u4/.b1) and fp8 layouts, which the simulator
does not execute.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

WARP = 32


@dataclass(frozen=True)
class Layout:
    """One fragment: `row[l, i]`, `col[l, i]` locate element i of lane l in
    the rows x cols matrix. `distinct` elements per lane cover the matrix
    exactly once; elements past `distinct` repeat element i % distinct."""

    rows: int
    cols: int
    elem_bytes: int
    regs: int              # registers per lane
    per_reg: int           # elements packed per register (low to high)
    row: np.ndarray        # int64 (32, regs * per_reg)
    col: np.ndarray

    @property
    def elements(self) -> int:
        return self.regs * self.per_reg

    @property
    def distinct(self) -> int:
        return self.rows * self.cols // WARP

    @property
    def reg_bytes(self) -> int:
        return self.per_reg * self.elem_bytes


def bricks(rows: int, cols: int, v: int, transposed: bool) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) int64 arrays of shape (32, rows*cols/32): the core-matrix
    layout described in the module docstring."""
    lane = np.arange(WARP)[:, None]
    g, t = lane >> 2, lane & 3
    brick_r, brick_c = (4 * v, 8) if transposed else (8, 4 * v)
    if rows % brick_r or cols % brick_c:
        raise ValueError(f"a {rows}x{cols} matrix is not a grid of {brick_r}x{brick_c} core matrices")
    nbr = rows // brick_r
    n = rows * cols // WARP
    i = np.arange(n)[None, :]
    b, e = i // v, i % v
    br, bc = b % nbr, b // nbr
    if transposed:
        r, c = br * brick_r + v * t + e, bc * brick_c + g
    else:
        r, c = br * brick_r + g, bc * brick_c + v * t + e
    return np.broadcast_to(r, (WARP, n)).copy(), np.broadcast_to(c, (WARP, n)).copy()


def make_layout(rows: int, cols: int, elem_bytes: int, transposed: bool, accumulator: bool,
                regs: int | None = None) -> Layout:
    """The brick layout of a rows x cols matrix of elem_bytes elements;
    `regs` (default: just enough) may ask for more registers than distinct
    elements, which then repeat."""
    per_reg = max(4 // elem_bytes, 1)
    v = 2 if accumulator else max(4 // elem_bytes, 1)
    r, c = bricks(rows, cols, v, transposed)
    distinct = r.shape[1]
    need = -(-distinct // per_reg)
    regs = need if regs is None else regs
    if regs * per_reg < distinct or (regs * per_reg) % distinct:
        raise ValueError(f"{regs} registers cannot hold {distinct} elements per lane")
    reps = regs * per_reg // distinct
    return Layout(rows, cols, elem_bytes, regs, per_reg, np.tile(r, reps), np.tile(c, reps))


# ------------------------------------------------------------------ type table

# PTX element type -> (bytes, kind): kind picks the arithmetic (tensor_math)
ELEMENT = {
    "f16": (2, "f16"), "bf16": (2, "bf16"), "tf32": (4, "tf32"), "f32": (4, "f32"),
    "f64": (8, "f64"), "s8": (1, "s8"), "u8": (1, "u8"), "s32": (4, "s32"),
}


def parse_shape(name: str) -> tuple[int, int, int]:
    """'m16n8k16' -> (16, 8, 16)."""
    m = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", name)
    if not m:
        raise ValueError(f"not a matrix shape: {name}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


# ------------------------------------------------------------------ mma.sync

# shape -> the multiplicand types the ISA allows with it (sm_80/sm_90; f64
# m16n8k4/8/16 are sm_90 shapes)
MMA_SHAPES = {
    "m16n8k16": ("f16", "bf16", "s8", "u8", "f64"),
    "m16n8k8": ("f16", "bf16", "tf32", "f64"),
    "m16n8k4": ("tf32", "f64"),
    "m8n8k16": ("s8", "u8"),
    "m16n8k32": ("s8", "u8"),
    "m8n8k4": ("f64",),
}


@functools.lru_cache(maxsize=None)
def mma_layout(shape: str, matrix: str, elem: str) -> Layout:
    """Fragment of operand `matrix` ('a', 'b', 'c') of mma.sync.`shape`
    with element type `elem`, as the PTX ISA documents it."""
    m, n, k = parse_shape(shape)
    nbytes = ELEMENT[elem][0]
    if matrix == "a":
        return make_layout(m, k, nbytes, transposed=False, accumulator=False)
    if matrix == "b":
        return make_layout(k, n, nbytes, transposed=True, accumulator=False)
    return make_layout(m, n, nbytes, transposed=False, accumulator=True)


# ------------------------------------------------------------------ wmma

WMMA_SHAPES = {
    "m16n16k16": ("f16", "bf16", "s8", "u8"),
    "m8n32k16": ("f16", "bf16", "s8", "u8"),
    "m32n8k16": ("f16", "bf16", "s8", "u8"),
    "m16n16k8": ("tf32",),
    "m8n8k4": ("f64",),
}


@functools.lru_cache(maxsize=None)
def wmma_layout(shape: str, matrix: str, elem: str) -> Layout:
    """Fragment of wmma operand `matrix` ('a', 'b', 'c'; 'd' is 'c') for
    `shape` and element type `elem`: the register counts are the ISA's
    (.f16 A/B: eight .f16x2 registers whatever the shape)."""
    m, n, k = parse_shape(shape)
    nbytes = ELEMENT[elem][0]
    if matrix in ("a", "b"):
        regs = 8 if elem == "f16" else None
        if matrix == "a":
            return make_layout(m, k, nbytes, transposed=False, accumulator=False, regs=regs)
        return make_layout(k, n, nbytes, transposed=True, accumulator=False, regs=regs)
    return make_layout(m, n, nbytes, transposed=False, accumulator=True)


# ------------------------------------------------------------------ ldmatrix / stmatrix / movmatrix

@functools.lru_cache(maxsize=None)
def core_8x8(transposed: bool) -> Layout:
    """One 8x8 .b16 matrix of ldmatrix/stmatrix/movmatrix: one register of
    two elements per lane; `transposed` is the .trans form (lane l holds
    column l>>2, rows 2*(l%4), 2*(l%4)+1)."""
    return make_layout(8, 8, 2, transposed=transposed, accumulator=False)
