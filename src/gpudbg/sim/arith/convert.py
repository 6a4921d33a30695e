"""cvt: every PTX conversion between integer and float types, and cvt.pack forms.

Every source value is first made exact in float64 (ints up to 32 bits, all
floats) or as an exact two-term sum hi*2^32 + lo (64-bit ints), then rounded
once to the destination format with rounding.round_terms, which is correct
in all four IEEE modes (so s64->f32 or u64->f64 never double-round).
Float->int rounds to an integral float64 (exact), then saturates to the
destination range (PTX default), NaN -> 0.  Int->int follows C casts
(sign-extend from signed sources, truncate) unless .sat clamps.
Not here: the fp8 (e4m3/e5m2) formats and .satfinite.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._common import INT_ROUNDING_MODES, ROUNDING_MODES, ArithError, quiet
from gpudbg.ptx.types import PTXType, ptx_type
from .fbasic import canonicalize, flush_subnormals
from .rounding import (BF16, F16, F32, F64, FORMATS, TF32, Fmt, bf16_bits_to_f64,
                       f64_to_fmt_bits, round_f64, round_terms)

_FLOAT_FMT = {"f64": F64, "f32": F32, "f16": F16, "bf16": BF16, "tf32": TF32}
_INT_ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _type(name: str) -> PTXType:
    try:
        t = ptx_type(name)
    except KeyError:
        raise ArithError(f"cvt: unknown type {name!r}") from None
    if t.kind == "f" and t.name not in _FLOAT_FMT:
        raise ArithError(f"cvt: type {t.name} is not supported")
    if t.kind not in "usbf":
        raise ArithError(f"cvt: type {t.name} cannot be converted")
    return t


def _float_to_f64(x, t: PTXType, ftz: bool) -> np.ndarray:
    if t.name == "bf16":
        return bf16_bits_to_f64(x)
    if t.name == "tf32":
        u = np.asarray(x).astype(np.uint32)
        return np.atleast_1d(u).view(np.float32).astype(np.float64).reshape(u.shape)
    x = np.asarray(x).astype(t.dtype)
    if ftz and t.name == "f32":
        x = flush_subnormals(x)
    return x.astype(np.float64)


def _int_terms(x, t: PTXType) -> list[np.ndarray]:
    """The exact value of integer x as float64 terms."""
    x = np.asarray(x).astype(t.dtype if t.kind != "b" else np.dtype(f"u{t.bits // 8}"))
    if t.bits < 64:
        return [x.astype(np.float64)]
    lo = (x.astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.float64)
    hi = (x >> x.dtype.type(32)).astype(np.float64) * 4294967296.0
    return [hi, lo]


def _encode_float(v: np.ndarray, fmt: Fmt, dst: PTXType) -> np.ndarray:
    out = f64_to_fmt_bits(v, fmt)
    if dst.dtype.kind == "f":
        out = canonicalize(np.asarray(out).astype(dst.dtype))
    return np.asarray(out).astype(dst.dtype)


def _float_post(v: np.ndarray, dst: PTXType, ftz: bool, sat: bool, relu: bool) -> np.ndarray:
    if ftz and dst.name == "f32":
        v = np.where(np.abs(v) < 2.0 ** -126, np.copysign(0.0, v), v)
    if relu:
        v = np.where(v < 0, 0.0, v)
    if sat:
        v = np.where(np.isnan(v) | (v <= 0), 0.0, np.minimum(v, 1.0))
    return v


def _to_int(v: np.ndarray, dst: PTXType) -> np.ndarray:
    bits = dst.bits
    signed = dst.kind == "s"
    lo = -(2.0 ** (bits - 1)) if signed else 0.0
    hi = 2.0 ** (bits - 1) if signed else 2.0 ** bits  # exclusive
    dt = dst.dtype
    mn = np.iinfo(dt).min
    mx = np.iinfo(dt).max
    safe = np.where(np.isnan(v) | (v < lo) | (v >= hi), 0.0, v)
    r = safe.astype(np.int64 if signed else np.uint64).astype(dt) if bits == 64 else \
        safe.astype(np.int64).astype(dt)
    r = np.where(v >= hi, dt.type(mx), r)
    r = np.where(v < lo, dt.type(mn), r)
    return np.where(np.isnan(v), dt.type(0), r).astype(dt)


def _int_to_int(x, dst: PTXType, src: PTXType, sat: bool) -> np.ndarray:
    sdt = src.dtype
    x = np.asarray(x).astype(sdt)
    if not sat:
        return x.astype(dst.dtype)
    dmin, dmax = int(np.iinfo(dst.dtype).min), int(np.iinfo(dst.dtype).max)
    if src.kind == "s":
        v = np.clip(x.astype(np.int64), max(dmin, -2**63), min(dmax, 2**63 - 1))
        return v.astype(dst.dtype)
    return np.minimum(x.astype(np.uint64), np.uint64(dmax)).astype(dst.dtype)


@quiet
def cvt(x: ArrayLike, dst: str, src: str, rnd: str | None = None, ftz: bool = False,
        sat: bool = False, relu: bool = False) -> np.ndarray:
    """cvt{.rnd}{.ftz}{.sat}{.relu}.dst.src: convert x (src dtype) to dst's dtype.

    rnd: rn/rz/rm/rp (float results; default rn), rni/rzi/rmi/rpi (integral
    results; float->int default rzi), rna (tf32 only).
    """
    d, s = _type(dst), _type(src)
    if rnd is not None and rnd not in ROUNDING_MODES + INT_ROUNDING_MODES + ("rna",):
        raise ArithError(f"cvt: unknown rounding modifier {rnd!r}")
    if rnd == "rna" and d.name != "tf32":
        raise ArithError("cvt .rna is defined only for the tf32 destination")
    if d.kind != "f" and s.kind != "f":
        if rnd is not None:
            raise ArithError("cvt between integer types takes no rounding modifier")
        return _int_to_int(x, d, s, sat)
    if d.kind != "f":
        if rnd in ROUNDING_MODES:
            raise ArithError(f"float-to-integer cvt needs .rni/.rzi/.rmi/.rpi, not .{rnd}")
        v = _INT_ROUND[rnd or "rzi"](_float_to_f64(x, s, ftz))
        return _to_int(v, d)
    fmt = _FLOAT_FMT[d.name]
    if s.kind != "f":
        if rnd in INT_ROUNDING_MODES:
            raise ArithError(f"integer-to-float cvt takes .rn/.rz/.rm/.rp, not .{rnd}")
        terms = _int_terms(x, s)
        v = round_f64(terms[0], fmt, rnd or "rn") if len(terms) == 1 else \
            round_terms(terms, fmt, rnd or "rn")
        return _encode_float(_float_post(v, d, ftz, sat, relu), fmt, d)
    v = _float_to_f64(x, s, ftz)
    if d.name == "tf32":
        return _to_tf32(v, rnd or "rna", sat, relu)
    if rnd in INT_ROUNDING_MODES:
        v = _INT_ROUND[rnd](v)
        mode = "rn"
    else:
        mode = rnd or "rn"
    r = round_f64(v, fmt, mode)
    return _encode_float(_float_post(r, d, ftz, sat, relu), fmt, d)


def _to_tf32(v: np.ndarray, rnd: str, sat: bool, relu: bool) -> np.ndarray:
    v = _float_post(v, ptx_type("tf32"), False, sat, relu)
    if rnd == "rna":
        u = np.atleast_1d(v.astype(np.float32)).view(np.uint32).reshape(v.shape).astype(np.uint64)
        fin = np.isfinite(v)
        r = ((u + np.uint64(0x1000)) & np.uint64(0xFFFFE000)).astype(np.uint32)
        r = np.where(fin, r, u.astype(np.uint32))
        return np.where(np.isnan(v), np.uint32(0x7FFFFFFF), r).astype(np.uint32)
    fin = np.isfinite(v)
    r = round_terms([np.where(fin, v, 0.0)], TF32, rnd)
    return f64_to_fmt_bits(np.where(fin, r, v), TF32)


@quiet
def cvt_pack(a: ArrayLike, b: ArrayLike, dst: str, rnd: str = "rn", relu: bool = False, sat: bool = False) -> np.ndarray:
    """cvt.rnd{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b: a goes to the
    upper half of d, b to the lower half (uint32 result)."""
    if dst not in ("f16x2", "bf16x2"):
        raise ArithError(f"cvt_pack: destination must be f16x2 or bf16x2, not {dst!r}")
    half = "f16" if dst == "f16x2" else "bf16"
    hi = cvt(np.asarray(a).astype(np.float32), half, "f32", rnd, sat=sat, relu=relu)
    lo = cvt(np.asarray(b).astype(np.float32), half, "f32", rnd, sat=sat, relu=relu)
    hb = np.atleast_1d(hi).view(np.uint16).reshape(np.shape(hi)).astype(np.uint32)
    lb = np.atleast_1d(lo).view(np.uint16).reshape(np.shape(lo)).astype(np.uint32)
    return ((hb << np.uint32(16)) | lb).astype(np.uint32)


__all__ = ["cvt", "cvt_pack", "FORMATS"]
