"""The interpreter's plain float paths (add/sub/mul.rn, fma.rn.f32) give the
canonical NaN for every NaN result, like its other float paths and NVIDIA
GPUs: numpy's own payload choice between two NaN operands depends on the
lane's position in its vector loop, so it would make results depend on
the wave's size."""
from __future__ import annotations

import numpy as np
import pytest

from gpudbg.sim.ops.arithmetic import _canonical_nan, fma_f32_rn


def _nan32(bits: int) -> np.float32:
    return np.array(bits, np.uint32).view(np.float32)[()]


@pytest.mark.parametrize("n", [1, 8, 17, 33, 100])
@pytest.mark.parametrize("fn", [np.add, np.subtract, np.multiply])
def test_two_nan_operands_give_the_canonical_nan_in_every_lane(fn, n):
    a = np.full(n, _nan32(0x7F812345))
    b = np.full(n, _nan32(0xFFA00001))
    with np.errstate(all="ignore"):
        r = _canonical_nan(fn)(a, b)
    assert (r.view(np.uint32) == 0x7FFFFFFF).all()


def test_nan_free_results_are_numpy_s():
    a = np.linspace(-3, 3, 50, dtype=np.float32)
    b = np.float32(0.3)
    assert np.array_equal(_canonical_nan(np.add)(a, b), a + b)
    assert _canonical_nan(np.multiply)(np.float64(2.0), np.float64(3.0)) == 6.0


def test_fma_f32_rn_canonicalizes_invalid_and_propagated_nans():
    a = np.array([np.inf, _nan32(0x7FC00001), 1.0], np.float32)
    b = np.array([0.0, 2.0, _nan32(0xFF800005)], np.float32)
    c = np.array([1.0, _nan32(0x7FC00009), 1.0], np.float32)
    with np.errstate(all="ignore"):
        r = fma_f32_rn(a, b, c)
    assert (r.view(np.uint32) == 0x7FFFFFFF).all()
