"""Contexts and the per-thread current-context stack.

A context is a userspace object (seed 003 §2.2): its memory manager, its
streams (channels, all in one channel group on the GPU), its modules, and
its sticky error. The GPU's front end reports a fault for the group; the
context keeps the first one (`sticky`, `fault_report`) and every later call
that checks the context raises it. Resources are created lazily: the primary
context object exists per device, but its channels appear on first use.
Driver-owned memory that must outlive a submission (staging buffers, launch
descriptors) is freed when the fence that last uses it retires (`reap`).

Lifetimes follow CUDA: destroying a stream (event, module, pool, graph exec)
with work still referring to it returns at once and invalidates the handle;
what backs it is released by `reap` once that work has retired. `deferred`
holds (fence, value, what): `what` is an allocation to free or a function to
call (a module's unload, a semaphore's unpin). Destroyed streams wait as
`zombies` until their channel is idle; their semaphore outlives them while
other channels' queued acquires pin it (driver/fence.py).
"""
from __future__ import annotations

import itertools
from collections import deque
import threading
from typing import Any

from gpudbg.sim import debug_port
from gpudbg.driver import capture, host_site
from gpudbg.driver.fence import ChannelError
from gpudbg.driver.memory import MemoryManager
from gpudbg.driver.stream import NON_BLOCKING, Stream, StreamKind
from gpudbg.driver.status import CUresult, EngineError

_ids = itertools.count(1)

STREAM_LEGACY = 0x1
STREAM_PER_THREAD = 0x2


class Context:
    def __init__(self, device: Any, engine: Any, flags: int = 0):
        self.id = next(_ids)
        self.device = device
        self.gpu = device.gpu
        self.engine = engine
        self.flags = flags
        self.is_primary = False               # set by Device.primary_context
        self.lock = threading.RLock()
        self.sticky: EngineError | None = None
        self.fault_report: Any = None
        # grid id -> the user's Python frames that launched it, so a fault
        # report names the launching line (the most recent LAUNCH_SITES)
        self.launch_sites: dict[int, tuple] = {}      # grid id -> host_site.capture() of its launch
        self.destroyed = False
        self.memory = MemoryManager(self, engine.uva)
        self.streams: list[Stream] = []
        self.zombies: list[Stream] = []
        self.per_thread: dict[int, Stream] = {}
        self.modules: list[Any] = []
        self.events: set[Any] = set()
        # id(fence object) -> (fence, deque of (value, allocation or callable)) in the order deferred:
        # one fence's values arrive (nearly) in order, so a reap looks at each
        # queue's head only instead of every launch still in flight
        self.deferred: dict[int, tuple[Any, deque]] = {}
        self.sync_hooks: list[Any] = []       # run after every host wait (pools observe frees)
        self.teardown_hooks: list[Any] = []   # run on destroy, before memory is released (VMM, pools)
        self.reap_hooks: list[Any] = []       # run by every reap, off the lock (launch buffers)
        self.launch_buffers: Any = None       # driver/launch_buffers.py, made by the first launch
        self.limits = {"stack_size": device.model.default_stack_size,
                       "printf_fifo_size": device.model.printf_fifo_size,
                       "malloc_heap_size": device.model.malloc_heap_size}
        self.limits_used: set[str] = set()    # "printf", "heap": what launched kernels used (driver/limits.py)
        self.limits_version = 0               # counts limits set (driver/limits.py set_limit)
        self.gpu.fault_listeners.append(self._on_fault)
        self.legacy = Stream(self, 0, StreamKind.LEGACY)
        debug_port.notify("context_event", self.gpu, "create", self.id)

    def __repr__(self) -> str:
        return f"<mcContext {self.id} on device {self.device.ordinal}>"

    # ------------------------------------------------------------ errors
    def _on_fault(self, group: int, error: ChannelError) -> None:
        """Called by the front end (device thread, GPU lock held)."""
        if group != self.id or self.sticky is not None:
            return
        self.sticky = EngineError(error.status, error.message)
        self.fault_report = error.report
        site = self.launch_sites.get(getattr(error.report, "grid_id", None))
        if site:
            error.report.details.setdefault("launch_site", host_site.formatted(site))
        self.engine.fault_log.append((self, self.sticky))

    def check(self) -> None:
        """Raise the context's sticky error, if any."""
        if self.destroyed:
            raise EngineError(CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED, f"{self!r} was destroyed")
        if self.sticky is not None:
            raise EngineError(self.sticky.status, self.sticky.message)

    # ------------------------------------------------------------ streams
    def all_streams(self) -> list[Stream]:
        # list() copies are single C-level steps: safe against other threads
        # adding streams without taking the context lock (which must not be
        # taken under the GPU's lock). A context using only the legacy stream
        # (every launch and sync asks, several times) gets that at once.
        if not self.streams and not self.per_thread and not self.zombies:
            return [self.legacy]
        return [self.legacy, *list(self.streams), *list(self.per_thread.values()), *list(self.zombies)]

    def only_legacy(self) -> bool:
        """Whether the legacy stream is the context's only stream: then it
        has nothing to be ordered after and no capture to break, the case
        of a program that never creates a stream (checked on each of its
        pushes; read without the lock, as all_streams)."""
        return not self.streams and not self.per_thread and not self.zombies

    def create_stream(self, flags: int = 0, priority: int = 0) -> Stream:
        if flags & ~NON_BLOCKING:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"unknown stream flags 0x{flags:x}")
        with self.lock:
            s = Stream(self, flags, priority=priority)
            self.streams.append(s)
            return s

    def stream(self, handle: Any) -> Stream:
        """Resolve a user stream handle (None/0, mcStreamLegacy,
        mcStreamPerThread or a Stream)."""
        if handle is None and not self.engine.per_thread_default_stream:
            return self.legacy      # the default stream of a legacy-mode program: most launches
        if handle is None or (isinstance(handle, int) and not isinstance(handle, bool) and handle == 0):
            # Seed 002 §1.1.1: 0 is the default stream of the program's mode.
            handle = STREAM_PER_THREAD if self.engine.per_thread_default_stream else STREAM_LEGACY
        if isinstance(handle, int) and not isinstance(handle, bool) and handle == STREAM_LEGACY:
            return self.legacy
        if isinstance(handle, int) and not isinstance(handle, bool) and handle == STREAM_PER_THREAD:
            with self.lock:
                tid = threading.get_ident()
                s = self.per_thread.get(tid)
                if s is None:
                    s = Stream(self, 0, StreamKind.PER_THREAD)
                    self.per_thread[tid] = s
                return s
        if isinstance(handle, Stream):
            if handle.destroyed:
                raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{handle!r} was destroyed")
            if handle.context is not self:
                raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE,
                                  f"{handle!r} belongs to {handle.context!r}, not the current {self!r}")
            return handle
        raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{handle!r} is not a stream handle")

    def destroy_stream(self, stream: Stream) -> None:
        """Returns at once; the channel is released once its work is done."""
        if stream.kind is not StreamKind.CREATED:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE,
                              f"the {stream.kind.value} cannot be destroyed")
        with self.lock:
            if stream.destroyed or stream not in self.streams:
                raise EngineError(CUresult.CUDA_ERROR_INVALID_HANDLE, f"{stream!r} was destroyed")
            stream.destroyed = True
            self.streams.remove(stream)
            self.zombies.append(stream)
        self.reap()

    # ------------------------------------------------------------ completion
    def defer_free(self, stream: Stream, fence: int, allocation: Any) -> None:
        if stream.capture is not None and capture.adopt(stream, allocation):
            return   # captured work: the graph owns the memory
        self.defer(stream.channel.semaphore, fence, allocation)

    def defer(self, fence: Any, value: int, what: Any) -> None:
        """Release `what` (an allocation, or a function to call) once
        fence.reached(value); at once if the context is gone."""
        with self.lock:
            if not self.destroyed:
                entry = self.deferred.get(id(fence))
                if entry is None:
                    entry = self.deferred[id(fence)] = (fence, deque())
                entry[1].append((value, what))
                return
        self._release(what)

    def _release(self, what: Any) -> None:
        if callable(what):
            what()
        else:
            self.gpu.free_internal(what)

    def reap(self) -> None:
        """Release driver memory, pins and destroyed streams whose work retired."""
        with self.lock:
            if self.destroyed:
                return
            done = []
            for key, (fence, queue) in list(self.deferred.items()):
                # a value behind an unretired one waits for the next reap (the
                # same fence's values retire in order anyway)
                while queue and fence.reached(queue[0][0]):
                    done.append(queue.popleft())
                if not queue:
                    del self.deferred[key]
            streams = self.all_streams()
            idle = [s for s in self.zombies if s.channel.idle()]
            for s in idle:
                self.zombies.remove(s)
        # Released outside the lock: a module's release tells an attached
        # debugger, which may stop this thread while others keep going.
        for _v, what in done:
            self._release(what)
        for s in streams:
            s.channel.retire_pins()
        for s in idle:
            s.channel.close()
        for hook in self.reap_hooks:
            hook()

    def reap_after_launch(self) -> None:
        """A launch's reap: the whole reap only when deferred memory or a
        destroyed stream waits for release. A launch's own block needs none
        (driver/launch_buffers.py takes retired ones back itself), and the
        pins of a stream's earlier pushes are dropped by its next push or
        the next synchronization; so a stream of launches costs no reap each.
        (Read without the lock: one missed at worst waits for the next.)"""
        if self.deferred or self.zombies:
            self.reap()

    def after_wait(self) -> None:
        """Everything a synchronization point does once its wait returns:
        deliver device printf, free retired memory, report sticky errors."""
        self.gpu.flush_printf()
        self.reap()
        for hook in list(self.sync_hooks):
            hook()
        self.check()

    def synchronize(self) -> None:
        """Wait for all work of every stream of the context."""
        self.check()
        capture.check_unsafe_call("mcDeviceSynchronize")
        for s in self.all_streams():
            s.wait()
        self.after_wait()

    def wait_idle_quietly(self) -> None:
        """Wait for all work without raising (before freeing memory)."""
        for s in self.all_streams():
            s.wait()

    # ------------------------------------------------------------ teardown
    def destroy(self) -> None:
        """Discard pending work, release every resource of the context."""
        if self.destroyed:
            return
        debug_port.notify("context_event", self.gpu, "destroy", self.id)
        self.gpu.frontend.kill_group(self.id, ChannelError(CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED,
                                                           "context destroyed"))
        self.gpu.flush_printf()
        with self.lock:
            self.destroyed = True
            for m in list(self.modules):
                m.unload(sync=False)
            for s in self.all_streams():
                s.destroyed = True
                s.channel.close()
            self.streams.clear()
            self.zombies.clear()
            self.per_thread.clear()
            deferred, self.deferred = self.deferred, {}
            for _fence, queue in deferred.values():
                for _value, what in queue:
                    self._release(what)
            for hook in list(self.teardown_hooks):
                hook()
            self.memory.release_all()
            if self._on_fault in self.gpu.fault_listeners:
                self.gpu.fault_listeners.remove(self._on_fault)


class ThreadState(threading.local):
    """Per host thread: the current-context stack."""

    def __init__(self) -> None:
        self.stack: list[Context] = []
        self.device: int | None = None   # runtime's chosen device before its context exists
