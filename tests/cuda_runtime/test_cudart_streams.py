"""Streams, events and host callbacks through the C ABI."""
import ctypes
import threading

import numpy as np

from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import HandleKind
from gpudbg.cuda_runtime import exports as rt
from rt_helpers import Args, addr, check, dim3, malloc, out_u64

H2D, D2H = 1, 2


def test_two_streams_and_events(program):
    n = 4096
    a = np.arange(n, dtype=np.float32)
    host_out = [np.zeros(n, np.float32) for _ in range(2)]
    streams = [out_u64(), out_u64()]
    check(rt.cudaStreamCreate(addr(streams[0])))
    check(rt.cudaStreamCreateWithFlags(addr(streams[1]), 1))
    assert handles.kind_of(streams[0].value) == HandleKind.STREAM        # a cudaStream_t is a CUstream
    start, stop = out_u64(), out_u64()
    check(rt.cudaEventCreate(addr(start)))
    check(rt.cudaEventCreateWithFlags(addr(stop), 0))
    pinned = out_u64()
    check(rt.cudaMallocHost(addr(pinned), a.nbytes))
    ctypes.memmove(pinned.value, a.ctypes.data, a.nbytes)
    check(rt.cudaEventRecord(start.value, streams[0].value))
    bufs = []
    for i, s in enumerate(streams):
        d_in, d_out = malloc(a.nbytes), malloc(a.nbytes)
        bufs += [d_in, d_out]
        check(rt.cudaMemcpyAsync(d_in, pinned.value, a.nbytes, H2D, s.value))
        args = Args(ctypes.c_uint64(d_in), ctypes.c_uint64(d_in), ctypes.c_uint64(d_out), ctypes.c_int(n))
        check(rt.cudaLaunchKernel(program.stub("vecadd"), dim3(n // 256), dim3(256), args.address, 0, s.value))
        check(rt.cudaMemcpyAsync(host_out[i].ctypes.data, d_out, a.nbytes, D2H, s.value))
    check(rt.cudaEventRecord(stop.value, streams[1].value))
    check(rt.cudaStreamWaitEvent(streams[0].value, stop.value, 0))
    check(rt.cudaStreamSynchronize(streams[0].value))
    check(rt.cudaEventSynchronize(stop.value))
    assert rt.cudaEventQuery(stop.value) == 0 and rt.cudaStreamQuery(streams[1].value) == 0
    ms = ctypes.c_float(-1)
    check(rt.cudaEventElapsedTime(addr(ms), start.value, stop.value))
    assert ms.value >= 0
    for out in host_out:
        np.testing.assert_array_equal(out, 2 * a)
    flags, device = ctypes.c_uint(9), ctypes.c_int(9)
    check(rt.cudaStreamGetFlags(streams[1].value, addr(flags)))
    check(rt.cudaStreamGetDevice(streams[1].value, addr(device)))
    assert flags.value == 1 and device.value == 0
    for s in streams:
        check(rt.cudaStreamDestroy(s.value))
    for e in (start, stop):
        check(rt.cudaEventDestroy(e.value))
    assert rt.cudaStreamSynchronize(streams[0].value) == 400      # a retired handle
    assert rt.cudaEventQuery(start.value) == 400
    assert rt.cudaGetLastError() == 400
    check(rt.cudaFreeHost(pinned.value))
    for d in bufs:
        check(rt.cudaFree(d))


def test_stream_callback_and_host_func(fresh):
    calls = []
    done = threading.Event()
    CB = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
    HF = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

    @CB
    def callback(stream, status, data):
        calls.append(("cb", stream, status, data))

    @HF
    def host_fn(data):
        calls.append(("fn", data))
        done.set()

    s = out_u64()
    check(rt.cudaStreamCreate(addr(s)))
    check(rt.cudaStreamAddCallback(s.value, ctypes.cast(callback, ctypes.c_void_p).value, 0x1234, 0))
    check(rt.cudaLaunchHostFunc(s.value, ctypes.cast(host_fn, ctypes.c_void_p).value, 0x99))
    check(rt.cudaStreamSynchronize(s.value))
    assert done.wait(10)
    assert calls == [("cb", s.value, 0, 0x1234), ("fn", 0x99)]
    assert rt.cudaStreamAddCallback(s.value, 0, 0, 0) == 1


def test_per_thread_default_stream_variants(fresh):
    d = malloc(64)
    check(rt.cudaMemsetAsync_ptsz(d, 7, 64, 0))
    check(rt.cudaStreamSynchronize_ptsz(0))
    host = np.zeros(64, np.uint8)
    check(rt.cudaMemcpy_ptds(host.ctypes.data, d, 64, D2H))
    assert (host == 7).all()
    check(rt.cudaMemset_ptds(d, 3, 32))
    check(rt.cudaMemcpy(host.ctypes.data, d, 64, D2H))
    assert (host[:32] == 3).all() and (host[32:] == 7).all()
