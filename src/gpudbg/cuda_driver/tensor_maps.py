"""Tensor maps in the driver API: cuTensorMapEncodeTiled (cuda.h's
signature), the map cp.async.bulk.tensor copies boxes with.

The arguments are C arrays read at their addresses; every check CUDA
documents for them is made by the simulator's tensor-map format
(sim/tensor_map.py), whose refusal is CUDA_ERROR_INVALID_VALUE naming the
argument. The map is written into the caller's 128-byte CUtensorMap. A
context must be current, as the driver requires.
"""
from __future__ import annotations

from gpudbg import cabi
from gpudbg.cuda_driver._base import R, current_context, entry, fail
from gpudbg.cuda_driver.module import need
from gpudbg.sim import tensor_map

__all__ = ["cuTensorMapEncodeTiled"]


@entry
def cuTensorMapEncodeTiled(tensorMap: int, tensorDataType: int, tensorRank: int, globalAddress: int,
                           globalDim: int, globalStrides: int, boxDim: int, elementStrides: int,
                           interleave: int, swizzle: int, l2Promotion: int, oobFill: int) -> None:
    current_context()
    need(tensorMap, "tensorMap")
    rank = int(tensorRank)
    if not 1 <= rank <= 5:
        raise fail(R.CUDA_ERROR_INVALID_VALUE, f"tensorRank {rank} must be 1..5")
    dims = cabi.load_array(need(globalDim, "globalDim"), "u64", rank, "globalDim")
    strides = cabi.load_array(need(globalStrides, "globalStrides"), "u64", rank - 1, "globalStrides") \
        if rank > 1 else []
    box = cabi.load_array(need(boxDim, "boxDim"), "u32", rank, "boxDim")
    es = cabi.load_array(need(elementStrides, "elementStrides"), "u32", rank, "elementStrides")
    try:
        raw = tensor_map.encode(tensorDataType, rank, int(globalAddress), dims, strides, box, es, interleave,
                                swizzle, l2Promotion, oobFill)
    except tensor_map.TensorMapError as e:
        raise fail(R.CUDA_ERROR_INVALID_VALUE, str(e)) from None
    cabi.write(tensorMap, raw, "tensorMap")
