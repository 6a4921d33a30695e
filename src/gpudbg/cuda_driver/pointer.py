"""Pointer attributes: cuPointerGetAttribute(s) and cuPointerSetAttribute.

The one idea: every answer is read off what the engine knows about the
address, gathered once in `PointerFacts` from the UVA registry (device,
pitched, pinned, managed, module memory and the device mappings of
registered host ranges), the stream-ordered pool blocks and the registry of
registered host ranges (by host address). An address nothing knows is
CUDA_ERROR_INVALID_VALUE for cuPointerGetAttribute (numba relies on that to
tell host arrays from device ones) and all-default values for
cuPointerGetAttributes, as NVIDIA documents. Each attribute is written with
the C type cuda.h gives it (booleans as 32-bit ints). SYNC_MEMOPS is the
one settable attribute: it is kept on the allocation and makes synchronous
copies and memsets touching it wait for completion (copies.py).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

from gpudbg import cabi
from gpudbg.cuda_driver._base import HandleKind, R, entry, fail, handle_of, require_init
from gpudbg.driver import mempool as _mempool
from gpudbg.sim.memory.spaces import AllocationKind

__all__ = ["cuPointerGetAttribute", "cuPointerGetAttributes", "cuPointerSetAttribute"]

INVALID = R.CUDA_ERROR_INVALID_VALUE
CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_DEVICE = 1, 2
ACCESS_NONE, ACCESS_READ, ACCESS_READWRITE = 0, 1, 3     # CU_POINTER_ATTRIBUTE_ACCESS_FLAG_*
HOST_ACCESSIBLE = (AllocationKind.HOST_PINNED, AllocationKind.HOST_REGISTERED, AllocationKind.MANAGED)


class CUpointer_attribute:
    """cuda.h's CUpointer_attribute (CUDA 13)."""

    CONTEXT = 1
    MEMORY_TYPE = 2
    DEVICE_POINTER = 3
    HOST_POINTER = 4
    P2P_TOKENS = 5
    SYNC_MEMOPS = 6
    BUFFER_ID = 7
    IS_MANAGED = 8
    DEVICE_ORDINAL = 9
    IS_LEGACY_CUDA_IPC_CAPABLE = 10
    RANGE_START_ADDR = 11
    RANGE_SIZE = 12
    MAPPED = 13
    ALLOWED_HANDLE_TYPES = 14
    IS_GPU_DIRECT_RDMA_CAPABLE = 15
    ACCESS_FLAGS = 16
    MEMPOOL_HANDLE = 17
    MAPPING_SIZE = 18
    MAPPING_BASE_ADDR = 19
    MEMORY_BLOCK_ID = 20
    IS_HW_DECOMPRESS_CAPABLE = 21


P = CUpointer_attribute
# attribute -> the C type cuda.h (and cuda-bindings' helper) gives its value
TYPES = {P.CONTEXT: "u64", P.MEMORY_TYPE: "u32", P.DEVICE_POINTER: "u64", P.HOST_POINTER: "u64",
         P.SYNC_MEMOPS: "i32", P.BUFFER_ID: "u64", P.IS_MANAGED: "i32", P.DEVICE_ORDINAL: "i32",
         P.IS_LEGACY_CUDA_IPC_CAPABLE: "i32", P.RANGE_START_ADDR: "u64", P.RANGE_SIZE: "u64",
         P.MAPPED: "i32", P.ALLOWED_HANDLE_TYPES: "u64", P.IS_GPU_DIRECT_RDMA_CAPABLE: "u32",
         P.ACCESS_FLAGS: "u32", P.MEMPOOL_HANDLE: "u64", P.MAPPING_SIZE: "u64",
         P.MAPPING_BASE_ADDR: "u64", P.MEMORY_BLOCK_ID: "u64", P.IS_HW_DECOMPRESS_CAPABLE: "i32"}


class CUDA_POINTER_ATTRIBUTE_P2P_TOKENS(ctypes.Structure):
    _fields_ = [("p2pToken", ctypes.c_ulonglong), ("vaSpaceToken", ctypes.c_uint)]


@dataclass
class PointerFacts:
    """What the engine knows about one address."""

    allocation: Any             # the sim Allocation (for a registered host address: its device mapping)
    context: Any
    ordinal: int
    device_pointer: int
    host_pointer: int | None    # None: not host-accessible
    range_start: int
    range_size: int
    pool: Any = None

    @property
    def kind(self) -> AllocationKind:
        return self.allocation.kind


def facts(ptr: int) -> PointerFacts | None:
    """Everything pointer attributes report about ptr, or None."""
    engine = require_init()
    ptr = int(ptr)
    if not ptr:
        return None
    info = _mempool.checked_pointer(engine, ptr, engine.resolve_pointer(ptr), False, "ptr")
    if info is not None:
        a = info.allocation
        ctx = info.context
        pool = None
        registry = _mempool.registry(engine)
        block = registry.containing(ptr)
        if block is not None:
            pool, ctx = block.pool, block.pool.ctx
        host = None
        start, size = a.base, a.size
        if a.kind is AllocationKind.HOST_REGISTERED:
            reg = engine.uva.host.by_device_address(a.base)
            host = None if reg is None else reg.host_address + info.offset
        elif a.kind in HOST_ACCESSIBLE:
            host = ptr
        return PointerFacts(a, ctx, info.gpu.ordinal, ptr, host, start, size, pool)
    found = engine.uva.host.lookup(ptr, 1)
    if found is not None:                         # a registered host range, by its host address
        reg, off = found
        return PointerFacts(reg.allocation, reg.context, reg.context.device.ordinal,
                            reg.device_address + off, ptr, reg.host_address, reg.size)
    return None


def _access(f: PointerFacts) -> int:
    engine = require_init()
    stack = engine.threads.stack
    current = stack[-1] if stack and not stack[-1].destroyed else None
    if f.kind in (AllocationKind.HOST_PINNED, AllocationKind.HOST_REGISTERED, AllocationKind.MANAGED):
        granted = ACCESS_READWRITE        # page-locked and managed memory reach every device
    elif current is None or current.device.ordinal == f.ordinal:
        granted = ACCESS_READWRITE
    else:
        granted = ACCESS_NONE             # no peer access between simulated devices
    if granted and f.allocation.readonly:
        granted = ACCESS_READ
    return granted


def value(f: PointerFacts | None, attribute: int) -> int:
    """One attribute's value (defaults for an unknown pointer)."""
    if attribute not in TYPES:
        raise fail(INVALID, f"{attribute!r} is not a CUpointer_attribute this driver reports")
    if f is None:
        return 0
    if attribute == P.CONTEXT:
        return handle_of(HandleKind.CONTEXT, f.context) if f.context is not None else 0
    if attribute == P.MEMORY_TYPE:
        page_locked = f.kind in (AllocationKind.HOST_PINNED, AllocationKind.HOST_REGISTERED)
        return CU_MEMORYTYPE_HOST if page_locked else CU_MEMORYTYPE_DEVICE
    if attribute == P.DEVICE_POINTER:
        return f.device_pointer
    if attribute == P.HOST_POINTER:
        if f.host_pointer is None:
            raise fail(INVALID, f"0x{f.device_pointer:x} is device memory, not accessible from the host")
        return f.host_pointer
    if attribute == P.SYNC_MEMOPS:
        return int(getattr(f.allocation, "sync_memops", False))
    if attribute in (P.BUFFER_ID, P.MEMORY_BLOCK_ID):
        return f.allocation.alloc_id
    if attribute == P.IS_MANAGED:
        return int(f.kind is AllocationKind.MANAGED)
    if attribute == P.DEVICE_ORDINAL:
        return f.ordinal
    if attribute in (P.IS_LEGACY_CUDA_IPC_CAPABLE, P.IS_GPU_DIRECT_RDMA_CAPABLE, P.IS_HW_DECOMPRESS_CAPABLE):
        return 0                          # no IPC memory handles, RDMA or decompression engines
    if attribute in (P.RANGE_START_ADDR, P.MAPPING_BASE_ADDR):
        return f.range_start
    if attribute in (P.RANGE_SIZE, P.MAPPING_SIZE):
        return f.range_size
    if attribute == P.MAPPED:
        return 1
    if attribute == P.ALLOWED_HANDLE_TYPES:
        return int(getattr(f.pool, "handle_types", 0) or 0)
    if attribute == P.ACCESS_FLAGS:
        return _access(f)
    if attribute == P.MEMPOOL_HANDLE:
        return handle_of(HandleKind.MEMPOOL, f.pool) if f.pool is not None else 0
    raise AssertionError(attribute)


def sync_memops(ptr: int) -> bool:
    """Was SYNC_MEMOPS set on the allocation containing ptr?"""
    f = facts(ptr)
    return f is not None and bool(getattr(f.allocation, "sync_memops", False))


@entry
def cuPointerGetAttribute(data: int, attribute: int, ptr: int) -> None:
    """One attribute of ptr; CUDA_ERROR_INVALID_VALUE for an address no
    allocation contains."""
    if not data:
        raise fail(INVALID, "data is NULL")
    attribute = int(attribute)
    f = facts(ptr)
    if f is None:
        raise fail(INVALID, f"0x{int(ptr):x} is not an address of the CUDA driver (pageable host memory?)")
    if attribute == P.P2P_TOKENS:
        raise fail(R.CUDA_ERROR_NOT_SUPPORTED, "P2P tokens exist for GPUDirect RDMA, which the simulator lacks")
    cabi.store(data, TYPES.get(attribute, "u64"), value(f, attribute), "data")


@entry
def cuPointerGetAttributes(numAttributes: int, attributes: int, data: int, ptr: int) -> None:
    """Several attributes at once into data[i]; an unknown pointer gets
    default (zero) values and CUDA_SUCCESS, as documented."""
    n = int(numAttributes)
    if n <= 0:
        raise fail(INVALID, f"numAttributes must be positive, got {n}")
    wanted = cabi.load_array(attributes, "i32", n, "attributes")
    outs = cabi.load_array(data, "u64", n, "data")
    f = facts(ptr)
    for i, (attribute, out) in enumerate(zip(wanted, outs)):
        if attribute == P.P2P_TOKENS:
            raise fail(R.CUDA_ERROR_NOT_SUPPORTED, "P2P tokens exist for GPUDirect RDMA only")
        if not out:
            raise fail(INVALID, f"data[{i}] is NULL")
        if f is not None and attribute == P.HOST_POINTER and f.host_pointer is None:
            result = 0                        # device memory: no host pointer (NULL), not an error here
        else:
            result = value(f, attribute)
        cabi.store(out, TYPES[attribute], result, f"data[{i}]")


@entry
def cuPointerSetAttribute(value_ptr: int, attribute: int, ptr: int) -> None:
    """Only CU_POINTER_ATTRIBUTE_SYNC_MEMOPS (an unsigned int boolean) can be set."""
    if int(attribute) != P.SYNC_MEMOPS:
        raise fail(INVALID, f"{attribute!r}: only CU_POINTER_ATTRIBUTE_SYNC_MEMOPS can be set")
    flag = cabi.load(value_ptr, "u32", "value")
    f = facts(ptr)
    if f is None or f.kind is AllocationKind.MANAGED or f.pool is not None:
        raise fail(INVALID, f"0x{int(ptr):x} is not device or page-locked memory of cuMemAlloc/cuMemHostAlloc")
    f.allocation.sync_memops = bool(flag)
