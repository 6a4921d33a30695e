"""Shared tools for the stream, event, capture and stream-memory tests: a
pinned host flag that holds a stream on the GPU (mcStreamWaitValue32) until
the test releases it, a fake-executor engine in either default-stream mode,
and bounded waits so a wrong ordering fails instead of hanging."""
from __future__ import annotations

import struct
import time

import numpy as np
import pytest

from gpudbg.driver.engine import get_engine, reset_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg_fakes import KERNELS, FakeExecutor, fake_module

S = E.mcSuccess
GEQ = int(mc.mcStreamWaitValueFlags.mcStreamWaitValueGeq)
SETTLE_S = 0.05        # time given to the device thread before asserting "still blocked"


class Gate:
    """A pinned u32 flag; hold(stream) makes the stream wait until release()."""

    def __init__(self) -> None:
        err, self.ptr = mc.mcMallocHost(8)
        assert err == S
        self.view = mc.host_view(self.ptr, 4, np.uint32)
        self.view[0] = 0

    def hold(self, stream) -> "Gate":
        assert mc.mcStreamWaitValue32(stream, self.ptr, 1, GEQ) == (S,)
        return self

    def release(self) -> None:
        self.view[0] = 1


def engine(mode: str = "legacy", devices: int = 2) -> FakeExecutor:
    ex = FakeExecutor()
    reset_engine(num_devices=devices, executor=ex, default_stream=mode)
    mc.mcGetLastError()
    return ex


def fake_kernels() -> dict:
    return dict(fake_module(get_engine().current_context(), *KERNELS()).functions)


def store(k: dict, ptr: int, value: int, stream=None) -> None:
    assert mc.mcLaunchKernel(k["store"], 1, 1, [ptr, value], 0, stream) == (S,)


def stored(ex: FakeExecutor) -> list[int]:
    """Values of the store kernels that ran, in execution order."""
    return [struct.unpack_from("<QI", c[4])[1] for c in ex.calls if c[0] == "store"]


def wait_until(pred, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.002)
    return pred()


def ready(stream) -> bool:
    return mc.mcStreamQuery(stream)[0] == S


def still_blocked(stream) -> bool:
    time.sleep(SETTLE_S)
    return mc.mcStreamQuery(stream)[0] == E.mcErrorNotReady


@pytest.fixture
def legacy_mode():
    ex = engine("legacy")
    yield ex
    ex.gate.set()
    reset_engine()
    mc.mcGetLastError()


@pytest.fixture
def per_thread_mode():
    ex = engine("per-thread")
    yield ex
    ex.gate.set()
    reset_engine()
    mc.mcGetLastError()
