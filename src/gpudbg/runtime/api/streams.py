"""Seed 002 §2.3: stream management."""
from __future__ import annotations

from typing import Any

from gpudbg.driver.event import check_event
from gpudbg.runtime.api._base import _api, _ctx, _int
from gpudbg.runtime.errors import DriverError, mcError_t


# ------------------------------------------------------------------ 2.3 streams
@_api(1)
def mcStreamCreate() -> Any:
    """Seed 002 §2.3.3.5: a blocking stream."""
    return _ctx().create_stream(0)


@_api(1)
def mcStreamCreateWithFlags(flags: int) -> Any:
    """Seed 002 §2.3.3.6: mcStreamDefault or mcStreamNonBlocking."""
    return _ctx().create_stream(_int("flags", flags))


@_api(0)
def mcStreamDestroy(stream: Any) -> None:
    """Seed 002 §2.3.3.8: returns at once; resources go when the work is done."""
    ctx = _ctx()
    ctx.destroy_stream(ctx.stream(stream))


@_api(0)
def mcStreamSynchronize(stream: Any) -> None:
    """Seed 002 §2.3.3.18."""
    ctx = _ctx()
    ctx.stream(stream).wait()
    ctx.after_wait()


@_api(0)
def mcStreamQuery(stream: Any) -> None:
    """Seed 002 §2.3.3.16: mcSuccess when all work is done, else mcErrorNotReady."""
    ctx = _ctx()
    s = ctx.stream(stream)
    if not s.done():
        raise DriverError(mcError_t.mcErrorNotReady, f"{s!r} has pending work")
    ctx.after_wait()


@_api(1)
def mcStreamGetFlags(stream: Any) -> int:
    """Seed 002 §2.3.3.13."""
    return _ctx().stream(stream).flags


@_api(0)
def mcStreamWaitEvent(stream: Any, event: Any, flags: int = 0) -> None:
    """Seed 002 §2.3.3.20: later work of `stream` waits for the event, on the GPU."""
    ctx = _ctx()
    if _int("flags", flags) != 0:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"flags must be 0, got {flags}")
    check_event(ctx, event).make_wait(ctx.stream(stream))


__all__ = ['mcStreamCreate', 'mcStreamCreateWithFlags', 'mcStreamDestroy', 'mcStreamSynchronize', 'mcStreamQuery', 'mcStreamGetFlags', 'mcStreamWaitEvent']
