"""The kernel watch (sim/kernel_watch.py): a kernel that never finishes is
stopped by GPUDBG_HANG_TIMEOUT within its timeout, or by cancellation, with
a report of where each warp is (pc, source line, how often it looped
there), mcErrorLaunchTimeout and a devcoredump; the instruction budget is
off unless set; bad settings are an error, not a traceback."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import gpudbg
from gpudbg.dump.devcoredump import capture, parse_file
from gpudbg.sim import kernel_watch, registers as R, schedule
from gpudbg.sim.executor import instruction_budget
from gpudbg.sim.faults import HangKind
from gpudbg.sim.gpu import SimGPU

SPIN = r"""
extern "C" __global__ void spin(int *flag, int *out) {
    int t = threadIdx.x;
    while (atomicAdd(flag, 0) == 0) { }
    out[t] = 1;
}
"""
SPIN_LINE = 4

BARRIER_SPIN = r"""
extern "C" __global__ void wait_for_warp0(int *flag) {
    if (threadIdx.x < 32) {
        while (atomicAdd(flag, 0) == 0) { }
    }
    __syncthreads();
}
"""

# Correct programs that spin on flags other warps set: they must finish
# (sim/spin.py backs spinning warps off, in turn), not time out.
HANDSHAKES = r"""
extern "C" __global__ void blocks(int *f) {
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) atomicExch(&f[0], 1);
        while (atomicAdd(&f[1], 0) == 0) { }
        if (threadIdx.x == 0) atomicExch(&f[2], 1);
    } else {
        while (atomicAdd(&f[0], 0) == 0) { }
        if (threadIdx.x == 0) atomicExch(&f[1], 1);
        while (atomicAdd(&f[2], 0) == 0) { }
    }
}
extern "C" __global__ void warps(int *f, int *out) {
    if (threadIdx.x / 32 != 0) {
        while (atomicAdd(&f[0], 0) == 0) { }
        out[threadIdx.x] = 1;
    } else {
        int acc = 0;
        for (int i = 0; i < 100; i++) acc += i;
        out[threadIdx.x] = acc;
        if (threadIdx.x == 0) atomicExch(&f[0], 1);
    }
}
"""


@pytest.fixture
def fresh_device():
    gpudbg.Device(0).reset()      # no sticky error left by an earlier test
    yield
    kernel_watch.clear()
    gpudbg.Device(0).reset()


def launch_spin(grid=2, block=64, name="spin_watch.cu"):
    m = gpudbg.compile(SPIN, name=name)
    flag, out = gpudbg.zeros(1, np.int32), gpudbg.zeros(block, np.int32)
    m.spin[grid, block](flag, out)
    return flag, out


def test_spinning_kernel_is_stopped_within_its_timeout(fresh_device, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "1")
    monkeypatch.setenv(capture.ENV_DIR, str(tmp_path / "dumps"))
    monkeypatch.delenv("GPUDBG_COREDUMP_ON_EXCEPTION", raising=False)
    try:
        start = time.monotonic()
        launch_spin()
        with pytest.raises(gpudbg.KernelFaultError) as ei:
            gpudbg.synchronize()
        waited = time.monotonic() - start
    finally:
        capture.disable()
    assert 1.0 <= waited < 6.0
    e = ei.value
    assert e.code == gpudbg.mcError_t.mcErrorLaunchTimeout
    r = e.report
    assert r.hang is HangKind.KERNEL_TIMEOUT and r.title == "Kernel timeout"
    assert r.source_file == "spin_watch.cu" and r.source_line == SPIN_LINE
    assert "longer than GPUDBG_HANG_TIMEOUT=1 s; 128 thread(s) in 4 warp(s) had not finished" in r.message
    (line,) = r.details["warps"]
    assert line.startswith(f"pc 0x{r.pc:x} at spin_watch.cu:{SPIN_LINE}: 4 warp(s), 128 thread(s) of "
                           f"blocks (0,0,0), (1,0,0), looped there ")
    loops = r.details["where"][0]["steps"]
    assert loops > 10 and line.endswith(f"looped there {loops} time(s)")
    dumps = sorted((tmp_path / "dumps").glob("devcd-*.devcore"))
    assert len(dumps) == 1 and r.details["devcoredump"] == str(dumps[0])
    dump = parse_file(dumps[0])
    assert dump.register(R.offset_of("HANG_KIND")) == R.HangCode.KERNEL_TIMEOUT


def test_report_names_warps_parked_at_a_barrier(fresh_device, monkeypatch):
    # lowest-pc would never run warps 1 and 2 past the loop warp 0 spins in
    # (a lower pc): under the random schedule they reach the barrier
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "0.5")
    m = gpudbg.compile(BARRIER_SPIN, name="barrier_spin.cu")
    schedule.configure("random", 1)
    try:
        m.wait_for_warp0[1, 96](gpudbg.zeros(1, np.int32))
        with pytest.raises(gpudbg.KernelFaultError) as ei:
            gpudbg.synchronize()
    finally:
        schedule.reset()
    lines = ei.value.report.details["warps"]
    assert len(lines) == 2
    assert ":4: 1 warp(s), 32 thread(s) of block (0,0,0), looped there " in lines[0]
    assert ":6: 2 warp(s), 64 thread(s) of block (0,0,0), waiting at barrier 0" in lines[1]


def test_cancel_stops_a_running_kernel(fresh_device, monkeypatch):
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "off")
    launch_spin(1, 32, "spin_cancel.cu")
    timer = threading.Timer(0.3, kernel_watch.cancel, ("interrupted by the test",))
    timer.start()
    try:
        with pytest.raises(gpudbg.KernelFaultError) as ei:
            gpudbg.synchronize()
    finally:
        timer.cancel()
    r = ei.value.report
    assert r.hang is HangKind.INTERRUPTED and r.title == "Kernel interrupted"
    assert r.message.startswith("kernel spin was interrupted (interrupted by the test) after ")
    assert r.source_line == SPIN_LINE
    assert ei.value.code == gpudbg.mcError_t.mcErrorLaunchTimeout


def test_a_kernel_that_finishes_is_not_stopped(fresh_device, monkeypatch):
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "30")
    m = gpudbg.compile(SPIN, name="spin_released.cu")
    flag, out = gpudbg.to_device(np.ones(1, np.int32)), gpudbg.zeros(64, np.int32)
    m.spin[1, 64](flag, out)
    assert (out.to_host() == 1).all()


@pytest.mark.parametrize("policy", ["lowest-pc", "random"])
def test_kernels_waiting_on_each_others_flags_finish(fresh_device, monkeypatch, policy):
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "30")
    m = gpudbg.compile(HANDSHAKES, name="handshakes.cu")
    schedule.configure(policy, 5)
    try:
        flags = gpudbg.zeros(3, np.int32)
        m.blocks[2, 64](flags)
        assert flags.to_host().tolist() == [1, 1, 1]
        flags, out = gpudbg.zeros(1, np.int32), gpudbg.zeros(128, np.int32)
        m.warps[1, 128](flags, out)
        assert out.to_host().tolist() == [4950] * 32 + [1] * 96
    finally:
        schedule.reset()


def test_no_default_budget_but_an_explicit_one_still_stops(fresh_device, monkeypatch):
    monkeypatch.delenv("GPUDBG_INSTRUCTION_BUDGET", raising=False)
    assert instruction_budget(SimGPU()) is None
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "off")
    monkeypatch.setenv("GPUDBG_INSTRUCTION_BUDGET", "20000")
    assert instruction_budget(SimGPU()) == 20000
    launch_spin(1, 32, "spin_budget.cu")
    with pytest.raises(gpudbg.KernelFaultError) as ei:
        gpudbg.synchronize()
    assert ei.value.report.hang is HangKind.INSTRUCTION_BUDGET


@pytest.mark.parametrize("name,value,text", [
    ("GPUDBG_INSTRUCTION_BUDGET", "0", "GPUDBG_INSTRUCTION_BUDGET='0' must be a positive number"),
    ("GPUDBG_INSTRUCTION_BUDGET", "-1", "GPUDBG_INSTRUCTION_BUDGET='-1' must be a positive number"),
    ("GPUDBG_INSTRUCTION_BUDGET", "lots", "GPUDBG_INSTRUCTION_BUDGET='lots' is not a whole number"),
    ("GPUDBG_INSTRUCTION_BUDGET", "1.5", "GPUDBG_INSTRUCTION_BUDGET='1.5' is not a whole number"),
    ("GPUDBG_HANG_TIMEOUT", "-1", "GPUDBG_HANG_TIMEOUT='-1' must be a positive number of seconds"),
    ("GPUDBG_HANG_TIMEOUT", "nan", "GPUDBG_HANG_TIMEOUT='nan' must be a positive number of seconds"),
    ("GPUDBG_HANG_TIMEOUT", "soon", "GPUDBG_HANG_TIMEOUT='soon' is not a number of seconds"),
])
def test_bad_settings_refuse_the_launch_with_a_clear_error(fresh_device, monkeypatch, name, value, text):
    monkeypatch.setenv(name, value)
    with pytest.raises(kernel_watch.LaunchSettingError, match=text):
        kernel_watch.check_environment()
    m = gpudbg.compile(SPIN, name="spin_refused.cu")
    flag = gpudbg.to_device(np.ones(1, np.int32))
    out = gpudbg.zeros(32, np.int32)
    with pytest.raises(gpudbg.GPUError) as ei:     # refused when enqueued (issue 14): never a sticky error
        m.spin[1, 32](flag, out)
    assert not isinstance(ei.value, gpudbg.KernelFaultError)
    message = str(ei.value)
    assert text in message and "refused" in message
    assert "Traceback" not in message and "internal simulator error" not in message
    monkeypatch.delenv(name)
    m.spin[1, 32](flag, out)                       # the context still works once the setting is fixed
    gpudbg.synchronize()


def test_budget_values_that_are_numbers(monkeypatch):
    for raw, value in (("50000", 50000), ("1e6", 10**6), ("0x100", 256), ("1_000", 1000)):
        monkeypatch.setenv("GPUDBG_INSTRUCTION_BUDGET", raw)
        assert kernel_watch.budget_from_environment() == value
