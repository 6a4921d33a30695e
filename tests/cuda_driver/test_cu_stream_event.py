import ctypes
import struct
import threading

import numpy as np

from cu_kernels import Params, from_device, function, load_module, saxpy_data, saxpy_params, to_device
from cudrv_helpers import check, out_i32, out_u32, out_u64
from gpudbg.cuda_driver import context as CTX
from gpudbg.cuda_driver import event as E
from gpudbg.cuda_driver import launch as L
from gpudbg.cuda_driver import memory as M
from gpudbg.cuda_driver import stream as S

INVALID_VALUE, INVALID_HANDLE, NOT_READY, CAPTURE_UNSUPPORTED = 1, 400, 600, 900


def stream(flags=0, priority=None):
    s = out_u64()
    if priority is None:
        check(S.cuStreamCreate(s.addr, flags))
    else:
        check(S.cuStreamCreateWithPriority(s.addr, flags, priority))
    return s.value


def event(flags=0):
    e = out_u64()
    check(E.cuEventCreate(e.addr, flags))
    return e.value


def pinned_word():
    p = out_u64()
    check(M.cuMemAllocHost_v2(p.addr, 8))
    ctypes.c_uint64.from_address(p.value).value = 0
    return p.value


def test_stream_properties(ctx):
    s = stream(1, priority=-100)
    prio, flags, ident, dev, pctx, green = out_i32(), out_u32(), out_u64(), out_i32(), out_u64(), out_u64()
    check(S.cuStreamGetPriority(s, prio.addr))
    check(S.cuStreamGetFlags(s, flags.addr))
    check(S.cuStreamGetId(s, ident.addr))
    check(S.cuStreamGetDevice(s, dev.addr))
    check(S.cuStreamGetCtx(s, pctx.addr))
    assert (prio.value, flags.value, dev.value, pctx.value) == (-5, 1, 0, ctx)
    check(S.cuStreamGetCtx_v2(s, pctx.addr, green.addr))
    assert (pctx.value, green.value) == (ctx, 0)
    other = out_u64()
    check(S.cuStreamGetId(stream(), other.addr))
    assert other.value != ident.value
    check(S.cuStreamGetFlags_ptsz(0, flags.addr))
    assert flags.value == 0
    assert S.cuStreamCreate(0, 0) == INVALID_VALUE
    assert S.cuStreamCreate(out_u64().addr, 8) == INVALID_VALUE
    check(S.cuStreamDestroy_v2(s))
    assert S.cuStreamGetPriority(s, prio.addr) == INVALID_HANDLE
    assert S.cuStreamDestroy_v2(s) == INVALID_HANDLE
    assert S.cuStreamDestroy_v2(0) == INVALID_HANDLE
    assert S.cuStreamSynchronize(0x5D0000DEAD00) == INVALID_HANDLE


def test_ordering_with_wait_value_and_events(ctx):
    """s1 waits on a pinned word; an event recorded after that gates s2's
    kernel through cuStreamWaitEvent; releasing the word (a write from a
    third stream) lets both finish, in order."""
    flag = pinned_word()
    out = np.zeros(1, np.uint32)
    d = to_device(out)
    f = function(load_module(), "poke")
    s1, s2, s3 = stream(1), stream(1), stream(1)
    e = event()
    check(S.cuStreamWaitValue32_v2(s1, flag, 1, 0x1))              # EQ
    check(E.cuEventRecord(e, s1))
    check(S.cuStreamWaitEvent(s2, e, 0))
    p = Params(ctypes.c_uint64(d), ctypes.c_uint32(99))
    check(L.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s2, p.addr, 0))
    assert S.cuStreamQuery(s1) == NOT_READY
    assert S.cuStreamQuery(s2) == NOT_READY
    assert E.cuEventQuery(e) == NOT_READY
    check(S.cuStreamWriteValue32_v2(s3, flag, 1, 0))
    check(S.cuStreamSynchronize(s2))
    check(E.cuEventQuery(e))
    check(S.cuStreamQuery(s1))
    assert from_device(d, out)[0] == 99
    assert S.cuStreamWaitValue32_v2(s1, flag, 1, 0x7) == INVALID_VALUE
    assert S.cuStreamWriteValue32_v2(s1, flag + 1, 1, 0) == INVALID_VALUE      # misaligned
    assert S.cuStreamWriteValue64_v2(s1, 0x1000, 1, 0) == INVALID_VALUE        # not device-visible


def test_batch_mem_op(ctx):
    word = pinned_word()
    s = stream()
    params = (ctypes.c_uint8 * 96)()
    struct.pack_into("<I4xQQI", params, 0, S.OP_WRITE_VALUE_64, word, 0x1122334455667788, 0)
    struct.pack_into("<I4xQQI", params, 48, S.OP_WAIT_VALUE_64, word, 0x1122334455667788, 0x1)
    check(S.cuStreamBatchMemOp_v2(s, 2, ctypes.addressof(params), 0))
    check(S.cuStreamSynchronize(s))
    assert ctypes.c_uint64.from_address(word).value == 0x1122334455667788
    struct.pack_into("<I", params, 0, 42)
    assert S.cuStreamBatchMemOp_v2(s, 1, ctypes.addressof(params), 0) == INVALID_VALUE


def test_elapsed_time(ctx):
    f = function(load_module(), "saxpy")
    _, _, dx, dy = saxpy_data(4096)
    p = saxpy_params(4096, 1.0, dx, dy)
    start, stop, untimed = event(), event(), event(0x2)
    s = stream()
    ms = ctypes.c_float(-1)
    assert E.cuEventElapsedTime_v2(ctypes.addressof(ms), start, stop) == INVALID_HANDLE    # never recorded
    check(E.cuEventRecord(start, s))
    check(L.cuLaunchKernel(f, 32, 1, 1, 128, 1, 1, 0, s, p.addr, 0))
    check(E.cuEventRecordWithFlags(stop, s, 0))
    check(E.cuEventRecord(untimed, s))
    check(E.cuEventSynchronize(stop))
    check(E.cuEventElapsedTime_v2(ctypes.addressof(ms), start, stop))
    assert ms.value > 0
    again = ctypes.c_float()
    check(E.cuEventElapsedTime(ctypes.addressof(again), start, stop))
    assert again.value == ms.value
    assert E.cuEventElapsedTime_v2(ctypes.addressof(ms), start, untimed) == INVALID_HANDLE
    assert E.cuEventElapsedTime_v2(0, start, stop) == INVALID_VALUE
    assert E.cuEventRecordWithFlags(stop, s, 0x1) == INVALID_VALUE      # EXTERNAL outside a capture
    assert E.cuEventCreate(out_u64().addr, 0x4) == INVALID_VALUE         # INTERPROCESS needs DISABLE_TIMING
    check(E.cuEventDestroy_v2(start))
    assert E.cuEventQuery(start) == INVALID_HANDLE
    assert E.cuEventRecord(start, s) == INVALID_HANDLE


def test_ptsz_event_record(ctx):
    e = event()
    check(E.cuEventRecord_ptsz(e, 0))
    check(E.cuEventRecordWithFlags_ptsz(e, 0, 0))
    check(E.cuEventSynchronize(e))


def test_stream_callback(ctx):
    s = stream()
    seen = []
    done = threading.Event()

    @ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
    def callback(h, status, data):
        seen.append((h, status, data))
        done.set()

    check(S.cuStreamAddCallback(s, ctypes.cast(callback, ctypes.c_void_p).value, 77, 0))
    check(S.cuStreamSynchronize(s))
    assert done.wait(5) and seen == [(s, 0, 77)]
    assert S.cuStreamAddCallback(s, ctypes.cast(callback, ctypes.c_void_p).value, 0, 1) == INVALID_VALUE
    assert S.cuStreamAddCallback(s, 0, 0, 0) == INVALID_VALUE


def test_capture(ctx):
    f = function(load_module(), "saxpy")
    _, _, dx, dy = saxpy_data(64)
    p = saxpy_params(64, 1.0, dx, dy)
    s = stream()
    status = out_i32()
    check(S.cuStreamIsCapturing(s, status.addr))
    assert status.value == 0
    check(S.cuStreamBeginCapture_v2(s, 2))                     # relaxed
    check(L.cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s, p.addr, 0))
    ident, graph, deps, n = out_u64(), out_u64(), out_u64(), out_u64()
    check(S.cuStreamGetCaptureInfo_v2(s, status.addr, ident.addr, graph.addr, deps.addr, n.addr))
    assert status.value == 1 and ident.value and graph.value and n.value == 1 and deps.value
    g = out_u64()
    check(S.cuStreamEndCapture(s, g.addr))
    assert g.value == graph.value
    check(S.cuStreamBeginCapture_v2_ptsz(s, 0))
    assert S.cuStreamSynchronize(s) == CAPTURE_UNSUPPORTED                 # and it invalidates the capture
    assert S.cuStreamEndCapture(s, g.addr) == 901
    check(S.cuStreamIsCapturing(s, status.addr))
    assert status.value == 0
    assert S.cuStreamBeginCapture_v2(1, 0) == CAPTURE_UNSUPPORTED          # the legacy stream
    assert S.cuStreamEndCapture(s, g.addr) == 401


def test_attach_managed(ctx):
    p = out_u64()
    check(M.cuMemAllocManaged(p.addr, 4096, 1))
    s = stream()
    check(S.cuStreamAttachMemAsync(s, p.value, 0, 4))
    assert S.cuStreamAttachMemAsync(s, p.value, 0, 8) == INVALID_VALUE
    assert S.cuStreamAttachMemAsync(s, p.value + 16, 0, 4) == INVALID_VALUE
    assert S.cuStreamAttachMemAsync(0, p.value, 0, 4) == INVALID_VALUE
    check(S.cuStreamSynchronize(s))


def test_sticky_error_through_streams_and_events(ctx):
    f = function(load_module(), "poke")
    s, e = stream(), event()
    p = Params(ctypes.c_uint64(0x10), ctypes.c_uint32(1))
    check(L.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, p.addr, 0))
    check(E.cuEventRecord(e, s))
    assert S.cuStreamSynchronize(s) == 700
    assert E.cuEventSynchronize(e) == 700
    assert CTX.cuCtxSynchronize() == 700
