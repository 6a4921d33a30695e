"""Events: a recorded marker on a stream.

Recording pushes an empty batch on the stream (so the default-stream
dependencies are honoured and the channel releases a fresh fence) and keeps
(semaphore, fence). Query is "fence reached", synchronize waits for it, and
stream-wait-event is a SEM_ACQUIRE of that fence on the other stream's
channel, resolved on the GPU. Timing is not recorded (no elapsed time).
"""
from __future__ import annotations

import itertools
from typing import Any

from gpudbg.runtime.errors import DriverError, mcError_t

_ids = itertools.count(1)


class Event:
    def __init__(self, context: Any, flags: int = 0):
        self.id = next(_ids)
        self.context = context
        self.flags = flags
        self.semaphore: Any = None
        self.value = 0
        self.channel_id: int | None = None
        self.destroyed = False

    def __repr__(self) -> str:
        return f"<mcEvent {self.id}>"

    def record(self, stream: Any) -> None:
        self.value = stream.submit([])
        self.semaphore = stream.channel.semaphore
        self.channel_id = stream.channel.id

    def done(self) -> bool:
        """Never-recorded events count as complete, as in CUDA."""
        if self.semaphore is None:
            return True
        with self.context.gpu.cv:
            return self.semaphore.reached(self.value)

    def synchronize(self) -> None:
        if self.semaphore is not None:
            self.semaphore.wait(self.value)
        self.context.after_wait()

    def make_wait(self, stream: Any) -> None:
        if self.semaphore is None:
            return
        stream.wait_for(self.semaphore.address, self.value, self.channel_id)


def check_event(context: Any, handle: Any) -> Event:
    if not isinstance(handle, Event) or handle.destroyed:
        raise DriverError(mcError_t.mcErrorInvalidResourceHandle, f"{handle!r} is not a live event")
    if handle.context is not context:
        raise DriverError(mcError_t.mcErrorInvalidResourceHandle,
                          f"{handle!r} belongs to another context")
    return handle
