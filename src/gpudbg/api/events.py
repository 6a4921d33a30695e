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
gives what the work really took here: the front end notes the host's
time.perf_counter() when it executes each record's TIMESTAMP command
(sim/timing.py record_host_time), that is when everything before the
record had finished, so the difference is the host wall time the
simulator spent on the work between the two records. Nothing is added to
the stream for it.

Not here: interprocess events (a simulated GPU is one process's).
"""
from __future__ import annotations

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
        self.recorded = False

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
        self.recorded = True
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
        stamps = []
        for e, name in ((self, "start"), (end, "end")):
            if not e.timing:
                raise ValueError(f"the {name} event was created with timing=False")
            if not e.recorded:
                raise ValueError(f"the {name} event was never recorded")
            e.synchronize()
            stamps.append(e._host_stamp(name))
        return (stamps[1] - stamps[0]) * 1000.0

    def _host_stamp(self, name: str) -> float:
        """When the front end executed this event's last TIMESTAMP (the
        mcEvent_t is the driver's event: its slot is the TIMESTAMP's address)."""
        from gpudbg.sim import timing
        handle = self._live()
        slot = getattr(handle, "slot", None)
        stamp = None if slot is None else timing.host_time(handle.context.gpu, slot.base)
        if stamp is None:
            raise ValueError(f"the {name} event's record did not execute on the device "
                             f"(recorded inside a stream capture?)")
        return stamp

    def destroy(self) -> None:
        if self.destroyed or self._token is not generation(self.device):
            self.destroyed = True
            return
        with on_device(self.device):
            call(mc.mcEventDestroy, self.handle)
        self.destroyed = True

    def __repr__(self) -> str:
        return f"<gpudbg.Event device {self.device}{' destroyed' if self.destroyed else ''}>"


def event_elapsed_time(start: Event, end: Event, clock: str = "device") -> float:
    """numba.cuda.event_elapsed_time's shape."""
    return start.elapsed_time(end, clock)
