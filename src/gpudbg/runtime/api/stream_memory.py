"""Seed 002 §2.15: stream memory operations (mcStreamWaitValue32/64,
mcStreamWriteValue32/64), as CUDA's cuStreamWaitValue/WriteValue.

Each is one ring command (WAIT_VALUE, WRITE_VALUE) executed by the GPU front
end on a device-visible word: device, managed or pinned host memory of the
stream's device. A wait blocks only its own channel; it re-checks after any
GPU work or mc* host write, and every few milliseconds for stores made
directly through host_view (sim/frontend.py VALUE_POLL_S), so a host thread
can release a waiting stream by writing a pinned flag.
"""
from __future__ import annotations

from typing import Any

from gpudbg.driver import commands as C
from gpudbg.driver.memops import check_target
from gpudbg.runtime.api._args import DevicePtr, Flags, Int, mcStream_t
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.errors import McError, mcError_t
from gpudbg.runtime.stream_types import mcStreamWaitValueFlags as W, mcStreamWriteValueFlags as WR

_INVALID = mcError_t.mcErrorInvalidValue
_WAIT_OPS = {int(W.mcStreamWaitValueGeq), int(W.mcStreamWaitValueEq), int(W.mcStreamWaitValueAnd),
             int(W.mcStreamWaitValueNor)}


def _target(ctx: Any, ptr: Any, width: int) -> int:
    return check_target(ctx, ptr, width, "ptr")


def _value(value: Any, width: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < (1 << (8 * width)):
        raise McError(_INVALID, f"value {value!r} is not a uint{8 * width}_t")
    return value


def _wait(stream: Any, ptr: Any, value: Any, flags: Any, width: int) -> None:
    ctx = _ctx()
    s = ctx.stream(stream)
    if isinstance(flags, bool) or not isinstance(flags, int) \
            or (flags & ~int(W.mcStreamWaitValueFlush)) not in _WAIT_OPS:
        raise McError(_INVALID, f"flags {flags!r} must be one of mcStreamWaitValueGeq/Eq/And/Nor, "
                                    f"optionally | mcStreamWaitValueFlush")
    s.submit([C.make(C.Opcode.WAIT_VALUE, address=_target(ctx, ptr, width), value=_value(value, width),
                     flags=flags, width=width)])


def _write(stream: Any, ptr: Any, value: Any, flags: Any, width: int) -> None:
    ctx = _ctx()
    s = ctx.stream(stream)
    if isinstance(flags, bool) or not isinstance(flags, int) or flags not in (
            int(WR.mcStreamWriteValueDefault), int(WR.mcStreamWriteValueNoMemoryBarrier)):
        raise McError(_INVALID, f"flags {flags!r} must be mcStreamWriteValueDefault or "
                                    f"mcStreamWriteValueNoMemoryBarrier")
    s.submit([C.make(C.Opcode.WRITE_VALUE, address=_target(ctx, ptr, width), value=_value(value, width),
                     flags=flags, width=width)])


@_api(0)
def mcStreamWaitValue32(stream: mcStream_t, ptr: DevicePtr, value: Int, flags: Flags) -> None:
    """Seed 002 §2.15: later work of the stream waits until the 32-bit word at
    ptr satisfies flags (Geq: (int32_t)(*ptr - value) >= 0, Eq, And: a common
    bit, Nor: ~(*ptr | value) != 0)."""
    _wait(stream, ptr, value, flags, 4)


@_api(0)
def mcStreamWaitValue64(stream: mcStream_t, ptr: DevicePtr, value: Int, flags: Flags) -> None:
    """Seed 002 §2.15: as mcStreamWaitValue32 on a 64-bit word."""
    _wait(stream, ptr, value, flags, 8)


@_api(0)
def mcStreamWriteValue32(stream: mcStream_t, ptr: DevicePtr, value: Int, flags: Flags) -> None:
    """Seed 002 §2.15: the GPU stores value at ptr once earlier work of the
    stream is done (flags: Default or NoMemoryBarrier, same effect here)."""
    _write(stream, ptr, value, flags, 4)


@_api(0)
def mcStreamWriteValue64(stream: mcStream_t, ptr: DevicePtr, value: Int, flags: Flags) -> None:
    """Seed 002 §2.15: as mcStreamWriteValue32 with a 64-bit value."""
    _write(stream, ptr, value, flags, 8)


__all__ = ['mcStreamWaitValue32', 'mcStreamWaitValue64', 'mcStreamWriteValue32', 'mcStreamWriteValue64']
