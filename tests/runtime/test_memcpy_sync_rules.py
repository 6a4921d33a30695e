"""Seed 002 chapter 1.2 (API synchronization of memcpy and memset), one test
per rule, observed from the host: the stream is held on the GPU by a
SEM_ACQUIRE of a host-written word, the call runs on a worker thread, and
the test sees whether it returns while the GPU is still held (asynchronous)
or only after the hold is released (synchronous). Data checks show what a
returned call guarantees: staged pageable data is snapshotted, pinned data
is read by the DMA when it executes."""
import threading

import numpy as np
import pytest

from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.runtime.types import mcMemcpyKind as K
from gpudbg_fakes import Hold

S = E.mcSuccess
N = 256
H2D, D2H, D2D, H2H = (K.mcMemcpyHostToDevice, K.mcMemcpyDeviceToHost, K.mcMemcpyDeviceToDevice,
                      K.mcMemcpyHostToHost)
BLOCK_PROBE_S = 0.2


def _start(fn, *args):
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", fn(*args)), daemon=True)
    t.start()
    return t, out


def blocks(hold, fn, *args):
    """The call does not return while the GPU is held, and succeeds after."""
    t, out = _start(fn, *args)
    t.join(BLOCK_PROBE_S)
    still_blocked = t.is_alive()
    hold.release()
    t.join(10)
    assert not t.is_alive() and out["r"] == (S,)
    return still_blocked


def returns_while_held(fn, *args):
    t, out = _start(fn, *args)
    t.join(10)
    return not t.is_alive() and out.get("r") == (S,)


@pytest.fixture
def m(fake):
    _, d = mc.mcMalloc(N)
    _, d2 = mc.mcMalloc(N)
    _, pinned = mc.mcMallocHost(N)
    _, mg = mc.mcMallocManaged(N)
    return d, d2, pinned, mg


def device_bytes(ptr):
    out = np.zeros(N, np.uint8)
    assert mc.mcMemcpy(out, ptr, N, D2H) == (S,)
    return out


def data(seed):
    return ((np.arange(N) + seed) % 256).astype(np.uint8)


# ------------------------------------------------------------------ §1.2.1.1 synchronous
def test_sync_pageable_to_device_syncs_the_stream_first_then_stages(m):
    d = m[0]
    host = data(1)
    hold = Hold()
    assert blocks(hold, mc.mcMemcpy, d, host, N, H2D)
    host[:] = 0                           # after return the buffer may be reused: it was staged
    assert mc.mcDeviceSynchronize() == (S,)
    assert (device_bytes(d) == data(1)).all()


def test_sync_pinned_to_device_is_synchronous(m):
    d, _, pinned, _ = m
    mc.host_view(pinned, N)[:] = data(2)
    hold = Hold()
    assert blocks(hold, mc.mcMemcpy, d, pinned, N, H2D)
    gpu = get_engine().current_context().gpu
    assert (gpu.memory.read(d, N) == data(2)).all()      # done at return, no sync needed


@pytest.mark.parametrize("target", ["pageable", "pinned"])
def test_sync_device_to_host_returns_when_done(m, target):
    d, _, pinned, _ = m
    mc.mcMemcpy(d, data(3), N, H2D)
    host = np.zeros(N, np.uint8)
    dst = host if target == "pageable" else pinned
    hold = Hold()
    assert blocks(hold, mc.mcMemcpy, dst, d, N, D2H)
    got = host if target == "pageable" else mc.host_view(pinned, N)
    assert (got == data(3)).all()


def test_sync_device_to_device_does_not_wait(m):
    d, d2, _, _ = m
    mc.mcMemcpy(d, data(4), N, H2D)
    hold = Hold()
    assert returns_while_held(mc.mcMemcpy, d2, d, N, D2D)
    assert mc.mcStreamQuery(0) == (E.mcErrorNotReady,)
    hold.release()
    assert mc.mcDeviceSynchronize() == (S,)
    assert (device_bytes(d2) == data(4)).all()


def test_sync_host_to_host_is_fully_synchronous(m):
    _, _, pinned, _ = m
    mc.host_view(pinned, N)[:] = data(5)
    out = np.zeros(N, np.uint8)
    hold = Hold()
    assert blocks(hold, mc.mcMemcpy, out, pinned, N, H2H)        # ordered after the stream's work
    assert (out == data(5)).all()
    a, b = data(6), np.zeros(N, np.uint8)
    Hold()
    assert returns_while_held(mc.mcMemcpy, b, a, N, H2H)         # pageable only: nothing to wait for
    assert (b == a).all()


def test_sync_unified_memory_is_fully_synchronous(m):
    d, _, _, mg = m
    mc.mcMemcpy(d, data(7), N, H2D)
    hold = Hold()
    assert blocks(hold, mc.mcMemcpy, mg, d, N, K.mcMemcpyDefault)
    assert (mc.host_view(mg, N) == data(7)).all()


# ------------------------------------------------------------------ §1.2.1.2 asynchronous
def test_async_device_to_pageable_returns_when_done(m):
    d = m[0]
    mc.mcMemcpy(d, data(8), N, H2D)
    _, s = mc.mcStreamCreate()
    host = np.zeros(N, np.uint8)
    hold = Hold(s)
    assert blocks(hold, mc.mcMemcpyAsync, host, d, N, D2H, s)
    assert (host == data(8)).all()


def test_async_host_to_host_is_fully_synchronous(m):
    _, _, pinned, _ = m
    _, pinned2 = mc.mcMallocHost(N)
    mc.host_view(pinned, N)[:] = data(9)
    _, s = mc.mcStreamCreate()
    hold = Hold(s)
    assert blocks(hold, mc.mcMemcpyAsync, pinned2, pinned, N, H2H, s)
    assert (mc.host_view(pinned2, N) == data(9)).all()


def test_async_pageable_source_is_staged_at_once(m):
    d = m[0]
    _, s = mc.mcStreamCreate()
    host = data(10)
    hold = Hold(s)
    assert returns_while_held(mc.mcMemcpyAsync, d, host, N, H2D, s)
    host[:] = 0                           # the copy took a snapshot into staging
    hold.release()
    assert mc.mcStreamSynchronize(s) == (S,)
    assert (device_bytes(d) == data(10)).all()


@pytest.mark.parametrize("case", ["pinned_to_device", "device_to_pinned", "device_to_device",
                                  "registered_to_device", "2d_pinned"])
def test_async_other_transfers_are_fully_asynchronous(m, case):
    d, d2, pinned, _ = m
    _, s = mc.mcStreamCreate()
    reg = np.zeros(N, np.uint8)
    mc.mcHostRegister(reg, N)
    mc.mcMemcpy(d2, data(11), N, H2D)
    mc.host_view(pinned, N)[:] = data(12)
    call = {
        "pinned_to_device": (mc.mcMemcpyAsync, d, pinned, N, H2D, s),
        "device_to_pinned": (mc.mcMemcpyAsync, pinned, d2, N, D2H, s),
        "device_to_device": (mc.mcMemcpyDtoDAsync, d, d2, N, s),
        "registered_to_device": (mc.mcMemcpyAsync, d, reg, N, H2D, s),
        "2d_pinned": (mc.mcMemcpy2DAsync, d, 32, pinned, 32, 32, N // 32, H2D, s),
    }[case]
    hold = Hold(s)
    assert returns_while_held(*call)
    assert mc.mcStreamQuery(s) == (E.mcErrorNotReady,)
    _, ev = mc.mcEventCreate()
    mc.mcEventRecord(ev, s)
    assert mc.mcEventQuery(ev) == (E.mcErrorNotReady,)
    # page-locked sources are read by the DMA when it runs, not at the call
    mc.host_view(pinned, N)[:] = data(13)
    reg[:] = data(14)
    hold.release()
    assert mc.mcStreamSynchronize(s) == (S,)
    assert mc.mcEventQuery(ev) == (S,)
    expect = {"pinned_to_device": (d, data(13)), "device_to_pinned": (None, data(11)),
              "device_to_device": (d, data(11)), "registered_to_device": (d, data(14)),
              "2d_pinned": (d, data(13))}[case]
    got = mc.host_view(pinned, N) if expect[0] is None else device_bytes(expect[0])
    assert (got == expect[1]).all()


# ------------------------------------------------------------------ §1.2.2 memset
def test_sync_memset_of_device_memory_is_asynchronous(m):
    d = m[0]
    hold = Hold()
    assert returns_while_held(mc.mcMemset, d, 1, N)
    assert returns_while_held(mc.mcMemset2D, d, 32, 1, 32, N // 32)
    assert returns_while_held(mc.mcMemsetD32, d, 1, N // 4)
    assert mc.mcStreamQuery(0) == (E.mcErrorNotReady,)
    hold.release()
    assert mc.mcDeviceSynchronize() == (S,)


@pytest.mark.parametrize("target", ["pinned", "managed", "registered"])
def test_sync_memset_of_pinned_or_unified_memory_is_synchronous(m, target):
    _, _, pinned, mg = m
    reg = np.zeros(N, np.uint8)
    mc.mcHostRegister(reg, N)
    ptr = {"pinned": pinned, "managed": mg, "registered": mc.mcHostGetDevicePointer(reg)[1]}[target]
    hold = Hold()
    assert blocks(hold, mc.mcMemsetD8, ptr, 0x33, N)
    assert (mc.host_view(ptr, N) == 0x33).all()


def test_async_memset_is_always_asynchronous(m):
    _, _, pinned, mg = m
    _, s = mc.mcStreamCreate()
    hold = Hold(s)
    assert returns_while_held(mc.mcMemsetAsync, pinned, 2, N, s)
    assert returns_while_held(mc.mcMemsetD2D8Async, mg, 32, 2, 32, N // 32, s)
    assert (mc.host_view(pinned, N) == 0).all()            # not done yet
    hold.release()
    assert mc.mcStreamSynchronize(s) == (S,)
    assert (mc.host_view(pinned, N) == 2).all() and (mc.host_view(mg, N) == 2).all()


# ------------------------------------------------------------------ peer copies
def test_peer_copy_serializes_with_the_other_device(fake):
    _, d0 = mc.mcMalloc(N)
    assert mc.mcSetDevice(1) == (S,)
    _, d1 = mc.mcMalloc(N)
    hold = Hold()                          # device 1's default stream is held
    assert mc.mcSetDevice(0) == (S,)
    assert returns_while_held(mc.mcMemcpyPeerAsync, d0, 0, d1, 1, N, None)
    assert blocks(hold, mc.mcMemcpyPeer, d0, 0, d1, 1, N)
