"""Scalar reference models for the arith property tests, written from the
PTX ISA independently of the implementation: Python ints for integers and
fractions.Fraction plus an explicit rounding function for floats."""
from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

# format name -> (precision, emin, emax)
FMTS = {"f64": (53, -1022, 1023), "f32": (24, -126, 127), "f16": (11, -14, 15),
        "bf16": (8, -126, 127), "tf32": (11, -126, 127)}
MODES = ("rn", "rz", "rm", "rp")


def wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    if signed and v >> (bits - 1):
        v -= 1 << bits
    return v


def round_fraction(q: Fraction, fmt: str, mode: str, neg_zero: bool = False) -> float:
    """Correctly round exact rational q to fmt; returns a Python float."""
    p, emin, emax = FMTS[fmt]
    if q == 0:
        return -0.0 if neg_zero else 0.0
    sign = -1 if q < 0 else 1
    mag = abs(q)
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    e = max(e, emin)
    quantum = Fraction(2) ** (e - p + 1)
    n = mag / quantum
    k = n.numerator // n.denominator
    rest = n - k
    if mode == "rn":
        if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and k % 2 == 1):
            k += 1
    elif mode == "rz":
        pass
    elif (mode == "rp") == (sign > 0):
        if rest:
            k += 1
    value = k * quantum
    maxval = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if value > maxval:
        to_inf = mode == "rn" or (mode == "rp" and sign > 0) or (mode == "rm" and sign < 0)
        return sign * math.inf if to_inf else sign * float(maxval)
    if value == 0:
        return -0.0 if sign < 0 else 0.0
    return sign * float(value)


def frac(x) -> Fraction:
    return Fraction(float(x))


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def same_float(got, want: float) -> bool:
    """Bitwise float equality, all NaNs alike, signed zeros distinguished."""
    g = float(got)
    if math.isnan(want):
        return math.isnan(g)
    return g == want and math.copysign(1, g) == math.copysign(1, want)


def bits_to_f32(u: int) -> float:
    return struct.unpack("<f", struct.pack("<I", u & 0xFFFFFFFF))[0]


def bits_to_f64(u: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", u & (2**64 - 1)))[0]


def bf16_value(u: int) -> float:
    return bits_to_f32((u & 0xFFFF) << 16)


F32_SPECIAL = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 2.0**-149, -2.0**-149,
               2.0**-126, 3.4028234663852886e38, -3.4028234663852886e38, 1.5, 2.0**-127,
               0.1, 16777217.0, 2.0**127]
F64_SPECIAL = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324,
               2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308,
               2.0**-1023, 1.0 + 2.0**-52, 0.1, 2.0**1023, 3.0]


def f32s():
    return st.one_of(st.floats(width=32), st.sampled_from(F32_SPECIAL),
                     st.integers(0, 2**32 - 1).map(bits_to_f32))


def f64s():
    return st.one_of(st.floats(), st.sampled_from(F64_SPECIAL),
                     st.integers(0, 2**64 - 1).map(bits_to_f64))


def f16s():
    return st.integers(0, 0xFFFF).map(
        lambda u: float(np.array(u, np.uint16).view(np.float16)))


def ints(bits: int, signed: bool):
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    edge = sorted({lo, hi, 0, 1, lo + 1, hi - 1, -1 if signed else 2})
    return st.one_of(st.integers(lo, hi), st.sampled_from(edge))


def lists(elem, n: int = 12):
    return st.lists(elem, min_size=1, max_size=n)


N = 48  # lanes per drawn example


def _int_pool(rng: np.random.Generator, bits: int, signed: bool, n: int) -> list[int]:
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    edge = [lo, hi, 0, 1, lo + 1, hi - 1, 2, 3] + ([-1, -2] if signed else [])
    out = []
    for _ in range(n):
        kind = rng.integers(0, 4)
        if kind == 0:
            v = int(rng.integers(0, 1 << 32)) | (int(rng.integers(0, 1 << 32)) << 32)
            v = wrap(v, bits, signed)
        elif kind == 1:
            v = edge[int(rng.integers(0, len(edge)))]
        elif kind == 2:
            v = int(rng.integers(-300, 300))
            v = wrap(v, bits, signed) if not signed else max(min(v, hi), lo)
        else:
            k = int(rng.integers(0, bits))
            v = wrap((1 << k) + int(rng.integers(-2, 3)), bits, signed)
        out.append(v)
    return out


def int_vecs(bits: int, signed: bool, k: int = 2, n: int = N):
    """k lists of n ints each, from a drawn seed (edge values well represented)."""
    def build(seed):
        rng = np.random.default_rng(seed)
        return [_int_pool(rng, bits, signed, n) for _ in range(k)]
    return st.integers(0, 2**32 - 1).map(build)


def _float_pool(rng, fmt: str, n: int) -> list[float]:
    special = F64_SPECIAL if fmt == "f64" else F32_SPECIAL
    out = []
    for _ in range(n):
        kind = rng.integers(0, 5)
        if kind == 0:
            v = special[int(rng.integers(0, len(special)))]
        elif kind == 1:
            if fmt == "f64":
                v = bits_to_f64(int(rng.integers(0, 1 << 32)) | (int(rng.integers(0, 1 << 32)) << 32))
            else:
                v = bits_to_f32(int(rng.integers(0, 1 << 32)))
        elif kind == 2:
            v = float(rng.uniform(-4, 4))
        elif kind == 3:
            emax = 1024 if fmt == "f64" else 140
            v = math.ldexp(float(rng.uniform(0.5, 1.0)), int(rng.integers(-emax - 30, emax)))
            v = -v if rng.integers(0, 2) else v
        else:
            v = float(rng.integers(-2**12, 2**12)) * 2.0 ** int(rng.integers(-30, 30))
        if fmt == "f32":
            v = float(np.float32(v)) if math.isfinite(v) and abs(v) < 3.5e38 else v
            if math.isfinite(v) and abs(v) > 3.4028234663852886e38:
                v = math.copysign(math.inf, v)
        out.append(v)
    return out


def float_vecs(fmt: str, k: int = 2, n: int = N):
    """k lists of n floats representable in fmt (f32/f64), from a drawn seed."""
    def build(seed):
        rng = np.random.default_rng(seed)
        return [_float_pool(rng, fmt, n) for _ in range(k)]
    return st.integers(0, 2**32 - 1).map(build)
