"""Issue 14, findings 1, 5 and 6: the mc* validation layer (runtime/api/_args.py)
and the calling convention that nothing escapes.

Every test here failed before the layer: the call raised, crashed the
process, or was accepted and poisoned later calls."""
from __future__ import annotations

import ctypes
import subprocess
import sys
import time

import numpy as np
import pytest

from gpudbg.driver.engine import reset_engine
from gpudbg.driver.types import CUjit_option
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E

S = E.mcSuccess
D2H, H2D = mc.mcMemcpyKind.mcMemcpyDeviceToHost, mc.mcMemcpyKind.mcMemcpyHostToDevice
L = mc.mcLimit_t
PTX = r"""
.version 7.8
.target sm_90
.address_size 64
.visible .global .align 4 .u32 gvar[16];
.visible .entry fill(.param .u64 fill_param_0, .param .u32 fill_param_1)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [fill_param_0];
    ld.param.u32 %r1, [fill_param_1];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r1;
    ret;
}
"""


@pytest.fixture
def fill():
    reset_engine(num_devices=2)
    mc.mcGetLastError()
    err, m = mc.mcModuleLoadData(PTX)
    assert err == S
    yield mc.mcModuleGetFunction(m, "fill")[1]
    reset_engine()
    mc.mcGetLastError()


def public_functions() -> list:
    import inspect
    return [(n, getattr(mc, n), getattr(getattr(mc, n), "_plan", None)) for n in sorted(mc.__all__)
            if n.startswith("mc") and inspect.isfunction(getattr(mc, n))]


def works(fn) -> None:
    """The context still runs a kernel and copies (no invalid argument broke it)."""
    _, p = mc.mcMalloc(256)
    assert mc.mcLaunchKernel(fn, 2, 32, [p, 5], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    host = np.zeros(64, np.uint32)
    assert mc.mcMemcpy(host, p, 256, D2H) == (S,)
    assert (host == 5).all()
    assert mc.mcFree(p) == (S,)


# ---------------------------------------------------------------- finding 1: the segfault
def test_copy_into_an_object_array_is_refused_not_a_segfault():
    """Device-to-host into dtype=object wrote raw bytes over the object
    pointers; printing the array then killed the process (exit 139). Run in
    a child so a regression is a failure, not the end of the test run."""
    code = r"""
import numpy as np
from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
_, p = mc.mcMalloc(64)
assert mc.mcMemset(p, 0xAB, 64) == (E.mcSuccess,)
dst = np.empty(8, dtype=object)
err = mc.mcMemcpy(dst, p, 64, mc.mcMemcpyKind.mcMemcpyDeviceToHost)
print(repr(dst))
assert err == (E.mcErrorInvalidValue,), err
assert "dtype=object" in mc.last_error_message(), mc.last_error_message()
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.strip().endswith("ok")


@pytest.mark.parametrize("case", ["object", "object_src", "strided", "readonly", "too_small", "structured_object"])
def test_host_buffers_are_checked_before_any_byte_moves(fill, case):
    _, p = mc.mcMalloc(64)
    buffers = {
        "object": (np.array([object()] * 8, dtype=object), D2H),
        "object_src": (np.array([object()] * 8, dtype=object), H2D),
        "strided": (np.zeros(128, np.uint8)[::2], D2H),
        "readonly": (np.frombuffer(bytes(64), np.uint8), D2H),
        "too_small": (np.zeros(16, np.uint8), D2H),
        "structured_object": (np.zeros(4, dtype=[("a", "O"), ("b", "i8")]), D2H),
    }
    buf, kind = buffers[case]
    before = buf.copy() if buf.dtype.hasobject else bytes(buf.tobytes())
    args = (buf, p, 64, kind) if kind == D2H else (p, buf, 64, kind)
    assert mc.mcMemcpy(*args) == (E.mcErrorInvalidValue,)
    assert mc.mcMemcpyAsync(*args, None) == (E.mcErrorInvalidValue,)
    if buf.dtype.names:
        assert all(a is b for a, b in zip(buf["a"].tolist(), before["a"].tolist()))
    elif buf.dtype.hasobject:
        assert all(a is b for a, b in zip(buf.tolist(), before.tolist()))
    else:
        assert buf.tobytes() == before
    works(fill)


def test_object_buffers_are_refused_everywhere_memory_is_written(fill):
    objs = np.array([object()] * 64, dtype=object)
    _, p = mc.mcMalloc(512)
    assert mc.mcHostRegister(objs, objs.nbytes, 0) == (E.mcErrorInvalidValue,)
    assert mc.mcMemcpy2D(objs, 8, p, 8, 8, 4, D2H) == (E.mcErrorInvalidValue,)
    assert mc.mcMemcpyFromSymbol(objs, "gvar", 64) == (E.mcErrorInvalidValue,)
    parms = mc.mcMemcpy3DParms(srcPtr=mc.mcPitchedPtr(p, 64, 64, 1), dstPtr=mc.mcPitchedPtr(objs, 64, 64, 1),
                               extent=mc.mcExtent(64, 1, 1), kind=int(D2H))
    assert mc.mcMemcpy3D(parms) == (E.mcErrorInvalidValue,)
    assert "dstPtr.ptr" in mc.last_error_message()
    # a JIT log buffer of objects would have received the log text over its pointers
    opts, vals = [CUjit_option.CU_JIT_INFO_LOG_BUFFER], [np.empty(16, dtype=object)]
    assert mc.mcModuleLoadDataEx(PTX, 1, opts, vals) == (E.mcErrorInvalidValue, None)
    assert mc.mcLinkCreate(1, opts, vals) == (E.mcErrorInvalidValue, None)
    works(fill)


# ---------------------------------------------------------------- finding 5: escaping exceptions
def test_host_allocation_failure_is_memory_allocation_with_nothing_charged(fill, monkeypatch):
    """The host could not back the allocation (MemoryError): the size stayed
    charged for good and the MemoryError escaped."""
    from gpudbg.sim.memory import allocations
    huge = 30 * 2**30 + 4096
    real_zeros = np.zeros

    def zeros(shape, *a, **k):
        if shape == huge:
            raise MemoryError(f"cannot allocate {huge} bytes")
        return real_zeros(shape, *a, **k)

    monkeypatch.setattr(allocations.np, "zeros", zeros)
    free0 = mc.mcMemGetInfo()[1]
    assert mc.mcMalloc(huge) == (E.mcErrorMemoryAllocation, None)
    assert "host" in mc.last_error_message()
    assert mc.mcMemGetInfo()[1] == free0
    assert mc.mcMallocManaged(huge)[0] in (E.mcErrorMemoryAllocation, S)
    monkeypatch.undo()
    assert mc.mcMemGetInfo()[1] <= free0
    works(fill)


def test_free_and_free_host_refuse_arrays(fill):
    arr = np.zeros(4, np.uint64)
    assert mc.mcFree(arr) == (E.mcErrorInvalidValue,)
    assert mc.mcFreeHost(arr) == (E.mcErrorInvalidValue,)
    assert "ptr must be" in mc.last_error_message()
    works(fill)


def test_launch_with_arguments_that_are_not_a_sequence(fill):
    _, p = mc.mcMalloc(256)
    assert mc.mcLaunchKernel(fill, 1, 32, 5) == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchKernel(fill, 1, 32, "ab") == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchKernel(fill, 1, 32, [p, object()]) == (E.mcErrorInvalidValue,)
    assert "argument 1" in mc.last_error_message()
    assert mc.mcLaunchKernel(fill, ("a",), 32, [p, 1]) == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchKernel(fill, (1, 2**40), 32, [p, 1]) == (E.mcErrorInvalidConfiguration,)
    assert mc.mcModuleLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, None, None, [1, object()]) == \
        (E.mcErrorInvalidValue,)
    assert mc.mcModuleLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, None, None, [1, b"x", 2, "n", 0]) == \
        (E.mcErrorInvalidValue,)
    works(fill)


def test_jit_option_values_in_a_numpy_array(fill):
    """`optionValues or []` raised on an array (its truth value is ambiguous)."""
    opts = [CUjit_option.CU_JIT_MAX_REGISTERS, CUjit_option.CU_JIT_OPTIMIZATION_LEVEL]
    assert mc.mcModuleLoadDataEx(PTX, 2, opts, np.array([32, 3]))[0] == S
    assert mc.mcModuleLoadDataEx(PTX, 2, opts, np.array([32, 9]))[0] == E.mcErrorInvalidValue


@pytest.mark.parametrize("options, values", [
    (5, [1]),                                                         # not a sequence
    ([1.5], [32]),                                                    # a float code (was truncated to 1)
    ([CUjit_option.CU_JIT_OPTIMIZATION_LEVEL], [10**5000]),           # printing it raised ValueError
    ([CUjit_option.CU_JIT_ERROR_LOG_BUFFER], [np.zeros(64, np.float64)[::2]]),   # strided log buffer
    ([CUjit_option.CU_JIT_GLOBAL_SYMBOL_NAMES], [5]),
    (["x"], [1]),
])
def test_bad_jit_options_are_invalid_value(fill, options, values):
    assert mc.mcModuleLoadDataEx(PTX, 1, options, values) == (E.mcErrorInvalidValue, None)
    assert mc.mcLinkCreate(1, options, values) == (E.mcErrorInvalidValue, None)
    err, state = mc.mcLinkCreate()
    assert err == S
    assert mc.mcLinkAddData(state, mc.mcJitInputType.mcJitInputPtx, PTX, len(PTX), "a.ptx", 1, options,
                            values) == (E.mcErrorInvalidValue,)
    assert mc.mcLinkDestroy(state) == (S,)
    works(fill)


def test_bad_cooperative_launches_are_refused(fill):
    _, p = mc.mcMalloc(256)
    assert mc.mcLaunchCooperativeKernel(fill, ("a",), 32, [p, 1], 0, None) == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchCooperativeKernel(fill, 1, 32, 7, 0, None) == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchCooperativeKernelMultiDevice(5, 1, 0) == (E.mcErrorInvalidValue,)
    entry = {"func": fill, "gridDim": 1, "blockDim": 32, "args": np.array([p, 1], np.uint64)}
    assert mc.mcLaunchCooperativeKernelMultiDevice([entry], 1, 0) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert mc.mcLaunchCooperativeKernelMultiDevice([dict(entry, gridDim="x")], 1, 0) == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchCooperativeKernelMultiDevice([dict(entry, bogus=1)], 1, 0) == (E.mcErrorInvalidValue,)
    assert mc.mcExtLaunchMultiKernelMultiDevice([entry], 1.5, 0) == (E.mcErrorInvalidValue,)
    assert mc.mcLaunchCooperativeKernelMultiDevice([entry], 1, 2**70) == (E.mcErrorInvalidValue,)
    works(fill)


def test_paths_names_and_huge_ints(fill):
    assert mc.mcModuleLoad("\x00") == (E.mcErrorInvalidValue, None)
    assert "NUL" in mc.last_error_message()
    assert mc.mcModuleLoad("/nonexistent/k.ptx") == (E.mcErrorFileNotFound, None)
    err, state = mc.mcLinkCreate()
    assert mc.mcLinkAddFile(state, mc.mcJitInputType.mcJitInputPtx, "a\x00b") == (E.mcErrorInvalidValue,)
    assert mc.mcStreamSynchronize(10**5000) == (E.mcErrorInvalidResourceHandle,)
    assert "int of" in mc.last_error_message()
    assert mc.mcMalloc(10**5000) == (E.mcErrorInvalidValue, None)
    assert mc.mcMalloc(-1) == (E.mcErrorInvalidValue, None)
    assert mc.mcModuleGetFunction(mc.mcModuleLoadData(PTX)[1], "fi\x00ll") == (E.mcErrorInvalidValue, None)
    works(fill)


def test_arity_and_keywords(fill):
    assert mc.mcMalloc() == (E.mcErrorInvalidValue, None)
    assert "missing argument sizeBytes" in mc.last_error_message()
    assert mc.mcMalloc(16, 32) == (E.mcErrorInvalidValue, None)
    assert mc.mcMalloc(sizes=16) == (E.mcErrorInvalidValue, None)
    assert mc.mcMalloc(sizeBytes=16)[0] == S
    assert mc.mcGetLastError(1) == (E.mcErrorInvalidValue,)
    assert mc.mcGetErrorName() == (E.mcErrorInvalidValue, None)
    assert mc.mcGetErrorName(10**5000) == (S, "unrecognized error code")


class _Evil:
    def __len__(self):
        raise RuntimeError("len")

    def __repr__(self):
        raise RuntimeError("repr")

    def __getitem__(self, i):
        raise RuntimeError("getitem")


def test_values_whose_own_methods_raise_are_invalid_values(fill):
    import collections.abc
    collections.abc.Sequence.register(_Evil)
    assert mc.mcLaunchKernel(fill, 1, 32, _Evil()) == (E.mcErrorInvalidValue,)
    assert mc.mcSetValidDevices(_Evil(), 1) == (E.mcErrorInvalidValue,)
    # the program's own occupancy callback: its exception is the call's error, not a gpudbg bug
    assert mc.mcOccupancyMaxPotentialBlockSize(fill, lambda b: 1 / 0, 0) == (E.mcErrorInvalidValue, None, None)
    assert "raised ZeroDivisionError" in mc.last_error_message()
    assert mc.mcOccupancyMaxPotentialBlockSize(fill, lambda b: "x", 0)[0] == E.mcErrorInvalidValue
    works(fill)


def test_an_unexpected_exception_is_mc_error_unknown_naming_the_bug(fill, monkeypatch, capsys):
    from gpudbg.driver import limits
    monkeypatch.setattr(limits, "get_limit", lambda *a: 1 // 0)
    mc.mcGetLastError()
    assert mc.mcDeviceGetLimit(L.mcLimitStackSize) == (E.mcErrorUnknown, None)
    msg = mc.last_error_message()
    assert "ZeroDivisionError" in msg and "gpudbg bug" in msg and "mcDeviceGetLimit" in msg
    assert mc.mcGetLastError() == (E.mcErrorUnknown,)
    assert capsys.readouterr().err == ""       # a code and a message, no traceback

    def interrupted(*a):
        raise KeyboardInterrupt
    monkeypatch.setattr(limits, "get_limit", interrupted)
    with pytest.raises(KeyboardInterrupt):     # Ctrl-C is not an error: it still stops the program
        mc.mcDeviceGetLimit(L.mcLimitStackSize)


def test_a_failing_error_observer_does_not_escape(fill, capsys):
    from gpudbg.runtime.api import _base

    def observer(name, code, message):
        raise RuntimeError("observer bug")
    _base.add_api_error_hook(observer)
    try:
        assert mc.mcMalloc(-1) == (E.mcErrorInvalidValue, None)
    finally:
        _base.remove_api_error_hook(observer)
    assert "observer failed" in capsys.readouterr().err


# ---------------------------------------------------------------- the C ABI wrappers
def test_cu_entry_returns_codes_without_traceback(monkeypatch, capsys):
    from gpudbg.cuda_driver import device as cu_device
    from gpudbg.cuda_driver import memory as cu_memory
    reset_engine(num_devices=1)
    out = ctypes.c_uint64()
    assert cu_device.cuInit(0) == 0
    # a C argument that does not convert: CUDA_ERROR_INVALID_VALUE, and no traceback any more
    assert cu_memory.cuMemAllocPitch_v2(ctypes.addressof(out), ctypes.addressof(out), 64, 1, "x") == 1
    monkeypatch.setattr(cu_device, "device_of", lambda *a: {}["missing"])
    assert cu_device.cuDeviceGet(ctypes.addressof(out), 0) == 999      # CUDA_ERROR_UNKNOWN
    assert capsys.readouterr().err == ""
    reset_engine()


def test_cuda_export_turns_unexpected_exceptions_into_unknown(monkeypatch, capsys):
    from gpudbg.cuda_runtime import device as rt_device
    reset_engine(num_devices=1)
    monkeypatch.setattr(rt_device, "call", lambda *a: [][1])
    assert rt_device.cudaDeviceSetLimit(0, 1024) == 999
    assert "IndexError" in mc.last_error_message() and "gpudbg bug" in mc.last_error_message()
    assert capsys.readouterr().err == ""
    reset_engine()


# ---------------------------------------------------------------- finding 6: limits that poison
@pytest.mark.parametrize("limit, value, code", [
    (L.mcLimitPrintfFifoSize, 2**64, E.mcErrorInvalidValue),          # was accepted; every launch then raised
    (L.mcLimitPrintfFifoSize, 2**40, E.mcErrorMemoryAllocation),      # more than the device memory
    (L.mcLimitMallocHeapSize, 2**64 - 1, E.mcErrorMemoryAllocation),
    (L.mcLimitStackSize, 512 * 1024, E.mcErrorMemoryAllocation),      # x every resident thread > 80 GiB
    (L.mcLimitStackSize, -16, E.mcErrorInvalidValue),
    (L.mcLimitDevRuntimePendingLaunchCount, 2**40, E.mcErrorInvalidValue),
    (L.mcLimitStackSize, 1.5, E.mcErrorInvalidValue),
    (99, 1, E.mcErrorUnsupportedLimit),
])
def test_a_refused_limit_never_poisons_later_launches(fill, limit, value, code):
    before = mc.mcDeviceGetLimit(limit) if limit != 99 else None
    assert mc.mcDeviceSetLimit(limit, value) == (code,)
    if before is not None:
        assert mc.mcDeviceGetLimit(limit) == before
    works(fill)
    works(fill)


def test_accepted_limits_keep_launches_working(fill):
    assert mc.mcDeviceSetLimit(L.mcLimitPrintfFifoSize, 2**30) == (S,)
    assert mc.mcDeviceSetLimit(L.mcLimitStackSize, 64 * 1024) == (S,)
    assert mc.mcDeviceSetLimit(L.mcLimitMallocHeapSize, 2**32) == (S,)
    works(fill)


# ---------------------------------------------------------------- non-sticky errors never break a context
def test_a_barrage_of_invalid_arguments_leaves_the_context_working(fill):
    skip = {"mcDeviceReset", "mcSetDevice", "mcSetValidDevices", "mcThreadExchangeStreamCaptureMode"}
    for name, fn, _plan in public_functions():
        if name in skip:
            continue
        n = len(_plan.params) if _plan is not None else 1
        for junk in (None, "x\x00", -1, 10**5000, np.empty(2, dtype=object)):
            fn(*([junk] * n))
    assert mc.mcGetDevice() == (S, 0)
    works(fill)


def test_host_functions_with_array_user_data_do_not_kill_the_host_worker(fill):
    """The worker found its pending entry with ==, which compared the user's
    numpy arrays and raised; the worker thread died and the stream hung."""
    _, flag = mc.mcMallocHost(8)
    mc.host_view(flag, 8)[:] = 0
    _, a = mc.mcStreamCreateWithFlags(1)
    _, b = mc.mcStreamCreateWithFlags(1)
    geq = int(mc.mcStreamWaitValueFlags.mcStreamWaitValueGeq)
    assert mc.mcStreamWaitValue32(a, flag, 1, geq) == (S,)
    ran = []
    assert mc.mcLaunchHostFunc(a, ran.append, np.zeros(4)) == (S,)
    assert mc.mcLaunchHostFunc(b, ran.append, np.ones(4)) == (S,)
    deadline = time.monotonic() + 10
    while mc.mcStreamQuery(b)[0] != S and time.monotonic() < deadline:
        time.sleep(0.01)
    assert mc.mcStreamQuery(b) == (S,)
    mc.host_view(flag, 4, np.uint32)[0] = 1
    assert mc.mcStreamSynchronize(a) == (S,)
    assert len(ran) == 2
    works(fill)


# ---------------------------------------------------------------- the layer itself
def test_every_public_function_is_checked_by_its_annotations():
    from gpudbg.runtime.api._args import Opaque
    unchecked = []
    for name, fn, plan in public_functions():
        assert plan is not None, f"{name} has no argument plan"
        unchecked += [f"{name}({p.name})" for p in plan.params
                      if isinstance(p.kind, Opaque) and p.name not in ("userData", "error")]
    assert not unchecked, unchecked


def test_a_capture_does_not_outlive_a_device_reset(fill):
    """A capture of a stream destroyed by mcDeviceReset stayed active: the
    thread's next allocation failed with mcErrorStreamCaptureUnsupported."""
    _, s = mc.mcStreamCreateWithFlags(1)
    assert mc.mcStreamBeginCapture(s, mc.mcStreamCaptureMode.mcStreamCaptureModeGlobal) == (S,)
    assert mc.mcDeviceReset() == (S,)
    assert mc.mcMalloc(16)[0] == S
    err, m = mc.mcModuleLoadData(PTX)
    works(mc.mcModuleGetFunction(m, "fill")[1])


@pytest.mark.parametrize("var, value", [("GPUDBG_INSTRUCTION_BUDGET", "-1"), ("GPUDBG_INSTRUCTION_BUDGET", "abc"),
                                        ("GPUDBG_INSTRUCTION_BUDGET", "0"), ("GPUDBG_HANG_TIMEOUT", "-1"),
                                        ("GPUDBG_HANG_TIMEOUT", "nan"), ("GPUDBG_SCHEDULE", "bogus")])
def test_a_bad_environment_setting_refuses_the_launch_without_poisoning(fill, monkeypatch, var, value):
    """A bad GPUDBG_INSTRUCTION_BUDGET failed the launch on the device: a
    sticky mcErrorLaunchFailure that stayed after the variable was fixed."""
    _, p = mc.mcMalloc(256)
    monkeypatch.setenv(var, value)
    assert mc.mcLaunchKernel(fill, 1, 32, [p, 1]) == (E.mcErrorInvalidValue,)
    assert var in mc.last_error_message()
    assert mc.mcDeviceSynchronize() == (S,)
    monkeypatch.delenv(var)
    works(fill)


def test_a_bad_hang_timeout_while_waiting_is_invalid_value_not_a_bug(fill, monkeypatch):
    _, flag = mc.mcMallocHost(8)
    mc.host_view(flag, 8)[:] = 0
    _, s = mc.mcStreamCreateWithFlags(1)
    assert mc.mcStreamWaitValue32(s, flag, 1, int(mc.mcStreamWaitValueFlags.mcStreamWaitValueGeq)) == (S,)
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "soon")
    assert mc.mcStreamSynchronize(s) == (E.mcErrorInvalidValue,)
    assert "GPUDBG_HANG_TIMEOUT" in mc.last_error_message() and "bug" not in mc.last_error_message()
    monkeypatch.delenv("GPUDBG_HANG_TIMEOUT")
    mc.host_view(flag, 4, np.uint32)[0] = 1
    assert mc.mcStreamSynchronize(s) == (S,)
    works(fill)
