"""Seed 002 §2.10: memory copies (1D, 2D, 3D, peer, symbol), with the
synchronization rules of chapter 1.2.

Arguments are checked by their annotated kinds (_args.py: memory operands
read or written, sizes, kinds, streams); each function makes one driver call
(driver/transfer.py for shapes and rules, driver/pitched.py for the struct
forms and peers, driver/symbols.py for symbols). The synchronous forms use
the default stream, the Async forms the stream given (default: the
NULL stream); "the default stream" is the legacy or the per-thread one,
as the program's default-stream mode says. A symbol is the name of a `__device__` or `__constant__`
variable of a module loaded in the current context, or a `(module, name)`
pair when several modules define the name (see driver/symbols.py).
Error codes follow each function's return list in the seed: an integer
that names no allocation is mcErrorInvalidValue for the 1D forms and
mcErrorInvalidDevicePointer for the 2D forms, a width above a pitch is
mcErrorInvalidPitchValue, a bad kind mcErrorInvalidMemcpyDirection.
"""
from __future__ import annotations

from typing import Any

from gpudbg.driver import pitched as _pitched
from gpudbg.driver import symbols as _symbols
from gpudbg.driver import transfer as _transfer
from gpudbg.runtime.api._args import (DST_FIELD, SRC_FIELD, Device, DevicePtr, DstMemory, MemcpyKind, Size,
                                      SrcMemory, Struct, Symbol, mcStream_t)
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.memory_types import mc_Memcpy2D, mcMemcpy3DParms, mcMemcpy3DPeerParms
from gpudbg.runtime.errors import McError, mcError_t
from gpudbg.runtime.types import mcMemcpyKind

# the host buffers inside the copy structs are checked like a copy's operands
Copy2D = Struct(mc_Memcpy2D, srcHost=SRC_FIELD, dstHost=DST_FIELD)
Copy3D = Struct(mcMemcpy3DParms, mcMemcpy3DPeerParms, srcPtr__ptr=SRC_FIELD, dstPtr__ptr=DST_FIELD)
Copy3DPeer = Copy3D

_H2D, _D2H, _D2D, _DEFAULT = (mcMemcpyKind.mcMemcpyHostToDevice, mcMemcpyKind.mcMemcpyDeviceToHost,
                              mcMemcpyKind.mcMemcpyDeviceToDevice, mcMemcpyKind.mcMemcpyDefault)


def _stream(ctx: Any, stream: Any, is_async: bool) -> Any:
    return ctx.stream(stream if is_async else None)   # sync forms: the mode's default stream


def _copy(dst: Any, src: Any, count: Any, kind: Any, stream: Any, is_async: bool) -> None:
    ctx = _ctx()
    _transfer.memcpy(ctx, dst, src, count, kind, _stream(ctx, stream, is_async), is_async)


# ------------------------------------------------------------------ 1D
@_api(0)
def mcMemcpy(dst: DstMemory, src: SrcMemory, count: Size, kind: MemcpyKind) -> None:
    """Seed 002 §2.10.3.3 with the synchronization rules of §1.2.1.1."""
    _copy(dst, src, count, kind, None, False)


@_api(0)
def mcMemcpyAsync(dst: DstMemory, src: SrcMemory, count: Size, kind: MemcpyKind, stream: mcStream_t = None) -> None:
    """Seed 002 §2.10.3.11 with the rules of §1.2.1.2."""
    _copy(dst, src, count, kind, stream, True)


@_api(0)
def mcMemcpyWithStream(dst: DstMemory, src: SrcMemory, sizeBytes: Size, kind: MemcpyKind, stream: mcStream_t) -> None:
    """Seed 002 §2.10.3.26: a copy on `stream`, asynchronous unless host
    memory is not pinned (the rules of §1.2.1.2)."""
    _copy(dst, src, sizeBytes, kind, stream, True)


@_api(0)
def mcMemcpyHtoD(dstDevice: DevicePtr, srcHost: SrcMemory, ByteCount: Size) -> None:
    """Seed 002 §2.10.3.18."""
    _copy(dstDevice, srcHost, ByteCount, _H2D, None, False)


@_api(0)
def mcMemcpyHtoDAsync(dstDevice: DevicePtr, srcHost: SrcMemory, ByteCount: Size, hStream: mcStream_t = None) -> None:
    """Seed 002 §2.10.3.19."""
    _copy(dstDevice, srcHost, ByteCount, _H2D, hStream, True)


@_api(0)
def mcMemcpyDtoH(dstHost: DstMemory, srcDevice: DevicePtr, ByteCount: Size) -> None:
    """Seed 002 §2.10.3.14."""
    _copy(dstHost, srcDevice, ByteCount, _D2H, None, False)


@_api(0)
def mcMemcpyDtoHAsync(dstHost: DstMemory, srcDevice: DevicePtr, ByteCount: Size, hStream: mcStream_t = None) -> None:
    """Seed 002 §2.10.3.15."""
    _copy(dstHost, srcDevice, ByteCount, _D2H, hStream, True)


@_api(0)
def mcMemcpyDtoD(dstDevice: DevicePtr, srcDevice: DevicePtr, ByteCount: Size) -> None:
    """Seed 002 §2.10.3.12."""
    _copy(dstDevice, srcDevice, ByteCount, _D2D, None, False)


@_api(0)
def mcMemcpyDtoDAsync(dstDevice: DevicePtr, srcDevice: DevicePtr, ByteCount: Size, hStream: mcStream_t = None) -> None:
    """Seed 002 §2.10.3.13."""
    _copy(dstDevice, srcDevice, ByteCount, _D2D, hStream, True)


# ------------------------------------------------------------------ peer
@_api(0)
def mcMemcpyPeer(dst: DevicePtr, dstDevice: Device, src: DevicePtr, srcDevice: Device, sizeBytes: Size) -> None:
    """Seed 002 §2.10.3.22: serialized with all work of the current, source
    and destination devices (it drains them first and returns when done)."""
    ctx = _ctx()
    _pitched.copy_peer(ctx, dst, dstDevice, src, srcDevice, sizeBytes, ctx.stream(None), False)


@_api(0)
def mcMemcpyPeerAsync(dst: DevicePtr, dstDevice: Device, src: DevicePtr, srcDevice: Device, sizeBytes: Size,
                      stream: mcStream_t = None) -> None:
    """Seed 002 §2.10.3.23: asynchronous, ordered only in `stream`."""
    ctx = _ctx()
    _pitched.copy_peer(ctx, dst, dstDevice, src, srcDevice, sizeBytes, ctx.stream(stream), True)


# ------------------------------------------------------------------ 2D
def _copy_2d(dst: Any, dpitch: Any, src: Any, spitch: Any, width: Any, height: Any, kind: Any,
             stream: Any, is_async: bool) -> None:
    ctx = _ctx()
    _transfer.copy_2d(ctx, dst, dpitch, src, spitch, width, height, kind,
                      _stream(ctx, stream, is_async), is_async, ctx.device.model.max_pitch)


@_api(0)
def mcMemcpy2D(dst: DstMemory, dpitch: Size, src: SrcMemory, spitch: Size, width: Size, height: Size,
               kind: MemcpyKind) -> None:
    """Seed 002 §2.10.3.4: one COPY_2D command; width above a pitch is
    mcErrorInvalidPitchValue."""
    _copy_2d(dst, dpitch, src, spitch, width, height, kind, None, False)


@_api(0)
def mcMemcpy2DAsync(dst: DstMemory, dpitch: Size, src: SrcMemory, spitch: Size, width: Size, height: Size,
                    kind: MemcpyKind, stream: mcStream_t = None) -> None:
    """Seed 002 §2.10.3.5."""
    _copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, True)


def _param_2d(pCopy: Any, stream: Any, is_async: bool) -> None:
    ctx = _ctx()
    _pitched.copy_param_2d(ctx, pCopy, _stream(ctx, stream, is_async), is_async,
                           ctx.device.model.max_pitch)


@_api(0)
def mcMemcpyParam2D(pCopy: Copy2D) -> None:
    """Seed 002 §2.10.3.20: an mc_Memcpy2D (CUDA_MEMCPY2D) description."""
    _param_2d(pCopy, None, False)


@_api(0)
def mcMemcpyParam2DAsync(pCopy: Copy2D, stream: mcStream_t = None) -> None:
    """Seed 002 §2.10.3.21."""
    _param_2d(pCopy, stream, True)


@_api(0)
def mcMemcpy2DUnaligned(pCopy: Copy2D) -> None:
    """Seed 002 §2.10.3.6: as mcMemcpyParam2D; the simulated copy engine has
    no pitch alignment rule, so aligned and unaligned pitches both work."""
    _param_2d(pCopy, None, False)


# ------------------------------------------------------------------ 3D
@_api(0)
def mcMemcpy3D(pCopy: Copy3D) -> None:
    """Seed 002 §2.10.3.7: an mcMemcpy3DParms (pitched pointers, positions,
    extent, kind); COPY_2D commands, one per slice unless contiguous."""
    ctx = _ctx()
    _pitched.copy_3d(ctx, pCopy, ctx.stream(None), False)


@_api(0)
def mcMemcpy3DAsync(pCopy: Copy3D, hStream: mcStream_t = None) -> None:
    """Seed 002 §2.10.3.8."""
    ctx = _ctx()
    _pitched.copy_3d(ctx, pCopy, ctx.stream(hStream), True)


@_api(0)
def mcMemcpy3DPeer(pCopy: Copy3DPeer) -> None:
    """Seed 002 §2.10.3.9: an mcMemcpy3DParms (devices from the pointers)
    or an mcMemcpy3DPeerParms (devices named and checked); serialized like
    mcMemcpyPeer."""
    ctx = _ctx()
    _pitched.copy_3d(ctx, pCopy, ctx.stream(None), False, peer=True)


@_api(0)
def mcMemcpy3DPeerAsync(pCopy: Copy3DPeer, hStream: mcStream_t = None) -> None:
    """Seed 002 §2.10.3.10."""
    ctx = _ctx()
    _pitched.copy_3d(ctx, pCopy, ctx.stream(hStream), True, peer=True)


# ------------------------------------------------------------------ symbols
_TO_SYMBOL = (_H2D, _D2D, _DEFAULT)
_FROM_SYMBOL = (_D2H, _D2D, _DEFAULT)


def _symbol_kind(kind: Any, allowed: tuple) -> Any:
    _transfer.check_kind(kind)
    if int(kind) not in allowed:
        raise McError(mcError_t.mcErrorInvalidMemcpyDirection,
                          f"{mcMemcpyKind(int(kind)).name} cannot be used with a symbol here")
    return kind


@_api(1)
def mcGetSymbolAddress(symbol: Symbol) -> int:
    """Seed 002 §2.10.3.1: mcErrorInvalidSymbol when no module defines it."""
    return _symbols.resolve(_ctx(), symbol)[0]


@_api(1)
def mcGetSymbolSize(symbol: Symbol) -> int:
    """Seed 002 §2.10.3.2."""
    return _symbols.resolve(_ctx(), symbol)[1]


def _to_symbol(symbol: Any, src: Any, sizeBytes: Any, offset: Any, kind: Any, stream: Any,
               is_async: bool) -> None:
    ctx = _ctx()
    kind = _symbol_kind(kind, _TO_SYMBOL)
    dst = _symbols.span(ctx, symbol, sizeBytes, offset)
    _transfer.memcpy(ctx, dst, src, sizeBytes, kind, _stream(ctx, stream, is_async), is_async)


def _from_symbol(dst: Any, symbol: Any, sizeBytes: Any, offset: Any, kind: Any, stream: Any,
                 is_async: bool) -> None:
    ctx = _ctx()
    kind = _symbol_kind(kind, _FROM_SYMBOL)
    src = _symbols.span(ctx, symbol, sizeBytes, offset)
    _transfer.memcpy(ctx, dst, src, sizeBytes, kind, _stream(ctx, stream, is_async), is_async)


@_api(0)
def mcMemcpyToSymbol(symbol: Symbol, src: SrcMemory, sizeBytes: Size, offset: Size = 0,
                     kind: MemcpyKind = _DEFAULT) -> None:
    """Seed 002 §2.10.3.24: kind HostToDevice, DeviceToDevice or Default."""
    _to_symbol(symbol, src, sizeBytes, offset, kind, None, False)


@_api(0)
def mcMemcpyToSymbolAsync(symbol: Symbol, src: SrcMemory, sizeBytes: Size, offset: Size = 0,
                          kind: MemcpyKind = _DEFAULT, stream: mcStream_t = None) -> None:
    """Seed 002 §2.10.3.25."""
    _to_symbol(symbol, src, sizeBytes, offset, kind, stream, True)


@_api(0)
def mcMemcpyFromSymbol(dst: DstMemory, symbol: Symbol, sizeBytes: Size, offset: Size = 0,
                       kind: MemcpyKind = _DEFAULT) -> None:
    """Seed 002 §2.10.3.16: kind DeviceToHost, DeviceToDevice or Default."""
    _from_symbol(dst, symbol, sizeBytes, offset, kind, None, False)


@_api(0)
def mcMemcpyFromSymbolAsync(dst: DstMemory, symbol: Symbol, sizeBytes: Size, offset: Size = 0,
                            kind: MemcpyKind = _DEFAULT, stream: mcStream_t = None) -> None:
    """Seed 002 §2.10.3.17."""
    _from_symbol(dst, symbol, sizeBytes, offset, kind, stream, True)


__all__ = ['mcMemcpy', 'mcMemcpyAsync', 'mcMemcpyWithStream', 'mcMemcpyHtoD', 'mcMemcpyHtoDAsync',
           'mcMemcpyDtoH', 'mcMemcpyDtoHAsync', 'mcMemcpyDtoD', 'mcMemcpyDtoDAsync', 'mcMemcpyPeer',
           'mcMemcpyPeerAsync', 'mcMemcpy2D', 'mcMemcpy2DAsync', 'mcMemcpyParam2D',
           'mcMemcpyParam2DAsync', 'mcMemcpy2DUnaligned', 'mcMemcpy3D', 'mcMemcpy3DAsync',
           'mcMemcpy3DPeer', 'mcMemcpy3DPeerAsync', 'mcGetSymbolAddress', 'mcGetSymbolSize',
           'mcMemcpyToSymbol', 'mcMemcpyToSymbolAsync', 'mcMemcpyFromSymbol',
           'mcMemcpyFromSymbolAsync']
