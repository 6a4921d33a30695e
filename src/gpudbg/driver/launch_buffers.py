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
"""
from __future__ import annotations

import threading
import weakref
from typing import Any

from gpudbg.sim.memory.spaces import Allocation, AllocationKind

KEEP = 256   # free blocks kept per size: more launches than this in flight allocate afresh


class LaunchBuffers:
    """The free launch blocks of one context."""

    def __init__(self, context: Any):
        self.gpu = context.gpu
        self._context = weakref.ref(context)
        self._free: dict[int, list[Allocation]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def take(self, size: int, label: str) -> Allocation:
        """A block of exactly `size` bytes (OutOfMemory as alloc_internal)."""
        with self._lock:
            blocks = self._free.get(size)
            a = blocks.pop() if blocks else None
        if a is None:
            return self.gpu.alloc_internal(size, AllocationKind.LAUNCH, label)
        try:
            with self.gpu.cv:                       # counted as used again, as a fresh block would be
                self.gpu.memory._charge(a.size, a.kind)
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
        if allocation.freed:
            return
        with self.gpu.cv:
            # a kept block is free memory to mcMemGetInfo, as after a free
            self.gpu.memory.used -= allocation.size
            if self._keep(allocation):
                return
            self.gpu.memory.used += allocation.size
        self.gpu.free_internal(allocation)

    def close(self) -> None:
        """The context is being destroyed: free every kept block."""
        with self._lock:
            self._closed = True
            blocks = [a for kept in self._free.values() for a in kept]
            self._free.clear()
        with self.gpu.cv:
            for a in blocks:
                self.gpu.memory.used += a.size   # the free below uncounts it
                self.gpu.free_internal(a)

    def release_after(self, stream: Any, fence: int, allocation: Allocation) -> None:
        """Give `allocation` back once `fence` of `stream` retired (what
        Context.defer_free does for other memory); a capturing stream's
        graph owns it instead."""
        from gpudbg.driver import capture
        if stream.capture is not None and capture.adopt(stream, allocation):
            return
        ctx = self._context()
        if ctx is None:
            self.gpu.free_internal(allocation)
            return
        ctx.defer(stream.channel.semaphore, fence, lambda: self.give(allocation))


_of: "weakref.WeakKeyDictionary[Any, LaunchBuffers]" = weakref.WeakKeyDictionary()
_of_lock = threading.Lock()


def for_context(context: Any) -> LaunchBuffers:
    """The context's launch buffers, made (and tied to its teardown) on first use."""
    buffers = _of.get(context)
    if buffers is None:
        with _of_lock:
            buffers = _of.get(context)
            if buffers is None:
                buffers = _of[context] = LaunchBuffers(context)
                context.teardown_hooks.append(buffers.close)
    return buffers
