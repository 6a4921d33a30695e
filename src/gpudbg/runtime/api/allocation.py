"""Seed 002 §2.9: memory allocation (device, pitched, 3D, pinned host,
registered host, mapped pointers, managed), plus §2.3.3.2
mcStreamAttachMemAsync, which is about managed memory.

Every pointer is one UVA address: the device pointer of pinned, registered
or managed memory is the same number the host uses (what the seed calls a
device with mcDevAttrCanUseHostPointerForRegisteredMem), so
mcHostGetDevicePointer returns it unchanged for pinned memory and the
mapping's address for a registered Python buffer. Pitched rows are aligned
to the device's texture alignment (512 bytes), the pitch real CUDA hands
out. Host memory is read and written through `host_view` (a C program
dereferences the pointer), or, when registered, through the buffer itself.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gpudbg.driver.engine import get_engine
from gpudbg.driver import mempool as _mempool
from gpudbg.runtime.api._args import (DevicePtr, Flags, HostBuffer, HostMemory, Size, Struct, mcStream_t)
from gpudbg.runtime.api._base import _api, _ctx, _int
from gpudbg.runtime.errors import McError, mcError_t
from gpudbg.runtime.memory_types import mcExtent, mcExtMallocFlags, mcHostRegisterFlags, mcPitchedPtr
from gpudbg.runtime.types import mcHostAllocFlags, mcMemAttachFlags
from gpudbg.sim.memory.spaces import AllocationKind

INVALID = mcError_t.mcErrorInvalidValue
_REGISTER_FLAGS = int(mcHostRegisterFlags.mcHostRegisterPortable | mcHostRegisterFlags.mcHostRegisterMapped
                      | mcHostRegisterFlags.mcHostRegisterIoMemory | mcHostRegisterFlags.mcHostRegisterReadOnly)
_ATTACH = {int(f) for f in mcMemAttachFlags}


def _pitch_for(width: int) -> int:
    align = _ctx().device.model.texture_alignment
    return max(align, -(-width // align) * align)


# ------------------------------------------------------------------ 2.9 allocation
@_api(1)
def mcMalloc(sizeBytes: Size) -> int:
    """Seed 002 §2.9.3.8: device memory; size 0 gives 0."""
    return _ctx().memory.alloc(sizeBytes, AllocationKind.DEVICE)


@_api(0)
def mcFree(ptr: DevicePtr) -> None:
    """Seed 002 §2.9.3.2: waits for the device first, then frees; 0 is a
    no-op; a double free, an interior pointer or memory of another
    allocator is mcErrorInvalidValue."""
    ctx = _ctx()
    _mempool.free_synchronously(ctx, ptr, "mcFree")


@_api(1)
def mcMallocHost(size: Size, flags: Flags = 0) -> int:
    """Seed 002 §2.9.3.10: pinned host memory, an int pointer (see host_view);
    flags mcMallocHostDefault/Portable/Mapped."""
    if flags & ~0x3:
        raise McError(INVALID, f"unknown mcMallocHost flags 0x{flags:x}")
    return _ctx().memory.alloc(size, AllocationKind.HOST_PINNED, flags)


@_api(1)
def mcHostAlloc(size: Size, flags: Flags = 0) -> int:
    """Pinned host memory with mcHostAlloc* flags (as cudaHostAlloc)."""
    if flags & ~int(mcHostAllocFlags.mcHostAllocPortable | mcHostAllocFlags.mcHostAllocMapped
                    | mcHostAllocFlags.mcHostAllocWriteCombined):
        raise McError(INVALID, f"unknown mcHostAlloc flags 0x{flags:x}")
    return _ctx().memory.alloc(size, AllocationKind.HOST_PINNED, flags)


@_api(0)
def mcFreeHost(ptr: DevicePtr) -> None:
    """Seed 002 §2.9.3.3: only memory from mcMallocHost; 0 is a no-op."""
    ctx = _ctx()
    if ptr:
        ctx.wait_idle_quietly()
    ctx.memory.free(ptr, (AllocationKind.HOST_PINNED,), "mcFreeHost")


@_api(1)
def mcMallocManaged(size: Size, flags: Flags = int(mcMemAttachFlags.mcMemAttachGlobal)) -> int:
    """Managed (unified) memory, host-visible through host_view (as
    cudaMallocManaged; flags mcMemAttachGlobal or mcMemAttachHost)."""
    if flags not in (1, 2):
        raise McError(INVALID, "flags must be mcMemAttachGlobal or mcMemAttachHost")
    return _ctx().memory.alloc(size, AllocationKind.MANAGED, flags)


@_api(2)
def mcMallocPitch(width: Size, height: Size) -> tuple[int, int]:
    """Seed 002 §2.9.3.11: (ptr, pitch) with the pitch width rounded up to
    the texture alignment; widths above the device's maximum pitch are
    mcErrorInvalidValue."""
    ctx = _ctx()
    if width > ctx.device.model.max_pitch:
        raise McError(INVALID, f"width={width} exceeds the maximum pitch {ctx.device.model.max_pitch}")
    pitch = _pitch_for(width)
    ptr = ctx.memory.alloc(pitch * height if width else 0, AllocationKind.PITCHED,
                           align=ctx.device.model.texture_alignment)
    return ptr, pitch


@_api(1)
def mcMalloc3D(extent: Struct(mcExtent)) -> mcPitchedPtr:
    """Seed 002 §2.9.3.9: pitch x height x depth bytes; returns the
    mcPitchedPtr (ptr, pitch, xsize=width, ysize=height)."""
    ctx = _ctx()
    w, h, d = (_int(f"extent.{n}", getattr(extent, n)) for n in ("width", "height", "depth"))
    if w > ctx.device.model.max_pitch:
        raise McError(INVALID, f"extent.width={w} exceeds the maximum pitch {ctx.device.model.max_pitch}")
    pitch = _pitch_for(w)
    ptr = ctx.memory.alloc(pitch * h * d if w else 0, AllocationKind.PITCHED,
                           align=ctx.device.model.texture_alignment)
    return mcPitchedPtr(ptr, pitch, w, h)


@_api(1)
def mcExtMallocWithFlags(sizeBytes: Size, flags: Flags) -> int:
    """Seed 002 §2.9.3.1: memory of a given type (hipExtMallocWithFlags
    flags): Default and Uncached are device memory, Finegrained is
    host-coherent managed memory (attached globally, see
    mcStreamAttachMemAsync), SignalMemory is an 8-byte device word."""
    ctx = _ctx()
    size = sizeBytes
    try:
        f = mcExtMallocFlags(flags)
    except ValueError:
        raise McError(INVALID, f"flags=0x{flags:x} is not an mcExtMallocWithFlags type") from None
    if f is mcExtMallocFlags.mcDeviceMallocFinegrained:
        return ctx.memory.alloc(size, AllocationKind.MANAGED, int(mcMemAttachFlags.mcMemAttachGlobal))
    if f is mcExtMallocFlags.mcMallocSignalMemory and size not in (0, 8):
        raise McError(INVALID, f"signal memory is one 8-byte word, not {size} bytes")
    return ctx.memory.alloc(size, AllocationKind.DEVICE, flags)


@_api(0)
def mcHostRegister(hostPtr: HostBuffer, sizeBytes: Size, flags: Flags = 0) -> None:
    """Seed 002 §2.9.3.6: page-lock an existing buffer (numpy array,
    bytearray): its first sizeBytes become device-accessible memory that
    aliases the buffer. An overlap with a registered range is
    mcErrorHostMemoryAlreadyRegistered (as cudaHostRegister)."""
    ctx = _ctx()
    if flags & ~_REGISTER_FLAGS:
        raise McError(INVALID, f"unknown mcHostRegister flags 0x{flags:x}")
    ctx.memory.register_host(hostPtr, sizeBytes, flags)


@_api(0)
def mcHostUnregister(hostPtr: HostMemory) -> None:
    """Seed 002 §2.9.3.7: the buffer (or its device pointer) must start the
    registered range; anything else is mcErrorHostMemoryNotRegistered (as
    cudaHostUnregister)."""
    _ctx().memory.unregister_host(hostPtr)


def _page_locked(hostPtr: Any) -> tuple[int, int]:
    """(device pointer, flags) of pinned or registered host memory."""
    eng = get_engine()
    if isinstance(hostPtr, (int, np.integer)) and not isinstance(hostPtr, bool):
        found = eng.uva.page_locked(int(hostPtr))
        if found is not None:
            return found
        raise McError(INVALID, f"0x{int(hostPtr):x} is not pinned or registered host memory")
    found = eng.uva.host.lookup_buffer(hostPtr, 1) if hostPtr is not None else None
    if found is None:
        raise McError(INVALID, "the buffer is not registered host memory (mcHostRegister)")
    reg, off = found
    return reg.device_address + off, reg.flags


@_api(1)
def mcHostGetDevicePointer(hostPtr: HostMemory, flags: Flags = 0) -> int:
    """Seed 002 §2.9.3.4: with UVA the device pointer of pinned memory is
    the host pointer; a registered buffer gives its mapping's address."""
    _ctx()
    if flags != 0:
        raise McError(INVALID, f"flags must be 0, got {flags}")
    return _page_locked(hostPtr)[0]


@_api(1)
def mcHostGetFlags(hostPtr: HostMemory) -> int:
    """Seed 002 §2.9.3.5: the flags given to mcMallocHost/mcHostAlloc or
    mcHostRegister for the range containing hostPtr."""
    _ctx()
    return _page_locked(hostPtr)[1]


@_api(0)
def mcStreamAttachMemAsync(stream: mcStream_t, devPtr: DevicePtr, length: Size = 0,
                           flags: Flags = int(mcMemAttachFlags.mcMemAttachSingle)) -> None:
    """Seed 002 §2.3.3.2: a stream-ordered change of a managed allocation's
    stream association (in effect once the stream's earlier work retired;
    destroying the stream restores the default). Pageable memory is
    mcErrorInvalidValue: the device reports mcDevAttrPageableMemoryAccess 0."""
    ctx = _ctx()
    s = ctx.stream(stream)
    if flags not in _ATTACH:
        raise McError(INVALID, f"flags must be mcMemAttachGlobal, Host or Single, got {flags:#x}")
    info = get_engine().resolve_pointer(devPtr)
    if info is None or info.kind is not AllocationKind.MANAGED:
        raise McError(INVALID, f"0x{devPtr:x} is not managed memory (pageable memory cannot be attached: "
                               f"the device does not access pageable memory)")
    if info.offset or length not in (0, info.allocation.size):
        raise McError(INVALID, "a managed allocation is attached whole: devPtr must be its start "
                                   f"and length 0 or {info.allocation.size}")
    if flags == mcMemAttachFlags.mcMemAttachSingle and s.is_legacy:
        raise McError(INVALID, "mcMemAttachSingle needs a specific stream, not the NULL stream")
    fence = s.submit([])
    owner = info.context.memory if info.context is not None else ctx.memory
    owner.attach(info.allocation.base, length, flags, s, fence)
    ctx.reap()


@_api(2)
def mcMemGetInfo() -> tuple[int, int]:
    """(free, total) device memory in bytes."""
    mem = _ctx().gpu.memory
    return mem.capacity - mem.used, mem.capacity


_HOST_VIEWABLE = (AllocationKind.HOST_PINNED, AllocationKind.HOST_REGISTERED, AllocationKind.MANAGED)


def host_view(ptr: int, nbytes: int, dtype: Any = np.uint8) -> np.ndarray:
    """A live numpy view of pinned, registered host or managed memory
    (gpudbg extension: what a C program does by dereferencing the pointer)."""
    info = get_engine().resolve_pointer(ptr) if isinstance(ptr, int) else None
    if info is None or info.kind not in _HOST_VIEWABLE:
        raise ValueError(f"{ptr!r} is not pinned host or managed memory; copy device memory with mcMemcpy")
    if nbytes < 0 or nbytes > info.remaining:
        raise ValueError(f"{nbytes} bytes at 0x{ptr:x} exceed the {info.allocation.describe_short()}")
    return info.allocation.data[info.offset:info.offset + nbytes].view(np.dtype(dtype))


__all__ = ['mcMalloc', 'mcFree', 'mcMallocHost', 'mcHostAlloc', 'mcFreeHost', 'mcMallocManaged',
           'mcMallocPitch', 'mcMalloc3D', 'mcExtMallocWithFlags', 'mcHostRegister', 'mcHostUnregister',
           'mcHostGetDevicePointer', 'mcHostGetFlags', 'mcStreamAttachMemAsync', 'mcMemGetInfo',
           'host_view']
