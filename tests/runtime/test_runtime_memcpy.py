import numpy as np
import pytest

from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.runtime.types import mcMemcpyKind as K

S = E.mcSuccess
N = 64


@pytest.fixture
def mem(fake):
    _, d1 = mc.mcMalloc(N)
    _, d2 = mc.mcMalloc(N)
    _, p1 = mc.mcMallocHost(N)
    _, p2 = mc.mcHostAlloc(N, 0x2)
    _, mg = mc.mcMallocManaged(N)
    return d1, d2, p1, p2, mg


def pattern(seed):
    return (np.arange(N, dtype=np.uint8) * 7 + seed).astype(np.uint8)


def test_every_kind_and_path(mem):
    d1, d2, p1, p2, mg = mem
    src = pattern(1)
    assert mc.mcMemcpy(d1, src, N, K.mcMemcpyHostToDevice) == (S,)            # pageable -> device
    assert mc.mcMemcpy(d2, d1, N, K.mcMemcpyDeviceToDevice) == (S,)
    assert mc.mcMemcpy(p1, d2, N, K.mcMemcpyDeviceToHost) == (S,)             # device -> pinned
    assert (mc.host_view(p1, N) == src).all()
    assert mc.mcMemcpy(p2, p1, N, K.mcMemcpyHostToHost) == (S,)               # pinned -> pinned
    out = np.zeros(N, np.uint8)
    assert mc.mcMemcpy(out, p2, N, K.mcMemcpyHostToHost) == (S,)              # pinned -> pageable
    assert (out == src).all()
    h2 = np.zeros(N, np.uint8)
    assert mc.mcMemcpy(h2, out, N, K.mcMemcpyHostToHost) == (S,)              # pageable -> pageable
    assert (h2 == src).all()
    mc.host_view(p1, N)[:] = pattern(2)
    assert mc.mcMemcpy(mg, p1, N, K.mcMemcpyHostToDevice) == (S,)             # pinned -> managed
    assert mc.mcDeviceSynchronize() == (S,)
    assert (mc.host_view(mg, N) == pattern(2)).all()
    back = bytearray(N)
    assert mc.mcMemcpy(back, mg, N, K.mcMemcpyDefault) == (S,)                # inferred
    assert bytes(back) == pattern(2).tobytes()


def test_async_copies_and_default_inference(mem):
    d1, d2, p1, _, _ = mem
    _, s = mc.mcStreamCreate()
    mc.host_view(p1, N)[:] = pattern(3)
    assert mc.mcMemcpyAsync(d1, p1, N, K.mcMemcpyDefault, s) == (S,)
    assert mc.mcMemcpyAsync(d2, d1, N, K.mcMemcpyDefault, s) == (S,)
    out = np.zeros(N, np.uint8)
    assert mc.mcMemcpyAsync(out, d2, N, K.mcMemcpyDefault, s) == (S,)        # to pageable: waits
    assert (out == pattern(3)).all()
    assert mc.mcMemcpyHtoD(d1, pattern(4), N) == (S,)
    assert mc.mcMemcpyDtoD(d2, d1, N) == (S,)
    assert mc.mcMemcpyDtoH(out, d2, N) == (S,)
    assert (out == pattern(4)).all()
    assert mc.mcMemcpy(d1, out, 0, K.mcMemcpyHostToDevice) == (S,)            # zero bytes


@pytest.mark.parametrize("case,code", [
    ("kind", E.mcErrorInvalidMemcpyDirection),
    ("kind_bool", E.mcErrorInvalidMemcpyDirection),
    ("buffer_as_device", E.mcErrorInvalidValue),
    ("device_as_host", E.mcErrorInvalidValue),
    ("too_big", E.mcErrorInvalidValue),
    ("small_buffer", E.mcErrorInvalidValue),
    ("unknown_ptr", E.mcErrorInvalidValue),
    ("null", E.mcErrorInvalidValue),
    ("readonly", E.mcErrorInvalidValue),
    ("not_buffer", E.mcErrorInvalidValue),
    ("negative", E.mcErrorInvalidValue),
])
def test_memcpy_errors(mem, case, code):
    d1, d2, p1, _, _ = mem
    host = np.zeros(N, np.uint8)
    args = {
        "kind": (d1, host, N, 9),
        "kind_bool": (d1, host, N, True),
        "buffer_as_device": (host, d1, N, K.mcMemcpyDeviceToDevice),
        "device_as_host": (d1, d2, N, K.mcMemcpyHostToDevice),
        "too_big": (d1, d2, N + 1, K.mcMemcpyDeviceToDevice),
        "small_buffer": (d1, np.zeros(4, np.uint8), N, K.mcMemcpyHostToDevice),
        "unknown_ptr": (d1, 0x1234, N, K.mcMemcpyDefault),
        "null": (0, host, N, K.mcMemcpyHostToDevice),
        "readonly": (bytes(N), d1, N, K.mcMemcpyDeviceToHost),
        "not_buffer": (d1, "text", N, K.mcMemcpyHostToDevice),
        "negative": (d1, host, -1, K.mcMemcpyHostToDevice),
    }[case]
    assert mc.mcMemcpy(*args) == (code,)
    assert mc.mcGetLastError() == (code,)
    assert mc.last_error_message() == ""       # cleared with the error


def test_memset_variants(mem):
    d1, _, p1, _, mg = mem
    out = np.zeros(N, np.uint8)
    assert mc.mcMemset(d1, 0x1AB, N) == (S,)            # low byte of an int
    mc.mcMemcpy(out, d1, N, K.mcMemcpyDeviceToHost)
    assert (out == 0xAB).all()
    assert mc.mcMemsetD16(d1, 0xBEEF, N // 2) == (S,)
    mc.mcMemcpy(out, d1, N, K.mcMemcpyDeviceToHost)
    assert (out.view("<u2") == 0xBEEF).all()
    assert mc.mcMemsetD32Async(d1, 0xDEADBEEF, N // 4, None) == (S,)
    assert mc.mcMemsetD8Async(d1, 1, 2, 0) == (S,)
    assert mc.mcMemsetD16Async(d1 + 2, 0x0202, 1) == (S,)
    mc.mcMemcpy(out, d1, N, K.mcMemcpyDeviceToHost)
    assert list(out[:8]) == [1, 1, 2, 2, 0xEF, 0xBE, 0xAD, 0xDE]
    assert mc.mcMemsetD32(p1, 7, N // 4) == (S,)         # pinned: synchronous
    assert (mc.host_view(p1, N, np.uint32) == 7).all()
    assert mc.mcMemsetD8(mg, 5, N) == (S,)               # managed: synchronous
    assert (mc.host_view(mg, N) == 5).all()
    _, s = mc.mcStreamCreate()
    assert mc.mcMemsetAsync(d1, 3, N, s) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    assert mc.mcMemsetD16(d1 + 1, 0, 1) == (E.mcErrorInvalidValue,)       # misaligned
    assert mc.mcMemsetD32(d1, 1 << 32, 1) == (E.mcErrorInvalidValue,)     # does not fit
    assert mc.mcMemset(d1, 0, N + 1) == (E.mcErrorInvalidValue,)          # past the end
    assert mc.mcMemset(np.zeros(4), 0, 4) == (E.mcErrorInvalidValue,)     # host buffer
    assert mc.mcMemsetAsync(d1, 0, 4, "s") == (E.mcErrorInvalidResourceHandle,)


def test_host_view_rejects_device_memory(mem):
    with pytest.raises(ValueError, match="not pinned host or managed"):
        mc.host_view(mem[0], 4)
    with pytest.raises(ValueError, match="exceed"):
        mc.host_view(mem[2], N + 1)
