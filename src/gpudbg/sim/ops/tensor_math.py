"""The arithmetic of the matrix multiply-accumulate instructions (mma.sync,
wmma.mma) on whole warps' matrices: D = A x B + C, one (M, K) x (K, N)
product per warp, vectorised over warps.

The model, which is what the tests' numpy reference computes too:
- Element decoding: .f16 and .bf16 widen exactly; .tf32 operands are the
  32-bit registers with their low 13 mantissa bits ignored (truncation,
  which is what measurements of A100 tensor cores report; programs that
  want rounding convert first with cvt.rna.tf32.f32, i.e.
  wmma::__float_to_tf32); .s8/.u8 are exact integers.
- Floating multiplicands with an .f32 (or .f16) accumulator: every product
  a[i,k]*b[k,j] is exact (at most 11x11 significand bits, computed in f64),
  and the sum runs in k order from C, each step rounded to f32 to nearest
  even: d = RN_f32(d + a[i,k]*b[k,j]) for k = 0..K-1. An .f16 C is widened
  exactly first; an .f16 D is the f32 result rounded to f16 (RN) once, at
  the end (not per step). Subnormals are kept (no flush).
- .f64: d = fma(a[i,k], b[k,j], d) in k order, each step one IEEE rounding
  (.rn by default, or the instruction's .rz/.rm/.rp).
- Integers: the exact sum of C and the products (int64, cannot overflow for
  the shapes here), then wrapped to 32 bits, or with .satfinite clamped to
  [-2^31, 2^31-1].

What it deliberately does not model: the hardware's multi-term fused adder
with its own alignment/truncation (real results can differ from this model
in the last bit of f32 results), nor the .satfinite of the deprecated
floating wmma forms.
"""
from __future__ import annotations

import numpy as np

from gpudbg.sim.arith.floating import fma as fma_rounded

_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def decode(bits: np.ndarray, elem: str) -> np.ndarray:
    """Raw element bits (unsigned ints of the element's width) -> values:
    float64 for floating types, int64 for integers."""
    if elem == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if elem == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if elem == "tf32":
        return (bits.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if elem == "f32":
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    if elem == "f64":
        return bits.astype(np.uint64).view(np.float64)
    if elem == "s8":
        return bits.astype(np.uint8).view(np.int8).astype(np.int64)
    if elem == "u8":
        return bits.astype(np.uint8).astype(np.int64)
    if elem == "s32":
        return bits.astype(np.uint32).view(np.int32).astype(np.int64)
    raise ValueError(f"no arithmetic for .{elem} elements")


def encode(values: np.ndarray, elem: str) -> np.ndarray:
    """Result values (already of the element's precision) -> raw bits."""
    if elem == "f16":
        return np.asarray(values, np.float64).astype(np.float16).view(np.uint16)
    if elem == "f32":
        return np.asarray(values).astype(np.float32).view(np.uint32)
    if elem == "f64":
        return np.asarray(values, np.float64).view(np.uint64)
    if elem == "s32":
        return np.asarray(values).astype(np.int64).astype(np.uint32)
    raise ValueError(f"no result encoding for .{elem}")


def multiply_accumulate(a: np.ndarray, b: np.ndarray, c: np.ndarray, atype: str, dtype: str,
                        satfinite: bool = False, rnd: str = "rn") -> np.ndarray:
    """D = A x B + C for stacks of matrices a (W, M, K), b (W, K, N), c
    (W, M, N) of decoded values; returns D's values in dtype's precision
    (float64/int64 arrays), per the model in the module docstring."""
    kdim = a.shape[2]
    if atype in ("s8", "u8"):
        d = c.astype(np.int64) + np.einsum("wmk,wkn->wmn", a.astype(np.int64), b.astype(np.int64))
        if satfinite:
            return np.clip(d, -(1 << 31), (1 << 31) - 1)
        return ((d + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    if atype == "f64":
        d = c.astype(np.float64)
        for k in range(kdim):
            d = fma_rounded(a[:, :, k, None], b[:, None, k, :], d, rnd)
        return d
    with np.errstate(all="ignore"):
        d = c.astype(np.float32).astype(np.float64)   # f32 values, held in f64
        for k in range(kdim):
            d = _add_rn_f32(d, a[:, :, k, None] * b[:, None, k, :])   # the product is exact in f64
        if dtype == "f16":
            return d.astype(np.float32).astype(np.float16).astype(np.float64)
        return d


def _add_rn_f32(d: np.ndarray, p: np.ndarray) -> np.ndarray:
    """RN_f32(d + p) for f32 values d and exact products p of .f16/.bf16/
    .tf32 elements (at most 22 significant bits): the f64 sum then one cast.
    That is never a harmful double rounding: the f64 sum is inexact only
    when one operand lies more than 53 bits below the other's leading bit;
    the larger one is then on the f32 grid (d is an f32, a 22-bit p is one
    whenever it dominates a nonzero d) and the smaller one is below 2^-29 of
    it, so d + p is nowhere near an f32 rounding midpoint and moving it by
    the f64 rounding error cannot change the f32 result.
    tests/sim/ops/test_tensor_math.py checks this against exact Fractions."""
    return (d + p).astype(np.float32).astype(np.float64)
