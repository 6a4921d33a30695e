"""Memory allocation in the driver API: device, pitched, pinned host,
registered host and managed memory, address ranges, and stream-ordered
allocation from memory pools.

Every allocation is one call into the engine's memory manager
(`ctx.memory.alloc(size, AllocationKind, flags)`) or pool registry
(driver/mempool.py), as the mc* layer makes it, so both API layers share
one set of semantics; this layer only reads and writes the C arguments.
Host pointers arrive as ints: registering host memory hands the engine a
view of the process's own bytes (`cabi.host_view`), which the engine maps
into the device's address space without copying. That mapping has a device
address of its own, which cuMemHostGetDevicePointer returns (so the device
reports CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM 0).
Unlike the runtime, a size of 0 is CUDA_ERROR_INVALID_VALUE, as in
NVIDIA's driver.
"""
from __future__ import annotations

from typing import Any

from gpudbg import cabi
from gpudbg.cuda_driver._base import (HandleKind, R, current_context, entry, fail, object_of,
                                      per_thread_variant, stream_of)
from gpudbg.driver import mempool as _mempool
from gpudbg.driver.engine import get_engine
from gpudbg.sim.memory.spaces import AllocationKind

__all__ = ["cuMemAlloc_v2", "cuMemFree_v2", "cuMemAllocPitch_v2", "cuMemGetInfo_v2", "cuMemAllocHost_v2",
           "cuMemFreeHost", "cuMemHostAlloc", "cuMemHostGetDevicePointer_v2", "cuMemHostGetFlags",
           "cuMemHostRegister_v2", "cuMemHostUnregister", "cuMemAllocManaged", "cuMemGetAddressRange_v2",
           "cuMemAllocAsync", "cuMemAllocAsync_ptsz", "cuMemFreeAsync", "cuMemFreeAsync_ptsz",
           "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz"]

INVALID = R.CUDA_ERROR_INVALID_VALUE
PAGE_LOCKED = (AllocationKind.HOST_PINNED, AllocationKind.HOST_REGISTERED)
CU_MEMHOSTALLOC_MASK = 0x07          # PORTABLE | DEVICEMAP | WRITECOMBINED
CU_MEMHOSTREGISTER_MASK = 0x0F       # PORTABLE | DEVICEMAP | IOMEMORY | READ_ONLY
CU_MEM_ATTACH_GLOBAL, CU_MEM_ATTACH_HOST = 0x1, 0x2


def _need(ptr: int, name: str) -> int:
    if not ptr:
        raise fail(INVALID, f"{name} is NULL")
    return int(ptr)


def _size(size: int, name: str = "bytesize") -> int:
    size = int(size)
    if size <= 0:
        raise fail(INVALID, f"{name} must be positive, got {size}")
    return size


def _alloc(out: int, out_name: str, size: int, kind: AllocationKind, flags: int = 0, align: int = 256) -> int:
    _need(out, out_name)
    ctx = current_context()
    ptr = ctx.memory.alloc(size, kind, flags, align=align)
    cabi.store(out, "u64", ptr, out_name)
    return ptr


# ------------------------------------------------------------------ device memory
@entry
def cuMemAlloc_v2(dptr: int, bytesize: int) -> None:
    _alloc(dptr, "dptr", _size(bytesize), AllocationKind.DEVICE)


@entry
def cuMemAllocPitch_v2(dptr: int, pPitch: int, WidthInBytes: int, Height: int, ElementSizeBytes: int) -> None:
    """Rows padded to the device's texture alignment; ElementSizeBytes
    (the widest access, 4, 8 or 16 bytes) must be one of those."""
    _need(pPitch, "pPitch")
    if int(ElementSizeBytes) not in (4, 8, 16):
        raise fail(INVALID, f"ElementSizeBytes must be 4, 8 or 16, got {ElementSizeBytes}")
    width, height = _size(WidthInBytes, "WidthInBytes"), _size(Height, "Height")
    model = current_context().device.model
    if width > model.max_pitch:
        raise fail(INVALID, f"WidthInBytes={width} exceeds the maximum pitch {model.max_pitch}")
    align = model.texture_alignment
    pitch = -(-width // align) * align
    _alloc(dptr, "dptr", pitch * height, AllocationKind.PITCHED, align=align)
    cabi.store(pPitch, "u64", pitch, "pPitch")


@entry
def cuMemFree_v2(dptr: int) -> None:
    """Waits for the context's work, then frees device, pitched, managed or
    stream-ordered memory; NULL is a no-op."""
    _mempool.free_synchronously(current_context(), int(dptr), "cuMemFree")


@entry
def cuMemGetInfo_v2(free: int, total: int) -> None:  # noqa: A002 (cuda.h's names)
    _need(free, "free")
    _need(total, "total")
    mem = current_context().gpu.memory
    cabi.store(free, "u64", mem.capacity - mem.used)
    cabi.store(total, "u64", mem.capacity)


@entry
def cuMemAllocManaged(dptr: int, bytesize: int, flags: int) -> None:
    """Managed memory, attached globally (CU_MEM_ATTACH_GLOBAL) or to the host."""
    if int(flags) not in (CU_MEM_ATTACH_GLOBAL, CU_MEM_ATTACH_HOST):
        raise fail(INVALID, f"flags must be CU_MEM_ATTACH_GLOBAL or CU_MEM_ATTACH_HOST, got {flags!r}")
    _alloc(dptr, "dptr", _size(bytesize), AllocationKind.MANAGED, int(flags))


def allocation_range(ptr: int) -> Any:
    """The PointerInfo of the user allocation containing ptr (stream-ordered
    blocks included), or None."""
    engine = get_engine()
    return _mempool.checked_pointer(engine, ptr, engine.resolve_pointer(ptr), False, "dptr")


@entry
def cuMemGetAddressRange_v2(pbase: int, psize: int, dptr: int) -> None:
    """Base and size of the allocation containing dptr (either out-pointer
    may be NULL); CUDA_ERROR_NOT_FOUND for an address in no allocation."""
    current_context()
    info = allocation_range(int(dptr)) if dptr else None
    if info is None:
        raise fail(R.CUDA_ERROR_NOT_FOUND, f"0x{int(dptr):x} is in no allocation")
    if pbase:
        cabi.store(pbase, "u64", info.allocation.base)
    if psize:
        cabi.store(psize, "u64", info.allocation.size)


# ------------------------------------------------------------------ page-locked host memory
@entry
def cuMemAllocHost_v2(pp: int, bytesize: int) -> None:
    _alloc(pp, "pp", _size(bytesize), AllocationKind.HOST_PINNED)


@entry
def cuMemHostAlloc(pp: int, bytesize: int, Flags: int) -> None:
    """Pinned host memory with CU_MEMHOSTALLOC_* flags."""
    if int(Flags) & ~CU_MEMHOSTALLOC_MASK:
        raise fail(INVALID, f"unknown cuMemHostAlloc flags 0x{int(Flags):x}")
    _alloc(pp, "pp", _size(bytesize), AllocationKind.HOST_PINNED, int(Flags))


@entry
def cuMemFreeHost(p: int) -> None:
    ctx = current_context()
    if p:
        ctx.wait_idle_quietly()
    ctx.memory.free(int(p), (AllocationKind.HOST_PINNED,), "cuMemFreeHost")


def _page_locked(p: int) -> tuple[int, int]:
    """(device pointer, flags) of pinned memory or of a registered host range."""
    if not p:
        raise fail(INVALID, "p is NULL")
    engine = get_engine()
    info = engine.resolve_pointer(int(p))
    if info is not None and info.kind is AllocationKind.HOST_PINNED:
        return int(p), info.flags
    found = engine.uva.host.lookup(int(p), 1)
    if found is None:
        raise fail(INVALID, f"0x{int(p):x} is not page-locked host memory (cuMemHostAlloc or cuMemHostRegister)")
    reg, offset = found
    return reg.device_address + offset, reg.flags


@entry
def cuMemHostGetDevicePointer_v2(pdptr: int, p: int, Flags: int) -> None:
    """Pinned memory is its own device pointer (UVA); a registered range
    gives the address of its device mapping."""
    _need(pdptr, "pdptr")
    current_context()
    if int(Flags) != 0:
        raise fail(INVALID, f"Flags must be 0, got {Flags!r}")
    cabi.store(pdptr, "u64", _page_locked(p)[0])


@entry
def cuMemHostGetFlags(pFlags: int, p: int) -> None:
    _need(pFlags, "pFlags")
    current_context()
    cabi.store(pFlags, "u32", _page_locked(p)[1])


@entry
def cuMemHostRegister_v2(p: int, bytesize: int, Flags: int) -> None:
    """Page-lock bytesize bytes of the program's memory at p: the device
    reads and writes those very bytes."""
    ctx = current_context()
    size = _size(bytesize)
    flags = int(Flags)
    if flags & ~CU_MEMHOSTREGISTER_MASK:
        raise fail(INVALID, f"unknown cuMemHostRegister flags 0x{flags:x}")
    _need(p, "p")
    info = get_engine().resolve_pointer(int(p))
    if info is not None:
        raise fail(R.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                   f"0x{int(p):x} is already {info.allocation.describe_short()}")
    ctx.memory.register_host(cabi.host_view(int(p), size, "p"), size, flags)


@entry
def cuMemHostUnregister(p: int) -> None:
    """p must be the start of a registered range
    (CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED otherwise)."""
    ctx = current_context()
    _need(p, "p")
    ctx.memory.unregister_host(cabi.host_view(int(p), 1, "p"))


# ------------------------------------------------------------------ stream-ordered allocation
def _ordered_stream(ctx: Any, hStream: int, api: str) -> Any:
    """Graph memory nodes are not modelled: a capturing stream refuses
    stream-ordered allocation (and its capture is invalidated)."""
    s = stream_of(ctx, hStream)
    if getattr(s, "capture", None) is not None:
        s.capture.invalidate(f"{api} during stream capture")
        raise fail(R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                   f"{api}: {s!r} is capturing; graph memory nodes are not supported")
    return s


def _alloc_async(dptr: int, bytesize: int, pool: Any, hStream: int, api: str) -> None:
    _need(dptr, "dptr")
    ctx = current_context()
    size = _size(bytesize)
    s = _ordered_stream(ctx, hStream, api)
    if pool is None:
        pool = _mempool.registry(get_engine()).current_pool(ctx.device)
    cabi.store(dptr, "u64", pool.allocate(size, s))


@entry
def cuMemAllocAsync(dptr: int, bytesize: int, hStream: int) -> None:
    """From the current pool of the context's device; usable in stream order."""
    _alloc_async(dptr, bytesize, None, hStream, "cuMemAllocAsync")


@entry
def cuMemAllocFromPoolAsync(dptr: int, bytesize: int, pool: int, hStream: int) -> None:
    _alloc_async(dptr, bytesize, object_of(HandleKind.MEMPOOL, pool), hStream, "cuMemAllocFromPoolAsync")


@entry
def cuMemFreeAsync(dptr: int, hStream: int) -> None:
    """Freed when the stream gets there; later use in stream order is a
    use-after-free the simulator reports."""
    ctx = current_context()
    s = _ordered_stream(ctx, hStream, "cuMemFreeAsync")
    _mempool.registry(get_engine()).free(int(dptr), s, "cuMemFreeAsync")


cuMemAllocAsync_ptsz = per_thread_variant(cuMemAllocAsync, "cuMemAllocAsync_ptsz", 2)
cuMemAllocFromPoolAsync_ptsz = per_thread_variant(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync_ptsz", 3)
cuMemFreeAsync_ptsz = per_thread_variant(cuMemFreeAsync, "cuMemFreeAsync_ptsz", 1)
