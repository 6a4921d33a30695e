import threading

import numpy as np
import pytest

from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.sim.faults import CUDBGException

S = E.mcSuccess


def test_error_names_and_strings():
    assert mc.mcGetErrorName(E.mcErrorInvalidValue) == (S, "mcErrorInvalidValue")
    assert mc.mcGetErrorName(101) == (S, "mcErrorInvalidDevice")
    assert mc.mcGetErrorString(E.mcErrorIllegalAddress) == (S, "an illegal memory access was encountered")
    assert mc.mcGetErrorName(4242) == (S, "unrecognized error code")
    assert mc.mcGetErrorString(-3) == (S, "unrecognized error code")
    assert mc.mcGetErrorName("x") == (S, "unrecognized error code")
    # CUDA runtime numbers; seed synonyms alias them
    assert (E.mcErrorInitializationError, E.mcErrorLaunchFailure, E.mcErrorNotReady) == (3, 719, 600)
    assert E.mcErrorOutOfMemory is E.mcErrorMemoryAllocation and E.mcErrorNotFound == 500
    for code in E:
        assert mc.mcGetErrorString(code)[1] != "unrecognized error code"


def test_last_error_is_per_thread(fake):
    assert mc.mcSetDevice(7) == (E.mcErrorInvalidDevice,)
    assert "not in 0..1" in mc.last_error_message()
    seen = {}

    def other():
        seen["before"] = mc.mcPeekAtLastError()
        mc.mcMalloc(-1)
        seen["after"] = mc.mcGetLastError()
        seen["cleared"] = mc.mcGetLastError()

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == {"before": (S,), "after": (E.mcErrorInvalidValue,), "cleared": (S,)}
    assert mc.mcPeekAtLastError() == (E.mcErrorInvalidDevice,)
    assert mc.mcPeekAtLastError() == (E.mcErrorInvalidDevice,)
    assert mc.mcGetLastError() == (E.mcErrorInvalidDevice,)
    assert mc.mcGetLastError() == (S,)


@pytest.mark.parametrize("kind,code", [
    (CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS, E.mcErrorIllegalAddress),
    (CUDBGException.CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS, E.mcErrorMisalignedAddress),
    (CUDBGException.CUDBG_EXCEPTION_WARP_ASSERT, E.mcErrorAssert),
])
def test_sticky_error_after_fault(fake, kernels, kind, code):
    fake.fault_kind = kind
    _, buf = mc.mcMalloc(16)
    _, s = mc.mcStreamCreate()
    assert mc.mcModuleLaunchKernel(kernels["boom"], 1, 1, 1, 32, 1, 1, 0, s, [], None) == (S,)
    mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, None, [buf, 1], None)  # discarded
    assert mc.mcDeviceSynchronize() == (code,)
    assert mc.fault_report().kernel == "boom" and mc.fault_report().kind is kind
    # sticky: every later call on the context returns it
    assert mc.mcDeviceSynchronize() == (code,)
    assert mc.mcStreamSynchronize(s) == (code,)
    assert mc.mcMalloc(16) == (code, None)
    assert mc.mcMemcpy(np.zeros(4, np.uint8), buf, 4, 2) == (code,)
    assert mc.mcGetLastError() == (code,)
    assert [c[0] for c in fake.calls] == ["boom"]
    # calls that do not touch the context still work
    assert mc.mcGetDeviceCount() == (S, 2)
    # reset clears it
    assert mc.mcDeviceReset() == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert mc.fault_report() is None


def test_hang_and_internal_error_codes(fake, kernels):
    mc.mcModuleLaunchKernel(kernels["hang"], 1, 1, 1, 1, 1, 1, 0, None, [], None)
    assert mc.mcDeviceSynchronize() == (E.mcErrorLaunchTimeout,)
    mc.mcDeviceReset()
    from gpudbg.driver.engine import get_engine
    from gpudbg_fakes import KERNELS, fake_module
    ks = fake_module(get_engine().current_context(), *KERNELS()).functions
    mc.mcModuleLaunchKernel(ks["crash"], 1, 1, 1, 1, 1, 1, 0, None, [], None)
    assert mc.mcDeviceSynchronize() == (E.mcErrorLaunchFailure,)
    assert "simulator bug" in mc.last_error_message()


def test_fault_on_other_device_does_not_stick_here(fake, kernels):
    mc.mcModuleLaunchKernel(kernels["boom"], 1, 1, 1, 1, 1, 1, 0, None, [], None)
    assert mc.mcSetDevice(1) == (S,)
    assert mc.mcMalloc(8)[0] == S
    assert mc.mcDeviceSynchronize() == (S,)
    mc.mcSetDevice(0)
    assert mc.mcDeviceSynchronize() == (E.mcErrorIllegalAddress,)


def test_printf_is_flushed_at_sync_points(fake, kernels, capsys):
    mc.mcModuleLaunchKernel(kernels["hello"], 1, 1, 1, 1, 1, 1, 0, None, [], None)
    from gpudbg.driver.engine import get_engine
    gpu = get_engine().current_context().gpu
    with gpu.cv:
        gpu.cv.wait_for(lambda: gpu.printf_buffer, 5)
    assert capsys.readouterr().out == ""          # not before a synchronization point
    assert mc.mcDeviceSynchronize() == (S,)
    out = capsys.readouterr().out
    assert out.startswith("hello from grid ") and out.endswith("second line\n")
    mc.mcModuleLaunchKernel(kernels["hello"], 1, 1, 1, 1, 1, 1, 0, None, [], None)
    _, d = mc.mcMalloc(4)
    mc.mcMemcpy(np.zeros(4, np.uint8), d, 4, 2)      # a blocking memcpy is one too
    assert "second line" in capsys.readouterr().out
