"""Seed 002 §2.5 events: flags, record/query/synchronize/destroy, and elapsed
time from the simulated device clock (sim/timing.py's cost model)."""
from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.sim import timing
from stream_helpers import S, Gate, fake_kernels, legacy_mode, store, wait_until  # noqa: F401

F = mc.mcEventFlags

def _khz():
    return get_engine().current_context().device.model.clock_rate_khz


def _event(flags=0):
    err, e = mc.mcEventCreateWithFlags(flags)
    assert err == S
    return e


def test_create_flags(legacy_mode):
    err, e = mc.mcEventCreate()
    assert err == S and e.flags == 0
    for flags in (F.mcEventBlockingSync, F.mcEventDisableTiming,
                  F.mcEventDisableTiming | F.mcEventInterprocess | F.mcEventBlockingSync):
        assert mc.mcEventCreateWithFlags(int(flags))[0] == S
    assert mc.mcEventCreateWithFlags(0x8) == (E.mcErrorInvalidValue, None)
    assert mc.mcEventCreateWithFlags(int(F.mcEventInterprocess)) == (E.mcErrorInvalidValue, None)
    assert mc.mcEventCreateWithFlags(-1) == (E.mcErrorInvalidValue, None)


def test_record_query_synchronize(legacy_mode):
    _, s = mc.mcStreamCreate()
    e = _event(int(F.mcEventBlockingSync))
    assert mc.mcEventQuery(e) == (S,)                      # never recorded: complete
    assert mc.mcEventSynchronize(e) == (S,)
    gate = Gate().hold(s)
    assert mc.mcEventRecord(e, s) == (S,)
    assert mc.mcEventQuery(e) == (E.mcErrorNotReady,)
    gate.release()
    assert mc.mcEventSynchronize(e) == (S,)
    assert mc.mcEventQuery(e) == (S,)
    assert mc.mcEventRecord(e, "s") == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcEventRecord("e", s) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcEventQuery(None) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcEventSynchronize(3) == (E.mcErrorInvalidResourceHandle,)


def test_record_with_flags(legacy_mode):
    e = _event()
    assert mc.mcEventRecordWithFlags(e, 0, 0) == (S,)
    assert mc.mcEventRecordWithFlags(e) == (S,)
    assert mc.mcEventRecordWithFlags(e, 0, 1) == (E.mcErrorInvalidValue,)   # external: capture only
    assert mc.mcEventRecordWithFlags(e, 0, 4) == (E.mcErrorInvalidValue,)


def test_destroy_while_recording(legacy_mode):
    _, s = mc.mcStreamCreate()
    e = _event()
    gate = Gate().hold(s)
    assert mc.mcEventRecord(e, s) == (S,)
    assert mc.mcEventDestroy(e) == (S,)                    # returns at once
    assert mc.mcEventDestroy(e) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcEventQuery(e) == (E.mcErrorInvalidResourceHandle,)
    gate.release()
    assert mc.mcDeviceSynchronize() == (S,)                # its late TIMESTAMP did not fault


def test_elapsed_time_follows_the_cost_model(legacy_mode):
    k = fake_kernels()
    a, b, c = _event(), _event(), _event()
    _, d = mc.mcMalloc(1 << 16)
    assert mc.mcEventRecord(a, 0) == (S,)
    assert mc.mcMemsetAsync(d, 1, 1 << 16, 0) == (S,)
    assert mc.mcEventRecord(b, 0) == (S,)
    store(k, d, 5, 0)
    assert mc.mcEventRecord(c, 0) == (S,)
    assert mc.mcEventSynchronize(c) == (S,)
    memset = timing.COMMAND_CYCLES + timing.MEMSET_CYCLES + (1 << 16) // timing.MEMSET_BYTES_PER_CYCLE
    launch = timing.COMMAND_CYCLES + timing.LAUNCH_CYCLES   # the fake kernel itself counts no cycles
    assert mc.mcEventElapsedTime(a, b) == (S, memset / _khz())
    assert mc.mcEventElapsedTime(b, c) == (S, launch / _khz())
    assert mc.mcEventElapsedTime(c, a) == (S, -(memset + launch) / _khz())
    assert mc.mcEventElapsedTimeWithFlags(a, c, 0) == (S, (memset + launch) / _khz())
    assert mc.mcEventElapsedTime(a, a) == (S, 0.0)


def test_elapsed_time_is_repeatable_and_monotonic(legacy_mode):
    _, d = mc.mcMalloc(4096)
    times, starts = [], []
    for _ in range(3):
        a, b = _event(), _event()
        mc.mcEventRecord(a, 0)
        mc.mcMemcpyAsync(d + 2048, d, 2048, mc.mcMemcpyKind.mcMemcpyDeviceToDevice, 0)
        mc.mcEventRecord(b, 0)
        mc.mcEventSynchronize(b)
        times.append(mc.mcEventElapsedTime(a, b)[1])
        starts.append(a)
    assert all(mc.mcEventElapsedTime(x, y)[1] > 0 for x, y in zip(starts, starts[1:]))
    expected = (timing.COMMAND_CYCLES + timing.COPY_CYCLES + 2048 // timing.COPY_BYTES_PER_CYCLE) / _khz()
    assert times == [expected] * 3


def test_elapsed_time_errors(legacy_mode):
    _, s = mc.mcStreamCreate()
    a, b = _event(), _event()
    untimed = _event(int(F.mcEventDisableTiming))
    assert mc.mcEventElapsedTime(a, b) == (E.mcErrorInvalidResourceHandle, None)   # never recorded
    mc.mcEventRecord(a, 0)
    mc.mcEventRecord(untimed, 0)
    assert mc.mcEventElapsedTime(a, untimed) == (E.mcErrorInvalidResourceHandle, None)
    gate = Gate().hold(s)
    mc.mcEventRecord(b, s)
    assert mc.mcEventElapsedTime(a, b) == (E.mcErrorNotReady, None)
    gate.release()
    assert wait_until(lambda: mc.mcEventQuery(b) == (S,))
    assert mc.mcEventElapsedTime(a, b)[0] == S
    assert mc.mcEventElapsedTimeWithFlags(a, b, 2) == (E.mcErrorInvalidValue, None)
    assert mc.mcEventElapsedTime(a, "b") == (E.mcErrorInvalidResourceHandle, None)
    mc.mcEventDestroy(b)
    assert mc.mcEventElapsedTime(a, b) == (E.mcErrorInvalidResourceHandle, None)


def test_elapsed_time_between_devices_needs_the_inter_device_flag(legacy_mode):
    a = _event()
    _, d0 = mc.mcMalloc(256)
    mc.mcEventRecord(a, 0)
    mc.mcSetDevice(1)
    b = _event()
    _, d1 = mc.mcMalloc(256)
    mc.mcMemsetAsync(d1, 0, 256, 0)
    mc.mcEventRecord(b, 0)
    mc.mcEventSynchronize(b)
    mc.mcSetDevice(0)
    mc.mcEventSynchronize(a)
    assert mc.mcEventElapsedTime(a, b) == (E.mcErrorInvalidResourceHandle, None)
    err, ms = mc.mcEventElapsedTimeWithFlags(a, b, int(mc.mcEventElapsedTimeFlags.mcEventElapsedTimeInterDevice))
    assert err == S and ms == (b.timestamp_cycles() - a.timestamp_cycles()) / _khz() and ms > 0


def test_sticky_error_is_reported_by_event_calls(legacy_mode):
    k = fake_kernels()
    a = _event()
    assert mc.mcLaunchKernel(k["boom"], 1, 1, [], 0, 0) == (S,)
    assert mc.mcEventRecord(a, 0) == (S,)
    assert mc.mcEventSynchronize(a) == (E.mcErrorIllegalAddress,)
    assert mc.mcEventElapsedTime(a, a) == (E.mcErrorIllegalAddress, None)
