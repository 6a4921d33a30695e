"""A channel: one ring buffer plus one tracking semaphore, the unit of work
submission to the simulated GPU (a GPFIFO channel on real hardware).

`push()` is the whole submission protocol: take the next fence value, encode
the commands followed by a SEM_RELEASE of that value to the channel's own
semaphore, copy the words into the ring (waiting for space on a condition,
never spinning) and ring the doorbell (advance put, notify). The
channel belongs to a group (its context); the front end faults and discards
whole groups. A channel knows nothing about streams or memcpy kinds.

A push may carry pins: other channels' semaphores its SEM_ACQUIREs read
(driver/fence.py). The channel keeps each pin until the push's own fence
retires, then drops it; closing drops the rest. A whole batch is encoded
and size-checked before any word is written, so a refused push leaves the
ring untouched. A push is two steps, `reserve` (fence value and turn, done
under the stream's context lock) and the write (which may wait for ring
space, done after that lock is released, in reservation order): a thread
whose stream's ring is full behind a wait does not keep other threads from
submitting the work that would release it. When it is the push's turn
and its words fit, reserve writes them at once, holding the channel's own
host lock (tickets, fence values, put) but not the GPU's: the host is the
only writer of put, writes it after the words (under the GIL the GPU's
threads see the two stores in that order), and the GPU reads a ring only
up to put. The doorbell takes the GPU's lock only when no command of
the channel runs (a running one's thread looks at the ring under that lock
before it lets the channel go). So a host queuing launches behind running
ones and the GPU thread retiring them do not take one lock per launch
each: on two cores that becomes a lock convoy, every acquisition blocking
(the lock is handed to a blocked waiter, which then waits for the GIL),
two context switches per launch on each side.

Waking the host (the one idea of the waits): a writer waits for room on
the channel's own condition (`_room`, sharing the GPU's lock), not on the
GPU's, so the notify after every retired command does not wake it; the
front end wakes it by name once the ring is half free (`room_wanted`,
hysteresis: a host far ahead of the GPU then writes half a ring of pushes
per wake-up instead of one push per retired command), or at once when the
ring emptied (discard, fault, reset), the channel closed, or its head
stalled (a semaphore or value wait, a busy engine) with the room needed
free. The one stall the front end cannot see is a long-running command (a
kernel spinning on a host flag): after ROOM_BACKSTOP_S without a wake the
writer takes whatever room suffices, so waiting for the threshold can
delay a push but never hang one. Later reservations wait for their turn
on a second condition (`_turn`), woken when a turn ends.
"""
from __future__ import annotations

import itertools
import threading
from typing import Any, Callable, Sequence

from gpudbg.driver import commands as C
from gpudbg.driver.fence import ChannelError, Marker, TrackingSemaphore
from gpudbg.driver.ring import MAX_COMMAND_WORDS, Ring, RingFullError
from gpudbg.sim.memory.spaces import AllocationKind

DEFAULT_RING_BYTES = 4096
ROOM_BACKSTOP_S: float | None = 0.02   # a writer below the threshold takes what fits after this (None: never)
_RELEASE_WORDS = 1 + C.payload_words(C.Opcode.SEM_RELEASE)   # the fence's SEM_RELEASE closing every push
_chain = itertools.chain.from_iterable
_ids = itertools.count(1)


class ChannelClosedError(RuntimeError):
    """Work pushed to a channel that was destroyed."""


class Channel:
    def __init__(self, gpu: Any, group: int, name: str = "", ring_bytes: int = DEFAULT_RING_BYTES):
        self.id = next(_ids)
        self.gpu = gpu
        self.group = group
        self.name = name or f"ch{self.id}"
        self.ring = Ring(gpu.alloc_internal(ring_bytes, AllocationKind.RING, f"ring {self.name}"),
                         self.name)
        self.semaphore = TrackingSemaphore(
            gpu.alloc_internal(8, AllocationKind.SEMAPHORE, f"semaphore {self.name}"), gpu.cv,
            free=gpu.free_internal)
        self.semaphore.channel = self   # lets the hang watchdog find the ring behind a fence
        # whether every command (and the closing release) fits in the ring: then no push needs
        # its commands' sizes checked against the ring's (the ring's size never changes)
        self._any_fits = max(MAX_COMMAND_WORDS, _RELEASE_WORDS) <= self.ring.size - 1
        # the words of the SEM_RELEASE closing every push, up to its value (address, then value:
        # FORMATS' order), so a push appends two words instead of making and encoding a command,
        # and the front end knows the fence by them without decoding it (Ring.release_value_at)
        self.fence_head: tuple[int, int, int] = tuple(
            C.encode(C.make(C.Opcode.SEM_RELEASE, address=self.semaphore.address, value=0))[:3])
        self._release_head = list(self.fence_head)
        self.pins: list[tuple[int, TrackingSemaphore]] = []   # (own fence, semaphore read before it)
        self.launch_limits: tuple | None = None   # what its pushes programmed (driver/limits.py) ...
        self.limits_checked = -1                  # ... found current at this context limits_version
        self._tickets = 0     # reservations handed out ...
        self._serving = 0     # ... and the one whose words go into the ring now
        self._host_lock = threading.Lock()   # the host side's: tickets, fence values, put (see reserve)
        self._turn = gpu.cv.sibling()     # reservations waiting for their turn
        self._room = gpu.cv.sibling()     # the serving writer waiting for ring room
        self.room_wanted = 0   # free words at which the front end wakes that writer (0: none waits) ...
        self.room_needed = 0   # ... and the words its next command needs (enough when the ring stalls)
        self.closed = False
        gpu.frontend.attach(self)

    # ------------------------------------------------------------ submission
    def push(self, commands: Sequence[C.Command], pins: Sequence[TrackingSemaphore] = ()) -> int:
        """Submit commands; returns the fence value retired after the last.
        `pins` (already pinned by the caller) are owned by the channel from
        here on, also when the push is refused."""
        value, write = self.reserve(commands, pins)
        write()
        return value

    def reserve(self, commands: Sequence[C.Command],
                pins: Sequence[TrackingSemaphore] = ()) -> tuple[int, Callable[[], None]]:
        """The first half of a push: take the fence value and this push's
        turn, and return (value, write). The caller must call write() (it
        may wait for ring space) and may release its own locks first: pushes
        reach the ring in the order of their reservations, so fence values
        stay in ring order while no lock is held during the wait."""
        try:
            if self.closed:
                raise ChannelClosedError(f"channel {self.name} is closed")
            encoded = list(map(C.encode, commands))
            if not self._any_fits:     # a ring too small for some command: find the first that cannot
                limit = self.ring.size - 1
                for n in [len(words) for words in encoded] + [_RELEASE_WORDS]:
                    if n > limit:
                        raise RingFullError(f"ring {self.name}: a {n}-word command can never fit")
            lock = self._host_lock
            lock.acquire()    # (the lock itself: a `with` is a Python-level call each way)
            try:
                if self.closed:
                    raise ChannelClosedError(f"channel {self.name} is closed")
                value = self.semaphore.next_value()
                encoded.append(self._release_head + [value & C.WORD_MASK, (value >> 32) & C.WORD_MASK])
                if pins:
                    with self.gpu.cv:      # retire_pins and close take the list under the GPU's lock
                        self.pins.extend((value, p) for p in pins)
                    pins = ()
                ticket = self._tickets
                self._tickets = ticket + 1
                full = self._serving == ticket
                if full:                         # no earlier push still to write: write now if it fits
                    flat = list(_chain(encoded))
                    ring = self.ring
                    if ring.size - 1 - (ring.put - ring.get) % ring.size >= len(flat):   # ring.free()
                        try:
                            ring.write(flat)     # the words, then put: the GPU reads up to put only
                        finally:
                            self._serving = ticket + 1   # (no later ticket exists while this lock is held)
                        self._doorbell()
                        return value, self.retire_pins
            finally:
                lock.release()
        finally:
            for p in pins:
                p.unpin()
        return value, lambda: self._write(ticket, encoded, full)

    def _doorbell(self) -> None:
        """After a put written without the GPU's lock: a channel whose
        command runs now needs nobody (its job's thread looks at the ring
        under the lock before it lets the channel go, and whoever schedules
        it next looks after that); otherwise ring as under the lock."""
        frontend = self.gpu.frontend
        if self in frontend.executing:
            return
        cv = self.gpu.cv
        cv.acquire()
        try:
            frontend.rung(self)
            cv.notify_all()
        finally:
            cv.release()

    def _write(self, ticket: int, encoded: list[list[int]], full: bool = False) -> None:
        """The second half of a push whose words did not go in at once: wait
        for its turn, then for room. `full`: its turn had come and the ring
        had no room for it; then it waits for half a free ring even if some
        room appears meanwhile (a push that took each retired command's room
        would keep the ring full and the host in step with the GPU). The
        waits test their conditions in plain loops (the lock taken directly,
        not through the Condition's Python-level with-statement)."""
        cv = self.gpu.cv
        ring = self.ring
        size = ring.size
        half = (size - 1) // 2
        cv.acquire()
        try:
            while self._serving != ticket:
                self._turn.wait()
            try:
                if full and not self.closed:
                    total = min(sum(map(len, encoded)), size - 1)
                    if ring.free() < max(total, half):
                        # a scheduler asleep behind a stalled head (a SEM_ACQUIRE: no poll) looks
                        # again now that this wait is known, and hands over the room there is
                        cv.notify_all()
                        self._wait_room(len(encoded[0]), max(total, half))
                if not self.closed and len(encoded) > 1:
                    flat = list(_chain(encoded))
                    if ring.free() >= len(flat):     # the whole push fits now: one write
                        encoded = [flat]
                for words in encoded:
                    n = len(words)
                    if size - 1 - (ring.put - ring.get) % size < n and not self.closed:     # ring.free() < n
                        # the words written so far must reach the GPU before this waits for room
                        cv.notify_all()
                        self._wait_room(n, max(n, half))
                    if self.closed:
                        break          # the context was torn down: its work is discarded
                    ring.write(words)
                    self.gpu.frontend.rung(self)
            finally:
                self._serving += 1
                self._turn.notify_all()
                cv.notify_all()        # the words and this turn's end, at once
        finally:
            cv.release()
        self.retire_pins()

    def _wait_room(self, n: int, until: int) -> None:
        """Wait (holding the GPU's lock) until `until` words are free, or
        the channel closed. The front end wakes this at room_wanted (=
        until) free words, or at room_needed (= n) when the ring stalls; the
        backstop covers a stall it cannot see (see the module docstring).
        Once woken, n words are enough."""
        ring = self.ring
        size = ring.size
        want = until
        try:
            while size - 1 - (ring.put - ring.get) % size < want and not self.closed:
                self.room_needed = n
                self.room_wanted = until
                self._room.wait(ROOM_BACKSTOP_S)
                want = n
        finally:
            self.room_wanted = self.room_needed = 0

    def wake_writer(self) -> None:
        """The front end's call when room appeared or waiting for more is
        pointless (caller holds the GPU's lock)."""
        self.room_wanted = 0
        self._room.notify_all()

    def retire_pins(self) -> None:
        """Drop the pins of pushes whose fence retired."""
        if not self.pins:
            return   # the common case, without the GPU's lock (a pin added meanwhile waits for the next call)
        with self.gpu.cv:
            if not self.pins:
                return
            sem = self.semaphore
            done = [p for f, p in self.pins if sem.reached(f)]
            if not done:
                return
            self.pins = [(f, p) for f, p in self.pins if not sem.reached(f)]
        for p in done:
            p.unpin()

    # ------------------------------------------------------------ completion
    @property
    def error(self) -> ChannelError | None:
        return self.semaphore.error

    @property
    def issued(self) -> int:
        return self.semaphore.issued

    @property
    def completed(self) -> int:
        return self.semaphore.completed

    def marker(self) -> Marker:
        """Everything pushed so far."""
        return Marker(((self.semaphore, self.semaphore.issued),))

    def wait(self, value: int | None = None) -> None:
        self.semaphore.wait(self.semaphore.issued if value is None else value)

    def idle(self) -> bool:
        with self.gpu.cv:
            return self.semaphore.idle() and (self.ring.empty() or self.error is not None)

    # ------------------------------------------------------------ teardown
    def close(self) -> None:
        """Detach from the front end, release the ring and the pins, and drop
        the channel's reference to its semaphore (whose memory stays while
        other channels' queued acquires pin it). Callers make sure the
        channel is idle (or its group was killed)."""
        with self._host_lock, self.gpu.cv:     # no push is writing the ring without the GPU's lock
            if self.closed:
                return
            self.closed = True
            self.wake_writer()          # a push waiting for room is discarded ...
            self._turn.notify_all()     # ... and so are the ones waiting for their turn
        self.gpu.frontend.detach(self)
        self.gpu.free_internal(self.ring.allocation)
        with self.gpu.cv:
            pins, self.pins = self.pins, []
        for _f, p in pins:
            p.unpin()
        self.semaphore.unpin()
