"""Stream memory operations' targets (wait/write value): the one check of
the address both API layers make before a WAIT_VALUE or WRITE_VALUE
command is queued. The front end executes the commands (sim/frontend.py);
this only says whether an address may be the target."""
from __future__ import annotations

from typing import Any

from gpudbg.driver.status import CUresult, EngineError

INVALID = CUresult.CUDA_ERROR_INVALID_VALUE


def check_target(ctx: Any, ptr: Any, width: int, what: str = "addr") -> int:
    """`ptr` as the address of a `width`-byte value of the context's
    device: device-visible, on that device, aligned, inside its allocation."""
    if isinstance(ptr, bool) or not isinstance(ptr, int) or ptr == 0:
        raise EngineError(INVALID, f"{what} must be a non-null device-visible pointer (int), got {ptr!r}")
    engine = ctx.engine
    info = engine.resolve_pointer(ptr)
    if info is None:
        raise EngineError(INVALID, f"{what} {engine.uva.describe(ptr)}")
    if info.gpu is not ctx.gpu:
        raise EngineError(INVALID, f"{what} 0x{ptr:x} is memory of device {info.gpu.ordinal}, "
                                   f"not of the stream's device {ctx.gpu.ordinal}")
    if ptr % width:
        raise EngineError(INVALID, f"{what} 0x{ptr:x} is not {width}-byte aligned")
    if info.remaining < width:
        raise EngineError(INVALID, f"{width} bytes at 0x{ptr:x} run past the end of its allocation")
    return ptr
