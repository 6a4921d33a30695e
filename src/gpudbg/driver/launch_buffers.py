"""Launch buffers: the block of driver memory a launch's descriptor and
parameter copy live in, reused across launches instead of allocated and
freed each time.

Allocating device memory costs a first-fit walk over the address space and
a rewrite of the allocation index, both growing with the live allocations
(and with the launches still in flight, whose blocks are live too). The one
idea: when a launch has retired its block goes back to a free list of its
context, kept per exact size, and the next launch of that size takes it;
a stream of launches of one kernel cycles through as many blocks as it has
in flight. A block is the same LAUNCH allocation free+alloc would give
(driver-only: a kernel's access still faults), and each launch rewrites all
of it (descriptor, then exactly param_size bytes), so nothing of an
earlier launch is read by a later one. A kept block counts as free memory
(mcMemGetInfo), as after a free. The free list is bounded (KEEP blocks per
size) and freed when the context is destroyed. Captured launches' blocks
belong to their graph as before; grid workspaces and copy staging are not
pooled.

A launch's block waits for its fence in the buffers' own in-flight queue
(per size, in launch order) rather than in the context's deferred list: the
next launch of that size takes the oldest block whose fence retired
straight from the queue, still counted as used, so the steady state of a
stream of launches costs no deferred entry, no give/charge under the GPU's
lock and no context reap per launch. A block is never taken before its
fence retired (done or discarded), exactly as before; the context's reap
(every synchronization) moves retired blocks nobody took to the free list,
where they count as free memory.
"""
from __future__ import annotations

import threading
from collections import deque
from typing import Any

from gpudbg.sim.memory.spaces import Allocation, AllocationKind

KEEP = 256   # free blocks kept per size: more launches than this in flight allocate afresh


class LaunchBuffers:
    """The free launch blocks of one context."""

    def __init__(self, context: Any):
        self.gpu = context.gpu
        self._free: dict[int, list[Allocation]] = {}
        # size -> (semaphore, fence, block) of launches in flight, oldest first
        self._flight: dict[int, deque] = {}
        self._lock = threading.Lock()
        self._closed = False

    def take(self, size: int, label: str) -> Allocation:
        """A block of exactly `size` bytes (OutOfMemory as alloc_internal):
        the oldest in-flight one whose launch retired (still counted as
        used), else a kept one, else a new one."""
        with self._lock:
            flight = self._flight.get(size)
            if flight:
                sem, fence, a = flight[0]
                if sem.reached(fence):
                    flight.popleft()
                    a.label = label
                    return a
            blocks = self._free.get(size)
            a = blocks.pop() if blocks else None
        if a is None:
            return self.gpu.alloc_internal(size, AllocationKind.LAUNCH, label)
        cv = self.gpu.cv
        try:
            cv.acquire()             # counted as used again, as a fresh block would be (the lock
            try:                     # itself: a Condition's `with` is a Python-level call each way)
                self.gpu.memory._charge(a.size, a.kind)
            finally:
                cv.release()
        except BaseException:
            self._keep(a)
            raise
        a.label = label
        return a

    def _keep(self, a: Allocation) -> bool:
        with self._lock:
            if self._closed:
                return False
            blocks = self._free.setdefault(a.size, [])
            if len(blocks) >= KEEP:
                return False
            blocks.append(a)
            return True

    def give(self, allocation: Allocation) -> None:
        """A block whose launch retired: kept for the next launch of its
        size, or freed when enough are kept or the context is gone."""
        self.give_all([allocation])

    def give_all(self, blocks: list[Allocation]) -> None:
        """give, for many blocks under one hold of the GPU's lock (a reap
        after a stream of launches gives back one block per launch)."""
        freed = []
        memory = self.gpu.memory
        cv = self.gpu.cv
        cv.acquire()
        try:
            for a in blocks:
                if a.freed:
                    continue
                # a kept block is free memory to mcMemGetInfo, as after a free
                memory.used -= a.size
                if not self._keep(a):
                    memory.used += a.size
                    freed.append(a)
        finally:
            cv.release()
        for a in freed:
            self.gpu.free_internal(a)

    def reap(self) -> None:
        """Blocks whose launch retired and that no launch took yet become
        kept blocks (free memory to mcMemGetInfo); run by the context's
        reap. A block behind an unretired one of its size waits for the
        next reap (a stream's fences retire in order anyway)."""
        done = []
        with self._lock:
            for flight in self._flight.values():
                while flight and flight[0][0].reached(flight[0][1]):
                    done.append(flight.popleft()[2])
        if done:
            self.give_all(done)

    def close(self) -> None:
        """The context is being destroyed (its work killed): free every
        kept and in-flight block."""
        with self._lock:
            self._closed = True
            blocks = [a for kept in self._free.values() for a in kept]
            self._free.clear()
            flying = [a for flight in self._flight.values() for _s, _f, a in flight]
            self._flight.clear()
        with self.gpu.cv:
            for a in blocks:
                self.gpu.memory.used += a.size   # the free below uncounts it
                self.gpu.free_internal(a)
            for a in flying:
                self.gpu.free_internal(a)

    def release_after(self, stream: Any, fence: int, allocation: Allocation) -> None:
        """`allocation` may be taken again once `fence` of `stream` retired
        (queued in flight, see take and reap); a capturing stream's graph
        owns it instead."""
        if stream.capture is not None:
            from gpudbg.driver import capture
            if capture.adopt(stream, allocation):
                return
        with self._lock:
            if not self._closed:
                flight = self._flight.get(allocation.size)
                if flight is None:
                    flight = self._flight[allocation.size] = deque()
                flight.append((stream.channel.semaphore, fence, allocation))
                return
        self.gpu.free_internal(allocation)


_of_lock = threading.Lock()


def for_context(context: Any) -> LaunchBuffers:
    """The context's launch buffers (context.launch_buffers), made (and tied
    to its teardown) on first use."""
    buffers = context.launch_buffers
    if buffers is None:
        with _of_lock:
            buffers = context.launch_buffers
            if buffers is None:
                buffers = context.launch_buffers = LaunchBuffers(context)
                context.reap_hooks.append(buffers.reap)
                context.teardown_hooks.append(buffers.close)
    return buffers
