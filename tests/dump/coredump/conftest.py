"""A faulting kernel leaves its context with a sticky error; reset device 0
after each test here so the next one starts on a fresh context."""
import pytest


@pytest.fixture(autouse=True)
def _fresh_device():
    yield
    import gpudbg
    gpudbg.Device(0).reset()
