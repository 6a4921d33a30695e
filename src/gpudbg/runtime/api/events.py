"""Seed 002 §2.5: event management."""
from __future__ import annotations

from typing import Any

from gpudbg.driver.event import Event, check_event
from gpudbg.runtime.api._base import _api, _ctx, _int
from gpudbg.runtime.errors import DriverError, mcError_t


# ------------------------------------------------------------------ 2.5 events
@_api(1)
def mcEventCreate() -> Event:
    """Seed 002 §2.5.3.1."""
    return mcEventCreateWithFlags.__wrapped__(0)


@_api(1)
def mcEventCreateWithFlags(flags: int) -> Event:
    """Seed 002 §2.5.3.2."""
    ctx = _ctx()
    if _int("flags", flags) & ~0x7:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"unknown event flags 0x{flags:x}")
    e = Event(ctx, flags)
    ctx.events.add(e)
    return e


@_api(0)
def mcEventRecord(event: Any, stream: Any = None) -> None:
    """Seed 002 §2.5.3.7."""
    ctx = _ctx()
    check_event(ctx, event).record(ctx.stream(stream))


@_api(0)
def mcEventQuery(event: Any) -> None:
    """Seed 002 §2.5.3.6: mcSuccess or mcErrorNotReady."""
    ctx = _ctx()
    if not check_event(ctx, event).done():
        raise DriverError(mcError_t.mcErrorNotReady, f"{event!r} has not completed")


@_api(0)
def mcEventSynchronize(event: Any) -> None:
    """Seed 002 §2.5.3.9."""
    check_event(_ctx(), event).synchronize()


@_api(0)
def mcEventDestroy(event: Any) -> None:
    """Seed 002 §2.5.3.3."""
    ctx = _ctx()
    e = check_event(ctx, event)
    e.destroyed = True
    ctx.events.discard(e)


__all__ = ['mcEventCreate', 'mcEventCreateWithFlags', 'mcEventRecord', 'mcEventQuery', 'mcEventSynchronize', 'mcEventDestroy']
