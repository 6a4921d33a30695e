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

Lifetime: a stream destroyed while work is queued becomes a zombie of its
context (driver/context.py) until its channel is idle; a handle resolved
before another thread destroyed it is refused at submission
(CUDA_ERROR_INVALID_HANDLE), never pushed into a closed channel. Every
acquire of another channel's fence pins that semaphore (driver/fence.py) so
it outlives its stream as long as the acquire is queued; a fence of another
device is waited through a proxy semaphore (driver/relay.py).

Priority: lower numbers are higher priority, clamped to [PRIORITY_GREATEST,
PRIORITY_LEAST] (what mcDeviceGetStreamPriorityRange reports). It is copied
to the channel, and the front end serves the runnable channel of highest
priority first; equal priorities share round-robin. Nothing is preempted
mid-command.
"""
from __future__ import annotations

import enum
import itertools
from typing import Any, Callable, Sequence

from gpudbg.driver import capture, commands as C
from gpudbg.driver.channel import Channel, ChannelClosedError
from gpudbg.driver.fence import Marker, TrackingSemaphore
from gpudbg.driver.status import CUresult, EngineError

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
_LEGACY = StreamKind.LEGACY


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

    def _dependencies(self) -> tuple[list[C.Command], list[TrackingSemaphore]]:
        """The implicit acquires, with their semaphores pinned (caller holds
        the context lock). A source whose semaphore is already released has
        retired everything: no acquire is needed."""
        deps, pins = [], []
        if self.kind is _LEGACY and self.context.only_legacy():
            return deps, pins
        for src in self._implicit_sources():
            ch = src.channel
            v = ch.issued
            if v > self.seen.get(ch.id, 0):
                self.seen[ch.id] = v
                if ch.semaphore.pin():
                    deps.append(C.make(C.Opcode.SEM_ACQUIRE, address=ch.semaphore.address, value=v))
                    pins.append(ch.semaphore)
        return deps, pins

    def _check_usable(self) -> None:
        """A handle destroyed by another thread after it was resolved."""
        if self.context.destroyed:
            raise EngineError(CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED, f"{self.context!r} was destroyed")
        if self.destroyed or self.channel.closed:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{self!r} was destroyed")

    def _reserve(self, commands: list[C.Command], pins: list[TrackingSemaphore],
                 checked: bool = False) -> tuple[int, Any]:
        """Reserve a push after the implicit dependencies (caller holds the
        context lock); returns (fence, write), write() to be called once
        the lock is released (driver/channel.py). `checked`: the caller
        already ran _check_usable under the same hold of the lock."""
        if not checked:
            try:
                self._check_usable()
            except BaseException:
                for p in pins:
                    p.unpin()
                raise
        deps, dep_pins = self._dependencies()
        return self._push(deps + commands, dep_pins + pins)

    def _push(self, commands: list[C.Command], pins: list[TrackingSemaphore]) -> tuple[int, Any]:
        try:
            return self.channel.reserve(commands, pins)
        except ChannelClosedError:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{self!r} was destroyed") from None

    def submit(self, commands: "Sequence[C.Command] | Callable[[], Sequence[C.Command]]",
               on_fence: Callable[[int], None] | None = None) -> int:
        """Enqueue work in stream order; returns the fence of its completion.
        While the stream captures, the commands become a graph node instead
        and the fence returned is the last one already issued. `commands`
        may be a function called under the context lock, and on_fence(fence)
        is called under it once the fence is taken (events use both to stay
        atomic with their destruction). The ring write happens after the
        lock is released."""
        with self.context.lock:
            cmds = list(commands() if callable(commands) else commands)
            if self.capture is not None:
                capture.record_commands(self, cmds)
                return self.channel.issued
            self._check_usable()
            if self.kind is _LEGACY and self.context.only_legacy():
                value, write = self._push(cmds, ())    # alone: no capture to break, nothing to order after
            else:
                capture.check_implicit(self, cmds)
                value, write = self._reserve(cmds, [], True)
            error: BaseException | None = None
            if on_fence is not None:
                try:
                    on_fence(value)
                except BaseException as e:   # the fence is taken: its words must still go in
                    error = e
        write()
        if error is not None:
            raise error
        return value

    def wait_for(self, semaphore: "TrackingSemaphore | int", value: int) -> int:
        """Order later work of this stream after a fence of another channel
        (stream wait event, pool reuse), on the GPU. A TrackingSemaphore is
        pinned until the acquire has run; one of another device is waited
        through a relay (driver/relay.py). A plain address is the caller's
        own memory (kept alive by the caller)."""
        if isinstance(semaphore, int):
            return self.submit([C.make(C.Opcode.SEM_ACQUIRE, address=semaphore, value=value)])
        owner = getattr(semaphore, "channel", None)
        if owner is not None and owner.gpu is not self.context.gpu:
            return self._wait_across_devices(semaphore, value)
        with self.context.lock:
            fence, write = self._wait_locked(semaphore, value, capture)
        if write is not None:
            write()
        return fence

    def _wait_locked(self, sem: TrackingSemaphore, value: int, capture: Any) -> tuple[int, Any]:
        """wait_for on this device (caller holds the context lock)."""
        owner = getattr(sem, "channel", None)
        channel_id = owner.id if owner is not None else None
        if self.capture is None:
            self._check_usable()
            if channel_id is not None and value <= self.seen.get(channel_id, 0):
                return self.channel.issued, None
        if not sem.pin():
            if channel_id is not None and self.capture is None:
                self.seen[channel_id] = max(self.seen.get(channel_id, 0), value)
            return self.channel.issued, None        # released: the fence retired long ago
        acquire = C.make(C.Opcode.SEM_ACQUIRE, address=sem.address, value=value)
        try:
            if self.capture is not None:
                capture.record_commands(self, [acquire])
            else:
                capture.check_implicit(self)
        except BaseException:
            sem.unpin()
            raise
        if self.capture is not None:
            capture.adopt(self, sem.unpin)     # the graph's replays read it: it keeps the pin
            return self.channel.issued, None
        if channel_id is not None:
            self.seen[channel_id] = value
        return self._reserve([acquire], [sem])

    def _wait_across_devices(self, sem: TrackingSemaphore, value: int) -> int:
        """Another GPU's fence: acquire a proxy semaphore of this GPU that a
        relay sets once the fence retires."""
        from gpudbg.driver import relay
        channel_id = sem.channel.id
        with self.context.lock:
            if self.capture is None:
                self._check_usable()
                if value <= self.seen.get(channel_id, 0):
                    return self.channel.issued
        with sem.cv:
            if sem.reached(value):
                return self.channel.issued
        proxy = relay.watch(sem, value, self.context.gpu)
        owned: list[int] = []

        def taken(fence: int) -> None:
            owned.append(fence)
            self.context.defer_free(self, fence, proxy)
            if self.capture is None:
                self.seen[channel_id] = max(self.seen.get(channel_id, 0), value)
        try:
            return self.submit([C.make(C.Opcode.SEM_ACQUIRE, address=proxy.base, value=1)], taken)
        except BaseException:
            if not owned:
                relay.cancel(proxy, self.context.gpu)
            raise

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
        m = self.marker()      # outside the GPU lock: the context lock comes first
        with self.context.gpu.cv:
            return m.reached()

    def wait(self) -> Marker:
        m = self.marker()
        m.wait(self.context.gpu.cv)
        return m
