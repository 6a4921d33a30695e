"""Seed 002 chapter 1.1, one test per rule, observed from the host: a stream
is held on the GPU by a pinned flag (mcStreamWaitValue32), and whether work
on another stream completes meanwhile shows whether it is ordered after it."""
import threading

import pytest

from gpudbg.driver.engine import get_engine, reset_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from stream_helpers import (S, Gate, fake_kernels, legacy_mode, per_thread_mode, ready,  # noqa: F401
                            still_blocked, store, stored, wait_until)


def _stream(flags=0):
    err, s = mc.mcStreamCreateWithFlags(flags)
    assert err == S
    return s


# ------------------------------------------------------------------ 1.1.1.1 legacy default stream
def test_legacy_stream_waits_for_every_blocking_stream(legacy_mode):
    """Work on the legacy stream starts only after all blocking streams' earlier work."""
    a, b = _stream(), _stream()
    gate = Gate().hold(a)
    store(fake_kernels(), gate.ptr + 4, 7, 0)
    assert ready(b) and still_blocked(0)
    gate.release()
    assert wait_until(lambda: ready(0))


def test_blocking_streams_wait_for_the_legacy_stream(legacy_mode):
    """Work queued on a blocking stream after legacy work waits for it."""
    s = _stream()
    gate = Gate().hold(0)
    store(fake_kernels(), gate.ptr + 4, 7, s)
    assert still_blocked(s)
    gate.release()
    assert wait_until(lambda: ready(s))


def test_seed_example_kernel2_waits_kernel1_and_kernel3_waits_kernel2(legacy_mode):
    """my_kernel_1 on my_stream, my_kernel_2 on the legacy stream, my_kernel_3
    on my_stream: 2 runs after 1, 3 after 2."""
    ex, k = legacy_mode, fake_kernels()
    s = _stream()
    g1, g2 = Gate(), Gate()
    g1.hold(s)
    store(k, g1.ptr + 4, 1, s)          # my_kernel_1
    g2.hold(0)
    store(k, g1.ptr + 4, 2, 0)          # my_kernel_2
    store(k, g1.ptr + 4, 3, s)          # my_kernel_3
    assert still_blocked(0) and still_blocked(s) and stored(ex) == []
    g2.release()                         # kernel 2's own stream is free, kernel 1 is not
    assert still_blocked(0) and stored(ex) == []
    g1.release()
    assert wait_until(lambda: ready(s) and ready(0))
    assert stored(ex) == [1, 2, 3]


def test_non_blocking_streams_never_synchronize_with_the_legacy_stream(legacy_mode):
    nb = _stream(int(mc.mcStreamFlags.mcStreamNonBlocking))
    gate = Gate().hold(0)
    store(fake_kernels(), gate.ptr + 4, 1, nb)
    assert wait_until(lambda: ready(nb)) and still_blocked(0)
    gate.release()
    gate2 = Gate().hold(nb)
    store(fake_kernels(), gate.ptr + 4, 2, 0)
    assert wait_until(lambda: ready(0)) and still_blocked(nb)
    gate2.release()


def test_mcStreamLegacy_names_the_legacy_stream(legacy_mode):
    s = _stream()
    gate = Gate().hold(mc.mcStreamLegacy)
    assert still_blocked(0)              # the same stream as handle 0 in legacy mode
    store(fake_kernels(), gate.ptr + 4, 1, s)
    assert still_blocked(s)
    gate.release()
    assert wait_until(lambda: ready(s))


def test_legacy_stream_is_per_context(legacy_mode):
    """The legacy stream synchronizes with the streams of its own context only."""
    gate = Gate().hold(_stream())
    assert mc.mcSetDevice(1) == (S,)
    other = _stream()
    assert mc.mcEventRecord(mc.mcEventCreate()[1], 0) == (S,)
    assert wait_until(lambda: ready(0) and ready(other))
    mc.mcSetDevice(0)
    assert still_blocked(0)
    gate.release()


# ------------------------------------------------------------------ 1.1.1.2 per-thread default stream
def test_handle_0_is_the_calling_threads_stream_in_per_thread_mode(per_thread_mode):
    ctx = get_engine().current_context()
    assert ctx.stream(0) is ctx.stream(mc.mcStreamPerThread) and ctx.stream(0) is not ctx.legacy
    mine = ctx.stream(0)
    seen = []
    t = threading.Thread(target=lambda: seen.append(get_engine().current_context().stream(0)))
    t.start()
    t.join()
    assert seen[0] is not mine and seen[0].kind is mine.kind


def test_per_thread_stream_does_not_synchronize_with_other_streams(per_thread_mode):
    s = _stream()
    gate = Gate().hold(s)
    store(fake_kernels(), gate.ptr + 4, 1, 0)
    assert wait_until(lambda: ready(0)) and still_blocked(s)
    gate.release()
    gate2 = Gate().hold(0)
    store(fake_kernels(), gate.ptr + 4, 2, s)
    assert wait_until(lambda: ready(s)) and still_blocked(0)
    gate2.release()


def test_per_thread_streams_of_two_threads_are_independent(per_thread_mode):
    gate = Gate().hold(0)
    result = []

    def other():
        store(fake_kernels(), gate.ptr + 4, 5, 0)
        result.append(wait_until(lambda: ready(0)))
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert result == [True] and still_blocked(0)
    gate.release()


def test_per_thread_stream_synchronizes_with_the_legacy_stream(per_thread_mode):
    gate = Gate().hold(mc.mcStreamLegacy)
    store(fake_kernels(), gate.ptr + 4, 1, 0)
    assert still_blocked(0)
    gate.release()
    assert wait_until(lambda: ready(0))
    gate2 = Gate().hold(0)
    store(fake_kernels(), gate.ptr + 4, 2, mc.mcStreamLegacy)
    assert still_blocked(mc.mcStreamLegacy)
    gate2.release()
    assert wait_until(lambda: ready(mc.mcStreamLegacy))


def test_per_thread_stream_is_not_a_non_blocking_stream(legacy_mode):
    """mcStreamPerThread names it in either mode; it reports no flags and
    blocks with the legacy stream (handle 0 here)."""
    assert mc.mcStreamGetFlags(mc.mcStreamPerThread) == (S, 0)
    gate = Gate().hold(mc.mcStreamPerThread)
    store(fake_kernels(), gate.ptr + 4, 1, 0)
    assert still_blocked(0)
    gate.release()
    assert wait_until(lambda: ready(0))


def test_default_streams_cannot_be_destroyed(per_thread_mode):
    assert mc.mcStreamDestroy(0) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcStreamDestroy(mc.mcStreamLegacy) == (E.mcErrorInvalidResourceHandle,)


# ------------------------------------------------------------------ choosing the mode
def test_mode_comes_from_the_environment_at_init(monkeypatch):
    monkeypatch.setenv("GPUDBG_DEFAULT_STREAM", "per-thread")
    reset_engine(num_devices=1)
    try:
        assert mc.mcStreamQuery(0) == (S,)
        ctx = get_engine().current_context()
        assert ctx.stream(0) is not ctx.legacy
        monkeypatch.setenv("GPUDBG_DEFAULT_STREAM", "legacy")      # fixed once initialized
        assert ctx.stream(0) is not ctx.legacy
        monkeypatch.setenv("GPUDBG_DEFAULT_STREAM", "sideways")
        reset_engine(num_devices=1)
        assert mc.mcStreamQuery(0) == (E.mcErrorInitializationError,)
        monkeypatch.delenv("GPUDBG_DEFAULT_STREAM")
        reset_engine(num_devices=1)
        ctx = get_engine().current_context()
        assert ctx.stream(0) is ctx.legacy
    finally:
        reset_engine()
        mc.mcGetLastError()


def test_engine_option_overrides_the_environment(monkeypatch):
    monkeypatch.setenv("GPUDBG_DEFAULT_STREAM", "per-thread")
    reset_engine(num_devices=1, default_stream="legacy")
    try:
        ctx = get_engine().current_context()
        assert ctx.stream(0) is ctx.legacy
        with pytest.raises(Exception):
            reset_engine(num_devices=1, default_stream="bogus").init()
    finally:
        reset_engine()
        mc.mcGetLastError()
