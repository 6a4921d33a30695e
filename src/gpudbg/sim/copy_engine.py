"""The copy engine's pitched operations: COPY_2D and MEMSET_2D, executed as
one command each on a copy engine thread (sim/engines.py), beside running
kernels, as a DMA engine walks rows itself.

The one idea: a pitched region is one checked span (first byte to the last
row's last byte) inside a single allocation, seen through a strided numpy
view (rows x width), so a whole rectangle moves in one array operation and
the bounds check is the span check the 1D paths already use. The source
and destination may live on different simulated devices (peer copies, or
pinned memory of another device): each address is resolved to the memory
whose VA window holds it. Nothing here decides API semantics.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory.spaces import AccessFault, AccessType, Space, fault_message, misaligned_phrase


def memory_for(gpu: Any, address: int) -> Any:
    """The GlobalMemory (this device's or a peer's) whose VA holds address."""
    if gpu.memory.contains_range(address):
        return gpu.memory
    for peer in getattr(gpu, "peers", {}).values():
        if peer.memory.contains_range(address):
            return peer.memory
    raise AccessFault(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS, Space.GLOBAL, -1, address, 1,
                      fault_message("__global__", AccessType.READ, 1, address,
                                    "is not in the address space of any device"))


def _rect(mem: Any, address: int, pitch: int, width: int, height: int, verb: AccessType) -> np.ndarray:
    span = (height - 1) * pitch + width
    flat = mem.view(address, span, verb)
    return as_strided(flat, shape=(height, width), strides=(pitch, 1))


def copy_2d(gpu: Any, src: int, dst: int, spitch: int, dpitch: int, width: int, height: int) -> None:
    """Copy `height` rows of `width` bytes; overlapping ranges behave as memmove."""
    if width == 0 or height == 0:
        return
    s = _rect(memory_for(gpu, src), src, spitch, width, height, AccessType.READ)
    d = _rect(memory_for(gpu, dst), dst, dpitch, width, height, AccessType.WRITE)
    if np.may_share_memory(s, d):
        s = s.copy()
    d[...] = s


def fill_2d(gpu: Any, dst: int, pitch: int, value: int, element_size: int, width: int,
            height: int) -> None:
    """Set `height` rows of `width` elements of element_size bytes."""
    if width == 0 or height == 0:
        return
    if dst % element_size or (height > 1 and pitch % element_size):
        bad = dst if dst % element_size else dst + pitch
        raise AccessFault(CUDBGException.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS, Space.GLOBAL, -1,
                          bad, element_size,
                          fault_message("__global__", AccessType.WRITE, element_size, bad,
                                        misaligned_phrase(element_size)))
    mem = memory_for(gpu, dst)
    rows = _rect(mem, dst, pitch, width * element_size, height, AccessType.WRITE)
    pattern = np.array([value & ((1 << (8 * element_size)) - 1)],
                       dtype=np.dtype(f"<u{element_size}")).view(np.uint8)
    rows[...] = np.tile(pattern, width)


def execute(gpu: Any, cmd: Any) -> None:
    """The front end's handler for COPY_2D and MEMSET_2D commands."""
    if cmd.opcode.name == "COPY_2D":
        copy_2d(gpu, cmd.src, cmd.dst, cmd.spitch, cmd.dpitch, cmd.width, cmd.height)
    else:
        fill_2d(gpu, cmd.dst, cmd.pitch, cmd.value, cmd.element_size, cmd.width, cmd.height)
