"""Events of the Pythonic layer: mcEvent_t markers with two clocks.

What the times mean. `elapsed_time(end)` (clock="device", the default) is
mcEventElapsedTime: the difference of the simulated device clock between
the two records, in milliseconds at the device's clock rate. That clock
counts work, not time (sim/timing.py, driver/event.py): one cycle per
instruction a wave issues, waves of a launch one after another, plus a
fixed cost model for launch overhead, copies and memsets. It has no memory
latency, bandwidth limit, occupancy or overlap, so it is exactly
repeatable and good for comparing the instruction work of two versions of
a kernel, but it is not an estimate of how long a real GPU would take
(often off by orders of magnitude in either direction). clock="host"
gives what the work really took here: each timed record also queues a
host function behind the event (mcLaunchHostFunc) that reads
time.perf_counter() when the stream reaches it, so the difference is the
host wall time the simulator spent on the work between the two records
(plus the host worker's wake-up latency, microseconds).

Not here: interprocess events (a simulated GPU is one process's).
"""
from __future__ import annotations

import time
from typing import Any

from gpudbg.api.device import current_ordinal, generation, on_device, stream_handle
from gpudbg.api.errors import call, error_for
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t

EVENT_BLOCKING_SYNC = 0x1      # mcEventBlockingSync
EVENT_DISABLE_TIMING = 0x2     # mcEventDisableTiming
CLOCKS = ("device", "host")


class Event:
    """numba's event: `record(stream)`, `synchronize()`, `query()`,
    `wait(stream)`, `elapsed_time(end, clock=...)`."""

    def __init__(self, timing: bool = True, blocking: bool = False):
        flags = (0 if timing else EVENT_DISABLE_TIMING) | (EVENT_BLOCKING_SYNC if blocking else 0)
        self.timing = bool(timing)
        self.handle: Any = call(mc.mcEventCreateWithFlags, flags)
        self.device = current_ordinal()
        self._token = generation(self.device)
        self.destroyed = False
        self._host_time: list[float] | None = None   # filled by the host function of the last record

    def _live(self) -> Any:
        if self.destroyed:
            raise ValueError("the event was destroyed")
        if self._token is not generation(self.device):
            raise ValueError("the event belongs to a device context that was reset")
        return self.handle

    def record(self, stream: Any = None) -> "Event":
        """Mark the point of `stream` (default: the default stream) reached
        when all work queued on it so far is done."""
        handle, s = self._live(), stream_handle(stream)
        with on_device(self.device):
            call(mc.mcEventRecord, handle, s)
            capturing = int(call(mc.mcStreamIsCapturing, s)) != 0
            if self.timing and not capturing:   # a host node inside a captured graph would be a surprise
                stamp: list[float] = []
                call(mc.mcLaunchHostFunc, s, _stamp, stamp)
                self._host_time = stamp
        return self

    def synchronize(self) -> None:
        """Wait until the recorded work is done (raises its device faults)."""
        with on_device(self.device):
            call(mc.mcEventSynchronize, self._live())

    def query(self) -> bool:
        """True when the recorded work is done (or nothing was recorded)."""
        with on_device(self.device):
            err = mc.mcEventQuery(self._live())[0]
        if err == mcError_t.mcErrorNotReady:
            return False
        if err != mcError_t.mcSuccess:
            raise error_for(mcError_t(err), "mcEventQuery")
        return True

    def wait(self, stream: Any = None) -> None:
        """Make later work of `stream` wait for this event (on the device)."""
        with on_device(self.device):
            call(mc.mcStreamWaitEvent, stream_handle(stream), self._live(), 0)

    def elapsed_time(self, end: "Event", clock: str = "device") -> float:
        """Milliseconds from this event's record to `end`'s: on the simulated
        device clock (deterministic work count, see the module docstring) or,
        with clock="host", the host wall time the simulator took."""
        if not isinstance(end, Event):
            raise TypeError(f"end must be a gpudbg.Event, not {type(end).__name__}")
        if clock not in CLOCKS:
            raise ValueError(f"clock must be one of {CLOCKS}, not {clock!r}")
        if clock == "device":
            with on_device(self.device):
                return float(call(mc.mcEventElapsedTime, self._live(), end._live()))
        for e, name in ((self, "start"), (end, "end")):
            if not e.timing:
                raise ValueError(f"the {name} event was created with timing=False")
            if e._host_time is None:
                raise ValueError(f"the {name} event was never recorded")
            e.synchronize()
        _wait_for_stamp(self._host_time)
        _wait_for_stamp(end._host_time)
        return (end._host_time[0] - self._host_time[0]) * 1000.0   # type: ignore[index]

    def destroy(self) -> None:
        if self.destroyed or self._token is not generation(self.device):
            self.destroyed = True
            return
        with on_device(self.device):
            call(mc.mcEventDestroy, self.handle)
        self.destroyed = True

    def __repr__(self) -> str:
        return f"<gpudbg.Event device {self.device}{' destroyed' if self.destroyed else ''}>"


def _stamp(stamp: list[float]) -> None:
    stamp.append(time.perf_counter())


def _wait_for_stamp(stamp: list[float] | None) -> None:
    """The host function runs on the host worker after the event's work; a
    stream synchronize waits for it, an event synchronize need not."""
    assert stamp is not None
    if not stamp:
        call(mc.mcDeviceSynchronize)
    if not stamp:
        raise ValueError("the host clock of this record was not taken (the stream's host "
                         "functions were skipped after a device fault)")


def event_elapsed_time(start: Event, end: Event, clock: str = "device") -> float:
    """numba.cuda.event_elapsed_time's shape."""
    return start.elapsed_time(end, clock)
