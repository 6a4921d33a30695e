"""Tensor maps (CUtensorMap, cuTensorMapEncodeTiled) and the boxes that
cp.async.bulk.tensor moves between a tiled global tensor and shared memory.

The one idea: the 128-byte map is opaque to programs, so the simulator
chooses its own layout (below) -- cuTensorMapEncodeTiled (driver layer)
checks the arguments as the driver documents and packs them with `encode`,
and the copy instruction decodes the 128 bytes it is pointed at, refusing
anything that is not such a map. A box is gathered element by element at
the tensor's coordinates (negative or past-the-end coordinates read the
out-of-bounds fill: zero, or a NaN for CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_
REQUEST_ZERO_FMA) and laid out densely in shared memory, dimension 0
fastest, with ceil(boxDim[i] / elementStrides[i]) elements per dimension;
the 32B/64B/128B swizzles permute its 16-byte chunks by XOR-ing chunk bits
4.. with row bits 7.. of the shared offset (1, 2 or 3 bits), which is why
the destination must be aligned to the swizzle's repeat (256/512/1024 B).
Stores write only the in-bounds elements.

    word 0   magic "GPUDBGTM"
    word 1   data type | rank << 8 | interleave << 12 | swizzle << 16 |
             l2 promotion << 20 | oob fill << 24
    word 2   global address
    words 3-7   globalDim[0..4]
    words 8-11  globalStrides[0..3] (bytes, dimensions 1..4)
    word 12  boxDim[0..4], 9 bits each
    word 13  elementStrides[0..4], 4 bits each

Not supported (refused by the encoder with the reason): interleaved
layouts, the 128B_ATOM_* swizzles, the packed 4/6-bit data types, im2col.
"""
from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

import numpy as np

MAP_BYTES = 128
MAGIC = int.from_bytes(b"GPUDBGTM", "little")


class CUtensorMapDataType(enum.IntEnum):
    CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0
    CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1
    CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2
    CU_TENSOR_MAP_DATA_TYPE_INT32 = 3
    CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4
    CU_TENSOR_MAP_DATA_TYPE_INT64 = 5
    CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7
    CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8
    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ = 10
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 = 11
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ = 12
    CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B = 13
    CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B = 14
    CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B = 15


class CUtensorMapInterleave(enum.IntEnum):
    CU_TENSOR_MAP_INTERLEAVE_NONE = 0
    CU_TENSOR_MAP_INTERLEAVE_16B = 1
    CU_TENSOR_MAP_INTERLEAVE_32B = 2


class CUtensorMapSwizzle(enum.IntEnum):
    CU_TENSOR_MAP_SWIZZLE_NONE = 0
    CU_TENSOR_MAP_SWIZZLE_32B = 1
    CU_TENSOR_MAP_SWIZZLE_64B = 2
    CU_TENSOR_MAP_SWIZZLE_128B = 3
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B = 4
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B = 6


class CUtensorMapL2promotion(enum.IntEnum):
    CU_TENSOR_MAP_L2_PROMOTION_NONE = 0
    CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1
    CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3


class CUtensorMapFloatOOBfill(enum.IntEnum):
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1


T = CUtensorMapDataType
# element size and the bit pattern of the out-of-bounds NaN (None: not a float type)
ELEMENTS = {
    T.CU_TENSOR_MAP_DATA_TYPE_UINT8: (1, None), T.CU_TENSOR_MAP_DATA_TYPE_UINT16: (2, None),
    T.CU_TENSOR_MAP_DATA_TYPE_UINT32: (4, None), T.CU_TENSOR_MAP_DATA_TYPE_INT32: (4, None),
    T.CU_TENSOR_MAP_DATA_TYPE_UINT64: (8, None), T.CU_TENSOR_MAP_DATA_TYPE_INT64: (8, None),
    T.CU_TENSOR_MAP_DATA_TYPE_FLOAT16: (2, 0x7FFF), T.CU_TENSOR_MAP_DATA_TYPE_FLOAT32: (4, 0x7FFFFFFF),
    T.CU_TENSOR_MAP_DATA_TYPE_FLOAT64: (8, 0x7FFFFFFFFFFFFFFF), T.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: (2, 0x7FFF),
    T.CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ: (4, 0x7FFFFFFF), T.CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: (4, 0x7FFFFFFF),
    T.CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: (4, 0x7FFFFFFF),
}
SWIZZLE_BITS = {CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE: 0, CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B: 1,
                CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B: 2, CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B: 3}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class TensorMapError(ValueError):
    """An argument cuTensorMapEncodeTiled refuses, or 128 bytes that are not
    a tensor map; the message names the argument."""


@dataclass(frozen=True)
class TensorMap:
    dtype: CUtensorMapDataType
    rank: int
    address: int
    dims: tuple[int, ...]          # globalDim, rank entries
    strides: tuple[int, ...]       # bytes per step of dimensions 1..rank-1
    box: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: int
    swizzle: int
    l2_promotion: int
    oob_fill: int

    @property
    def element_size(self) -> int:
        return ELEMENTS[self.dtype][0]

    @property
    def counts(self) -> tuple[int, ...]:
        """Elements per dimension of the box in shared memory (elementStrides[0] is ignored)."""
        es = (1,) + self.element_strides[1:]
        return tuple(-(-b // e) for b, e in zip(self.box, es))

    @property
    def box_bytes(self) -> int:
        return int(np.prod(self.counts)) * self.element_size

    @property
    def alignment(self) -> int:
        """The shared-memory alignment a box needs (16, or the swizzle's repeat)."""
        bits = SWIZZLE_BITS[CUtensorMapSwizzle(self.swizzle)]
        return 16 if not bits else 128 << bits


def _enum(cls, value, what: str):
    try:
        return cls(int(value))
    except ValueError:
        raise TensorMapError(f"{what} {int(value)} is not a {cls.__name__}") from None


def encode(dtype, rank: int, address: int, dims, strides, box, element_strides, interleave, swizzle,
           l2_promotion, oob_fill) -> bytes:
    """Check cuTensorMapEncodeTiled's arguments as CUDA documents them and
    pack the 128-byte map (TensorMapError naming the first bad one)."""
    dt = _enum(CUtensorMapDataType, dtype, "tensorDataType")
    il = _enum(CUtensorMapInterleave, interleave, "interleave")
    sw = _enum(CUtensorMapSwizzle, swizzle, "swizzle")
    l2 = _enum(CUtensorMapL2promotion, l2_promotion, "l2Promotion")
    oob = _enum(CUtensorMapFloatOOBfill, oob_fill, "oobFill")
    if dt not in ELEMENTS:
        raise TensorMapError(f"tensorDataType {dt.name}: packed 4/6-bit tensors are not supported")
    if il is not CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE:
        raise TensorMapError(f"interleave {il.name}: interleaved layouts are not supported")
    if sw not in SWIZZLE_BITS:
        raise TensorMapError(f"swizzle {sw.name}: the 128B_ATOM swizzles are not supported")
    if not 1 <= int(rank) <= 5:
        raise TensorMapError(f"tensorRank {int(rank)} must be 1..5")
    rank = int(rank)
    esize, nan = ELEMENTS[dt]
    if oob is CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA and nan is None:
        raise TensorMapError(f"oobFill NAN_REQUEST_ZERO_FMA needs a floating-point tensorDataType, not {dt.name}")
    address = int(address)
    if address % 16:
        raise TensorMapError(f"globalAddress {address:#x} must be 16-byte aligned")
    dims = [int(d) for d in dims[:rank]]
    strides = [int(s) for s in strides[:rank - 1]]
    box = [int(b) for b in box[:rank]]
    es = [int(e) for e in element_strides[:rank]]
    for i, d in enumerate(dims):
        if not 1 <= d <= 1 << 31:
            raise TensorMapError(f"globalDim[{i}] = {d} must be 1..2^31")
    for i, s in enumerate(strides):
        if s % 16 or not 0 < s < 1 << 40:
            raise TensorMapError(f"globalStrides[{i}] = {s} must be a positive multiple of 16 below 2^40")
    for i, b in enumerate(box):
        if not 1 <= b <= 256:
            raise TensorMapError(f"boxDim[{i}] = {b} must be 1..256")
    if box[0] * esize % 16:
        raise TensorMapError(f"boxDim[0] * element size = {box[0] * esize} bytes must be a multiple of 16")
    bits = SWIZZLE_BITS[sw]
    if bits and box[0] * esize > 16 << bits:
        raise TensorMapError(f"swizzle {sw.name} needs boxDim[0] * element size <= {16 << bits} bytes, "
                             f"not {box[0] * esize}")
    for i, e in enumerate(es):
        if not 1 <= e <= 8:
            raise TensorMapError(f"elementStrides[{i}] = {e} must be 1..8")
    words = [0] * 16
    words[0] = MAGIC
    words[1] = int(dt) | rank << 8 | int(il) << 12 | int(sw) << 16 | int(l2) << 20 | int(oob) << 24
    words[2] = address
    for i, d in enumerate(dims):
        words[3 + i] = d
    for i, s in enumerate(strides):
        words[8 + i] = s
    words[12] = sum(b << (9 * i) for i, b in enumerate(box))
    words[13] = sum(e << (4 * i) for i, e in enumerate(es))
    return struct.pack("<16Q", *words)


def decode(raw: bytes) -> TensorMap:
    """The map in 128 bytes; TensorMapError when they are not one."""
    if len(raw) != MAP_BYTES:
        raise TensorMapError(f"a tensor map is {MAP_BYTES} bytes, got {len(raw)}")
    w = struct.unpack("<16Q", raw)
    if w[0] != MAGIC:
        raise TensorMapError("these 128 bytes are not a tensor map made by cuTensorMapEncodeTiled")
    rank = (w[1] >> 8) & 0xF
    return TensorMap(CUtensorMapDataType(w[1] & 0xFF), rank, w[2], tuple(w[3:3 + rank]),
                     tuple(w[8:8 + rank - 1]), tuple((w[12] >> (9 * i)) & 0x1FF for i in range(rank)),
                     tuple((w[13] >> (4 * i)) & 0xF for i in range(rank)), (w[1] >> 12) & 0xF,
                     (w[1] >> 16) & 0xF, (w[1] >> 20) & 0xF, (w[1] >> 24) & 0xF)


def box_elements(tm: TensorMap, coords) -> tuple[np.ndarray, np.ndarray]:
    """(global addresses, in-bounds mask) of the box's elements at
    `coords`, in shared-memory order (dimension 0 fastest)."""
    es = (1,) + tm.element_strides[1:]
    axes = [int(c) + np.arange(n, dtype=np.int64) * e for c, n, e in zip(coords, tm.counts, es)]
    grids = np.meshgrid(*axes[::-1], indexing="ij")[::-1]     # grids[i]: index along dimension i
    inside = np.ones(grids[0].shape, dtype=bool)
    addr = np.full(grids[0].shape, tm.address, dtype=np.int64)
    for i, g in enumerate(grids):
        inside &= (g >= 0) & (g < tm.dims[i])
        addr += g * (tm.element_size if i == 0 else tm.strides[i - 1])
    return addr.ravel(), inside.ravel()


def fill_value(tm: TensorMap) -> int:
    nan = ELEMENTS[tm.dtype][1]
    return nan if tm.oob_fill and nan is not None else 0


def swizzle_order(tm: TensorMap, nbytes: int) -> np.ndarray:
    """For each 16-byte chunk of shared memory (from an aligned start), the
    chunk of the dense box it holds."""
    chunks = np.arange(nbytes // 16, dtype=np.int64)
    bits = SWIZZLE_BITS[CUtensorMapSwizzle(tm.swizzle)]
    if not bits:
        return chunks
    mask = (1 << bits) - 1
    return chunks ^ ((chunks >> 3) & mask)


def element_dtype(tm: TensorMap) -> np.dtype:
    return np.dtype(_UINT[tm.element_size])
