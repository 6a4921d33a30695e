import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpudbg.driver.engine import reset_engine  # noqa: E402


@pytest.fixture
def fresh():
    """A fresh, uninitialized engine with two simulated devices."""
    engine = reset_engine(num_devices=2)
    yield engine
    reset_engine()


@pytest.fixture
def ctx(fresh):
    """cuInit done and device 0's primary context retained and current;
    yields its CUcontext handle."""
    from cudrv_helpers import check, out_u64
    from gpudbg.cuda_driver import context, device
    check(device.cuInit(0))
    h = out_u64()
    check(context.cuDevicePrimaryCtxRetain(h.addr, 0))
    check(context.cuCtxSetCurrent(h.value))
    yield h.value
