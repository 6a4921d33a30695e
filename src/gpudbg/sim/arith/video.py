"""SIMD video instructions: vadd/vsub/vavrg/vabsdiff/vmin/vmax in 4x8 and 2x16 forms.

Each 32-bit operand is split into lanes held as int64 (sign- or zero-
extended per operand signedness), the lane op is exact there, .sat clamps
each lane to the destination lane range, and the lanes are either summed
into c (.add secondary op) or merged into c under the byte/half mask (no
secondary op).  Operand lane selectors (.b3210 etc.) are the identity here:
the executor applies any permuting selector with bits.prmt first.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._common import ArithError, from_u, quiet

_OPS = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "absdiff": lambda x, y: np.abs(x - y),
    "min": np.minimum,
    "max": np.maximum,
    "avrg": lambda x, y: (x + y + 1) >> 1,
}


def _split(x, width: int, signed: bool) -> list[np.ndarray]:
    u = np.asarray(x).astype(np.uint32).astype(np.int64)
    m = (1 << width) - 1
    out = []
    for i in range(32 // width):
        v = (u >> (width * i)) & m
        if signed:
            v = (v ^ (1 << (width - 1))) - (1 << (width - 1))
        out.append(v)
    return out


@quiet
def vop(op: str, width: int, a: ArrayLike, b: ArrayLike, c: ArrayLike, a_signed: bool, b_signed: bool, sat: bool = False,
        secondary: str | None = None, d_signed: bool | None = None,
        mask: int | None = None) -> np.ndarray:
    """Generic SIMD video op: width 8 (vop4) or 16 (vop2) lanes.

    d_signed defaults to "either source signed"; mask selects the lanes
    written (bit i = lane i; default all).  Returns int32 when d_signed else
    uint32.
    """
    if op not in _OPS:
        raise ArithError(f"video op {op!r} not one of {tuple(_OPS)}")
    if width not in (8, 16):
        raise ArithError("SIMD video lanes are 8 (vop4) or 16 (vop2) bits wide")
    if secondary not in (None, "add"):
        raise ArithError("SIMD video instructions take only the .add secondary op "
                         "(.min/.max exist only for the scalar video forms)")
    n = 32 // width
    mask = (1 << n) - 1 if mask is None else int(mask)
    d_signed = (a_signed or b_signed) if d_signed is None else d_signed
    la, lb = _split(a, width, a_signed), _split(b, width, b_signed)
    lo, hi = ((-(1 << (width - 1)), (1 << (width - 1)) - 1) if d_signed else (0, (1 << width) - 1))
    t = []
    for x, y in zip(la, lb):
        r = _OPS[op](x, y)
        t.append(np.clip(r, lo, hi) if sat else r)
    out_dt = np.dtype(np.int32 if d_signed else np.uint32)
    cu = np.asarray(c).astype(np.uint32).astype(np.int64)
    if secondary == "add":
        cv = np.asarray(c).astype(out_dt).astype(np.int64)
        acc = cv
        for i in range(n):
            if mask >> i & 1:
                acc = acc + t[i]
        if sat:
            acc = np.clip(acc, *((-2**31, 2**31 - 1) if d_signed else (0, 2**32 - 1)))
        return from_u((acc & 0xFFFFFFFF).astype(np.uint32), out_dt)
    lane_m = (1 << width) - 1
    d = cu
    for i in range(n):
        if mask >> i & 1:
            d = (d & ~(lane_m << (width * i))) | ((t[i] & lane_m) << (width * i))
    return from_u((d & 0xFFFFFFFF).astype(np.uint32), out_dt)


def _mk(op: str, width: int):
    def f(a, b, c, secondary: str | None = None, a_signed: bool = False, b_signed: bool = False,
          sat: bool = False, **kw) -> np.ndarray:
        return vop(op, width, a, b, c, a_signed, b_signed, sat, secondary, **kw)
    f.__name__ = f"v{op}{32 // width}"
    f.__doc__ = (f"v{op}{32 // width}: per-lane {op} of {32 // width} x {width}-bit lanes "
                 "(see vop); with secondary='add' the lane results are summed into c.")
    return f


vabsdiff4 = _mk("absdiff", 8)
vadd4 = _mk("add", 8)
vsub4 = _mk("sub", 8)
vavrg4 = _mk("avrg", 8)
vmin4 = _mk("min", 8)
vmax4 = _mk("max", 8)
vabsdiff2 = _mk("absdiff", 16)
vadd2 = _mk("add", 16)
vsub2 = _mk("sub", 16)
vavrg2 = _mk("avrg", 16)
vmin2 = _mk("min", 16)
vmax2 = _mk("max", 16)
