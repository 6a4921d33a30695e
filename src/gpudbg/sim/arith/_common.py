"""Shared plumbing for the arithmetic library: dtype facts and input coercion.

Every public function in this package works on whole arrays of lanes; the one
idea here is that integer work is done in the *unsigned* dtype of the same
width, where numpy's wrap-around is well defined, and viewed back at the end.
This module does no arithmetic of its own.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

import numpy as np

from gpudbg.ptx.types import signed_dtype, unsigned_dtype

F = TypeVar("F", bound=Callable[..., Any])

ROUNDING_MODES = ("rn", "rz", "rm", "rp")
INT_ROUNDING_MODES = ("rni", "rzi", "rmi", "rpi")


class ArithError(ValueError):
    """An operand type, mode or modifier the PTX instruction does not allow."""


def quiet(fn: F) -> F:
    """Run fn with all numpy floating-point warnings silenced.

    PTX arithmetic overflows, divides by zero and makes NaNs as a matter of
    course; those are results, not errors, so no warning may escape.
    """
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]


def as_int(a: Any) -> np.ndarray:
    """Coerce to an integer numpy array (or 0-d array), keeping its dtype."""
    a = np.asarray(a)
    if a.dtype.kind not in "iu":
        raise ArithError(f"integer operand expected, got dtype {a.dtype}")
    return a


def like(a: Any, dtype: np.dtype) -> np.ndarray:
    """Coerce a to dtype with C cast semantics (wrap for ints)."""
    a = np.asarray(a)
    if a.dtype == dtype:
        return a
    return a.astype(dtype)


def bits_of(dt: np.dtype) -> int:
    return np.dtype(dt).itemsize * 8


def udt(dt: np.dtype) -> np.dtype:
    return unsigned_dtype(bits_of(dt))


def sdt(dt: np.dtype) -> np.dtype:
    return signed_dtype(bits_of(dt))


def to_u(a: np.ndarray) -> np.ndarray:
    """The same bits, as the unsigned dtype of the same width."""
    return a.view(udt(a.dtype)) if a.ndim else a.astype(udt(a.dtype))


def from_u(u: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Reinterpret unsigned bits as dtype dt of the same width."""
    dt = np.dtype(dt)
    u = np.asarray(u).astype(udt(dt), copy=False)
    return u.view(dt) if u.ndim else u.astype(dt)


def all_ones(dt: np.dtype) -> int:
    return (1 << bits_of(dt)) - 1


def check_mode(mode: str | None, allowed: tuple[str | None, ...], what: str) -> None:
    if mode not in allowed:
        raise ArithError(f"{what}: mode {mode!r} not one of {allowed}")
