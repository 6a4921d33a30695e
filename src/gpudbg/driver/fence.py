"""Tracking semaphores: how the host knows what the GPU has finished.

Each channel owns one 64-bit location in device memory (a SEMAPHORE
allocation). The driver counts pushes on the host side (`issued`); the GPU
writes the value of each SEM_RELEASE it executes into the location
(`completed`, read straight from device memory, the single truth). "Work up
to fence N is done" is `completed >= N`. Waiting is a wait on the GPU's
condition variable, woken by the front end after every command, never a
polling sleep. A channel error (fault, reset) retires everything and is
recorded here so a woken waiter can tell "done" from "discarded".

Lifetime: the semaphore's memory is read by the GPU wherever a queued
SEM_ACQUIRE names it, including on channels other than its own (stream wait
event, default-stream ordering, pool reuse), and those may outlive the
channel (a destroyed stream). So the memory is reference-counted: the
channel holds one reference, every queued acquire of another channel pins
one (`pin`, dropped by that channel once the push carrying it retired), and
the last `unpin` frees the word, after freezing its final value on the
host side so `completed` keeps answering without touching freed memory. A
pin refused (the memory is gone) means every fence the semaphore handed out
has retired, since a channel is only closed when idle or killed.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass
class ChannelError:
    """Why a channel stopped: the error code its context reports and the
    fault report (None for a reset or an internal front-end error)."""

    status: Any  # CUresult
    message: str
    report: Any = None  # gpudbg.sim.faults.FaultReport


class TrackingSemaphore:
    """One channel's semaphore: GPU-visible value plus host counters."""

    def __init__(self, allocation: Any, cv: threading.Condition,
                 free: Callable[[Any], None] | None = None):
        self.allocation = allocation
        self.address: int = allocation.base
        self._word = allocation.data[:8].view(np.uint64)
        self._word[0] = 0
        self.cv = cv
        self.issued = 0       # fence values handed out by the host
        self.error: ChannelError | None = None
        self._free = free     # releases the allocation (None: the caller owns it)
        self._refs = 1        # the owner's reference, plus one per pin
        self._final: int | None = None   # the value frozen when the memory went
        # whether the memory is gone (then every fence has retired): a plain
        # attribute, read by the front end at every fence it writes
        self.released = False

    @property
    def completed(self) -> int:
        """The value the GPU last released (finished-by-GPU)."""
        final = self._final
        return int(self._word[0]) if final is None else final

    def pin(self) -> bool:
        """Keep the memory for a queued command that reads it; False when it
        is already released (so there is nothing left to wait for)."""
        with self.cv:
            if self._final is not None:
                return False
            self._refs += 1
            return True

    def unpin(self) -> None:
        """Drop a reference (the owner's or a pin); the last one frees."""
        with self.cv:
            if self._final is not None:
                return
            self._refs -= 1
            if self._refs > 0:
                return
            self._final = int(self._word[0])
            self.released = True
            if self._free is not None:
                self._free(self.allocation)

    def next_value(self) -> int:
        """Allocate the fence value of the next push (caller holds cv)."""
        self.issued += 1
        return self.issued

    def reached(self, value: int) -> bool:
        return self.completed >= value or self.error is not None

    def wait(self, value: int, timeout: float | None = None) -> bool:
        """Block until fence `value` is retired (done or discarded). Returns
        False only when `timeout` expired first. Without a timeout the wait
        is watched for hangs (driver/watchdog.py)."""
        if timeout is None:
            from gpudbg.driver import watchdog
            watchdog.wait(self.cv, ((self, value),), lambda: self.reached(value))
            return True
        with self.cv:
            return self.cv.wait_for(lambda: self.reached(value), timeout)

    def idle(self) -> bool:
        """Everything issued so far has retired."""
        return self.reached(self.issued)


@dataclass(frozen=True)
class Marker:
    """'All work before this point' as (semaphore, value) entries, the unit
    of stream sync, event record and stream-wait-event."""

    entries: tuple[tuple[TrackingSemaphore, int], ...] = ()

    def reached(self) -> bool:
        return all(sem.reached(v) for sem, v in self.entries)

    def wait(self, cv: threading.Condition) -> None:
        from gpudbg.driver import watchdog   # breaks hangs: fences that can never retire
        watchdog.wait(cv, self.entries, self.reached)

    def errors(self) -> list[ChannelError]:
        return [sem.error for sem, _ in self.entries if sem.error is not None]

    def merged(self, other: "Marker") -> "Marker":
        best: dict[int, tuple[TrackingSemaphore, int]] = {}
        for sem, v in self.entries + other.entries:
            cur = best.get(id(sem))
            if cur is None or v > cur[1]:
                best[id(sem)] = (sem, v)
        return Marker(tuple(best.values()))
