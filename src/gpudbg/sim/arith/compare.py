"""PTX comparison operators (setp/set/selp/slct conditions) as bool arrays.

Integer orderings use the dtype the type name implies (so lo/ls/hi/hs are
unsigned whatever the register dtype); float orderings are IEEE: the ordered
operators (eq ne lt le gt ge) are false when either side is NaN, the
unordered ones (equ neu ltu leu gtu geu) true, num/nan test orderedness.
bf16 (raw uint16 bits) is widened exactly before comparing; packed x2 types
are not handled here.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._common import ArithError, quiet
from gpudbg.ptx.types import ptx_type
from .rounding import bf16_bits_to_f64

_ORDERED = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}
_UNSIGNED = {"lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}
_UNORDERED = {"equ": "eq", "neu": "ne", "ltu": "lt", "leu": "le", "gtu": "gt", "geu": "ge"}

COMPARISONS = tuple(_ORDERED) + tuple(_UNSIGNED) + tuple(_UNORDERED) + ("num", "nan")


@quiet
def compare(a: ArrayLike, b: ArrayLike, cmp: str, type: str) -> np.ndarray:  # noqa: A002 - PTX term
    """Evaluate `a cmp b` for PTX type name `type`."""
    t = ptx_type(type)
    if cmp not in COMPARISONS:
        raise ArithError(f"unknown comparison {cmp!r}")
    if t.kind == "f":
        if t.name == "bf16":
            a, b = bf16_bits_to_f64(a), bf16_bits_to_f64(b)
        elif t.dtype.kind != "f":
            raise ArithError(f"compare: packed/encoded type {t.name} not supported")
        else:
            a = np.asarray(a).astype(t.dtype)
            b = np.asarray(b).astype(a.dtype)
        unordered = np.isnan(a) | np.isnan(b)
        if cmp == "num":
            return ~unordered
        if cmp == "nan":
            return unordered
        if cmp in _UNORDERED:
            return _ORDERED[_UNORDERED[cmp]](a, b) | unordered
        if cmp in _ORDERED:
            return _ORDERED[cmp](a, b) & ~unordered
        raise ArithError(f"comparison {cmp!r} is not defined for float type {t.name}")
    if t.kind not in "usb":
        raise ArithError(f"compare: type {t.name} cannot be compared")
    if t.kind == "b" and cmp not in ("eq", "ne"):
        raise ArithError(f"bit-size type {t.name} allows only eq/ne, not {cmp!r}")
    if cmp in _UNSIGNED:
        dt = np.dtype(f"u{t.bits // 8}")
        return _UNSIGNED[cmp](np.asarray(a).astype(dt), np.asarray(b).astype(dt))
    if cmp in _ORDERED:
        a = np.asarray(a).astype(t.dtype)
        return _ORDERED[cmp](a, np.asarray(b).astype(t.dtype))
    raise ArithError(f"comparison {cmp!r} is not defined for integer type {t.name}")
