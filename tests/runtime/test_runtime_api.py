"""Every mc function: one success and one failure with its exact code."""
import numpy as np
import pytest

from gpudbg.driver.engine import reset_engine
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.runtime.types import mcDeviceAttribute_t as A, mcDeviceProp

S = E.mcSuccess


def test_init_and_versions(fake):
    assert mc.mcInit(0) == (S,)
    assert mc.mcInit(1) == (E.mcErrorInvalidValue,)
    assert mc.mcDriverGetVersion() == (S, 12080)
    assert mc.mcRuntimeGetVersion() == (S, 12080)


def test_devices(fake):
    assert mc.mcGetDeviceCount() == (S, 2)
    assert mc.mcGetDevice() == (S, 0)
    assert mc.mcSetDevice(1) == (S,)
    assert mc.mcGetDevice() == (S, 1)
    assert mc.mcSetDevice(2) == (E.mcErrorInvalidDevice,)
    assert mc.mcSetDevice(-1) == (E.mcErrorInvalidDevice,)
    err, prop = mc.mcGetDeviceProperties(0)
    assert err == S and isinstance(prop, mcDeviceProp)
    assert (prop.multiProcessorCount, prop.major, prop.minor, prop.warpSize) == (132, 9, 0, 32)
    assert prop.maxThreadsDim == (1024, 1024, 64) and prop.sharedMemPerBlockOptin == 227 * 1024
    assert mc.mcGetDeviceProperties(5) == (E.mcErrorInvalidDevice, None)
    assert mc.mcDeviceGetAttribute(A.mcDevAttrMultiProcessorCount, 0) == (S, 132)
    assert mc.mcDeviceGetAttribute(75, 1) == (S, 9)
    assert mc.mcDeviceGetAttribute(A.mcDevAttrMaxSharedMemoryPerBlock, 0) == (S, prop.sharedMemPerBlock)
    assert mc.mcDeviceGetAttribute(9999, 0) == (E.mcErrorInvalidValue, None)
    assert mc.mcDeviceGetAttribute(A.mcDevAttrWarpSize, 3) == (E.mcErrorInvalidDevice, None)
    assert mc.mcDeviceGetPCIBusId(1) == (S, "0000:1c:00.0")
    assert mc.mcDeviceGetPCIBusId(9) == (E.mcErrorInvalidDevice, None)
    e0, u0 = mc.mcDeviceGetUuid(0)
    assert e0 == S and u0 != mc.mcDeviceGetUuid(1)[1]
    assert mc.mcDeviceTotalMem(0) == (S, 80 * 2**30)
    assert mc.mcDeviceTotalMem("0") == (E.mcErrorInvalidDevice, None)


def test_every_attribute_has_a_value(fake):
    for attr in A:
        err, v = mc.mcDeviceGetAttribute(attr, 0)
        assert err == S and isinstance(v, int), attr


def test_no_devices():
    reset_engine(num_devices=0)
    try:
        assert mc.mcGetDeviceCount() == (E.mcErrorNoDevice, None)
        assert mc.mcMalloc(4) == (E.mcErrorNoDevice, None)
    finally:
        reset_engine()
        mc.mcGetLastError()


def test_allocation_functions(fake):
    err, d = mc.mcMalloc(100)
    assert err == S and d % 256 == 0
    assert mc.mcMalloc(0) == (S, 0)
    assert mc.mcMalloc(-5) == (E.mcErrorInvalidValue, None)
    assert mc.mcMalloc(1 << 50) == (E.mcErrorMemoryAllocation, None)
    _, h = mc.mcMallocHost(64)
    _, h2 = mc.mcHostAlloc(64, 0x1)
    _, mg = mc.mcMallocManaged(64)
    assert mc.mcHostAlloc(64, 0x80) == (E.mcErrorInvalidValue, None)
    assert mc.mcMallocHost(64, 0x10) == (E.mcErrorInvalidValue, None)
    assert mc.mcMallocManaged(64, 4) == (E.mcErrorInvalidValue, None)
    assert mc.mcHostGetDevicePointer(h, 0) == (S, h)
    assert mc.mcHostGetDevicePointer(d, 0) == (E.mcErrorInvalidValue, None)
    free, total = mc.mcMemGetInfo()[1:]
    assert total == 80 * 2**30 and free < total
    assert mc.mcFree(h) == (E.mcErrorInvalidValue,)           # pinned memory via mcFree
    assert "mcFreeHost" in mc.last_error_message()
    assert mc.mcFreeHost(d) == (E.mcErrorInvalidValue,)
    assert mc.mcFree(d + 4) == (E.mcErrorInvalidValue,)       # interior pointer
    assert mc.mcFree(d) == (S,)
    assert mc.mcFree(d) == (E.mcErrorInvalidValue,)           # double free
    assert "double free" in mc.last_error_message()
    assert mc.mcFree(0) == (S,)
    assert mc.mcFree(mg) == (S,)
    assert mc.mcFreeHost(h) == (S,)
    assert mc.mcFreeHost(h2) == (S,)
    assert mc.mcFreeHost("h") == (E.mcErrorInvalidValue,)


def test_stream_functions(fake):
    err, s = mc.mcStreamCreate()
    assert err == S
    _, nb = mc.mcStreamCreateWithFlags(1)
    assert mc.mcStreamGetFlags(nb) == (S, 1)
    assert mc.mcStreamCreateWithFlags(4) == (E.mcErrorInvalidValue, None)
    assert mc.mcStreamQuery(s) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    assert mc.mcStreamSynchronize(0) == (S,)
    assert mc.mcStreamSynchronize(object()) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcStreamDestroy(s) == (S,)
    assert mc.mcStreamDestroy(s) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcStreamDestroy(0) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcDeviceSynchronize() == (S,)
    mc.mcSetDevice(1)
    assert mc.mcStreamQuery(nb) == (E.mcErrorInvalidResourceHandle,)   # other device's stream


def test_event_functions(fake):
    err, ev = mc.mcEventCreate()
    assert err == S
    assert mc.mcEventCreateWithFlags(0x2)[0] == S
    assert mc.mcEventCreateWithFlags(0x100) == (E.mcErrorInvalidValue, None)
    assert mc.mcEventRecord(ev) == (S,)
    assert mc.mcEventSynchronize(ev) == (S,)
    assert mc.mcEventQuery(ev) == (S,)
    assert mc.mcStreamWaitEvent(0, ev, 0) == (S,)
    assert mc.mcStreamWaitEvent(0, ev, 3) == (E.mcErrorInvalidValue,)
    assert mc.mcEventQuery(None) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcEventSynchronize(1) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcEventDestroy(ev) == (S,)
    assert mc.mcEventDestroy(ev) == (E.mcErrorInvalidResourceHandle,)


def test_device_reset_and_synchronize(fake):
    _, d = mc.mcMalloc(16)
    _, s = mc.mcStreamCreate()
    assert mc.mcDeviceSynchronize() == (S,)
    assert mc.mcDeviceReset() == (S,)
    assert mc.mcStreamQuery(s) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcMemset(d, 0, 16) == (E.mcErrorInvalidValue,)    # freed by the reset
    assert mc.mcMalloc(16)[0] == S


def test_launch_validation(fake, kernels):
    st = kernels["store"]
    _, d = mc.mcMalloc(8)
    ok = [d, 1]
    launch = mc.mcModuleLaunchKernel
    assert launch(st, 1, 1, 1, 1, 1, 1, 0, None, ok, None) == (S,)
    assert launch(st, 0, 1, 1, 1, 1, 1, 0, None, ok, None) == (E.mcErrorInvalidConfiguration,)
    assert launch(st, 1, 65536, 1, 1, 1, 1, 0, None, ok, None) == (E.mcErrorInvalidConfiguration,)
    assert launch(st, 1, 1, 1, 1025, 1, 1, 0, None, ok, None) == (E.mcErrorInvalidConfiguration,)
    assert launch(st, 1, 1, 1, 1, 1, 65, 0, None, ok, None) == (E.mcErrorInvalidConfiguration,)
    assert launch(st, 1, 1, 1, 64, 1, 1, 49 * 1024, None, ok, None) == (E.mcErrorInvalidValue,)
    assert launch(st, 1, 1, 1, 1, 1, 1, 0, None, [d], None) == (E.mcErrorInvalidValue,)
    assert launch(st, 1, 1, 1, 1, 1, 1, 0, None, [d, 1.5], None) == (E.mcErrorInvalidValue,)
    assert "needs an int" in mc.last_error_message()
    assert launch(st, 1, 1, 1, 1, 1, 1, 0, None, [d, 1 << 32], None) == (E.mcErrorInvalidValue,)
    assert launch(st, 1, 1, 1, 1, 1, 1, 0, None, [d, np.uint32(3)], None) == (S,)
    assert launch(st, 1, 1, 1, 1, 1, 1, 0, None, [d, np.float32(3)], None) == (E.mcErrorInvalidValue,)
    assert launch(st, 1, 1, 1, 1, 1, 1, 0, None, ok, b"x" * 12) == (E.mcErrorInvalidValue,)
    assert launch(st, 1, 1, 1, 1, 1, 1, 0, None, None, b"x" * 4) == (E.mcErrorInvalidValue,)
    assert launch(st, 1, 1, 1, 1, 1, 1, 0, "bad", ok, None) == (E.mcErrorInvalidResourceHandle,)
    assert launch("f", 1, 1, 1, 1, 1, 1, 0, None, ok, None) == (E.mcErrorInvalidResourceHandle,)
    assert mc.mcLaunchKernel(st, (1, 1, 1, 1), 1, ok) == (E.mcErrorInvalidValue,)
    assert mc.mcDeviceSynchronize() == (S,)


def test_launch_out_of_resources(fake):
    from gpudbg.driver.engine import get_engine
    from gpudbg_fakes import fake_module, make_kernel
    k = make_kernel("fat", num_regs=255)
    f = fake_module(get_engine().current_context(), k).functions["fat"]
    assert mc.mcModuleLaunchKernel(f, 1, 1, 1, 512, 1, 1, 0, None, [], None) == \
        (E.mcErrorLaunchOutOfResources,)
    small = fake_module(get_engine().current_context(), make_kernel("small", max_threads_per_block=128))
    assert mc.mcModuleLaunchKernel(small.functions["small"], 1, 1, 1, 256, 1, 1, 0, None, [], None) \
        == (E.mcErrorInvalidConfiguration,)


def test_module_handles(fake):
    from gpudbg.driver.engine import get_engine
    from gpudbg_fakes import fake_module, make_kernel
    m = fake_module(get_engine().current_context(), make_kernel("k"), globals_={"g": (0x1000, 16)})
    assert mc.mcModuleGetFunction(m, "k")[0] == S
    assert mc.mcModuleGetFunction(m, "nope") == (E.mcErrorNotFound, None)
    assert mc.mcModuleGetFunction("m", "k") == (E.mcErrorInvalidValue, None)
    assert mc.mcModuleGetGlobal(m, "g") == (S, 0x1000, 16)
    assert mc.mcModuleGetGlobal(m, "h") == (E.mcErrorNotFound, None, None)
    assert mc.mcModuleUnload(m) == (S,)
    assert m.loaded.unloaded
    assert mc.mcModuleUnload(m) == (E.mcErrorNotFound,)
    assert mc.mcModuleGetFunction(m, "k") == (E.mcErrorInvalidValue, None)
    assert mc.mcModuleLoadData(12) == (E.mcErrorInvalidValue, None)
    assert mc.mcModuleLoadData(b"\x7fELF\x02\x01\xff\xfe") == (E.mcErrorInvalidImage, None)
    assert mc.mcModuleLoadData("hello") == (E.mcErrorInvalidImage, None)
    assert mc.mcModuleLoad("/nonexistent/x.ptx") == (E.mcErrorFileNotFound, None)
    assert mc.mcModuleLoad(3) == (E.mcErrorInvalidValue, None)
    bad = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k( {\n"
    assert mc.mcModuleLoadData(bad) == (E.mcErrorInvalidKernelFile, None)
    assert "<image>:" in mc.last_error_message()
