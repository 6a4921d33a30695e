"""Streams, events and host callbacks: cudaStreamCreate(WithFlags/
WithPriority), Destroy, Synchronize, Query, WaitEvent, GetFlags/Priority/
Device, cudaStreamAddCallback, cudaLaunchHostFunc, cudaEventCreate
(WithFlags), Record(WithFlags), Query, Synchronize, ElapsedTime, Destroy,
and their _ptsz variants.

Streams and events are the engine objects mc* makes, named by
cabi.handles numbers of the driver API's kinds ("CUstream", "CUevent"),
so a cudaStream_t made here is a valid CUstream and vice versa; destroying
one retires its number. Host callbacks are C function pointers, called
through ctypes on the engine's host worker thread with the C arguments
(the stream as the program named it, the cudaError_t, userData).
Stream capture and graph launch are in graphs.py.
"""
from __future__ import annotations

import ctypes
from typing import Any

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import HandleKind
from gpudbg.cuda_runtime._base import E, call, event, export, fail, need, per_thread, stream
from gpudbg.runtime import mc

__all__ = ["cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority", "cudaStreamDestroy",
           "cudaStreamSynchronize", "cudaStreamSynchronize_ptsz", "cudaStreamQuery", "cudaStreamQuery_ptsz",
           "cudaStreamWaitEvent", "cudaStreamWaitEvent_ptsz", "cudaStreamGetFlags", "cudaStreamGetFlags_ptsz",
           "cudaStreamGetPriority", "cudaStreamGetPriority_ptsz", "cudaStreamGetDevice", "cudaStreamGetDevice_ptsz",
           "cudaStreamAddCallback", "cudaStreamAddCallback_ptsz", "cudaLaunchHostFunc", "cudaLaunchHostFunc_ptsz",
           "cudaEventCreate", "cudaEventCreateWithFlags", "cudaEventRecord", "cudaEventRecord_ptsz",
           "cudaEventRecordWithFlags", "cudaEventRecordWithFlags_ptsz", "cudaEventQuery", "cudaEventSynchronize",
           "cudaEventElapsedTime", "cudaEventDestroy"]

STREAM_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


# ------------------------------------------------------------------ streams
def _new_stream(pStream: int, s: Any) -> None:
    cabi.store(pStream, "u64", handles.handle(HandleKind.STREAM, s))


@export
def cudaStreamCreate(pStream: int) -> None:
    need(pStream, "pStream")
    _new_stream(pStream, call(mc.mcStreamCreate))


@export
def cudaStreamCreateWithFlags(pStream: int, flags: int) -> None:
    need(pStream, "pStream")
    _new_stream(pStream, call(mc.mcStreamCreateWithFlags, int(flags)))


@export
def cudaStreamCreateWithPriority(pStream: int, flags: int, priority: int) -> None:
    need(pStream, "pStream")
    _new_stream(pStream, call(mc.mcStreamCreateWithPriority, int(flags), int(priority)))


@export
def cudaStreamDestroy(stream_: int) -> None:
    """Returns at once; the stream's number is retired."""
    n = int(stream_)
    if n in (0, 1, 2):
        raise fail(E.mcErrorInvalidResourceHandle, "a default stream cannot be destroyed")
    call(mc.mcStreamDestroy, stream(n))
    handles.forget(HandleKind.STREAM, n)


@export
def cudaStreamSynchronize(stream_: int) -> None:
    call(mc.mcStreamSynchronize, stream(stream_))


@export
def cudaStreamQuery(stream_: int) -> None:
    """cudaSuccess when all work is done, else cudaErrorNotReady."""
    call(mc.mcStreamQuery, stream(stream_))


@export
def cudaStreamWaitEvent(stream_: int, event_: int, flags: int) -> None:
    call(mc.mcStreamWaitEvent, stream(stream_), event(event_), int(flags))


@export
def cudaStreamGetFlags(hStream: int, flags: int) -> None:
    need(flags, "flags")
    cabi.store(flags, "u32", call(mc.mcStreamGetFlags, stream(hStream)))


@export
def cudaStreamGetPriority(hStream: int, priority: int) -> None:
    need(priority, "priority")
    cabi.store(priority, "i32", call(mc.mcStreamGetPriority, stream(hStream)))


@export
def cudaStreamGetDevice(hStream: int, device: int) -> None:
    need(device, "device")
    cabi.store(device, "i32", call(mc.mcStreamGetCtx, stream(hStream)).device.ordinal)


@export
def cudaStreamAddCallback(stream_: int, callback: int, userData: int, flags: int) -> None:
    """callback(stream, status, userData) after the stream's earlier work."""
    fn = STREAM_CALLBACK(need(callback, "callback"))
    number = int(stream_)

    def deliver(_handle: Any, status: Any, data: Any) -> None:
        fn(number or None, int(status), data or None)

    call(mc.mcStreamAddCallback, stream(stream_), deliver, int(userData), int(flags))


@export
def cudaLaunchHostFunc(stream_: int, fn: int, userData: int) -> None:
    """fn(userData) in stream order on the host worker thread."""
    host_fn = HOST_FN(need(fn, "fn"))

    def deliver(data: Any) -> None:
        host_fn(data or None)

    call(mc.mcLaunchHostFunc, stream(stream_), deliver, int(userData))


cudaStreamSynchronize_ptsz = per_thread(cudaStreamSynchronize, "cudaStreamSynchronize_ptsz", 0)
cudaStreamQuery_ptsz = per_thread(cudaStreamQuery, "cudaStreamQuery_ptsz", 0)
cudaStreamWaitEvent_ptsz = per_thread(cudaStreamWaitEvent, "cudaStreamWaitEvent_ptsz", 0)
cudaStreamGetFlags_ptsz = per_thread(cudaStreamGetFlags, "cudaStreamGetFlags_ptsz", 0)
cudaStreamGetPriority_ptsz = per_thread(cudaStreamGetPriority, "cudaStreamGetPriority_ptsz", 0)
cudaStreamGetDevice_ptsz = per_thread(cudaStreamGetDevice, "cudaStreamGetDevice_ptsz", 0)
cudaStreamAddCallback_ptsz = per_thread(cudaStreamAddCallback, "cudaStreamAddCallback_ptsz", 0)
cudaLaunchHostFunc_ptsz = per_thread(cudaLaunchHostFunc, "cudaLaunchHostFunc_ptsz", 0)


# ------------------------------------------------------------------ events
@export
def cudaEventCreate(event_: int) -> None:
    need(event_, "event")
    cabi.store(event_, "u64", handles.handle(HandleKind.EVENT, call(mc.mcEventCreate)))


@export
def cudaEventCreateWithFlags(event_: int, flags: int) -> None:
    need(event_, "event")
    cabi.store(event_, "u64", handles.handle(HandleKind.EVENT, call(mc.mcEventCreateWithFlags, int(flags))))


@export
def cudaEventRecord(event_: int, stream_: int) -> None:
    call(mc.mcEventRecord, event(event_), stream(stream_))


@export
def cudaEventRecordWithFlags(event_: int, stream_: int, flags: int) -> None:
    call(mc.mcEventRecordWithFlags, event(event_), stream(stream_), int(flags))


cudaEventRecord_ptsz = per_thread(cudaEventRecord, "cudaEventRecord_ptsz", 1)
cudaEventRecordWithFlags_ptsz = per_thread(cudaEventRecordWithFlags, "cudaEventRecordWithFlags_ptsz", 1)


@export
def cudaEventQuery(event_: int) -> None:
    call(mc.mcEventQuery, event(event_))


@export
def cudaEventSynchronize(event_: int) -> None:
    call(mc.mcEventSynchronize, event(event_))


@export
def cudaEventElapsedTime(ms: int, start: int, end: int) -> None:
    """Milliseconds between two completed records, as a float."""
    need(ms, "ms")
    cabi.store(ms, "f32", call(mc.mcEventElapsedTime, event(start), event(end)))


@export
def cudaEventDestroy(event_: int) -> None:
    """Returns at once; the event's number is retired."""
    call(mc.mcEventDestroy, event(event_))
    handles.forget(HandleKind.EVENT, int(event_))
