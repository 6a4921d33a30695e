"""The hang watchdog: a fence that can never retire is broken with
mcErrorLaunchTimeout; waits that are slow but progressing are left alone."""
import threading

import pytest

from gpudbg.driver import commands as C
from gpudbg.driver import watchdog
from gpudbg.driver.channel import Channel
from gpudbg.driver.status import CUresult
from gpudbg.sim import registers as R
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.memory.spaces import AllocationKind
from gpudbg_fakes import make_kernel


class Slow:
    """An executor whose launches last until `gate` opens."""

    def __init__(self):
        self.gate = threading.Event()

    def __call__(self, *args):
        assert self.gate.wait(10), "test gate never opened"


@pytest.fixture
def gpu(monkeypatch):
    monkeypatch.setenv(watchdog.ENV_TIMEOUT, "0.2")
    monkeypatch.delenv("GPUDBG_DEVCOREDUMP_DIR", raising=False)
    g = SimGPU(executor=Slow())
    faults = []
    g.fault_listeners.append(lambda group, error: faults.append((group, error)))
    g.faults = faults
    yield g
    g.executor.gate.set()
    g.shutdown()


def flag(gpu):
    a = gpu.memory.alloc(8, AllocationKind.DEVICE)
    a.data[:] = 0
    return a


def wait_value(address, value=1):
    return C.make(C.Opcode.WAIT_VALUE, address=address, value=value, flags=0, width=4)


@pytest.mark.parametrize("raw,expected", [("", 60.0), ("1.5", 1.5), ("0", None), ("off", None),
                                          ("inf", None), (" 2 ", 2.0)])
def test_timeout_setting(monkeypatch, raw, expected):
    monkeypatch.setenv(watchdog.ENV_TIMEOUT, raw)
    assert watchdog.hang_timeout() == expected


@pytest.mark.parametrize("raw", ["soon", "-1", "nan"])
def test_bad_timeout_setting_is_a_clear_error(monkeypatch, raw):
    monkeypatch.setenv(watchdog.ENV_TIMEOUT, raw)
    with pytest.raises(watchdog.HangTimeoutError, match=watchdog.ENV_TIMEOUT):
        watchdog.hang_timeout()


def test_a_value_nobody_writes_is_a_hang(gpu):
    f = flag(gpu)
    ch = Channel(gpu, 4)
    fence = ch.push([wait_value(f.base)])
    ch.wait(fence)                      # returns: the watchdog broke the hang
    assert ch.error.status == CUresult.CUDA_ERROR_LAUNCH_TIMEOUT
    msg = ch.error.message
    assert f"fence {fence} of channel {ch.name} (ring 0)" in msg
    assert f"WAIT_VALUE at ring word 0 (iova 0x{ch.ring.base:x})" in msg
    assert f"the 4-byte word at 0x{f.base:x} to be >= 1 (it holds 0)" in msg
    assert [g for g, _e in gpu.faults] == [4]          # the context (group) is told: sticky error
    assert R.read(gpu, "HANG_KIND") == R.HangCode.FENCE_TIMEOUT
    assert R.read(gpu, "FAULT_RING") == 0
    assert R.read(gpu, "FAULT_ADDR_LO") == f.base & R.U32


def test_a_chain_of_waits_names_the_root(gpu):
    f = flag(gpu)
    a, b = Channel(gpu, 1), Channel(gpu, 2)
    fa = a.push([wait_value(f.base)])
    b.push([C.make(C.Opcode.SEM_ACQUIRE, address=a.semaphore.address, value=fa)])
    b.wait()
    msg = b.error.message
    assert "SEM_ACQUIRE at ring word 0" in msg and f"the fence of channel {a.name}" in msg
    assert f"channel {a.name} (ring 0) is blocked at WAIT_VALUE" in msg
    assert b.error.status == CUresult.CUDA_ERROR_LAUNCH_TIMEOUT
    assert a.error is None           # only the waiter's group is stopped
    f.data[0] = 1
    with gpu.cv:
        gpu.cv.notify_all()
    a.wait()
    assert a.error is None


def test_a_long_kernel_is_not_a_hang(gpu):
    ch = Channel(gpu, 1)
    k = make_kernel("long")
    gpu.register_function(k)
    d = gpu.memory.alloc(C.DESCRIPTOR_BYTES, AllocationKind.LAUNCH)
    d.data[:] = list(C.encode_descriptor(
        code_address=k.code_address, grid_x=1, grid_y=1, grid_z=1, block_x=1, block_y=1, block_z=1,
        shared_bytes=0, param_address=0, param_size=0, grid_id=1, host_tid=0))
    ch.push([C.make(C.Opcode.LAUNCH, descriptor=d.base)])
    threading.Timer(0.6, gpu.executor.gate.set).start()
    ch.wait()
    assert ch.error is None and gpu.faults == []


def test_a_value_released_in_time_is_not_a_hang(gpu):
    f = flag(gpu)
    ch = Channel(gpu, 1)
    ch.push([wait_value(f.base)])

    def release():
        f.data[0] = 1           # a direct store: the front end's value poll sees it
    threading.Timer(0.1, release).start()
    ch.wait()
    assert ch.error is None and gpu.faults == []


def test_disabled_watchdog_waits_with_a_timeout(gpu, monkeypatch):
    monkeypatch.setenv(watchdog.ENV_TIMEOUT, "off")
    f = flag(gpu)
    ch = Channel(gpu, 1)
    fence = ch.push([wait_value(f.base)])
    assert ch.semaphore.wait(fence, timeout=0.4) is False      # explicit timeouts are not watched
    assert ch.error is None
    f.data[0] = 1
    ch.wait(fence)
    assert ch.error is None
