"""Streams: ordered work queues, each one channel, plus the default-stream
synchronization rules of seed 002 chapter 1.1.

The rules become commands, not host waits: before work goes into the legacy
stream, it SEM_ACQUIREs the latest fence of every blocking stream of the
context; before work goes into a blocking stream, it SEM_ACQUIREs the
legacy stream's latest fence. `seen` remembers which fence of another
channel a stream is already ordered after, so each dependency is encoded
once. Non-blocking streams never get these acquires. The per-thread default
stream is an ordinary blocking stream created per host thread, which is
exactly its specified behaviour.

`submit` is the one place where stream work becomes ring commands, so it is
also where stream capture hooks in: while the stream captures, the commands
become a graph node (driver/capture.py) instead of being pushed, and every
API that encodes work (launch, copy, memset, stream memory op) is captured
without knowing about graphs.

Priority: lower numbers are higher priority, clamped to [PRIORITY_GREATEST,
PRIORITY_LEAST] (what mcDeviceGetStreamPriorityRange reports). It is copied
to the channel, and the front end serves the runnable channel of highest
priority first; equal priorities share round-robin. Nothing is preempted
mid-command.
"""
from __future__ import annotations

import enum
import itertools
from typing import Any, Sequence

from gpudbg.driver import commands as C
from gpudbg.driver.channel import Channel
from gpudbg.driver.fence import Marker

_ids = itertools.count(1)

# The meaningful stream priorities (cudaDeviceGetStreamPriorityRange on a
# Hopper GPU): 0 is the default and lowest, -5 the highest.
PRIORITY_LEAST = 0
PRIORITY_GREATEST = -5


def clamp_priority(priority: int) -> int:
    """Seed 002 §2.3.3.7: out-of-range priorities are clamped to the range."""
    return max(PRIORITY_GREATEST, min(PRIORITY_LEAST, int(priority)))


class StreamKind(enum.Enum):
    LEGACY = "legacy default stream"
    PER_THREAD = "per-thread default stream"
    CREATED = "stream"


NON_BLOCKING = 0x1


class Stream:
    def __init__(self, context: Any, flags: int = 0, kind: StreamKind = StreamKind.CREATED,
                 priority: int = 0):
        self.id = next(_ids)
        self.context = context
        self.flags = flags
        self.kind = kind
        self.channel = Channel(context.gpu, context.id, f"ctx{context.id}.s{self.id}")
        self.seen: dict[int, int] = {}        # channel id -> fence value already ordered after
        self.destroyed = False
        self._priority = 0
        self.priority = priority
        # Stream attributes (mcStreamSetAttribute): access policy window and
        # synchronization policy, runtime.stream_types values; None = default.
        self.attributes: dict[int, Any] = {}
        # Capture (driver/capture.py): the sequence this stream records into
        # and the nodes the next captured node will depend on.
        self.capture: Any = None
        self.capture_deps: list[Any] = []

    @property
    def priority(self) -> int:
        return self._priority

    @priority.setter
    def priority(self, value: int) -> None:
        self._priority = clamp_priority(value)
        with self.context.gpu.cv:
            self.channel.priority = self._priority

    @property
    def blocking(self) -> bool:
        return not (self.flags & NON_BLOCKING)

    @property
    def is_legacy(self) -> bool:
        return self.kind is StreamKind.LEGACY

    def __repr__(self) -> str:
        return f"<mcStream {self.id} ({self.kind.value}{', non-blocking' if not self.blocking else ''})>"

    # ------------------------------------------------------------ ordering
    def _implicit_sources(self) -> list["Stream"]:
        ctx = self.context
        if self.is_legacy:
            return [s for s in ctx.all_streams() if s is not self and s.blocking]
        if self.blocking:
            return [ctx.legacy]
        return []

    def _dependencies(self) -> list[C.Command]:
        deps = []
        for src in self._implicit_sources():
            ch = src.channel
            v = ch.issued
            if v > self.seen.get(ch.id, 0):
                deps.append(C.make(C.Opcode.SEM_ACQUIRE, address=ch.semaphore.address, value=v))
                self.seen[ch.id] = v
        return deps

    def submit(self, commands: Sequence[C.Command]) -> int:
        """Enqueue work in stream order; returns the fence of its completion.
        While the stream captures, the commands become a graph node instead
        and the fence returned is the last one already issued."""
        from gpudbg.driver import capture
        with self.context.lock:
            if self.capture is not None:
                capture.record_commands(self, list(commands))
                return self.channel.issued
            capture.check_implicit(self, commands)
            return self.channel.push(self._dependencies() + list(commands))

    def wait_for(self, semaphore_address: int, value: int, channel_id: int | None = None) -> int:
        """Order later work of this stream after another fence (stream wait event)."""
        with self.context.lock:
            if self.capture is not None:
                return self.submit([C.make(C.Opcode.SEM_ACQUIRE, address=semaphore_address, value=value)])
            if channel_id is not None:
                if value <= self.seen.get(channel_id, 0):
                    return self.channel.issued
                self.seen[channel_id] = value
            from gpudbg.driver import capture
            capture.check_implicit(self)
            return self.channel.push(self._dependencies()
                                     + [C.make(C.Opcode.SEM_ACQUIRE, address=semaphore_address, value=value)])

    # ------------------------------------------------------------ completion
    def marker(self) -> Marker:
        """What a host-side wait for this stream covers. For the legacy
        stream that includes every blocking stream, since syncing it is a
        synchronizing operation on the legacy stream."""
        m = self.channel.marker()
        if self.is_legacy:
            for s in self._implicit_sources():
                m = m.merged(s.channel.marker())
        return m

    def done(self) -> bool:
        with self.context.gpu.cv:
            return self.marker().reached()

    def wait(self) -> Marker:
        m = self.marker()
        m.wait(self.context.gpu.cv)
        return m
