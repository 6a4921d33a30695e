"""Stream capture: sequences that turn stream work into graph nodes, and
CUDA's rules about what may happen while one is open.

A CaptureSequence belongs to the stream that began it (its origin) and to
every stream joined to it by waiting on an event recorded inside it. Each
member stream keeps `capture_deps`, the nodes its next node depends on;
Stream.submit hands captured commands to `record_commands`, which adds one
node and makes it the stream's only dependency. Ending the capture on the
origin requires every joined stream to have been joined back (its last
nodes reachable from the origin's), as CUDA requires.

Rules enforced (CUDA's, which seed 002 §2.3.3.3/.21 describe): the legacy
stream cannot capture, and using it while a blocking stream of its context
captures would make an implicit dependency (mcErrorStreamCaptureImplicit,
which invalidates those captures); syncing or querying a capturing stream
is mcErrorStreamCaptureUnsupported; a "potentially unsafe" call (device or
event synchronize, allocation) is prohibited by the calling thread's
interaction mode: Global prohibits it while this thread has a non-relaxed
capture or any thread has a Global capture, ThreadLocal only for this
thread's non-relaxed captures, Relaxed never. A prohibited call invalidates
the captures that prohibit it. Work pushed into an invalidated capture gets
mcErrorStreamCaptureInvalidated.
"""
from __future__ import annotations

import itertools
import threading
from typing import Any, Iterable

from gpudbg.driver import commands as C
from gpudbg.driver.graph import Graph, GraphNode, NodeKind, kind_of
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.driver.types import CUstreamCaptureMode as Mode, CUstreamCaptureStatus as Status
from gpudbg.sim.memory.spaces import AllocationKind

_ids = itertools.count(1)
_lock = threading.RLock()
_active: set["CaptureSequence"] = set()


class _ThreadMode(threading.local):
    def __init__(self) -> None:
        self.mode = Mode.CU_STREAM_CAPTURE_MODE_GLOBAL


_thread = _ThreadMode()


class CaptureSequence:
    def __init__(self, origin: Any, mode: Mode):
        self.id = next(_ids)
        self.origin = origin
        self.mode = mode
        self.thread = threading.get_ident()
        self.graph = Graph(origin.context)
        self.status = Status.CU_STREAM_CAPTURE_STATUS_ACTIVE
        self.reason = ""
        self.streams: list[Any] = [origin]

    def __repr__(self) -> str:
        return f"<capture {self.id} of {self.origin!r} ({self.status.name})>"

    def invalidate(self, reason: str) -> None:
        if self.status is Status.CU_STREAM_CAPTURE_STATUS_ACTIVE:
            self.status = Status.CU_STREAM_CAPTURE_STATUS_INVALIDATED
            self.reason = reason


# ------------------------------------------------------------------ thread mode
def exchange_mode(mode: int) -> Mode:
    """mcThreadExchangeStreamCaptureMode: set the thread's mode, return the old."""
    try:
        new = Mode(mode)
    except ValueError:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{mode!r} is not a stream capture mode") from None
    old, _thread.mode = _thread.mode, new
    return old


def _prohibitors() -> list[CaptureSequence]:
    me = threading.get_ident()
    mode = _thread.mode
    if mode is Mode.CU_STREAM_CAPTURE_MODE_RELAXED:
        return []
    with _lock:
        _active.difference_update([s for s in _active if s.origin.context.destroyed])   # reset: ended
        live = [s for s in _active if s.status is Status.CU_STREAM_CAPTURE_STATUS_ACTIVE]
    own = [s for s in live if s.thread == me and s.mode is not Mode.CU_STREAM_CAPTURE_MODE_RELAXED]
    if mode is Mode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL:
        return own
    return own + [s for s in live if s.thread != me and s.mode is Mode.CU_STREAM_CAPTURE_MODE_GLOBAL]


def check_unsafe_call(what: str) -> None:
    """Raise mcErrorStreamCaptureUnsupported for a potentially unsafe call
    the thread's capture interaction mode prohibits, invalidating the
    captures that prohibit it."""
    blockers = _prohibitors()
    if blockers:
        for s in blockers:
            s.invalidate(f"{what} was called during the capture")
        raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                          f"{what} is not permitted while {blockers[0]!r} is active "
                          f"(thread capture mode {_thread.mode.name})")


# ------------------------------------------------------------------ begin / end
def begin(stream: Any, mode: int) -> CaptureSequence:
    try:
        m = Mode(mode)
    except ValueError:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{mode!r} is not a stream capture mode") from None
    if stream.is_legacy:
        raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "the legacy stream cannot be captured")
    with stream.context.lock:
        if stream.capture is not None:
            raise EngineError(CUresult.CUDA_ERROR_ILLEGAL_STATE, f"{stream!r} is already capturing")
        seq = CaptureSequence(stream, m)
        stream.capture = seq
        stream.capture_deps = []
    with _lock:
        _active.add(seq)
    return seq


def _reachable(nodes: Iterable[GraphNode]) -> set[GraphNode]:
    seen: set[GraphNode] = set()
    todo = list(nodes)
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(n.dependencies)
    return seen


def _leave(seq: CaptureSequence) -> None:
    for s in seq.streams:
        s.capture = None
        s.capture_deps = []
    with _lock:
        _active.discard(seq)


def end(stream: Any) -> Graph:
    """Close the capture begun on `stream`; returns its graph."""
    with stream.context.lock:
        seq = stream.capture
        if seq is None:
            raise EngineError(CUresult.CUDA_ERROR_ILLEGAL_STATE, f"{stream!r} is not capturing")
        if seq.origin is not stream:
            seq.invalidate(f"mcStreamEndCapture was called on joined {stream!r}, not on the origin")
            raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
                              f"{stream!r} joined {seq!r}; end it on {seq.origin!r}")
        if seq.mode is not Mode.CU_STREAM_CAPTURE_MODE_RELAXED and seq.thread != threading.get_ident():
            raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
                              f"{seq!r} ({seq.mode.name}) must be ended by the thread that began it")
        if seq.status is Status.CU_STREAM_CAPTURE_STATUS_INVALIDATED:
            _leave(seq)
            seq.graph.destroy()
            raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                              f"{seq!r} was invalidated: {seq.reason}")
        joined = _reachable(stream.capture_deps)
        for s in seq.streams:
            if s is not stream and not set(s.capture_deps) <= joined:
                _leave(seq)
                seq.graph.destroy()
                raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
                                  f"{s!r} forked from {seq!r} was not joined back into {stream!r}")
        _leave(seq)
        return seq.graph


def status_of(stream: Any) -> Status:
    check_query(stream)
    seq = stream.capture
    return Status.CU_STREAM_CAPTURE_STATUS_NONE if seq is None else seq.status


def check_query(stream: Any) -> None:
    """Capture-status queries on the legacy stream are refused while a
    blocking stream of the context captures (it would be implicitly joined)."""
    if stream.is_legacy and _capturing_blocking(stream.context):
        raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                          "the legacy stream is unusable while a blocking stream captures")


# ------------------------------------------------------------------ the submit hook
def _capturing_blocking(ctx: Any) -> list[Any]:
    return [s for s in ctx.all_streams() if s.capture is not None and s.blocking and not s.is_legacy]


def check_implicit(stream: Any, commands: Any = ()) -> None:
    """Called for every push to a non-capturing stream."""
    if not stream.is_legacy or stream.context.only_legacy():
        return
    blockers = _capturing_blocking(stream.context)
    if blockers:
        for s in blockers:
            s.capture.invalidate("the legacy stream was used during the capture")
        _refuse(stream, list(commands), CUresult.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                f"work on the legacy stream would depend on capturing {blockers[0]!r}")


def check_not_capturing(stream: Any, what: str) -> None:
    """Synchronizing with or querying a capturing stream is never allowed."""
    check_query(stream)
    if stream.capture is not None:
        stream.capture.invalidate(f"{what} was called on a capturing stream")
        raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                          f"{what} is not permitted on capturing {stream!r}")


def _refuse(stream: Any, commands: list[C.Command], code: CUresult, message: str) -> None:
    """Free the per-call driver memory the refused commands point at (the
    caller will not), then raise."""
    gpu = stream.context.gpu
    for cmd in commands:
        for name in ("src", "dst", "descriptor"):
            if name in cmd.fields:
                a = gpu.memory.find(cmd.fields[name])
                if a is not None and a.kind in (AllocationKind.STAGING, AllocationKind.LAUNCH):
                    gpu.free_internal(a)
    raise EngineError(code, message)


def record_commands(stream: Any, commands: list[C.Command]) -> GraphNode:
    seq = stream.capture
    if seq.status is not Status.CU_STREAM_CAPTURE_STATUS_ACTIVE:
        _refuse(stream, commands, CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                f"{seq!r} was invalidated: {seq.reason}")
    gpu = stream.context.gpu
    for cmd in commands:
        for name in ("src", "dst"):
            a = gpu.memory.find(cmd.fields[name]) if name in cmd.fields else None
            if a is not None and a.kind is AllocationKind.STAGING:
                seq.invalidate("a copy to or from pageable host memory was captured")
                _refuse(stream, commands, CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                        "copies to or from pageable host memory cannot be captured (use pinned memory)")
    return add_node(stream, kind_of(commands), commands)


def add_node(stream: Any, kind: NodeKind, commands: list[C.Command] | None = None,
             **payload: Any) -> GraphNode:
    """Append a node after the stream's dependencies; it becomes the only one."""
    seq = stream.capture
    if seq.status is not Status.CU_STREAM_CAPTURE_STATUS_ACTIVE:
        raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, f"{seq!r} was invalidated: {seq.reason}")
    node = seq.graph.add(kind, stream.capture_deps, commands, **payload)
    stream.capture_deps = [node]
    return node


def adopt(stream: Any, allocation: Any) -> bool:
    """Context.defer_free hook: memory of captured work lives with the graph."""
    seq = stream.capture
    if seq is None:
        return False
    seq.graph.adopt(allocation)
    return True


# ------------------------------------------------------------------ joins
def join(stream: Any, seq: CaptureSequence, nodes: Iterable[GraphNode]) -> None:
    """`stream` waits on an event recorded inside `seq`."""
    nodes = list(nodes)
    if stream.capture is seq:
        stream.capture_deps = list(dict.fromkeys(stream.capture_deps + nodes))
        return
    if stream.capture is not None:
        stream.capture.invalidate("a wait crossed into another capture sequence")
        seq.invalidate("a wait crossed into another capture sequence")
        raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
                          f"{stream!r} captures {stream.capture!r}; it cannot depend on {seq!r}")
    if stream.is_legacy:
        seq.invalidate("the legacy stream waited on an event of the capture")
        raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "the legacy stream cannot join a capture")
    if seq.status is not Status.CU_STREAM_CAPTURE_STATUS_ACTIVE:
        raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, f"{seq!r} was invalidated: {seq.reason}")
    stream.capture = seq
    stream.capture_deps = nodes
    seq.streams.append(stream)


def update_dependencies(stream: Any, nodes: Any, count: int, flags: int) -> None:
    seq = stream.capture
    if seq is None:
        raise EngineError(CUresult.CUDA_ERROR_ILLEGAL_STATE, f"{stream!r} is not capturing")
    if flags not in (0, 1):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"flags must be mcStreamAddCaptureDependencies or mcStreamSetCaptureDependencies, got {flags!r}")
    nodes = list(nodes or [])
    if count != len(nodes):
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"numDependencies={count} but {len(nodes)} nodes were given")
    for n in nodes:
        if not isinstance(n, GraphNode) or n.graph is not seq.graph:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{n!r} is not a node of {seq!r}'s graph")
    if seq.status is not Status.CU_STREAM_CAPTURE_STATUS_ACTIVE:
        raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, f"{seq!r} was invalidated: {seq.reason}")
    stream.capture_deps = nodes if flags == 1 else list(dict.fromkeys(stream.capture_deps + nodes))
