"""Seed 002 §2.15: mcStreamWaitValue32/64 and mcStreamWriteValue32/64 as ring
commands executed by the GPU front end."""
import numpy as np
from hypothesis import given, settings, strategies as st

from gpudbg.driver import commands as C
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.sim.frontend import Frontend
from stream_helpers import S, legacy_mode, ready, still_blocked, wait_until  # noqa: F401

W = mc.mcStreamWaitValueFlags
GEQ, EQ, AND, NOR = (int(W.mcStreamWaitValueGeq), int(W.mcStreamWaitValueEq),
                     int(W.mcStreamWaitValueAnd), int(W.mcStreamWaitValueNor))


def _pinned(nbytes=16):
    err, p = mc.mcMallocHost(nbytes)
    assert err == S
    v = mc.host_view(p, nbytes, np.uint8)
    v[:] = 0
    return p


def test_write_value_32_and_64(legacy_mode):
    _, d = mc.mcMalloc(16)
    assert mc.mcStreamWriteValue32(0, d, 0xDEADBEEF, 0) == (S,)
    assert mc.mcStreamWriteValue64(0, d + 8, (1 << 63) + 5, 1) == (S,)
    out = np.zeros(2, np.uint64)
    assert mc.mcMemcpy(out, d, 16, mc.mcMemcpyKind.mcMemcpyDeviceToHost) == (S,)
    assert int(out[0]) & 0xFFFFFFFF == 0xDEADBEEF and int(out[1]) == (1 << 63) + 5


def test_write_value_to_pinned_host_memory_is_seen_by_the_host(legacy_mode):
    p = _pinned()
    _, s = mc.mcStreamCreate()
    assert mc.mcStreamWriteValue32(s, p, 77, 0) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    assert mc.host_view(p, 4, np.uint32)[0] == 77


def test_a_host_store_to_pinned_memory_releases_a_wait(legacy_mode):
    p = _pinned()
    _, s = mc.mcStreamCreate()
    assert mc.mcStreamWaitValue32(s, p, 3, GEQ) == (S,)
    assert mc.mcStreamWriteValue32(s, p + 4, 1, 0) == (S,)
    assert still_blocked(s)
    mc.host_view(p, 4, np.uint32)[0] = 2
    assert still_blocked(s)
    mc.host_view(p, 4, np.uint32)[0] = 3                  # direct store: found by the bounded poll
    assert wait_until(lambda: ready(s))
    assert mc.host_view(p + 4, 4, np.uint32)[0] == 1


def test_an_mc_host_copy_into_pinned_memory_releases_a_wait(legacy_mode):
    p = _pinned()
    _, s = mc.mcStreamCreateWithFlags(1)
    assert mc.mcStreamWaitValue64(s, p + 8, 1 << 40, EQ) == (S,)
    assert still_blocked(s)
    src = np.array([1 << 40], np.uint64)
    assert mc.mcMemcpy(p + 8, src, 8, mc.mcMemcpyKind.mcMemcpyHostToHost) == (S,)
    assert wait_until(lambda: ready(s))


def test_the_gpu_releases_a_wait_from_another_stream(legacy_mode):
    _, d = mc.mcMalloc(8)
    mc.mcMemset(d, 0, 8)
    _, a = mc.mcStreamCreateWithFlags(1)
    _, b = mc.mcStreamCreateWithFlags(1)
    assert mc.mcStreamWaitValue32(a, d, 0b100, AND) == (S,)
    assert still_blocked(a)
    assert mc.mcStreamWriteValue32(b, d, 0b110, 0) == (S,)
    assert wait_until(lambda: ready(a))


def test_wait_conditions(legacy_mode):
    p = _pinned()
    view = mc.host_view(p, 4, np.uint32)
    _, s = mc.mcStreamCreateWithFlags(1)
    cases = [(5, GEQ, 5, True), (4, GEQ, 5, False), (0, GEQ, 0xFFFFFFFF, True),   # cyclic: 0 is "after" -1
             (7, EQ, 7, True), (7, EQ, 8, False), (0b1010, AND, 0b0010, True), (0b1010, AND, 0b0101, False),
             (0xFFFFFFF0, NOR, 0x0000000F, False), (0xFFFFFFF0, NOR, 0x00000007, True),
             (5, GEQ | int(W.mcStreamWaitValueFlush), 5, True)]
    for cur, flags, value, satisfied in cases:
        view[0] = cur
        assert mc.mcStreamWaitValue32(s, p, value, flags) == (S,)
        if satisfied:
            assert wait_until(lambda: ready(s)), (cur, flags, value)
        else:
            assert still_blocked(s), (cur, flags, value)
            view[0] = value if flags != NOR else 0
            assert wait_until(lambda: ready(s)), (cur, flags, value)


def test_argument_errors(legacy_mode):
    p = _pinned()
    _, d = mc.mcMalloc(16)
    invalid = (E.mcErrorInvalidValue,)
    assert mc.mcStreamWaitValue32(0, p, 1, 4) == invalid
    assert mc.mcStreamWaitValue32(0, p + 2, 1, GEQ) == invalid
    assert mc.mcStreamWaitValue64(0, p + 4, 1, GEQ) == invalid
    assert mc.mcStreamWaitValue32(0, 0, 1, GEQ) == invalid
    assert mc.mcStreamWaitValue32(0, 0x10, 1, GEQ) == invalid
    assert mc.mcStreamWaitValue32(0, p, 1 << 32, GEQ) == invalid
    assert mc.mcStreamWaitValue64(0, p, -1, GEQ) == invalid
    assert mc.mcStreamWriteValue32(0, d, 1, 2) == invalid
    assert mc.mcStreamWriteValue64(0, d + 12, 1, 0) == invalid
    assert mc.mcStreamWriteValue32(0, np.zeros(4), 1, 0) == invalid
    assert mc.mcStreamWriteValue64(0, d + 16, 1, 0) == invalid
    assert mc.mcStreamWriteValue32("s", d, 1, 0) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcStreamWaitValue64(object(), d, 1, 0) == (E.mcErrorInvalidResourceHandle,)


def test_memory_of_another_device_is_refused(legacy_mode):
    _, d = mc.mcMalloc(8)
    mc.mcSetDevice(1)
    assert mc.mcStreamWriteValue32(0, d, 1, 0) == (E.mcErrorInvalidValue,)


def _reference(cur, value, op, width):
    mask = (1 << (8 * width)) - 1
    if op == GEQ:
        diff = (cur - value) & mask
        return (diff - (1 << (8 * width)) if diff >> (8 * width - 1) else diff) >= 0
    if op == EQ:
        return cur == value
    if op == AND:
        return (cur & value) != 0
    return (~(cur | value) & mask) != 0


class _Mem:
    def __init__(self, cur, width):
        self.data = np.array([cur], np.uint32 if width == 4 else np.uint64).view(np.uint8)

    def view(self, address, nbytes):
        return self.data[:nbytes]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([4, 8]), st.data(), st.sampled_from([GEQ, EQ, AND, NOR]))
def test_wait_condition_matches_its_definition(width, data, op):
    cur = data.draw(st.integers(0, (1 << (8 * width)) - 1))
    value = data.draw(st.one_of(st.integers(0, (1 << (8 * width)) - 1), st.just(cur)))

    class _GPU:
        memory = _Mem(cur, width)
        cv = None
    fe = Frontend.__new__(Frontend)
    fe.gpu = _GPU()
    cmd = C.make(C.Opcode.WAIT_VALUE, address=0x1000, value=value, flags=op, width=width)
    assert fe._value_ready(cmd) == _reference(cur, value, op, width)
