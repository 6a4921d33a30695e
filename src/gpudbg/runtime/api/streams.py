"""Seed 002 §2.3: stream management, plus §2.4.3.3 mcLaunchHostFunc, which
lives here because it shares the host worker with mcStreamAddCallback
(mcStreamAttachMemAsync is in allocation.py, beside managed memory).

Each function resolves its stream through Context.stream (0/None is the
default stream of the program's mode, seed 002 §1.1) and makes one driver
call: streams, capture sequences and host callbacks are driver objects
(driver/stream.py, capture.py, callbacks.py).
"""
from __future__ import annotations

from typing import Any

from gpudbg.driver import callbacks, capture
from gpudbg.driver.event import check_waitable_event
from gpudbg.runtime.api._args import (Callback, Count, Enum, Flags, Int32, Seq, Struct, UserData, mcEvent_t,
                                      mcStream_t)
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.errors import McError, from_status, mcError_t
from gpudbg.runtime.stream_types import (mcAccessPolicyWindow, mcStreamAttrID, mcStreamAttrValue,
                                         mcStreamCaptureMode, mcStreamCaptureStatus, mcSynchronizationPolicy)

_INVALID = mcError_t.mcErrorInvalidValue
CaptureNodes = Seq("a sequence of graph nodes", optional=True)


def _signed(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise McError(_INVALID, f"{name} must be an int, got {value!r}")
    return value


# ------------------------------------------------------------------ create / destroy
@_api(1)
def mcStreamCreate() -> Any:
    """Seed 002 §2.3.3.5: a blocking stream of default priority."""
    return _ctx().create_stream(0)


@_api(1)
def mcStreamCreateWithFlags(flags: Flags) -> Any:
    """Seed 002 §2.3.3.6: mcStreamDefault or mcStreamNonBlocking."""
    return _ctx().create_stream(flags)


@_api(1)
def mcStreamCreateWithPriority(flags: Flags, priority: Int32) -> Any:
    """Seed 002 §2.3.3.7: priority is clamped into mcDeviceGetStreamPriorityRange's
    range (lower is higher); the GPU front end serves runnable work of
    higher-priority streams first."""
    return _ctx().create_stream(flags, priority)


@_api(0)
def mcStreamDestroy(stream: mcStream_t) -> None:
    """Seed 002 §2.3.3.8: returns at once; resources go when the work is done.
    Destroying a stream that captures invalidates its capture."""
    ctx = _ctx()
    s = ctx.stream(stream)
    if s.capture is not None:
        s.capture.invalidate(f"{s!r} was destroyed during the capture")
    ctx.destroy_stream(s)


# ------------------------------------------------------------------ completion
@_api(0)
def mcStreamSynchronize(stream: mcStream_t) -> None:
    """Seed 002 §2.3.3.18: mcErrorStreamCaptureUnsupported on a capturing stream."""
    ctx = _ctx()
    s = ctx.stream(stream)
    capture.check_not_capturing(s, "mcStreamSynchronize")
    s.wait()
    ctx.after_wait()


@_api(0)
def mcStreamQuery(stream: mcStream_t) -> None:
    """Seed 002 §2.3.3.16: mcSuccess when all work is done, else mcErrorNotReady."""
    ctx = _ctx()
    s = ctx.stream(stream)
    capture.check_not_capturing(s, "mcStreamQuery")
    if not s.done():
        raise McError(mcError_t.mcErrorNotReady, f"{s!r} has pending work")
    ctx.after_wait()


# ------------------------------------------------------------------ properties
@_api(1)
def mcStreamGetFlags(hStream: mcStream_t) -> int:
    """Seed 002 §2.3.3.13: the creation flags (the default streams report 0)."""
    return _ctx().stream(hStream).flags


@_api(1)
def mcStreamGetPriority(hStream: mcStream_t) -> int:
    """Seed 002 §2.3.3.14: the clamped priority."""
    return _ctx().stream(hStream).priority


@_api(1)
def mcStreamGetCtx(hStream: mcStream_t) -> Any:
    """Seed 002 §2.3.3.12: the stream's context (an mcCtx_t)."""
    return _ctx().stream(hStream).context


def _attr(attr: Any) -> mcStreamAttrID:
    try:
        return mcStreamAttrID(attr)
    except (ValueError, TypeError):
        raise McError(_INVALID, f"{attr!r} is not an mcStreamAttrID") from None


@_api(1)
def mcStreamGetAttribute(hStream: mcStream_t, attr: Enum(mcStreamAttrID)) -> mcStreamAttrValue:
    """Seed 002 §2.3.3.10: value_out has the member `attr` names filled in."""
    s = _ctx().stream(hStream)
    a = _attr(attr)
    if a is mcStreamAttrID.mcStreamAttributePriority:
        return mcStreamAttrValue(priority=s.priority)
    if a is mcStreamAttrID.mcStreamAttributeAccessPolicyWindow:
        return mcStreamAttrValue(accessPolicyWindow=s.attributes.get(int(a), mcAccessPolicyWindow()))
    return mcStreamAttrValue(syncPolicy=s.attributes.get(int(a), mcSynchronizationPolicy.mcSyncPolicyAuto))


def _check_window(w: Any) -> mcAccessPolicyWindow:
    if not isinstance(w, mcAccessPolicyWindow):
        raise McError(_INVALID, f"accessPolicyWindow must be an mcAccessPolicyWindow, not {w!r}")
    if isinstance(w.base_ptr, bool) or not isinstance(w.base_ptr, int) or w.base_ptr < 0 \
            or isinstance(w.num_bytes, bool) or not isinstance(w.num_bytes, int) or w.num_bytes < 0:
        raise McError(_INVALID, "accessPolicyWindow base_ptr and num_bytes must be non-negative ints")
    if not 0.0 <= float(w.hitRatio) <= 1.0:
        raise McError(_INVALID, f"accessPolicyWindow.hitRatio {w.hitRatio} is outside [0, 1]")
    return w


@_api(0)
def mcStreamSetAttribute(hStream: mcStream_t, attr: Enum(mcStreamAttrID), value: Struct(mcStreamAttrValue)) -> None:
    """Seed 002 §2.3.3.17: applies to work submitted afterwards. The access
    policy window and synchronization policy are stored and reported (the
    simulator has no L2 and every host wait blocks); priority re-prioritizes
    the stream's channel."""
    s = _ctx().stream(hStream)
    a = _attr(attr)
    if not isinstance(value, mcStreamAttrValue):
        raise McError(_INVALID, f"value must be an mcStreamAttrValue, not {value!r}")
    if a is mcStreamAttrID.mcStreamAttributePriority:
        s.priority = _signed("priority", value.priority)
    elif a is mcStreamAttrID.mcStreamAttributeAccessPolicyWindow:
        s.attributes[int(a)] = _check_window(value.accessPolicyWindow)
    else:
        try:
            s.attributes[int(a)] = mcSynchronizationPolicy(value.syncPolicy)
        except ValueError:
            raise McError(_INVALID, f"{value.syncPolicy!r} is not an mcSynchronizationPolicy") from None


@_api(0)
def mcStreamCopyAttributes(dst: mcStream_t, src: mcStream_t) -> None:
    """Seed 002 §2.3.3.4: both streams must be of the same context."""
    ctx = _ctx()
    d, s = ctx.stream(dst), ctx.stream(src)
    d.attributes = dict(s.attributes)
    d.priority = s.priority


# ------------------------------------------------------------------ ordering
@_api(0)
def mcStreamWaitEvent(stream: mcStream_t, event: mcEvent_t, flags: Flags = 0) -> None:
    """Seed 002 §2.3.3.20: later work of `stream` waits for the event, on the
    GPU. An event recorded inside a capture joins `stream` to that capture;
    mcEventWaitExternal (only during capture) makes an event-wait node. The
    event may belong to another context or device, as in CUDA."""
    ctx = _ctx()
    check_waitable_event(event).make_wait(ctx.stream(stream), flags)


@_api(0)
def mcStreamAddCallback(stream: mcStream_t, callback: Callback, userData: UserData, flags: Flags) -> None:
    """Seed 002 §2.3.3.1: callback(stream, status, userData) runs once on the
    host worker thread after all earlier work of the stream, and blocks later
    work until it returns; status is mcSuccess or the context's sticky error
    (callbacks after a fault still run). Not capturable (use mcLaunchHostFunc)."""
    ctx = _ctx()
    if flags != 0:
        raise McError(_INVALID, f"flags must be 0, got {flags}")
    s = ctx.stream(stream)
    if s.capture is not None:
        s.capture.invalidate("mcStreamAddCallback was called during the capture")
        raise McError(mcError_t.mcErrorStreamCaptureUnsupported,
                          "mcStreamAddCallback cannot be captured; use mcLaunchHostFunc")
    def deliver(handle: Any, status: Any, data: Any) -> Any:
        return callback(handle, from_status(status), data)   # the runtime's code, not the engine's

    callbacks.enqueue(s, callbacks.HostKind.CALLBACK, deliver, userData, stream)


@_api(0)
def mcLaunchHostFunc(stream: mcStream_t, fn: Callback, userData: UserData) -> None:
    """Seed 002 §2.4.3.3: fn(userData) runs in stream order on the host worker
    thread; unlike a stream callback it is skipped once the context has an
    error. Captured as a host node while the stream captures."""
    ctx = _ctx()
    callbacks.enqueue(ctx.stream(stream), callbacks.HostKind.HOST_FUNC, fn, userData, stream)


# ------------------------------------------------------------------ capture
@_api(0)
def mcStreamBeginCapture(stream: mcStream_t, mode: Enum(mcStreamCaptureMode)) -> None:
    """Seed 002 §2.3.3.3: work pushed to the stream (and to streams joined via
    events) becomes graph nodes; the legacy stream cannot capture
    (mcErrorStreamCaptureUnsupported), a capturing one gets mcErrorIllegalState."""
    ctx = _ctx()
    capture.begin(ctx.stream(stream), mode)


@_api(1)
def mcStreamEndCapture(stream: mcStream_t) -> Any:
    """Seed 002 §2.3.3.9: the captured mcGraph_t. Errors: not capturing
    (mcErrorIllegalState), a joined stream rather than the origin
    (mcErrorStreamCaptureUnmatched), another thread for a non-relaxed capture
    (mcErrorStreamCaptureWrongThread), invalidated (mcErrorStreamCaptureInvalidated),
    a forked stream not joined back (mcErrorStreamCaptureUnjoined)."""
    ctx = _ctx()
    return capture.end(ctx.stream(stream))


@_api(1)
def mcStreamIsCapturing(stream: mcStream_t) -> Any:
    """Seed 002 §2.3.3.15: an mcStreamCaptureStatus; on the legacy stream
    while a blocking stream captures, mcErrorStreamCaptureImplicit."""
    ctx = _ctx()
    return mcStreamCaptureStatus(int(capture.status_of(ctx.stream(stream))))


@_api(5)
def mcStreamGetCaptureInfo(stream: mcStream_t) -> tuple[Any, int, Any, tuple, int]:
    """Seed 002 §2.3.3.11: (captureStatus_out, id_out, graph_out,
    dependencies_out, numDependencies_out); all but the status are 0/None/()
    unless the status is mcStreamCaptureStatusActive."""
    ctx = _ctx()
    s = ctx.stream(stream)
    status = mcStreamCaptureStatus(int(capture.status_of(s)))
    if s.capture is None or status is not mcStreamCaptureStatus.mcStreamCaptureStatusActive:
        return status, 0, None, (), 0
    deps = tuple(s.capture_deps)
    return status, s.capture.id, s.capture.graph, deps, len(deps)


@_api(0)
def mcStreamUpdateCaptureDependencies(stream: mcStream_t, dependencies: CaptureNodes,
                                      numDependencies: Count, flags: Flags = 0) -> None:
    """Seed 002 §2.3.3.19: flags mcStreamAddCaptureDependencies (0) adds the
    nodes to the set the next captured node depends on,
    mcStreamSetCaptureDependencies (1) replaces it; not capturing is
    mcErrorIllegalState."""
    ctx = _ctx()
    capture.update_dependencies(ctx.stream(stream), dependencies, numDependencies, flags)


@_api(1)
def mcThreadExchangeStreamCaptureMode(mode: Enum(mcStreamCaptureMode)) -> Any:
    """Seed 002 §2.3.3.21: sets the calling thread's capture interaction mode
    and returns the previous one (the C in/out parameter as an output)."""
    return mcStreamCaptureMode(int(capture.exchange_mode(mode)))


__all__ = ['mcStreamCreate', 'mcStreamCreateWithFlags', 'mcStreamCreateWithPriority', 'mcStreamDestroy',
           'mcStreamSynchronize', 'mcStreamQuery', 'mcStreamGetFlags', 'mcStreamGetPriority',
           'mcStreamGetCtx', 'mcStreamGetAttribute', 'mcStreamSetAttribute', 'mcStreamCopyAttributes',
           'mcStreamWaitEvent', 'mcStreamAddCallback', 'mcLaunchHostFunc', 'mcStreamBeginCapture',
           'mcStreamEndCapture', 'mcStreamIsCapturing', 'mcStreamGetCaptureInfo',
           'mcStreamUpdateCaptureDependencies', 'mcThreadExchangeStreamCaptureMode']
