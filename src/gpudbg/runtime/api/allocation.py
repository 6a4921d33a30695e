"""Seed 002 §2.9: memory allocation (device, pinned host, managed)."""
from __future__ import annotations

from typing import Any

import numpy as np

from gpudbg.driver.engine import get_engine
from gpudbg.runtime.api._base import _api, _ctx, _int
from gpudbg.runtime.errors import DriverError, mcError_t
from gpudbg.runtime.types import (
    mcHostAllocFlags, mcMemAttachFlags,
)
from gpudbg.sim.memory.spaces import AllocationKind


# ------------------------------------------------------------------ 2.9 allocation
@_api(1)
def mcMalloc(size: int) -> int:
    """Seed 002 §2.9.3.8: device memory; size 0 gives 0."""
    return _ctx().memory.alloc(_int("size", size), AllocationKind.DEVICE)


@_api(0)
def mcFree(ptr: int) -> None:
    """Seed 002 §2.9.3.2: waits for the device first, then frees; 0 is a no-op."""
    ctx = _ctx()
    if ptr:
        ctx.wait_idle_quietly()
    ctx.memory.free(ptr, (AllocationKind.DEVICE, AllocationKind.PITCHED, AllocationKind.MANAGED),
                    "mcFree")
    ctx.reap()


@_api(1)
def mcMallocHost(size: int, flags: int = 0) -> int:
    """Seed 002 §2.9.3.10: pinned host memory, an int pointer (see host_view)."""
    flags = _int("flags", flags)
    if flags & ~0x3:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"unknown mcMallocHost flags 0x{flags:x}")
    return _ctx().memory.alloc(_int("size", size), AllocationKind.HOST_PINNED, flags)


@_api(1)
def mcHostAlloc(size: int, flags: int = 0) -> int:
    """Pinned host memory with mcHostAlloc* flags (as cudaHostAlloc)."""
    flags = _int("flags", flags)
    if flags & ~int(mcHostAllocFlags.mcHostAllocPortable | mcHostAllocFlags.mcHostAllocMapped
                    | mcHostAllocFlags.mcHostAllocWriteCombined):
        raise DriverError(mcError_t.mcErrorInvalidValue, f"unknown mcHostAlloc flags 0x{flags:x}")
    return _ctx().memory.alloc(_int("size", size), AllocationKind.HOST_PINNED, flags)


@_api(0)
def mcFreeHost(ptr: int) -> None:
    """Seed 002 §2.9.3.3."""
    ctx = _ctx()
    if ptr:
        ctx.wait_idle_quietly()
    ctx.memory.free(ptr, (AllocationKind.HOST_PINNED,), "mcFreeHost")


@_api(1)
def mcMallocManaged(size: int, flags: int = int(mcMemAttachFlags.mcMemAttachGlobal)) -> int:
    """Managed (unified) memory, host-visible through host_view."""
    if _int("flags", flags) not in (1, 2):
        raise DriverError(mcError_t.mcErrorInvalidValue, "flags must be mcMemAttachGlobal or mcMemAttachHost")
    return _ctx().memory.alloc(_int("size", size), AllocationKind.MANAGED, flags)


@_api(1)
def mcHostGetDevicePointer(host_ptr: int, flags: int = 0) -> int:
    """Seed 002 §2.9.3.4: with UVA the device pointer is the host pointer."""
    _ctx()
    info = get_engine().resolve_pointer(host_ptr) if isinstance(host_ptr, int) else None
    if info is None or info.kind is not AllocationKind.HOST_PINNED or flags != 0:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"{host_ptr!r} is not pinned host memory")
    return host_ptr


@_api(2)
def mcMemGetInfo() -> tuple[int, int]:
    """(free, total) device memory in bytes."""
    mem = _ctx().gpu.memory
    return mem.capacity - mem.used, mem.capacity


def host_view(ptr: int, nbytes: int, dtype: Any = np.uint8) -> np.ndarray:
    """A live numpy view of pinned host or managed memory (gpudbg extension:
    what a C program does by dereferencing the pointer)."""
    info = get_engine().resolve_pointer(ptr) if isinstance(ptr, int) else None
    if info is None or info.kind not in (AllocationKind.HOST_PINNED, AllocationKind.MANAGED):
        raise ValueError(f"{ptr!r} is not pinned host or managed memory; copy device memory with mcMemcpy")
    if nbytes < 0 or nbytes > info.remaining:
        raise ValueError(f"{nbytes} bytes at 0x{ptr:x} exceed the {info.allocation.describe_short()}")
    return info.allocation.data[info.offset:info.offset + nbytes].view(np.dtype(dtype))


__all__ = ['mcMalloc', 'mcFree', 'mcMallocHost', 'mcHostAlloc', 'mcFreeHost', 'mcMallocManaged', 'mcHostGetDevicePointer', 'mcMemGetInfo', 'host_view']
