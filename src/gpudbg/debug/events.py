"""The Session's event queue: what happened on the devices, in order, with
acknowledgement for the events whose emitter must wait.

The one idea: an event that needs acknowledgement blocks the thread that
emitted it (the host thread loading a module, the device thread launching
a kernel) on the event itself, so "the program does not go on until the
debugger has seen this" is a property of the event, not of a polling loop.
Which kinds block is the Session's choice (`set_ack_required`); detaching
releases every blocked emitter.
"""
from __future__ import annotations

import collections
import enum
import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from gpudbg.debug.backend import GridView, StopReason
from gpudbg.sim.faults import CUDBGException


class EventKind(enum.Enum):
    ELF_IMAGE_LOADED = "elf image loaded"
    ELF_IMAGE_UNLOADED = "elf image unloaded"
    KERNEL_READY = "kernel ready"
    KERNEL_FINISHED = "kernel finished"
    CTX_CREATE = "context create"
    CTX_DESTROY = "context destroy"
    CTX_PUSH = "context push"
    CTX_POP = "context pop"
    STOPPED = "stopped"
    PAGE_FAULT = "page fault"
    ATTACH_COMPLETE = "attach complete"
    DETACH_COMPLETE = "detach complete"
    TIMEOUT = "timeout"
    INTERNAL_ERROR = "internal error"


class LaunchNotify(enum.Enum):
    """Kernel launch notification modes (CUDBGKernelLaunchNotifyMode)."""

    EVENT = "event"      # CUDBG_KNS_NOTIFY_EVENT: KERNEL_READY is queued at every launch
    DEFER = "defer"      # CUDBG_KNS_DEFER_LAUNCH_NOTIFICATION: kept, read on demand


@dataclass
class Event:
    seq: int
    kind: EventKind
    dev: int = 0
    needs_ack: bool = False
    grid: GridView | None = None
    program: Any = None
    module_name: str | None = None
    context_id: int | None = None
    reason: StopReason | None = None
    address: int | None = None
    breakpoints: tuple[int, ...] = ()
    warps: tuple[tuple[int, int], ...] = ()
    lanes: tuple[tuple[int, int, int], ...] = ()
    exception: CUDBGException | None = None
    message: str = ""
    report: Any = None
    watch_hits: tuple = ()            # debug.watch.WatchHit of a WATCHPOINT stop
    time: float = field(default_factory=time.time)
    _acked: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    @property
    def acknowledged(self) -> bool:
        return self._acked.is_set()


class EventQueue:
    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._queue: collections.deque[Event] = collections.deque()
        self._seq = itertools.count(1)
        self.ack_required: set[EventKind] = set()
        self._unacked: list[Event] = []     # needs_ack events not yet acknowledged
        self.closed = False

    def emit(self, kind: EventKind, wait_ack: bool = True, **fields: Any) -> Event:
        """Queue an event; block the caller until it is acknowledged when
        its kind needs acknowledgement (and wait_ack)."""
        with self._cv:
            ev = Event(next(self._seq), kind, needs_ack=kind in self.ack_required and not self.closed, **fields)
            self._queue.append(ev)
            if ev.needs_ack:
                self._unacked = [e for e in self._unacked if not e.acknowledged] + [ev]
            self._cv.notify_all()
        if ev.needs_ack and wait_ack:
            ev._acked.wait()
        return ev

    def next(self, timeout: float | None = 0.0) -> Event | None:
        """0: poll; None: wait forever; else seconds."""
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        with self._cv:
            while not self._queue:
                if deadline is None:
                    self._cv.wait()
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cv.wait(left)
            return self._queue.popleft()

    def pending(self) -> int:
        with self._cv:
            return len(self._queue)

    def drain(self) -> list[Event]:
        with self._cv:
            out = list(self._queue)
            self._queue.clear()
            return out

    @staticmethod
    def acknowledge(event: Event) -> None:
        event._acked.set()

    def release_all(self, events: Iterable[Event] = ()) -> None:
        """Detach: nobody will acknowledge any more."""
        with self._cv:
            self.closed = True
            for ev in list(self._queue) + self._unacked + list(events):
                ev._acked.set()
            self._unacked = []
            self._cv.notify_all()
