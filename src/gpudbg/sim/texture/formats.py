"""Element formats of images: CUarray_format (cuda.h) codes, their numpy
types, and the conversions a texture read applies (normalized float, sRGB).

The channel data type and order that `txq`/`suq` report use OpenCL's
cl_channel_type / cl_channel_order codes, as the PTX ISA specifies for
those queries; the tables below are the mapping.
"""
from __future__ import annotations

import enum

import numpy as np


class CUarray_format(enum.IntEnum):  # noqa: N801 (cuda.h's name)
    """cuda.h CUarray_format: the element type of one channel (the formats
    the sampler implements; block-compressed and YUV ones are not)."""

    CU_AD_FORMAT_UNSIGNED_INT8 = 0x01
    CU_AD_FORMAT_UNSIGNED_INT16 = 0x02
    CU_AD_FORMAT_UNSIGNED_INT32 = 0x03
    CU_AD_FORMAT_SIGNED_INT8 = 0x08
    CU_AD_FORMAT_SIGNED_INT16 = 0x09
    CU_AD_FORMAT_SIGNED_INT32 = 0x0a
    CU_AD_FORMAT_HALF = 0x10
    CU_AD_FORMAT_FLOAT = 0x20


F = CUarray_format
DTYPES: dict[CUarray_format, np.dtype] = {
    F.CU_AD_FORMAT_UNSIGNED_INT8: np.dtype(np.uint8), F.CU_AD_FORMAT_UNSIGNED_INT16: np.dtype(np.uint16),
    F.CU_AD_FORMAT_UNSIGNED_INT32: np.dtype(np.uint32), F.CU_AD_FORMAT_SIGNED_INT8: np.dtype(np.int8),
    F.CU_AD_FORMAT_SIGNED_INT16: np.dtype(np.int16), F.CU_AD_FORMAT_SIGNED_INT32: np.dtype(np.int32),
    F.CU_AD_FORMAT_HALF: np.dtype(np.float16), F.CU_AD_FORMAT_FLOAT: np.dtype(np.float32),
}

# OpenCL cl_channel_type codes (what txq/suq .channel_data_type return)
CL_CHANNEL_TYPE: dict[CUarray_format, int] = {
    F.CU_AD_FORMAT_SIGNED_INT8: 0x10D7, F.CU_AD_FORMAT_SIGNED_INT16: 0x10D8,
    F.CU_AD_FORMAT_SIGNED_INT32: 0x10D9, F.CU_AD_FORMAT_UNSIGNED_INT8: 0x10DA,
    F.CU_AD_FORMAT_UNSIGNED_INT16: 0x10DB, F.CU_AD_FORMAT_UNSIGNED_INT32: 0x10DC,
    F.CU_AD_FORMAT_HALF: 0x10DD, F.CU_AD_FORMAT_FLOAT: 0x10DE,
}
# cl_channel_order by channel count: CL_R, CL_RG, CL_RGB (not a CUDA layout), CL_RGBA
CL_CHANNEL_ORDER = {1: 0x10B0, 2: 0x10B2, 4: 0x10B5}
CHANNEL_COUNTS = (1, 2, 4)


def dtype_of(fmt: CUarray_format) -> np.dtype:
    return DTYPES[CUarray_format(fmt)]


def is_integer(fmt: CUarray_format) -> bool:
    return dtype_of(fmt).kind in "ui"


def to_normalized_float(raw: np.ndarray, fmt: CUarray_format) -> np.ndarray:
    """cudaReadModeNormalizedFloat: 8/16-bit unsigned to [0, 1], signed to
    [-1, 1] (the most negative value clamps to -1); float formats as they
    are. 32-bit integers cannot be read normalized (the driver refuses)."""
    dt = dtype_of(fmt)
    if dt.kind == "f":
        return raw.astype(np.float32)
    top = float(np.iinfo(dt).max)
    v = raw.astype(np.float32) / np.float32(top)
    return np.maximum(v, np.float32(-1.0)) if dt.kind == "i" else v


def srgb_to_linear(v: np.ndarray) -> np.ndarray:
    """The sRGB transfer function's inverse, applied to the color channels
    of an sRGB texture read as normalized float."""
    v = v.astype(np.float32)
    return np.where(v <= np.float32(0.04045), v / np.float32(12.92),
                    ((v + np.float32(0.055)) / np.float32(1.055)) ** np.float32(2.4)).astype(np.float32)

