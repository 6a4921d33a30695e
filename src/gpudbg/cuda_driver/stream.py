"""Streams in the driver API: create/destroy, synchronize/query, wait on
events, properties (priority, flags, id, context, device), host callbacks,
managed-memory attachment, stream memory operations (wait/write value,
batches) and stream capture, each with its `_ptsz` variant.

A CUstream is a cabi.handles number of an engine Stream
(driver/stream.py), the same number space the runtime API uses, so a
cudaStream_t is a valid CUstream. Every call resolves its stream with
_base.stream_of (0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a handle;
0 is the per-thread stream in a `_ptsz` variant) and makes one engine
call: ordering is ring commands, host callbacks run on the context's host
worker (driver/callbacks.py), stream memory operations are WAIT_VALUE and
WRITE_VALUE ring commands, capture is driver/capture.py. A captured graph
is returned as a CUgraph handle (the graph API itself is not here).
"""
from __future__ import annotations

import ctypes
from typing import Any

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import (HandleKind, R, current_context, entry, fail, handle_of, object_of,
                                      per_thread_variant, stream_of)
from gpudbg.cuda_driver.module import need
from gpudbg.driver import callbacks, capture
from gpudbg.driver import commands as C
from gpudbg.driver.engine import get_engine
from gpudbg.driver.memops import check_target
from gpudbg.driver.event import check_waitable_event
from gpudbg.driver.stream import NON_BLOCKING, StreamKind
from gpudbg.sim.memory.spaces import AllocationKind

INVALID = R.CUDA_ERROR_INVALID_VALUE
STREAM_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
CU_MEM_ATTACH_GLOBAL, CU_MEM_ATTACH_HOST, CU_MEM_ATTACH_SINGLE = 0x1, 0x2, 0x4
WAIT_OPS = (0x0, 0x1, 0x2, 0x3)          # CU_STREAM_WAIT_VALUE_GEQ, EQ, AND, NOR
WAIT_VALUE_FLUSH = 1 << 30
WRITE_FLAGS = (0x0, 0x1)                 # CU_STREAM_WRITE_VALUE_DEFAULT, NO_MEMORY_BARRIER
(OP_WAIT_VALUE_32, OP_WRITE_VALUE_32, OP_FLUSH_REMOTE_WRITES, OP_WAIT_VALUE_64, OP_WRITE_VALUE_64,
 OP_BARRIER) = 1, 2, 3, 4, 5, 6
BATCH_PARAMS_BYTES = 48


def _stream(ctx: Any, hStream: int) -> Any:
    return stream_of(ctx, hStream)


# ------------------------------------------------------------------ create / destroy
def _create(phStream: int, flags: int, priority: int) -> None:
    need(phStream, "phStream")
    ctx = current_context()
    s = ctx.create_stream(int(flags), int(priority))
    cabi.store(phStream, "u64", handle_of(HandleKind.STREAM, s), "phStream")


@entry
def cuStreamCreate(phStream: int, Flags: int) -> None:
    """CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING."""
    _create(phStream, Flags, 0)


@entry
def cuStreamCreateWithPriority(phStream: int, flags: int, priority: int) -> None:
    """Priority is clamped into cuCtxGetStreamPriorityRange's range (lower
    is higher); the front end serves higher-priority channels first."""
    _create(phStream, flags, priority)


@entry
def cuStreamDestroy_v2(hStream: int) -> None:
    """Returns at once; the stream's work still completes. A capturing
    stream's capture is invalidated."""
    ctx = current_context()
    number = int(hStream)
    if number in (0, 1, 2):
        raise fail(R.CUDA_ERROR_INVALID_HANDLE, "a default stream cannot be destroyed")
    s = _stream(ctx, number)
    if s.capture is not None:
        s.capture.invalidate(f"{s!r} was destroyed during the capture")
    ctx.destroy_stream(s)
    handles.forget(HandleKind.STREAM, number)


cuStreamDestroy = cuStreamDestroy_v2


# ------------------------------------------------------------------ completion
@entry
def cuStreamSynchronize(hStream: int) -> None:
    """Waits for the stream's work; returns the context's sticky error."""
    ctx = current_context()
    s = _stream(ctx, hStream)
    capture.check_not_capturing(s, "cuStreamSynchronize")
    s.wait()
    ctx.after_wait()


@entry
def cuStreamQuery(hStream: int) -> None:
    """CUDA_SUCCESS when all work is done, else CUDA_ERROR_NOT_READY."""
    ctx = current_context()
    s = _stream(ctx, hStream)
    capture.check_not_capturing(s, "cuStreamQuery")
    if not s.done():
        raise fail(R.CUDA_ERROR_NOT_READY, f"{s!r} has pending work")
    ctx.after_wait()


@entry
def cuStreamWaitEvent(hStream: int, hEvent: int, Flags: int) -> None:
    """Later work of hStream waits for the event's record, on the GPU."""
    ctx = current_context()
    s = _stream(ctx, hStream)
    check_waitable_event(object_of(HandleKind.EVENT, hEvent)).make_wait(s, int(Flags))


# ------------------------------------------------------------------ properties
@entry
def cuStreamGetPriority(hStream: int, priority: int) -> None:
    need(priority, "priority")
    cabi.store(priority, "i32", _stream(current_context(), hStream).priority)


@entry
def cuStreamGetFlags(hStream: int, flags: int) -> None:
    """The creation flags; the per-thread and legacy streams report 0."""
    need(flags, "flags")
    s = _stream(current_context(), hStream)
    cabi.store(flags, "u32", s.flags & NON_BLOCKING if s.kind is StreamKind.CREATED else 0)


@entry
def cuStreamGetId(hStream: int, streamId: int) -> None:
    """A process-unique id of the stream (the engine's stream id)."""
    need(streamId, "streamId")
    cabi.store(streamId, "u64", _stream(current_context(), hStream).id)


@entry
def cuStreamGetCtx(hStream: int, pctx: int) -> None:
    need(pctx, "pctx")
    s = _stream(current_context(), hStream)
    cabi.store(pctx, "u64", handle_of(HandleKind.CONTEXT, s.context))


@entry
def cuStreamGetCtx_v2(hStream: int, pCtx: int, pGreenCtx: int) -> None:
    """The stream's context; no green contexts, so *pGreenCtx is NULL."""
    need(pCtx, "pCtx")
    need(pGreenCtx, "pGreenCtx")
    s = _stream(current_context(), hStream)
    cabi.store(pCtx, "u64", handle_of(HandleKind.CONTEXT, s.context))
    cabi.store(pGreenCtx, "u64", 0)


@entry
def cuStreamGetDevice(hStream: int, device: int) -> None:
    need(device, "device")
    cabi.store(device, "i32", _stream(current_context(), hStream).context.device.ordinal)


# ------------------------------------------------------------------ host callbacks
@entry
def cuStreamAddCallback(hStream: int, callback: int, userData: int, flags: int) -> None:
    """callback(hStream, status, userData) on the host worker after the
    stream's earlier work, blocking its later work; status is the context's
    sticky error if it has one (the callback still runs)."""
    ctx = current_context()
    fn = STREAM_CALLBACK(need(callback, "callback"))
    if int(flags) != 0:
        raise fail(INVALID, f"flags must be 0, got {int(flags)}")
    s = _stream(ctx, hStream)
    if s.capture is not None:
        s.capture.invalidate("cuStreamAddCallback was called during the capture")
        raise fail(R.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "cuStreamAddCallback cannot be captured; "
                                                            "use cuLaunchHostFunc")
    number = int(hStream)

    def deliver(_handle: Any, status: Any, data: Any) -> None:
        fn(number or None, int(status), data or None)

    callbacks.enqueue(s, callbacks.HostKind.CALLBACK, deliver, int(userData), number)


# ------------------------------------------------------------------ managed memory
@entry
def cuStreamAttachMemAsync(hStream: int, dptr: int, length: int, flags: int) -> None:
    """A stream-ordered change of a managed allocation's association."""
    ctx = current_context()
    s = _stream(ctx, hStream)
    flags, length = int(flags), int(length)
    if flags not in (CU_MEM_ATTACH_GLOBAL, CU_MEM_ATTACH_HOST, CU_MEM_ATTACH_SINGLE):
        raise fail(INVALID, f"flags must be CU_MEM_ATTACH_GLOBAL, HOST or SINGLE, got 0x{flags:x}")
    info = get_engine().resolve_pointer(int(dptr))
    if info is None or info.kind is not AllocationKind.MANAGED:
        raise fail(INVALID, f"0x{int(dptr):x} is not managed memory")
    if info.offset or length not in (0, info.allocation.size):
        raise fail(INVALID, f"a managed allocation is attached whole: dptr must be its start and length "
                            f"0 or {info.allocation.size}")
    if flags == CU_MEM_ATTACH_SINGLE and s.is_legacy:
        raise fail(INVALID, "CU_MEM_ATTACH_SINGLE needs a specific stream, not the NULL stream")
    fence = s.submit([])
    owner = info.context.memory if info.context is not None else ctx.memory
    owner.attach(info.allocation.base, length, flags, s, fence)
    ctx.reap()


# ------------------------------------------------------------------ stream memory operations
def _target(ctx: Any, ptr: int, width: int) -> int:
    return check_target(ctx, int(ptr), width, "addr")


def _wait_cmd(ctx: Any, addr: int, value: int, flags: int, width: int) -> Any:
    flags = int(flags)
    if (flags & ~WAIT_VALUE_FLUSH) not in WAIT_OPS:
        raise fail(INVALID, f"flags 0x{flags:x} must be CU_STREAM_WAIT_VALUE_GEQ/EQ/AND/NOR, optionally | "
                            f"CU_STREAM_WAIT_VALUE_FLUSH")
    return C.make(C.Opcode.WAIT_VALUE, address=_target(ctx, addr, width),
                  value=int(value) & ((1 << (8 * width)) - 1), flags=flags, width=width)


def _write_cmd(ctx: Any, addr: int, value: int, flags: int, width: int) -> Any:
    if int(flags) not in WRITE_FLAGS:
        raise fail(INVALID, f"flags 0x{int(flags):x} must be CU_STREAM_WRITE_VALUE_DEFAULT or "
                            f"CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER")
    return C.make(C.Opcode.WRITE_VALUE, address=_target(ctx, addr, width),
                  value=int(value) & ((1 << (8 * width)) - 1), flags=int(flags), width=width)


def _mem_op(make: Any, width: int) -> Any:
    def op(stream: int, addr: int, value: int, flags: int) -> None:
        ctx = current_context()
        s = _stream(ctx, stream)
        s.submit([make(ctx, addr, value, flags, width)])
    return op


@entry
def cuStreamWaitValue32_v2(stream: int, addr: int, value: int, flags: int) -> None:
    """Later work of the stream waits until the 32-bit word at addr
    satisfies flags (GEQ: (int32_t)(*addr - value) >= 0, EQ, AND, NOR)."""
    _mem_op(_wait_cmd, 4)(stream, addr, value, flags)


@entry
def cuStreamWaitValue64_v2(stream: int, addr: int, value: int, flags: int) -> None:
    _mem_op(_wait_cmd, 8)(stream, addr, value, flags)


@entry
def cuStreamWriteValue32_v2(stream: int, addr: int, value: int, flags: int) -> None:
    """The GPU stores value at addr once the stream's earlier work is done."""
    _mem_op(_write_cmd, 4)(stream, addr, value, flags)


@entry
def cuStreamWriteValue64_v2(stream: int, addr: int, value: int, flags: int) -> None:
    _mem_op(_write_cmd, 8)(stream, addr, value, flags)


@entry
def cuStreamBatchMemOp_v2(stream: int, count: int, paramArray: int, flags: int) -> None:
    """Several wait/write operations enqueued together, in array order;
    flush and memory-barrier operations are no-ops on the simulator's
    coherent memory (validated)."""
    ctx = current_context()
    s = _stream(ctx, stream)
    n = int(count)
    if int(flags) != 0:
        raise fail(INVALID, f"flags must be 0, got {int(flags)}")
    if n <= 0:
        raise fail(INVALID, f"count must be positive, got {n}")
    cmds = []
    for i in range(n):
        raw = cabi.read(need(paramArray, "paramArray") + i * BATCH_PARAMS_BYTES, BATCH_PARAMS_BYTES, "paramArray")
        op = int.from_bytes(raw[0:4], "little")
        address = int.from_bytes(raw[8:16], "little")
        value64 = int.from_bytes(raw[16:24], "little")
        op_flags = int.from_bytes(raw[24:28], "little")
        if op in (OP_WAIT_VALUE_32, OP_WAIT_VALUE_64):
            width = 4 if op == OP_WAIT_VALUE_32 else 8
            cmds.append(_wait_cmd(ctx, address, value64, op_flags, width))
        elif op in (OP_WRITE_VALUE_32, OP_WRITE_VALUE_64):
            width = 4 if op == OP_WRITE_VALUE_32 else 8
            cmds.append(_write_cmd(ctx, address, value64, op_flags, width))
        elif op == OP_FLUSH_REMOTE_WRITES:
            if int.from_bytes(raw[4:8], "little") != 0:
                raise fail(INVALID, f"paramArray[{i}].flushRemoteWrites.flags must be 0")
        elif op == OP_BARRIER:
            if int.from_bytes(raw[4:8], "little") not in (0, 1):
                raise fail(INVALID, f"paramArray[{i}].memoryBarrier.flags must be CU_STREAM_MEMORY_BARRIER_"
                                    f"TYPE_SYS or _GPU")
        else:
            raise fail(INVALID, f"paramArray[{i}].operation {op} is not a CUstreamBatchMemOpType")
    if cmds:
        s.submit(cmds)


cuStreamWaitValue32 = cuStreamWaitValue32_v2
cuStreamWaitValue64 = cuStreamWaitValue64_v2
cuStreamWriteValue32 = cuStreamWriteValue32_v2
cuStreamWriteValue64 = cuStreamWriteValue64_v2
cuStreamBatchMemOp = cuStreamBatchMemOp_v2


# ------------------------------------------------------------------ capture
@entry
def cuStreamBeginCapture_v2(hStream: int, mode: int) -> None:
    """Work pushed to the stream (and to streams joined through events)
    becomes graph nodes; the legacy stream cannot capture."""
    capture.begin(_stream(current_context(), hStream), int(mode))


@entry
def cuStreamBeginCapture(hStream: int) -> None:
    """The CUDA 10.0 form: global capture mode."""
    capture.begin(_stream(current_context(), hStream), 0)


@entry
def cuStreamEndCapture(hStream: int, phGraph: int) -> None:
    need(phGraph, "phGraph")
    graph = capture.end(_stream(current_context(), hStream))
    cabi.store(phGraph, "u64", handle_of(HandleKind.GRAPH, graph), "phGraph")


@entry
def cuStreamIsCapturing(hStream: int, captureStatus: int) -> None:
    need(captureStatus, "captureStatus")
    cabi.store(captureStatus, "i32", int(capture.status_of(_stream(current_context(), hStream))))


_deps: dict[int, ctypes.Array] = {}


def _capture_info(hStream: int, status_out: int, id_out: int, graph_out: int, deps_out: int, edges_out: int,
                  num_out: int) -> None:
    need(status_out, "captureStatus_out")
    s = _stream(current_context(), hStream)
    status = capture.status_of(s)
    cabi.store(status_out, "i32", int(status))
    active = s.capture is not None and int(status) == 1
    if id_out:
        cabi.store(id_out, "u64", s.capture.id if active else 0)
    if graph_out:
        cabi.store(graph_out, "u64", handle_of(HandleKind.GRAPH, s.capture.graph) if active else 0)
    deps = list(s.capture_deps) if active else []
    if deps_out:
        array = (ctypes.c_uint64 * max(len(deps), 1))(*[handle_of("CUgraphNode", d) for d in deps])
        _deps[int(hStream)] = array     # valid until the next query on this stream, as in CUDA
        cabi.store(deps_out, "u64", ctypes.addressof(array) if deps else 0)
    if edges_out:
        cabi.store(edges_out, "u64", 0)   # NULL: every edge is a default edge
    if num_out:
        cabi.store(num_out, "u64", len(deps))


@entry
def cuStreamGetCaptureInfo_v2(hStream: int, captureStatus_out: int, id_out: int, graph_out: int,
                              dependencies_out: int, numDependencies_out: int) -> None:
    """Status, and while active the capture's id, graph and the nodes the
    next captured work will depend on."""
    _capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, 0, numDependencies_out)


@entry
def cuStreamGetCaptureInfo_v3(hStream: int, captureStatus_out: int, id_out: int, graph_out: int,
                              dependencies_out: int, edgeData_out: int, numDependencies_out: int) -> None:
    _capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                  numDependencies_out)


@entry
def cuStreamGetCaptureInfo(hStream: int, captureStatus_out: int, id_out: int) -> None:
    _capture_info(hStream, captureStatus_out, id_out, 0, 0, 0, 0)


# ------------------------------------------------------------------ per-thread variants
_PTSZ = {"cuStreamSynchronize": 0, "cuStreamQuery": 0, "cuStreamWaitEvent": 0, "cuStreamGetPriority": 0,
         "cuStreamGetFlags": 0, "cuStreamGetId": 0, "cuStreamGetCtx": 0, "cuStreamGetCtx_v2": 0,
         "cuStreamGetDevice": 0, "cuStreamAddCallback": 0, "cuStreamAttachMemAsync": 0,
         "cuStreamWaitValue32": 0, "cuStreamWaitValue64": 0, "cuStreamWriteValue32": 0,
         "cuStreamWriteValue64": 0, "cuStreamBatchMemOp": 0, "cuStreamWaitValue32_v2": 0,
         "cuStreamWaitValue64_v2": 0, "cuStreamWriteValue32_v2": 0, "cuStreamWriteValue64_v2": 0,
         "cuStreamBatchMemOp_v2": 0, "cuStreamBeginCapture": 0, "cuStreamBeginCapture_v2": 0,
         "cuStreamEndCapture": 0, "cuStreamIsCapturing": 0, "cuStreamGetCaptureInfo": 0,
         "cuStreamGetCaptureInfo_v2": 0, "cuStreamGetCaptureInfo_v3": 0}
for _name, _index in _PTSZ.items():
    globals()[_name + "_ptsz"] = per_thread_variant(globals()[_name], _name + "_ptsz", _index)

__all__ = ["cuStreamCreate", "cuStreamCreateWithPriority", "cuStreamDestroy_v2", "cuStreamDestroy",
           *_PTSZ, *(n + "_ptsz" for n in _PTSZ)]
