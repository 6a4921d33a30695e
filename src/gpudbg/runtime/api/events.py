"""Seed 002 §2.5: event management.

Events are driver objects (driver/event.py): a record is a TIMESTAMP
command on the stream, whose value comes from the simulated device clock
(the timing model is documented there and in sim/timing.py).
mcEventBlockingSync is accepted and reported; every host wait in gpudbg
already blocks on a condition variable, so it changes nothing observable.
mcEventInterprocess must come with mcEventDisableTiming, as in CUDA.
"""
from __future__ import annotations

from gpudbg.driver import capture
from gpudbg.driver.event import Event, check_event, elapsed_ms
from gpudbg.runtime.api._args import Flags, mcEvent_t, mcStream_t
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.errors import McError, mcError_t


@_api(1)
def mcEventCreate() -> Event:
    """Seed 002 §2.5.3.1: an event with mcEventDefault (timing enabled)."""
    return mcEventCreateWithFlags.__wrapped__(0)


@_api(1)
def mcEventCreateWithFlags(flags: Flags) -> Event:
    """Seed 002 §2.5.3.2: mcEventDefault, mcEventBlockingSync,
    mcEventDisableTiming, mcEventInterprocess (with DisableTiming)."""
    ctx = _ctx()
    e = Event(ctx, flags)
    ctx.events.add(e)
    return e


@_api(0)
def mcEventRecord(event: mcEvent_t, stream: mcStream_t = None) -> None:
    """Seed 002 §2.5.3.7: the event completes when the work before it does."""
    ctx = _ctx()
    check_event(ctx, event).record(ctx.stream(stream))


@_api(0)
def mcEventRecordWithFlags(event: mcEvent_t, stream: mcStream_t = None, flags: Flags = 0) -> None:
    """Seed 002 §2.5.3.8: mcEventRecordDefault, or mcEventRecordExternal
    (only while the stream captures: the record becomes an event-record node
    of the graph, replayed when the graph is launched)."""
    ctx = _ctx()
    check_event(ctx, event).record(ctx.stream(stream), flags)


@_api(0)
def mcEventQuery(event: mcEvent_t) -> None:
    """Seed 002 §2.5.3.6: mcSuccess (also for a never-recorded event) or
    mcErrorNotReady, as CUDA (the seed's text has the two swapped)."""
    ctx = _ctx()
    if not check_event(ctx, event).done():
        raise McError(mcError_t.mcErrorNotReady, f"{event!r} has not completed")


@_api(0)
def mcEventSynchronize(event: mcEvent_t) -> None:
    """Seed 002 §2.5.3.9: waits for the recorded work; returns at once for a
    never-recorded event. A potentially unsafe call during stream capture."""
    e = check_event(_ctx(), event)
    capture.check_unsafe_call("mcEventSynchronize")
    e.synchronize()


@_api(0)
def mcEventDestroy(event: mcEvent_t) -> None:
    """Seed 002 §2.5.3.3: returns at once even while the record is pending."""
    check_event(_ctx(), event).destroy()


@_api(1)
def mcEventElapsedTime(start: mcEvent_t, stop: mcEvent_t) -> float:
    """Seed 002 §2.5.3.4: milliseconds between the two records on the device
    clock. mcErrorInvalidResourceHandle if either was never recorded or has
    mcEventDisableTiming, mcErrorNotReady if either is still pending."""
    _ctx()
    return elapsed_ms(start, stop, 0)


@_api(1)
def mcEventElapsedTimeWithFlags(start: mcEvent_t, stop: mcEvent_t, flag: Flags) -> float:
    """Seed 002 §2.5.3.5: as mcEventElapsedTime; flag
    mcEventElapsedTimeInterDevice also allows events of two devices (their
    clocks are taken to have started together)."""
    _ctx()
    return elapsed_ms(start, stop, flag)


__all__ = ['mcEventCreate', 'mcEventCreateWithFlags', 'mcEventRecord', 'mcEventRecordWithFlags',
           'mcEventQuery', 'mcEventSynchronize', 'mcEventDestroy', 'mcEventElapsedTime',
           'mcEventElapsedTimeWithFlags']
