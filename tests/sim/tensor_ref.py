"""A numpy reference model of the tensor-core arithmetic the simulator
documents (sim/ops/tensor_math.py), written independently of it: products
exact, the sum in k order from C, each step rounded to f32 (nearest even).
Shared by test_executor_tensor.py and the property tests."""
from __future__ import annotations

import numpy as np


def mma_f32_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray, k_step: int | None = None) -> np.ndarray:
    """D = A x B + C with f32 accumulation in k order: d = f32(d + a*b).
    Exact products and f64 sums are rounded to f32 per step; f64 holds
    a*b (22 significand bits) and d + a*b exactly unless the exponents are
    more than 29 apart, which the tests' normal-distributed data never
    reaches. k_step is accepted for readability (the order is the same)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    d = np.asarray(c, np.float64).astype(np.float32)
    for k in range(a.shape[1]):
        d = (d.astype(np.float64) + np.outer(a[:, k], b[k, :])).astype(np.float32)
    return d


def tf32_trunc(x: np.ndarray) -> np.ndarray:
    """f32 values with the low 13 mantissa bits cleared, as f64."""
    u = np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return u.view(np.float32).astype(np.float64)


def tf32_round(x: np.ndarray) -> np.ndarray:
    """cvt.rna.tf32.f32 (round to nearest, ties away) then as f64."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x1000) & 0xFFFFE000).astype(np.uint32)
    return r.view(np.float32).astype(np.float64)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """Round f64 values to bf16 (nearest even), as raw uint16 bits."""
    u = np.asarray(x, np.float64).astype(np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16)
