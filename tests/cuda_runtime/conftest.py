import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpudbg.driver.engine import reset_engine  # noqa: E402


@pytest.fixture
def fresh():
    """A fresh, uninitialized engine with two simulated devices; the
    calling thread's last error cleared."""
    from gpudbg.runtime import mc
    engine = reset_engine(num_devices=2)
    mc.mcGetLastError()
    yield engine
    reset_engine()


@pytest.fixture
def program(fresh):
    """kernels.fatbin registered as nvcc's static constructors do."""
    from rt_helpers import Program
    p = Program()
    yield p
    p.unregister()
