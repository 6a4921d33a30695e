"""Events in the driver API: cuEventCreate, cuEventRecord(WithFlags) (with
`_ptsz` variants), cuEventQuery, cuEventSynchronize, cuEventDestroy(_v2),
cuEventElapsedTime(_v2).

A CUevent is a cabi.handles number of an engine Event (driver/event.py):
a record is a TIMESTAMP command in stream order, so queries and waits are
fence checks and elapsed time is the difference of two device-clock
timestamps (the timing model is driver/event.py's and sim/timing.py's).
The number space is the runtime API's too, so a cudaEvent_t is a CUevent.
"""
from __future__ import annotations

from typing import Any

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import HandleKind, R, current_context, entry, fail, handle_of, object_of, \
    per_thread_variant, require_init, stream_of
from gpudbg.cuda_driver.module import need
from gpudbg.driver import capture
from gpudbg.driver.event import Event, check_event, elapsed_ms

__all__ = ["cuEventCreate", "cuEventRecord", "cuEventRecord_ptsz", "cuEventRecordWithFlags",
           "cuEventRecordWithFlags_ptsz", "cuEventQuery", "cuEventSynchronize", "cuEventDestroy_v2",
           "cuEventDestroy", "cuEventElapsedTime", "cuEventElapsedTime_v2"]


def event_of(ctx: Any, hEvent: int) -> Event:
    """The live engine Event of a CUevent of `ctx`."""
    return check_event(ctx, object_of(HandleKind.EVENT, int(hEvent)))


def _any_event(hEvent: int) -> Event:
    """A CUevent of any context (queries work from every context)."""
    e = object_of(HandleKind.EVENT, int(hEvent))
    if e.destroyed:
        raise fail(R.CUDA_ERROR_INVALID_HANDLE, f"CUevent 0x{int(hEvent):x} was destroyed")
    return e


@entry
def cuEventCreate(phEvent: int, Flags: int) -> None:
    """CU_EVENT_DEFAULT, BLOCKING_SYNC, DISABLE_TIMING, INTERPROCESS (the
    last only with DISABLE_TIMING)."""
    need(phEvent, "phEvent")
    ctx = current_context()
    e = Event(ctx, int(Flags))
    ctx.events.add(e)
    cabi.store(phEvent, "u64", handle_of(HandleKind.EVENT, e), "phEvent")


@entry
def cuEventRecord(hEvent: int, hStream: int) -> None:
    """The event completes when the stream's work before it does."""
    ctx = current_context()
    event_of(ctx, hEvent).record(stream_of(ctx, hStream))


@entry
def cuEventRecordWithFlags(hEvent: int, hStream: int, flags: int) -> None:
    """CU_EVENT_RECORD_DEFAULT, or CU_EVENT_RECORD_EXTERNAL while the
    stream captures (an event-record node of the graph)."""
    ctx = current_context()
    event_of(ctx, hEvent).record(stream_of(ctx, hStream), int(flags))


cuEventRecord_ptsz = per_thread_variant(cuEventRecord, "cuEventRecord_ptsz", 1)
cuEventRecordWithFlags_ptsz = per_thread_variant(cuEventRecordWithFlags, "cuEventRecordWithFlags_ptsz", 1)


@entry
def cuEventQuery(hEvent: int) -> None:
    """CUDA_SUCCESS (also for a never-recorded event) or CUDA_ERROR_NOT_READY."""
    require_init()
    if not _any_event(hEvent).done():
        raise fail(R.CUDA_ERROR_NOT_READY, f"CUevent 0x{int(hEvent):x} has not completed")


@entry
def cuEventSynchronize(hEvent: int) -> None:
    """Waits for the record; returns the event context's sticky error."""
    require_init()
    e = _any_event(hEvent)
    capture.check_unsafe_call("cuEventSynchronize")
    e.synchronize()


@entry
def cuEventDestroy_v2(hEvent: int) -> None:
    """Returns at once even while the record is pending; the handle is retired."""
    require_init()
    _any_event(hEvent).destroy()
    handles.forget(HandleKind.EVENT, int(hEvent))


cuEventDestroy = cuEventDestroy_v2


def _elapsed(pMilliseconds: int, hStart: int, hEnd: int) -> None:
    need(pMilliseconds, "pMilliseconds")
    require_init()
    cabi.store(pMilliseconds, "f32", elapsed_ms(_any_event(hStart), _any_event(hEnd), 0), "pMilliseconds")


@entry
def cuEventElapsedTime_v2(pMilliseconds: int, hStart: int, hEnd: int) -> None:
    """Milliseconds between two completed records on the device clock.
    CUDA_ERROR_INVALID_HANDLE if either has DISABLE_TIMING or was never
    recorded, CUDA_ERROR_NOT_READY if either is pending."""
    _elapsed(pMilliseconds, hStart, hEnd)


@entry
def cuEventElapsedTime(pMilliseconds: int, hStart: int, hEnd: int) -> None:
    """The pre-12.8 form (the same computation)."""
    _elapsed(pMilliseconds, hStart, hEnd)
