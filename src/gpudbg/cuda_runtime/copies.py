"""Copies, memsets and symbols: cudaMemcpy (1D, 2D, 3D, peer; sync and
Async), cudaMemset (1D, 2D, 3D), cudaMemcpyTo/FromSymbol,
cudaGetSymbolAddress/Size, with their _ptds/_ptsz variants.

The one idea: a C pointer the engine knows (device, pinned, managed
memory) is passed to mc* as the int it is; any other address is the
program's pageable memory and is passed as a live numpy view of exactly
the bytes the copy touches, so mc*'s synchronization rules for pageable
memory apply (D2H complete on return, H2D source read at the call). A
symbol is the ADDRESS of the host shadow variable nvcc registered
(registration.py gives the (module, name) mc* takes).
CUDA arrays (cudaArray_t) are not supported: the simulator has no
texture memory; a 3D copy naming one is cudaErrorInvalidValue.
"""
from __future__ import annotations

import struct

from gpudbg import cabi
from gpudbg.cuda_runtime import registration
from gpudbg.cuda_runtime._base import call, export, memory, need, per_thread, per_thread_sync, stream
from gpudbg.runtime import mc
from gpudbg.runtime.memory_types import mcExtent, mcMemcpy3DParms, mcPitchedPtr, mcPos

__all__ = ["cudaMemcpy", "cudaMemcpy_ptds", "cudaMemcpyAsync", "cudaMemcpyAsync_ptsz", "cudaMemcpy2D",
           "cudaMemcpy2D_ptds", "cudaMemcpy2DAsync", "cudaMemcpy2DAsync_ptsz", "cudaMemcpy3D",
           "cudaMemcpy3D_ptds", "cudaMemcpy3DAsync", "cudaMemcpy3DAsync_ptsz", "cudaMemcpyPeer",
           "cudaMemcpyPeerAsync", "cudaMemcpyToSymbol", "cudaMemcpyToSymbol_ptds", "cudaMemcpyToSymbolAsync",
           "cudaMemcpyToSymbolAsync_ptsz", "cudaMemcpyFromSymbol", "cudaMemcpyFromSymbol_ptds",
           "cudaMemcpyFromSymbolAsync", "cudaMemcpyFromSymbolAsync_ptsz", "cudaGetSymbolAddress",
           "cudaGetSymbolSize", "cudaMemset", "cudaMemset_ptds", "cudaMemsetAsync", "cudaMemsetAsync_ptsz",
           "cudaMemset2D", "cudaMemset2D_ptds", "cudaMemset2DAsync", "cudaMemset2DAsync_ptsz", "cudaMemset3D",
           "cudaMemset3D_ptds", "cudaMemset3DAsync", "cudaMemset3DAsync_ptsz"]


def _span_2d(pitch: int, width: int, height: int) -> int:
    return 0 if not height or not width else pitch * (height - 1) + width


# ------------------------------------------------------------------ 1D
@export
def cudaMemcpy(dst: int, src: int, count: int, kind: int) -> None:
    n = int(count)
    call(mc.mcMemcpy, memory(dst, n, "dst"), memory(src, n, "src", False), n, int(kind))


@export
def cudaMemcpyAsync(dst: int, src: int, count: int, kind: int, stream_: int) -> None:
    n = int(count)
    call(mc.mcMemcpyAsync, memory(dst, n, "dst"), memory(src, n, "src", False), n, int(kind), stream(stream_))


cudaMemcpyAsync_ptsz = per_thread(cudaMemcpyAsync, "cudaMemcpyAsync_ptsz", 4)
cudaMemcpy_ptds = per_thread_sync(cudaMemcpyAsync, "cudaMemcpy_ptds")


@export
def cudaMemcpyPeer(dst: int, dstDevice: int, src: int, srcDevice: int, count: int) -> None:
    call(mc.mcMemcpyPeer, int(dst), int(dstDevice), int(src), int(srcDevice), int(count))


@export
def cudaMemcpyPeerAsync(dst: int, dstDevice: int, src: int, srcDevice: int, count: int, stream_: int) -> None:
    call(mc.mcMemcpyPeerAsync, int(dst), int(dstDevice), int(src), int(srcDevice), int(count), stream(stream_))


# ------------------------------------------------------------------ 2D
def _copy_2d(dst: int, dpitch: int, src: int, spitch: int, width: int, height: int) -> tuple:
    w, h = int(width), int(height)
    return (memory(dst, _span_2d(int(dpitch), w, h), "dst"), int(dpitch),
            memory(src, _span_2d(int(spitch), w, h), "src", False), int(spitch), w, h)


@export
def cudaMemcpy2D(dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int) -> None:
    call(mc.mcMemcpy2D, *_copy_2d(dst, dpitch, src, spitch, width, height), int(kind))


@export
def cudaMemcpy2DAsync(dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int,
                      stream_: int) -> None:
    call(mc.mcMemcpy2DAsync, *_copy_2d(dst, dpitch, src, spitch, width, height), int(kind), stream(stream_))


cudaMemcpy2DAsync_ptsz = per_thread(cudaMemcpy2DAsync, "cudaMemcpy2DAsync_ptsz", 7)
cudaMemcpy2D_ptds = per_thread_sync(cudaMemcpy2DAsync, "cudaMemcpy2D_ptds")


# ------------------------------------------------------------------ 3D
_PARMS = struct.Struct("<Q3Q4QQ3Q4Q3Qi4x")    # struct cudaMemcpy3DParms (160 bytes)


def _parms_3d(p: int) -> mcMemcpy3DParms:
    (src_array, sx, sy, sz, sptr, spitch, sxsize, sysize, dst_array, dx, dy, dz, dptr, dpitch, dxsize, dysize,
     w, h, d, kind) = _PARMS.unpack(cabi.read(need(p, "p"), _PARMS.size, "p"))
    from gpudbg.cuda_runtime.textures import array_of

    def pitched(ptr: int, pitch: int, xsize: int, ysize: int, z: int, what: str) -> mcPitchedPtr:
        rows = ysize or h
        return mcPitchedPtr(memory(ptr, pitch * rows * (z + d) if w and h and d else 0, what), pitch, xsize, ysize)

    # with an array on one side the extent counts elements: size the host view of the other side by its pitch
    return mcMemcpy3DParms(srcArray=array_of(src_array) if src_array else None, srcPos=mcPos(sx, sy, sz),
                           srcPtr=pitched(sptr, spitch, sxsize, sysize, sz, "p->srcPtr") if not src_array
                           else mcPitchedPtr(),
                           dstArray=array_of(dst_array) if dst_array else None, dstPos=mcPos(dx, dy, dz),
                           dstPtr=pitched(dptr, dpitch, dxsize, dysize, dz, "p->dstPtr") if not dst_array
                           else mcPitchedPtr(),
                           extent=mcExtent(w, h, d), kind=kind)


@export
def cudaMemcpy3D(p: int) -> None:
    call(mc.mcMemcpy3D, _parms_3d(p))


@export
def cudaMemcpy3DAsync(p: int, stream_: int) -> None:
    call(mc.mcMemcpy3DAsync, _parms_3d(p), stream(stream_))


cudaMemcpy3DAsync_ptsz = per_thread(cudaMemcpy3DAsync, "cudaMemcpy3DAsync_ptsz", 1)
cudaMemcpy3D_ptds = per_thread_sync(cudaMemcpy3DAsync, "cudaMemcpy3D_ptds")


# ------------------------------------------------------------------ symbols
@export
def cudaMemcpyToSymbol(symbol: int, src: int, count: int, offset: int, kind: int) -> None:
    n = int(count)
    call(mc.mcMemcpyToSymbol, registration.symbol_of(symbol), memory(src, n, "src", False), n, int(offset),
         int(kind))


@export
def cudaMemcpyToSymbolAsync(symbol: int, src: int, count: int, offset: int, kind: int, stream_: int) -> None:
    n = int(count)
    call(mc.mcMemcpyToSymbolAsync, registration.symbol_of(symbol), memory(src, n, "src", False), n, int(offset),
         int(kind), stream(stream_))


@export
def cudaMemcpyFromSymbol(dst: int, symbol: int, count: int, offset: int, kind: int) -> None:
    n = int(count)
    call(mc.mcMemcpyFromSymbol, memory(dst, n, "dst"), registration.symbol_of(symbol), n, int(offset), int(kind))


@export
def cudaMemcpyFromSymbolAsync(dst: int, symbol: int, count: int, offset: int, kind: int, stream_: int) -> None:
    n = int(count)
    call(mc.mcMemcpyFromSymbolAsync, memory(dst, n, "dst"), registration.symbol_of(symbol), n, int(offset),
         int(kind), stream(stream_))


cudaMemcpyToSymbolAsync_ptsz = per_thread(cudaMemcpyToSymbolAsync, "cudaMemcpyToSymbolAsync_ptsz", 5)
cudaMemcpyFromSymbolAsync_ptsz = per_thread(cudaMemcpyFromSymbolAsync, "cudaMemcpyFromSymbolAsync_ptsz", 5)
cudaMemcpyToSymbol_ptds = per_thread_sync(cudaMemcpyToSymbolAsync, "cudaMemcpyToSymbol_ptds")
cudaMemcpyFromSymbol_ptds = per_thread_sync(cudaMemcpyFromSymbolAsync, "cudaMemcpyFromSymbol_ptds")


@export
def cudaGetSymbolAddress(devPtr: int, symbol: int) -> None:
    need(devPtr, "devPtr")
    cabi.store(devPtr, "u64", call(mc.mcGetSymbolAddress, registration.symbol_of(symbol)))


@export
def cudaGetSymbolSize(size: int, symbol: int) -> None:
    need(size, "size")
    cabi.store(size, "u64", call(mc.mcGetSymbolSize, registration.symbol_of(symbol)))


# ------------------------------------------------------------------ memsets
@export
def cudaMemset(devPtr: int, value: int, count: int) -> None:
    call(mc.mcMemset, int(devPtr), int(value), int(count))


@export
def cudaMemsetAsync(devPtr: int, value: int, count: int, stream_: int) -> None:
    call(mc.mcMemsetAsync, int(devPtr), int(value), int(count), stream(stream_))


cudaMemsetAsync_ptsz = per_thread(cudaMemsetAsync, "cudaMemsetAsync_ptsz", 3)
cudaMemset_ptds = per_thread_sync(cudaMemsetAsync, "cudaMemset_ptds")


@export
def cudaMemset2D(devPtr: int, pitch: int, value: int, width: int, height: int) -> None:
    call(mc.mcMemset2D, int(devPtr), int(pitch), int(value), int(width), int(height))


@export
def cudaMemset2DAsync(devPtr: int, pitch: int, value: int, width: int, height: int, stream_: int) -> None:
    call(mc.mcMemset2DAsync, int(devPtr), int(pitch), int(value), int(width), int(height), stream(stream_))


cudaMemset2DAsync_ptsz = per_thread(cudaMemset2DAsync, "cudaMemset2DAsync_ptsz", 5)
cudaMemset2D_ptds = per_thread_sync(cudaMemset2DAsync, "cudaMemset2D_ptds")


def _pitched(raw: bytes) -> mcPitchedPtr:
    return mcPitchedPtr(*struct.unpack("<4Q", bytes(raw)))


def _extent(raw: bytes) -> mcExtent:
    return mcExtent(*struct.unpack("<3Q", bytes(raw)))


@export
def cudaMemset3D(pitchedDevPtr: bytes, value: int, extent: bytes) -> None:
    """cudaPitchedPtr and cudaExtent by value (32 and 24 bytes)."""
    call(mc.mcMemset3D, _pitched(pitchedDevPtr), int(value), _extent(extent))


@export
def cudaMemset3DAsync(pitchedDevPtr: bytes, value: int, extent: bytes, stream_: int) -> None:
    call(mc.mcMemset3DAsync, _pitched(pitchedDevPtr), int(value), _extent(extent), stream(stream_))


cudaMemset3DAsync_ptsz = per_thread(cudaMemset3DAsync, "cudaMemset3DAsync_ptsz", 3)
cudaMemset3D_ptds = per_thread_sync(cudaMemset3DAsync, "cudaMemset3D_ptds")
