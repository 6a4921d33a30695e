"""Host functions in stream order (mcStreamAddCallback, mcLaunchHostFunc),
run by one host worker thread per context.

The stream gets two commands: HOST_NOTIFY(token), which the GPU front end
executes when all earlier work of the stream is done, and a SEM_ACQUIRE of
a fresh 8-byte gate semaphore, which holds every later command of the
stream until the worker, having run the function, writes 1 into the gate.
So "the callback blocks the stream" is a real ring dependency, the stream's
fence covers the callback (stream sync waits for it), and callbacks in
independent streams run in whatever order the GPU reaches them. When the
context faults, the front end discards the commands; the worker then still
calls stream callbacks, with the sticky error as status, in stream order,
and skips host functions (seed 002 §2.4.3.3's note). The worker never holds
the GPU lock while user code runs. Nothing checks that callbacks make no
mc* calls (the seed forbids them; they would be unsafe, not detected).
"""
from __future__ import annotations

import enum
import itertools
import sys
import threading
import traceback
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gpudbg.driver import commands as C
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.sim.memory.spaces import AllocationKind

_tokens = itertools.count(1)


class HostKind(enum.Enum):
    CALLBACK = "stream callback"      # fn(stream, status, userData), always called
    HOST_FUNC = "host function"       # fn(userData), skipped after an error


@dataclass(eq=False)           # found by identity: user data (a numpy array) has no plain ==
class _Pending:
    kind: HostKind
    fn: Callable[..., Any]
    user_data: Any
    handle: Any                # the stream handle the user passed
    stream: Any
    token: int
    gate: Any                  # the gate semaphore allocation
    fence: int = 0


class HostWorker:
    def __init__(self, context: Any):
        self.context = context
        self.gpu = context.gpu
        self.pending: deque[_Pending] = deque()
        self.errors: list[BaseException] = []       # exceptions raised by user callbacks
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"gpudbg-ctx{context.id}-host-worker")
        self._thread.start()

    # ------------------------------------------------------------ host side
    def enqueue(self, stream: Any, kind: HostKind, fn: Callable[..., Any], user_data: Any,
                handle: Any) -> None:
        gpu = self.gpu
        gate = gpu.alloc_internal(8, AllocationKind.SEMAPHORE, f"host {kind.value} gate")
        gate.data[:8] = 0
        p = _Pending(kind, fn, user_data, handle, stream, next(_tokens) & 0xFFFF_FFFF, gate)
        with self.context.lock:
            with gpu.cv:
                self.pending.append(p)
            try:
                p.fence = stream.submit([C.make(C.Opcode.HOST_NOTIFY, token=p.token),
                                         C.make(C.Opcode.SEM_ACQUIRE, address=gate.base, value=1)])
            except BaseException:
                with gpu.cv:
                    self.pending.remove(p)
                gpu.free_internal(gate)
                raise
            self.context.defer_free(stream, p.fence, gate)

    # ------------------------------------------------------------ worker side
    def _ready(self, p: _Pending) -> bool:
        return ((p.stream.channel.id, p.token) in self.gpu.notifications
                or p.stream.channel.error is not None)

    def _next(self) -> _Pending | None:
        for p in self.pending:
            if self._ready(p):
                return p
        return None

    def _run(self) -> None:
        cv = self.gpu.cv
        while True:
            with cv:
                cv.wait_for(lambda: self._next() is not None
                            or (self.context.destroyed and not self.pending))
                p = self._next()
                if p is None:
                    return
                self.pending.remove(p)
                key = (p.stream.channel.id, p.token)
                if key in self.gpu.notifications:
                    self.gpu.notifications.remove(key)
                error = p.stream.channel.error
            self._call(p, error)
            with cv:
                # open the gate unless it was freed (its push retired or was
                # discarded); p.fence may not be known yet: the front end can
                # run HOST_NOTIFY before enqueue() has returned from submit
                if not p.gate.freed:
                    p.gate.data[:8].view(np.uint64)[0] = 1
                cv.notify_all()

    def _call(self, p: _Pending, error: Any) -> None:
        if error is not None and error.status is CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED:
            return
        try:
            if p.kind is HostKind.CALLBACK:
                status = CUresult.CUDA_SUCCESS if error is None else error.status
                p.fn(p.handle, status, p.user_data)
            elif error is None:
                p.fn(p.user_data)
        except BaseException as e:  # user code must not kill the worker
            self.errors.append(e)
            try:
                print(f"gpudbg: exception in {p.kind.value} {p.fn!r}:", file=sys.stderr)
                traceback.print_exception(e, file=sys.stderr)
            except Exception:       # not even a repr that raises
                print(f"gpudbg: exception in {p.kind.value}: {type(e).__name__}", file=sys.stderr)


def worker_for(context: Any) -> HostWorker:
    with context.lock:
        w = getattr(context, "host_worker", None)
        if w is None or not w._thread.is_alive():
            w = HostWorker(context)
            context.host_worker = w
        return w


def enqueue(stream: Any, kind: HostKind, fn: Callable[..., Any], user_data: Any, handle: Any) -> None:
    """Queue a host function in stream order (captured as a host node while
    the stream captures)."""
    if not callable(fn):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{kind.value} {fn!r} is not callable")
    if stream.capture is not None:
        from gpudbg.driver import capture
        capture.add_node(stream, _host_node_kind(), host_kind=kind, fn=fn, user_data=user_data,
                         handle=handle)
        return
    worker_for(stream.context).enqueue(stream, kind, fn, user_data, handle)


def _host_node_kind() -> Any:
    from gpudbg.driver.graph import NodeKind
    return NodeKind.HOST
