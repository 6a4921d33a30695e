"""Events: a recorded marker on a stream, with a device timestamp.

Recording pushes one TIMESTAMP command on the stream (so the default-stream
dependencies are honoured and the channel releases a fresh fence after it)
and keeps (semaphore, fence). Query is "fence reached", synchronize waits
for it, and stream-wait-event is a SEM_ACQUIRE of that fence on the other
stream's channel, resolved on the GPU.

Timing model: the front end executes TIMESTAMP when everything before it
in the stream (and, for the legacy stream, in every blocking stream) is
done, storing the device clock `gpu.clock_cycles` into the event's 8-byte
slot. That clock advances only by executed work: kernels by the cycles the
executor counts, copies/memsets/launch overhead by sim/timing.py's cost
model. Elapsed time is the cycle difference divided by the device's
clock_rate_khz (cycles per ms): monotonic, and the same program gives the
same times. Events of different devices are compared (InterDevice flag) on
the assumption that all device clocks started together at 0. Events with
mcEventDisableTiming get no slot and record no TIMESTAMP.

While the stream captures, a record does not push: it remembers the
capture's current nodes, which a later mcStreamWaitEvent joins to
(driver/capture.py); with mcEventRecordExternal it also becomes a graph
node that records the event when the graph runs.

Lifetime: destroying an event returns at once and invalidates the handle;
its timestamp slot is freed when every record still queued has run and no
graph that records it is left (`hold`/`release`, taken by a graph's
resources). The recorded semaphore belongs to the stream's channel and may
outlive the stream (driver/fence.py): waiting on an event of a destroyed
stream is fine, and so is waiting on an event of another context or
device (`check_waitable_event`; driver/relay.py for another device).
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from gpudbg.driver import commands as C
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.sim import timing
from gpudbg.sim.memory.spaces import AllocationKind

_ids = itertools.count(1)

BLOCKING_SYNC = 0x1
DISABLE_TIMING = 0x2
INTERPROCESS = 0x4
EVENT_FLAGS = BLOCKING_SYNC | DISABLE_TIMING | INTERPROCESS
RECORD_EXTERNAL = 0x1
WAIT_EXTERNAL = 0x1
ELAPSED_INTER_DEVICE = 0x1


class Event:
    def __init__(self, context: Any, flags: int = 0):
        if flags & ~EVENT_FLAGS:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"unknown event flags 0x{flags:x}")
        if flags & INTERPROCESS and not flags & DISABLE_TIMING:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              "mcEventInterprocess requires mcEventDisableTiming")
        self.id = next(_ids)
        self.context = context
        self.flags = flags
        self.semaphore: Any = None
        self.value = 0
        self.channel_id: int | None = None
        self.destroyed = False
        self.captured: Any = None           # (CaptureSequence, nodes) of a record inside a capture
        self.timed = False                  # the latest record wrote a timestamp
        self.outstanding: list[tuple[Any, int]] = []   # records whose TIMESTAMP may still run
        self.holders = 0                    # graphs whose replays record this event
        self.slot = None
        if not flags & DISABLE_TIMING:
            self.slot = context.gpu.alloc_internal(8, AllocationKind.SEMAPHORE, f"event {self.id} timestamp")
            self.slot.data[:8] = 0
            _free_slots_on_teardown(context)

    def __repr__(self) -> str:
        return f"<mcEvent {self.id}>"

    @property
    def timing_disabled(self) -> bool:
        return bool(self.flags & DISABLE_TIMING)

    # ------------------------------------------------------------ recording
    def record(self, stream: Any, flags: int = 0) -> None:
        if flags & ~RECORD_EXTERNAL:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"unknown event record flags 0x{flags:x}")
        if stream.context.gpu is not self.context.gpu:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE,
                              f"{self!r} and {stream!r} are on different devices")
        if stream.capture is not None:
            from gpudbg.driver import capture, graph
            if flags & RECORD_EXTERNAL:
                capture.add_node(stream, graph.NodeKind.EVENT_RECORD, event=self)
            self.captured = (stream.capture, tuple(stream.capture_deps))
            return
        if flags & RECORD_EXTERNAL:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              "mcEventRecordExternal is only valid while the stream captures")
        # Both callbacks run under the context lock: atomic with destroy()
        # of another thread (the slot is read and the record registered
        # before destroy can schedule the slot's release).
        def commands() -> list[C.Command]:
            if self.destroyed and self.holders == 0:
                raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{self!r} was destroyed")
            return [] if self.slot is None else [C.make(C.Opcode.TIMESTAMP, address=self.slot.base)]

        def recorded(value: int) -> None:
            self.value = value
            self.semaphore = stream.channel.semaphore
            self.outstanding = [(sem, v) for sem, v in self.outstanding if not sem.reached(v)]
            self.outstanding.append((self.semaphore, self.value))
            self.channel_id = stream.channel.id
            self.captured = None
            self.timed = self.slot is not None
        stream.submit(commands, recorded)

    def in_active_capture(self) -> bool:
        from gpudbg.driver.types import CUstreamCaptureStatus as S
        return self.captured is not None and self.captured[0].status is S.CU_STREAM_CAPTURE_STATUS_ACTIVE \
            and self.captured[0].origin.capture is self.captured[0]

    def _refuse_if_captured(self, what: str) -> None:
        if self.in_active_capture():
            raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                              f"{what} on {self!r}, last recorded inside an active capture")

    # ------------------------------------------------------------ completion
    def done(self) -> bool:
        """Never-recorded events count as complete, as in CUDA."""
        self._refuse_if_captured("mcEventQuery")
        sem, value = self.fence()
        if sem is None:
            return True
        with self.context.gpu.cv:
            return sem.reached(value)

    def fence(self) -> tuple[Any, int]:
        """(semaphore, value) of the latest record, read as one (another
        thread may be recording)."""
        with self.context.lock:
            return self.semaphore, self.value

    def synchronize(self) -> None:
        self._refuse_if_captured("mcEventSynchronize")
        sem, value = self.fence()
        if sem is not None:
            sem.wait(value)
        self.context.after_wait()

    def make_wait(self, stream: Any, flags: int = 0) -> None:
        if flags & ~WAIT_EXTERNAL:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"unknown event wait flags 0x{flags:x}")
        from gpudbg.driver import capture, graph
        if self.in_active_capture():
            seq, nodes = self.captured
            capture.join(stream, seq, nodes)
            return
        if stream.capture is not None:
            if flags & WAIT_EXTERNAL:
                capture.add_node(stream, graph.NodeKind.WAIT_EVENT, event=self)
                return
            stream.capture.invalidate(f"waited on {self!r}, recorded outside the capture")
            raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
                              f"{stream!r} is capturing; {self!r} was recorded outside the capture "
                              f"(use mcEventWaitExternal)")
        if flags & WAIT_EXTERNAL:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              "mcEventWaitExternal is only valid while the stream captures")
        sem, value = self.fence()
        if sem is None:
            return
        stream.wait_for(sem, value)

    # ------------------------------------------------------------ timing
    def timestamp_cycles(self) -> int:
        slot = self.slot
        if slot is None or slot.freed:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{self!r} was destroyed")
        return int(slot.data[:8].view(np.uint64)[0])

    def destroy(self) -> None:
        """Returns at once; the timestamp slot goes when the records retire
        and no graph records the event any more."""
        ctx = self.context
        with ctx.lock:
            if self.destroyed:
                raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{self!r} was destroyed")
            self.destroyed = True
            ctx.events.discard(self)
            if self.holders == 0:
                self._retire_slot()
        ctx.reap()

    def hold(self) -> None:
        """A graph records this event when it runs: keep the slot."""
        with self.context.lock:
            self.holders += 1

    def release(self) -> None:
        with self.context.lock:
            self.holders -= 1
            if self.holders == 0 and self.destroyed:
                self._retire_slot()

    def _retire_slot(self) -> None:
        """Free the slot once every queued record has run (context lock held)."""
        slot, self.slot = self.slot, None
        if slot is None:
            return
        from gpudbg.driver.fence import Marker
        from gpudbg.driver.graph import _MarkerFence
        self.context.defer(_MarkerFence(Marker(tuple(self.outstanding))), 0, slot)


def _free_slots_on_teardown(context: Any) -> None:
    """Timestamp slots of events still alive when the context goes."""
    hooks = getattr(context, "teardown_hooks", None)
    if hooks is None or getattr(context, "_event_slot_hook", False):
        return
    context._event_slot_hook = True

    def free_slots() -> None:
        for e in list(context.events):
            if e.slot is not None:
                context.gpu.free_internal(e.slot)
    hooks.append(free_slots)


def _timing_of(e: Event, role: str) -> None:
    if e.timing_disabled:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE,
                          f"{role} event {e!r} was created with mcEventDisableTiming")
    if e.in_active_capture():
        raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                          f"{role} event {e!r} was recorded inside an active capture")
    if not e.timed:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{role} event {e!r} was never recorded")


def elapsed_ms(start: Event, stop: Event, flags: int = 0) -> float:
    """mcEventElapsedTime(WithFlags)."""
    if isinstance(flags, bool) or not isinstance(flags, int) or flags & ~ELAPSED_INTER_DEVICE:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"unknown elapsed-time flags {flags!r}")
    for role, e in (("start", start), ("stop", stop)):
        if not isinstance(e, Event) or e.destroyed:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{role} {e!r} is not a live event")
    inter = bool(flags & ELAPSED_INTER_DEVICE)
    if start.context.gpu is not stop.context.gpu and not inter:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE,
                          "the events are on different devices (pass mcEventElapsedTimeInterDevice)")
    _timing_of(start, "start")
    _timing_of(stop, "stop")
    for e in (start, stop):
        if not e.done():
            raise EngineError(CUresult.CUDA_ERROR_NOT_READY, f"{e!r} has not completed")
    for e in (start, stop):
        if e.semaphore.error is not None:
            raise EngineError(e.semaphore.error.status, f"{e!r}'s stream failed: {e.semaphore.error.message}")
    khz0 = start.context.device.model.clock_rate_khz
    khz1 = stop.context.device.model.clock_rate_khz
    if khz0 == khz1:
        return float(timing.cycles_to_ms(stop.timestamp_cycles() - start.timestamp_cycles(), khz0))
    return float(timing.cycles_to_ms(stop.timestamp_cycles(), khz1)
                 - timing.cycles_to_ms(start.timestamp_cycles(), khz0))


def check_waitable_event(handle: Any) -> Event:
    """mcStreamWaitEvent's event: a live event of any context or device."""
    if not isinstance(handle, Event) or handle.destroyed or handle.context.destroyed:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{handle!r} is not a live event")
    return handle


def check_event(context: Any, handle: Any) -> Event:
    if not isinstance(handle, Event) or handle.destroyed:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{handle!r} is not a live event")
    if handle.context is not context:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE,
                          f"{handle!r} belongs to another context")
    return handle
