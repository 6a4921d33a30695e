"""The PTX fundamental types as data: name -> kind, width and the numpy dtype
that holds a value of that type in the simulator's register files.

bf16 has no numpy dtype: its values are held as their raw uint16 bits, as are
the packed f16x2/bf16x2 types (uint32). f16 is held as numpy float16.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PTXType:
    name: str
    kind: str  # "u" unsigned, "s" signed, "b" untyped bits, "f" float, "pred"
    bits: int
    dtype: np.dtype

    @property
    def size(self) -> int:
        return max(1, self.bits // 8)

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_signed(self) -> bool:
        return self.kind == "s"


def _t(name: str, kind: str, bits: int, dtype) -> PTXType:
    return PTXType(name, kind, bits, np.dtype(dtype))


PTX_TYPES: dict[str, PTXType] = {t.name: t for t in (
    _t("u8", "u", 8, np.uint8), _t("u16", "u", 16, np.uint16),
    _t("u32", "u", 32, np.uint32), _t("u64", "u", 64, np.uint64),
    _t("s8", "s", 8, np.int8), _t("s16", "s", 16, np.int16),
    _t("s32", "s", 32, np.int32), _t("s64", "s", 64, np.int64),
    _t("b8", "b", 8, np.uint8), _t("b16", "b", 16, np.uint16),
    _t("b32", "b", 32, np.uint32), _t("b64", "b", 64, np.uint64),
    _t("b128", "b", 128, np.dtype((np.void, 16))),
    _t("f16", "f", 16, np.float16), _t("bf16", "f", 16, np.uint16),
    _t("f16x2", "f", 32, np.uint32), _t("bf16x2", "f", 32, np.uint32),
    _t("tf32", "f", 32, np.uint32),
    _t("e4m3", "f", 8, np.uint8), _t("e5m2", "f", 8, np.uint8),
    _t("e4m3x2", "f", 16, np.uint16), _t("e5m2x2", "f", 16, np.uint16),
    _t("f32", "f", 32, np.float32), _t("f64", "f", 64, np.float64),
    _t("pred", "pred", 1, np.bool_),
)}


def ptx_type(name: str) -> PTXType:
    """Look a type up by name, with or without its leading dot."""
    return PTX_TYPES[name.lstrip(".")]


def is_type_name(name: str) -> bool:
    return name.lstrip(".") in PTX_TYPES


def unsigned_dtype(bits: int) -> np.dtype:
    return np.dtype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits])


def signed_dtype(bits: int) -> np.dtype:
    return np.dtype({8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[bits])
