"""Memory: cudaMalloc/Free, pinned (cudaMallocHost, cudaHostAlloc,
cudaFreeHost), registered (cudaHostRegister/Unregister,
cudaHostGetDevicePointer/Flags), managed, pitched and 3D allocations,
stream-ordered ones (cudaMallocAsync/FreeAsync), cudaMemGetInfo and
cudaPointerGetAttributes.

Each export calls its mc* twin and stores the result through the C
out-pointer. A host range to register arrives as an address: it is handed
to mcHostRegister as a live view of the process's bytes, so the engine
maps the program's own memory. mc* has no pointer-attribute query: the
facts come from what the engine knows about the address (the same facts
the driver API's cuPointerGetAttributes reads).
"""
from __future__ import annotations

import ctypes
import struct

from gpudbg import cabi
from gpudbg.cuda_driver.pointer import facts
from gpudbg.cuda_runtime._base import call, export, need, per_thread, stream
from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc
from gpudbg.runtime.memory_types import mcExtent
from gpudbg.sim.memory.spaces import AllocationKind

__all__ = ["cudaMalloc", "cudaFree", "cudaMallocHost", "cudaHostAlloc", "cudaFreeHost", "cudaMallocManaged",
           "cudaMallocPitch", "cudaMalloc3D", "cudaHostRegister", "cudaHostUnregister",
           "cudaHostGetDevicePointer", "cudaHostGetFlags", "cudaMemGetInfo", "cudaMallocAsync",
           "cudaMallocAsync_ptsz", "cudaFreeAsync", "cudaFreeAsync_ptsz", "cudaStreamAttachMemAsync",
           "cudaStreamAttachMemAsync_ptsz", "cudaPointerGetAttributes"]


@export
def cudaMalloc(devPtr: int, size: int) -> None:
    need(devPtr, "devPtr")
    cabi.store(devPtr, "u64", call(mc.mcMalloc, int(size)))


@export
def cudaFree(devPtr: int) -> None:
    call(mc.mcFree, int(devPtr))


@export
def cudaMallocHost(ptr: int, size: int) -> None:
    need(ptr, "ptr")
    cabi.store(ptr, "u64", call(mc.mcMallocHost, int(size)))


@export
def cudaHostAlloc(pHost: int, size: int, flags: int) -> None:
    need(pHost, "pHost")
    cabi.store(pHost, "u64", call(mc.mcHostAlloc, int(size), int(flags)))


@export
def cudaFreeHost(ptr: int) -> None:
    call(mc.mcFreeHost, int(ptr))


@export
def cudaMallocManaged(devPtr: int, size: int, flags: int) -> None:
    need(devPtr, "devPtr")
    cabi.store(devPtr, "u64", call(mc.mcMallocManaged, int(size), int(flags)))


@export
def cudaMallocPitch(devPtr: int, pitch: int, width: int, height: int) -> None:
    need(devPtr, "devPtr")
    need(pitch, "pitch")
    ptr, p = call(mc.mcMallocPitch, int(width), int(height))
    cabi.store(devPtr, "u64", ptr)
    cabi.store(pitch, "u64", p)


@export
def cudaMalloc3D(pitchedDevPtr: int, extent: bytes) -> None:
    """extent is a cudaExtent by value (width, height, depth: three size_t)."""
    need(pitchedDevPtr, "pitchedDevPtr")
    w, h, d = struct.unpack("<3Q", bytes(extent))
    p = call(mc.mcMalloc3D, mcExtent(w, h, d))
    cabi.write(pitchedDevPtr, struct.pack("<4Q", p.ptr, p.pitch, p.xsize, p.ysize), "pitchedDevPtr")


@export
def cudaHostRegister(ptr: int, size: int, flags: int) -> None:
    """Page-lock the program's own range [ptr, ptr+size)."""
    call(mc.mcHostRegister, cabi.host_view(need(ptr, "ptr"), int(size), "ptr"), int(size), int(flags))


@export
def cudaHostUnregister(ptr: int) -> None:
    call(mc.mcHostUnregister, cabi.host_view(need(ptr, "ptr"), 1, "ptr"))


@export
def cudaHostGetDevicePointer(pDevice: int, pHost: int, flags: int) -> None:
    need(pDevice, "pDevice")
    cabi.store(pDevice, "u64", call(mc.mcHostGetDevicePointer, int(pHost), int(flags)))


@export
def cudaHostGetFlags(pFlags: int, pHost: int) -> None:
    need(pFlags, "pFlags")
    cabi.store(pFlags, "u32", call(mc.mcHostGetFlags, int(pHost)))


@export
def cudaMemGetInfo(free: int, total: int) -> None:
    need(free, "free")
    need(total, "total")
    f, t = call(mc.mcMemGetInfo)
    cabi.store(free, "u64", f)
    cabi.store(total, "u64", t)


@export
def cudaMallocAsync(devPtr: int, size: int, hStream: int) -> None:
    need(devPtr, "devPtr")
    cabi.store(devPtr, "u64", call(mc.mcMallocAsync, int(size), stream(hStream)))


cudaMallocAsync_ptsz = per_thread(cudaMallocAsync, "cudaMallocAsync_ptsz", 2)


@export
def cudaFreeAsync(devPtr: int, hStream: int) -> None:
    call(mc.mcFreeAsync, int(devPtr), stream(hStream))


cudaFreeAsync_ptsz = per_thread(cudaFreeAsync, "cudaFreeAsync_ptsz", 1)


@export
def cudaStreamAttachMemAsync(stream_: int, devPtr: int, length: int, flags: int) -> None:
    call(mc.mcStreamAttachMemAsync, stream(stream_), int(devPtr), int(length), int(flags))


cudaStreamAttachMemAsync_ptsz = per_thread(cudaStreamAttachMemAsync, "cudaStreamAttachMemAsync_ptsz", 0)


# ------------------------------------------------------------------ pointer attributes
class cudaPointerAttributes(ctypes.Structure):
    """struct cudaPointerAttributes of CUDA 13's driver_types.h."""

    _fields_ = [("type", ctypes.c_int), ("device", ctypes.c_int), ("devicePointer", ctypes.c_void_p),
                ("hostPointer", ctypes.c_void_p), ("reserved", ctypes.c_long * 8)]


UNREGISTERED, HOST, DEVICE, MANAGED = 0, 1, 2, 3     # cudaMemoryType
INVALID_DEVICE_ID = -2                               # cudaInvalidDeviceId
_HOST_KINDS = (AllocationKind.HOST_PINNED, AllocationKind.HOST_REGISTERED)


@export
def cudaPointerGetAttributes(attributes: int, ptr: int) -> None:
    """Device, pinned/registered host or managed memory; an address nothing
    knows is cudaMemoryTypeUnregistered (not an error, as since CUDA 11)."""
    need(attributes, "attributes")
    get_engine().ensure_init()
    out = cudaPointerAttributes()
    f = facts(int(ptr)) if int(ptr) else None
    if f is None:
        out.type, out.device, out.devicePointer, out.hostPointer = UNREGISTERED, INVALID_DEVICE_ID, None, int(ptr) or None
    else:
        out.type = MANAGED if f.kind is AllocationKind.MANAGED else HOST if f.kind in _HOST_KINDS else DEVICE
        out.device = f.ordinal
        out.devicePointer = f.device_pointer
        out.hostPointer = f.host_pointer
    cabi.store_struct(attributes, out, "attributes")
