"""PTX bit-manipulation instructions over arrays of lanes.

Shifts clamp their amount before numpy sees it (numpy, like C, leaves shifts
by >= the width undefined); counts (popc/clz/bfind) use a few SWAR or
binary-search rounds rather than per-lane loops; byte permutes gather from a
stacked (8, lanes) byte table.  Signedness comes from the dtype (int* = .s).
Not here: the SIMD video instructions (video.py).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._common import (ArithError, all_ones, as_int, bits_of, check_mode, from_u,
                      like, quiet, to_u)


def _amount(n, width: int) -> np.ndarray:
    """A shift amount as uint64, clamped to width (amounts are unsigned in PTX)."""
    n = np.asarray(n).astype(np.uint32).astype(np.uint64)
    return np.minimum(n, np.uint64(width))


@quiet
def shl(a: ArrayLike, n: ArrayLike) -> np.ndarray:
    """shl: amounts >= the width give 0."""
    a = as_int(a)
    w = bits_of(a.dtype)
    k = _amount(n, w)
    ua = to_u(a)
    ut = ua.dtype.type
    r = ua << np.minimum(k, np.uint64(w - 1)).astype(ua.dtype)
    return from_u(np.where(k >= w, ut(0), r), a.dtype)


@quiet
def shr(a: ArrayLike, n: ArrayLike) -> np.ndarray:
    """shr: .s fills with the sign bit, .u/.b with zeros; amounts clamp at the width."""
    a = as_int(a)
    w = bits_of(a.dtype)
    k = np.minimum(_amount(n, w), np.uint64(w - 1))
    if a.dtype.kind == "i":
        return a >> k.astype(a.dtype)
    ua = to_u(a)
    r = ua >> k.astype(ua.dtype)
    return from_u(np.where(_amount(n, w) >= w, ua.dtype.type(0), r), a.dtype)


def _popc_u64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return ((x * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.uint32)


@quiet
def popc(a: ArrayLike) -> np.ndarray:
    """popc: number of set bits, as uint32."""
    return _popc_u64(to_u(as_int(a)))


def bit_length(u: np.ndarray, width: int) -> np.ndarray:
    """Index of the highest set bit plus one (0 for 0), as int64, by bisection."""
    x = np.asarray(u).astype(np.uint64)
    n = np.zeros(x.shape, np.int64)
    s = width // 2
    while s:
        t = x >> np.uint64(s)
        nz = t != 0
        n = n + np.where(nz, s, 0)
        x = np.where(nz, t, x)
        s //= 2
    return n + (x != 0)


@quiet
def clz(a: ArrayLike) -> np.ndarray:
    """clz: leading zero count (width for 0), as uint32."""
    a = as_int(a)
    w = bits_of(a.dtype)
    return (w - bit_length(to_u(a), w)).astype(np.uint32)


@quiet
def bfind(a: ArrayLike, shiftamt: bool = False) -> np.ndarray:
    """bfind: bit position of the most significant non-sign bit, 0xFFFFFFFF if none.

    For .s types that is the highest 1 of a non-negative value and the highest
    0 of a negative one; .shiftamt returns width-1-position instead.
    """
    a = as_int(a)
    w = bits_of(a.dtype)
    u = to_u(a)
    if a.dtype.kind == "i":
        u = np.where(a < 0, ~u, u)
    pos = bit_length(u, w) - 1
    if shiftamt:
        pos = np.where(pos < 0, -1, (w - 1) - pos)
    return np.where(pos < 0, np.uint32(0xFFFFFFFF), pos.astype(np.uint32)).astype(np.uint32)


@quiet
def brev(a: ArrayLike) -> np.ndarray:
    """brev: reverse the bit order."""
    a = as_int(a)
    w = bits_of(a.dtype)
    x = to_u(a).astype(np.uint64)
    for s, m in ((1, 0x5555555555555555), (2, 0x3333333333333333), (4, 0x0F0F0F0F0F0F0F0F),
                 (8, 0x00FF00FF00FF00FF), (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF)):
        if s >= w:
            break
        m = np.uint64(m)
        x = ((x >> np.uint64(s)) & m) | ((x & m) << np.uint64(s))
    return from_u(x.astype(to_u(a).dtype), a.dtype)


def _low_mask(length: np.ndarray, width: int) -> np.ndarray:
    """(1 << length) - 1 as uint64 for length in [0, width]."""
    length = np.asarray(length).astype(np.uint64)
    full = np.uint64(all_ones(np.dtype(f"u{width // 8}")))
    part = (np.uint64(1) << np.minimum(length, np.uint64(63))) - np.uint64(1)
    return np.where(length >= width, full, part)


@quiet
def bfe(a: ArrayLike, pos: ArrayLike, length: ArrayLike) -> np.ndarray:
    """bfe: extract length bits from pos; .s types sign-extend from the field's msb.

    pos and length are taken mod 256 (& 0xff); bits past the msb read as the
    sign bit, which is a[min(pos+len-1, msb)] for .s and 0 for .u or len == 0.
    """
    a = as_int(a)
    w = bits_of(a.dtype)
    u = to_u(a).astype(np.uint64)
    p = np.asarray(pos).astype(np.uint32).astype(np.uint64) & np.uint64(0xFF)
    ln = np.asarray(length).astype(np.uint32).astype(np.uint64) & np.uint64(0xFF)
    in_range = p < w
    avail = np.where(in_range, np.uint64(w) - np.minimum(p, np.uint64(w)), np.uint64(0))
    eff = np.minimum(ln, avail)
    field = np.where(in_range, u >> np.minimum(p, np.uint64(w - 1)), np.uint64(0)) & _low_mask(eff, w)
    if a.dtype.kind == "i":
        sb_pos = np.minimum(p + ln - np.uint64(1), np.uint64(w - 1))
        sbit = ((u >> np.minimum(sb_pos, np.uint64(w - 1))) & np.uint64(1)).astype(bool) & (ln != 0)
        field = np.where(sbit, field | (~_low_mask(eff, w) & _low_mask(np.uint64(w), w)), field)
    return from_u(field.astype(to_u(a).dtype), a.dtype)


@quiet
def bfi(a: ArrayLike, b: ArrayLike, pos: ArrayLike, length: ArrayLike) -> np.ndarray:
    """bfi: insert the low length bits of a into b at pos (pos, length & 0xff)."""
    b = as_int(b)
    a = like(a, b.dtype)
    w = bits_of(b.dtype)
    ua = to_u(a).astype(np.uint64)
    ub = to_u(b).astype(np.uint64)
    p = np.asarray(pos).astype(np.uint32).astype(np.uint64) & np.uint64(0xFF)
    ln = np.asarray(length).astype(np.uint32).astype(np.uint64) & np.uint64(0xFF)
    in_range = p < w
    ps = np.minimum(p, np.uint64(w - 1))
    eff = np.where(in_range, np.minimum(ln, np.uint64(w) - ps), np.uint64(0))
    m = (_low_mask(eff, w) << ps) & _low_mask(np.uint64(w), w)
    r = (ub & ~m) | ((ua << ps) & m)
    return from_u(r.astype(to_u(b).dtype), b.dtype)


@quiet
def fns(mask: ArrayLike, base: ArrayLike, offset: ArrayLike) -> np.ndarray:
    """fns.b32: position of the |offset|-th set bit of mask counting from base.

    Positive offsets search upward, negative downward, offset 0 tests base
    itself; 0xFFFFFFFF when there is no such bit (or base is not in 0..31).
    """
    m = np.asarray(mask).astype(np.uint32).astype(np.int64)
    base = np.asarray(base).astype(np.uint32).astype(np.int64)
    off = np.asarray(offset).astype(np.int32).astype(np.int64)
    shape = np.broadcast(m, base, off).shape
    res = np.full(shape, -1, np.int64)
    count = np.zeros(shape, np.int64)
    want = np.abs(off)
    for step in range(32):
        up_pos = base + step
        dn_pos = base - step
        pos_ = np.where(off >= 0, up_pos, dn_pos)
        valid = (pos_ >= 0) & (pos_ < 32) & (base < 32) & ((off != 0) | (step == 0))
        bit = valid & (((m >> np.clip(pos_, 0, 31)) & 1) == 1)
        count = count + bit
        hit = bit & (res < 0) & (count == np.maximum(want, 1))
        res = np.where(hit, pos_, res)
    return np.where(res < 0, np.int64(0xFFFFFFFF), res).astype(np.uint32)


@quiet
def bmsk(a: ArrayLike, b: ArrayLike, mode: str = "clamp") -> np.ndarray:
    """bmsk.{clamp,wrap}.b32: a mask of b bits starting at bit a.

    wrap takes both operands mod 32; clamp gives 0 for a >= 32 and fills to
    bit 31 when a + b reaches 32 or b >= 32.
    """
    check_mode(mode, ("clamp", "wrap"), "bmsk")
    a = np.asarray(a).astype(np.uint32).astype(np.uint64)
    b = np.asarray(b).astype(np.uint32).astype(np.uint64)
    full = np.uint64(0xFFFFFFFF)
    a1, b1 = a & np.uint64(31), b & np.uint64(31)
    s = a1 + b1
    mask0 = (full << a1) & full
    mask1 = (full << np.minimum(s, np.uint64(63))) & full
    kill1 = s >= 32
    if mode == "clamp":
        mask0 = np.where(a >= 32, np.uint64(0), mask0)
        kill1 = kill1 | (a >= 32) | (b >= 32)
    mask1 = np.where(kill1, np.uint64(0), np.where(b1 == 0, full, mask1))
    return (mask0 & ~mask1 & full).astype(np.uint32)


# Byte selectors (d.b0, d.b1, d.b2, d.b3) for the prmt modes, by c[1:0].
_PRMT_MODES: dict[str, tuple[tuple[int, int, int, int], ...]] = {
    "f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)),
    "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)),
    "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3)),
}


@quiet
def prmt(a: ArrayLike, b: ArrayLike, c: ArrayLike, mode: str | None = None) -> np.ndarray:
    """prmt.b32: pick bytes of {b, a} (a = bytes 0-3, b = 4-7) under control c.

    Default mode: nibble i of c selects byte i (bits 2..0) and bit 3 replaces
    it by its sign replicated (0x00/0xFF).  Named modes use only c[1:0].
    """
    if mode is not None and mode not in _PRMT_MODES:
        raise ArithError(f"prmt: unknown mode {mode!r}")
    ua = np.asarray(a).astype(np.uint32).astype(np.uint64)
    ub = np.asarray(b).astype(np.uint32).astype(np.uint64)
    uc = np.asarray(c).astype(np.uint32).astype(np.uint64)
    ua, ub, uc = np.broadcast_arrays(ua, ub, uc)
    shape = ua.shape
    ua, ub, uc = ua.ravel(), ub.ravel(), uc.ravel()
    word = ua | (ub << np.uint64(32))
    bytes_ = np.stack([(word >> np.uint64(8 * i)) & np.uint64(0xFF) for i in range(8)])
    cols = np.arange(ua.size)
    d = np.zeros(ua.size, np.uint64)
    if mode is None:
        for i in range(4):
            nib = (uc >> np.uint64(4 * i)) & np.uint64(0xF)
            v = bytes_[(nib & np.uint64(7)).astype(np.intp), cols]
            rep = np.where((v & np.uint64(0x80)) != 0, np.uint64(0xFF), np.uint64(0))
            v = np.where((nib & np.uint64(8)) != 0, rep, v)
            d |= v << np.uint64(8 * i)
    else:
        table = np.array(_PRMT_MODES[mode], np.intp)  # [c&3, out byte]
        sel = (uc & np.uint64(3)).astype(np.intp)
        for i in range(4):
            d |= bytes_[table[sel, i], cols] << np.uint64(8 * i)
    return d.astype(np.uint32).reshape(shape)


@quiet
def shf(a: ArrayLike, b: ArrayLike, c: ArrayLike, direction: str, mode: str = "clamp") -> np.ndarray:
    """shf.{l,r}.{wrap,clamp}.b32: funnel shift of the 64-bit value b:a.

    .l returns the upper 32 bits of (b:a) << n, .r the lower 32 of (b:a) >> n;
    n = c & 31 for wrap, min(c, 32) for clamp.
    """
    check_mode(direction, ("l", "r"), "shf direction")
    check_mode(mode, ("clamp", "wrap"), "shf")
    ua = np.asarray(a).astype(np.uint32).astype(np.uint64)
    ub = np.asarray(b).astype(np.uint32).astype(np.uint64)
    n = np.asarray(c).astype(np.uint32).astype(np.uint64)
    n = n & np.uint64(31) if mode == "wrap" else np.minimum(n, np.uint64(32))
    word = ua | (ub << np.uint64(32))
    if direction == "l":
        r = (word << n) >> np.uint64(32)
    else:
        r = word >> n
    return (r & np.uint64(0xFFFFFFFF)).astype(np.uint32)


@quiet
def lop3(a: ArrayLike, b: ArrayLike, c: ArrayLike, lut: ArrayLike) -> np.ndarray:
    """lop3.b32: bitwise f(a, b, c) where lut = f(0xF0, 0xCC, 0xAA)."""
    a = as_int(a)
    ua = to_u(a)
    ub = to_u(like(b, a.dtype))
    uc = to_u(like(c, a.dtype))
    lut = np.asarray(lut).astype(np.int64)
    d = np.zeros(np.broadcast(ua, ub, uc).shape, ua.dtype)
    for idx in range(8):
        t = (ua if idx & 4 else ~ua) & (ub if idx & 2 else ~ub) & (uc if idx & 1 else ~uc)
        d = d | np.where(((lut >> idx) & 1) == 1, t, ua.dtype.type(0))
    return from_u(d, a.dtype)


@quiet
def cnot(a: ArrayLike) -> np.ndarray:
    """cnot: 1 if a == 0 else 0, in a's type."""
    a = as_int(a)
    return (a == 0).astype(a.dtype)
