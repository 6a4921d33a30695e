"""Streams and events of the Pythonic API: stream= on copies and launches
(numba's conventions), record/query/synchronize/wait, and both clocks:
the simulated device clock (deterministic work count) and host wall time."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg

SPIN = r'''
extern "C" __global__ void spin(int n, int rounds, float *x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int r = 0; r < rounds; ++r) v = v * 0.5f + 1.0f;
    x[i] = v;
}'''


@pytest.fixture(scope="module")
def spin():
    return gpudbg.compile(SPIN).spin


def test_stream_copies_and_launches_in_order(spin):
    with gpudbg.Stream() as s:
        x = gpudbg.to_device(np.zeros(1024, np.float32), stream=s)
        spin[4, 256, s](1024, 3, x)                    # numba's kernel[grid, block, stream]
        spin[4, 256](1024, 1, x, stream=s)             # and kernel[grid, block](..., stream=)
        out = np.empty(1024, np.float32)
        x.copy_to_host(out, stream=s)
        s.synchronize()
    np.testing.assert_array_equal(out, np.full(1024, 1.875, np.float32))
    with pytest.raises(TypeError, match="stream is given twice"):
        spin[1, 1, gpudbg.Stream()](1, 1, x, stream=gpudbg.Stream())


def test_event_record_query_wait(spin):
    a, b = gpudbg.Stream(non_blocking=True), gpudbg.Stream(non_blocking=True)
    x = gpudbg.zeros(4096, np.float32)
    start = gpudbg.Event()
    start.record(a)
    spin[16, 256, a](4096, 50, x)
    done = a.record()                                  # Stream.record makes an Event
    b.wait_event(done)                                 # b's next work waits on the device
    y = gpudbg.device_array(4096, np.float32)
    y.copy_to_device(x, stream=b)
    b.synchronize()
    assert done.query() and a.query()
    np.testing.assert_allclose(y.to_host(), x.to_host())


def test_device_clock_counts_work_deterministically(spin):
    x = gpudbg.zeros(2048, np.float32)
    s = gpudbg.Stream()
    times = []
    for rounds in (10, 10, 200):
        e0, e1 = gpudbg.Event().record(s), None
        spin[8, 256, s](2048, rounds, x)
        e1 = gpudbg.Event().record(s)
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    assert times[0] == times[1]                        # the same work, the same simulated time
    assert times[2] > times[0] > 0                     # more instructions, more cycles


def test_host_clock_measures_the_simulators_wall_time(spin):
    x = gpudbg.zeros(2048, np.float32)
    s = gpudbg.Stream()
    e0 = gpudbg.Event().record(s)
    spin[8, 256, s](2048, 400, x)
    e1 = gpudbg.Event().record(s)
    e1.synchronize()
    host_ms = e0.elapsed_time(e1, clock="host")
    device_ms = e0.elapsed_time(e1)
    assert host_ms > 0 and device_ms > 0
    assert host_ms != device_ms                        # two different clocks
    with pytest.raises(ValueError, match="clock must be one of"):
        e0.elapsed_time(e1, clock="wall")
    untimed = gpudbg.Event(timing=False).record(s)
    with pytest.raises(ValueError, match="timing=False"):
        untimed.elapsed_time(e1, clock="host")
    with pytest.raises(gpudbg.GPUError):
        untimed.elapsed_time(e1)
    with pytest.raises(ValueError, match="never recorded"):
        gpudbg.Event().elapsed_time(e1, clock="host")


def test_bad_stream_arguments_are_named():
    with pytest.raises(TypeError, match="stream must be a gpudbg.Stream"):
        gpudbg.to_device(np.ones(2), stream="s")
    s = gpudbg.Stream()
    s.destroy()
    with pytest.raises(ValueError, match="destroyed"):
        gpudbg.zeros(2).copy_to_host(stream=s)
