"""The .approx transcendental instructions: rsqrt, ex2, lg2, sin, cos, tanh.

Each is evaluated in float64 by numpy and rounded once to the operand type,
which is far inside the error bound the PTX ISA states for the hardware
(quoted per function), and gives the IEEE special values PTX lists.  The
simulator is therefore *more* accurate than a GPU: bit-exact agreement with
the SFU's approximations is deliberately not attempted.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._common import ArithError, quiet
from .fbasic import as_float, finish, flush_subnormals


def _approx(a, ftz: bool, fn, allowed: tuple) -> np.ndarray:
    a = as_float(a)
    if a.dtype not in allowed:
        raise ArithError(f"this .approx instruction has no {a.dtype} form")
    if ftz:
        a = flush_subnormals(a)
    r = fn(a.astype(np.float64)).astype(a.dtype)
    return finish(r, ftz, False)


_F32 = (np.dtype(np.float32),)


@quiet
def rsqrt(a: ArrayLike, ftz: bool = False) -> np.ndarray:
    """rsqrt.approx{.ftz}.f32 (PTX max relative error 2^-22.9) and
    rsqrt.approx{.ftz}.f64: rsqrt(+-0) = +-inf, rsqrt(negative) = NaN, rsqrt(inf) = 0."""
    return _approx(a, ftz, lambda x: 1.0 / np.sqrt(x), _F32 + (np.dtype(np.float64),))


@quiet
def ex2(a: ArrayLike, ftz: bool = False) -> np.ndarray:
    """ex2.approx{.ftz}.f32 (PTX: max 2 ulp, full range) and ex2.approx.f16:
    ex2(-inf) = +0, ex2(+inf) = +inf, ex2(+-0) = 1."""
    return _approx(a, ftz, np.exp2, _F32 + (np.dtype(np.float16),))


@quiet
def lg2(a: ArrayLike, ftz: bool = False) -> np.ndarray:
    """lg2.approx{.ftz}.f32 (PTX max absolute error 2^-22.6 for mantissa in
    [1, 2)): lg2(+-0) = -inf, lg2(negative) = NaN, lg2(+inf) = +inf."""
    return _approx(a, ftz, np.log2, _F32)


@quiet
def sin(a: ArrayLike, ftz: bool = False) -> np.ndarray:
    """sin.approx{.ftz}.f32 (PTX max absolute error 2^-20.9 in [-pi, pi]):
    sin(+-inf) = NaN, sin(+-0) = +-0."""
    return _approx(a, ftz, np.sin, _F32)


@quiet
def cos(a: ArrayLike, ftz: bool = False) -> np.ndarray:
    """cos.approx{.ftz}.f32 (PTX max absolute error 2^-20.9 in [-pi, pi]):
    cos(+-inf) = NaN, cos(+-0) = 1."""
    return _approx(a, ftz, np.cos, _F32)


@quiet
def tanh(a: ArrayLike) -> np.ndarray:
    """tanh.approx.f32 / .f16 (PTX max relative error about 2^-11):
    tanh(+-inf) = +-1, tanh(+-0) = +-0."""
    return _approx(a, False, np.tanh, _F32 + (np.dtype(np.float16),))
