"""Seed 002 §2.11: memsets (8/16/32-bit, 1D, 2D, 3D, Async), with the
rules of chapter 1.2.2: the synchronous forms return at once unless the
target is pinned host or unified memory; the Async forms always do.

A 1D memset is one MEMSET command, a pitched one one MEMSET_2D command
(per slice for 3D unless the slices are contiguous): the copy engine walks
the rows, the host never loops. mcMemset/mcMemset2D/mcMemset3D take an int
and use its low byte (as memset does), the D8/D16/D32 forms reject a value that does not fit
their unsigned type; the D16/D32 forms need 2-/4-byte
aligned destinations and pitches. The synchronous forms use the default
stream of the program's mode, the Async forms the stream given.
"""
from __future__ import annotations

from typing import Any

from gpudbg.driver import pitched as _pitched
from gpudbg.driver import transfer as _transfer
from gpudbg.runtime.api._args import DstMemory, Int, Size, Struct, mcStream_t
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.memory_types import mcExtent, mcPitchedPtr


PitchedPtr = Struct(mcPitchedPtr, ptr=DstMemory.__metadata__[0])


def _s(ctx: Any, stream: Any, is_async: bool) -> Any:
    return ctx.stream(stream if is_async else None)


def _memset(ptr: Any, value: Any, count: Any, size: int, stream: Any, is_async: bool,
            low_byte: bool = False) -> None:
    ctx = _ctx()
    _transfer.memset(ctx, ptr, value, size, count, _s(ctx, stream, is_async), is_async,
                     low_byte)


def _memset_2d(ptr: Any, pitch: Any, value: Any, width: Any, height: Any, size: int, stream: Any,
               is_async: bool, low_byte: bool = False) -> None:
    ctx = _ctx()
    _transfer.memset_2d(ctx, ptr, pitch, value, size, width, height, _s(ctx, stream, is_async),
                        is_async, low_byte=low_byte)


# ------------------------------------------------------------------ 1D
@_api(0)
def mcMemset(dst: DstMemory, value: Int, sizeBytes: Size) -> None:
    """Seed 002 §2.11.3.1: bytes; asynchronous unless pinned/managed (§1.2.2)."""
    _memset(dst, value, sizeBytes, 1, None, False, low_byte=True)


@_api(0)
def mcMemsetAsync(dst: DstMemory, value: Int, sizeBytes: Size, stream: mcStream_t = None) -> None:
    """Seed 002 §2.11.3.6."""
    _memset(dst, value, sizeBytes, 1, stream, True, low_byte=True)


@_api(0)
def mcMemsetD8(dstDevice: DstMemory, mValue: Int, mSize: Size) -> None:
    """Seed 002 §2.11.3.17."""
    _memset(dstDevice, mValue, mSize, 1, None, False)


@_api(0)
def mcMemsetD16(dstDevice: DstMemory, mValue: Int, mSize: Size) -> None:
    """Seed 002 §2.11.3.7: 2-byte aligned destination."""
    _memset(dstDevice, mValue, mSize, 2, None, False)


@_api(0)
def mcMemsetD32(dstDevice: DstMemory, mValue: Int, mSize: Size) -> None:
    """Seed 002 §2.11.3.15: 4-byte aligned destination."""
    _memset(dstDevice, mValue, mSize, 4, None, False)


@_api(0)
def mcMemsetD8Async(dstDevice: DstMemory, mValue: Int, mSize: Size, hStream: mcStream_t = None) -> None:
    """Seed 002 §2.11.3.18."""
    _memset(dstDevice, mValue, mSize, 1, hStream, True)


@_api(0)
def mcMemsetD16Async(dstDevice: DstMemory, mValue: Int, mSize: Size, hStream: mcStream_t = None) -> None:
    """Seed 002 §2.11.3.8."""
    _memset(dstDevice, mValue, mSize, 2, hStream, True)


@_api(0)
def mcMemsetD32Async(dstDevice: DstMemory, mValue: Int, mSize: Size, hStream: mcStream_t = None) -> None:
    """Seed 002 §2.11.3.16."""
    _memset(dstDevice, mValue, mSize, 4, hStream, True)


# ------------------------------------------------------------------ 2D
@_api(0)
def mcMemset2D(dst: DstMemory, pitch: Size, value: Int, width: Size, height: Size) -> None:
    """Seed 002 §2.11.3.2: width bytes x height rows, pitch bytes apart."""
    _memset_2d(dst, pitch, value, width, height, 1, None, False, low_byte=True)


@_api(0)
def mcMemset2DAsync(dst: DstMemory, pitch: Size, value: Int, width: Size, height: Size,
                    stream: mcStream_t = None) -> None:
    """Seed 002 §2.11.3.3."""
    _memset_2d(dst, pitch, value, width, height, 1, stream, True, low_byte=True)


@_api(0)
def mcMemsetD2D8(dstDevice: DstMemory, dstPitch: Size, mValue: Int, mWidth: Size, mHeight: Size) -> None:
    """Seed 002 §2.11.3.13: dstPitch is unused when mHeight is 1."""
    _memset_2d(dstDevice, dstPitch, mValue, mWidth, mHeight, 1, None, False)


@_api(0)
def mcMemsetD2D8Async(dstDevice: DstMemory, dstPitch: Size, mValue: Int, mWidth: Size, mHeight: Size,
                      hStream: mcStream_t = None) -> None:
    """Seed 002 §2.11.3.14."""
    _memset_2d(dstDevice, dstPitch, mValue, mWidth, mHeight, 1, hStream, True)


@_api(0)
def mcMemsetD2D16(dstDevice: DstMemory, dstPitch: Size, mValue: Int, mWidth: Size, mHeight: Size) -> None:
    """Seed 002 §2.11.3.9: mWidth 16-bit values per row; pointer and pitch
    2-byte aligned."""
    _memset_2d(dstDevice, dstPitch, mValue, mWidth, mHeight, 2, None, False)


@_api(0)
def mcMemsetD2D16Async(dstDevice: DstMemory, dstPitch: Size, mValue: Int, mWidth: Size, mHeight: Size,
                       hStream: mcStream_t = None) -> None:
    """Seed 002 §2.11.3.10."""
    _memset_2d(dstDevice, dstPitch, mValue, mWidth, mHeight, 2, hStream, True)


@_api(0)
def mcMemsetD2D32(dstDevice: DstMemory, dstPitch: Size, mValue: Int, mWidth: Size, mHeight: Size) -> None:
    """Seed 002 §2.11.3.11: mWidth 32-bit values per row; pointer and pitch
    4-byte aligned."""
    _memset_2d(dstDevice, dstPitch, mValue, mWidth, mHeight, 4, None, False)


@_api(0)
def mcMemsetD2D32Async(dstDevice: DstMemory, dstPitch: Size, mValue: Int, mWidth: Size, mHeight: Size,
                       hStream: mcStream_t = None) -> None:
    """Seed 002 §2.11.3.12."""
    _memset_2d(dstDevice, dstPitch, mValue, mWidth, mHeight, 4, hStream, True)


# ------------------------------------------------------------------ 3D
@_api(0)
def mcMemset3D(pitchedDevPtr: PitchedPtr, value: Int, extent: Struct(mcExtent)) -> None:
    """Seed 002 §2.11.3.4: an mcPitchedPtr region of extent bytes x rows x
    slices (slice pitch = pitch * ysize)."""
    ctx = _ctx()
    _pitched.memset_3d(ctx, pitchedDevPtr, value, extent, _s(ctx, None, False), False)


@_api(0)
def mcMemset3DAsync(pitchedDevPtr: PitchedPtr, value: Int, extent: Struct(mcExtent), stream: mcStream_t = None) -> None:
    """Seed 002 §2.11.3.5."""
    ctx = _ctx()
    _pitched.memset_3d(ctx, pitchedDevPtr, value, extent, _s(ctx, stream, True), True)


__all__ = ['mcMemset', 'mcMemsetAsync', 'mcMemsetD8', 'mcMemsetD16', 'mcMemsetD32', 'mcMemsetD8Async',
           'mcMemsetD16Async', 'mcMemsetD32Async', 'mcMemset2D', 'mcMemset2DAsync', 'mcMemsetD2D8',
           'mcMemsetD2D8Async', 'mcMemsetD2D16', 'mcMemsetD2D16Async', 'mcMemsetD2D32',
           'mcMemsetD2D32Async', 'mcMemset3D', 'mcMemset3DAsync']
