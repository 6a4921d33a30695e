"""The mc* runtime API (seed 002) in cuda-python's calling convention.

Every function returns a tuple `(err, *outputs)` (just `(err,)` without
outputs; outputs are None on failure) where err is an mcError_t. The layer
is thin on purpose (seed 003 §2.1): resolve the calling thread's context,
check its sticky error, validate arguments, make one driver call. The only
state kept here is the per-host-thread last error (and its message, for
`last_error_message()`); everything else lives in driver objects.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Sequence

import numpy as np

from gpudbg.driver import module as _module
from gpudbg.driver import transfer as _transfer
from gpudbg.driver.engine import DRIVER_VERSION, RUNTIME_VERSION, get_engine
from gpudbg.driver.event import Event, check_event
from gpudbg.runtime.errors import DriverError, error_name, error_string, mcError_t
from gpudbg.runtime.types import (
    attribute_values, mcDeviceAttribute_t, mcDeviceProp, mcHostAllocFlags, mcMemAttachFlags,
    mcMemcpyKind,
)
from gpudbg.sim.memory.spaces import AllocationKind

_S = mcError_t.mcSuccess
_tls = threading.local()


def _record(code: mcError_t, message: str) -> None:
    _tls.last = code
    _tls.message = message


def _api(outputs: int) -> Callable:
    """Turn a function that returns outputs or raises DriverError into one
    returning (err, *outputs) and keeping the thread's last error."""
    def deco(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> tuple:
            try:
                out = fn(*args, **kwargs)
            except DriverError as e:
                if e.code is not mcError_t.mcErrorNotReady:   # "not ready" is not a failure
                    _record(e.code, e.message)
                return (e.code,) + (None,) * outputs
            if outputs == 0:
                return (_S,)
            if outputs == 1:
                return (_S, out)
            return (_S, *out)
        return wrapper
    return deco


def _ctx():
    """The calling thread's context (primary context retained on first use),
    after its sticky error check."""
    ctx = get_engine().current_context()
    ctx.check()
    return ctx


def _int(name: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < minimum:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


# ------------------------------------------------------------------ 2.1 init, 2.7 versions
@_api(0)
def mcInit(flags: int) -> None:
    """Seed 002 §2.1.3.1: explicit initialization; flags must be 0."""
    get_engine().init(flags)


@_api(1)
def mcDriverGetVersion() -> int:
    """Seed 002 §2.7.3.1: 1000*major + 10*minor."""
    return DRIVER_VERSION


@_api(1)
def mcRuntimeGetVersion() -> int:
    """Seed 002 §2.7.3.2."""
    return RUNTIME_VERSION


# ------------------------------------------------------------------ 2.2 devices
@_api(1)
def mcGetDeviceCount() -> int:
    """Seed 002 §2.2.3.22."""
    n = get_engine().device_count()
    if n == 0:
        raise DriverError(mcError_t.mcErrorNoDevice, "no simulated devices")
    return n


@_api(0)
def mcSetDevice(device: int) -> None:
    """Seed 002 §2.2.3.25: the thread's device; no context is created yet."""
    get_engine().set_device(device)


@_api(1)
def mcGetDevice() -> int:
    """Seed 002 §2.2.3.21."""
    return get_engine().current_device().ordinal


@_api(1)
def mcGetDeviceProperties(device: int) -> mcDeviceProp:
    """Seed 002 §2.2.3.24."""
    return mcDeviceProp.from_model(get_engine().device(device).model)


@_api(1)
def mcDeviceGetAttribute(attr: Any, device: int) -> int:
    """Seed 002 §2.2.3.3 (cuda-python argument order: attr, device)."""
    dev = get_engine().device(device)
    try:
        key = mcDeviceAttribute_t(attr)
    except ValueError:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"{attr!r} is not an mcDeviceAttribute_t") from None
    return attribute_values(dev.model)[key]


@_api(1)
def mcDeviceGetPCIBusId(device: int) -> str:
    """Seed 002 §2.2.3.10."""
    return get_engine().device(device).model.pci_bus_id


@_api(1)
def mcDeviceGetUuid(device: int) -> bytes:
    """Seed 002 §2.2.3.13."""
    return get_engine().device(device).model.uuid


@_api(1)
def mcDeviceTotalMem(device: int) -> int:
    """Seed 002 §2.2.3.20."""
    return get_engine().device(device).model.global_memory


@_api(0)
def mcDeviceSynchronize() -> None:
    """Seed 002 §2.2.3.19: wait for all work of the current device; reports
    any earlier asynchronous error."""
    _ctx().synchronize()


@_api(0)
def mcDeviceReset() -> None:
    """Seed 002 §2.2.3.14: destroy the primary context of the current device
    (pending work is discarded); the next call makes a fresh one."""
    get_engine().reset_device()


# ------------------------------------------------------------------ 2.3 streams
@_api(1)
def mcStreamCreate() -> Any:
    """Seed 002 §2.3.3.5: a blocking stream."""
    return _ctx().create_stream(0)


@_api(1)
def mcStreamCreateWithFlags(flags: int) -> Any:
    """Seed 002 §2.3.3.6: mcStreamDefault or mcStreamNonBlocking."""
    return _ctx().create_stream(_int("flags", flags))


@_api(0)
def mcStreamDestroy(stream: Any) -> None:
    """Seed 002 §2.3.3.8: returns at once; resources go when the work is done."""
    ctx = _ctx()
    ctx.destroy_stream(ctx.stream(stream))


@_api(0)
def mcStreamSynchronize(stream: Any) -> None:
    """Seed 002 §2.3.3.18."""
    ctx = _ctx()
    ctx.stream(stream).wait()
    ctx.after_wait()


@_api(0)
def mcStreamQuery(stream: Any) -> None:
    """Seed 002 §2.3.3.16: mcSuccess when all work is done, else mcErrorNotReady."""
    ctx = _ctx()
    s = ctx.stream(stream)
    if not s.done():
        raise DriverError(mcError_t.mcErrorNotReady, f"{s!r} has pending work")
    ctx.after_wait()


@_api(1)
def mcStreamGetFlags(stream: Any) -> int:
    """Seed 002 §2.3.3.13."""
    return _ctx().stream(stream).flags


@_api(0)
def mcStreamWaitEvent(stream: Any, event: Any, flags: int = 0) -> None:
    """Seed 002 §2.3.3.20: later work of `stream` waits for the event, on the GPU."""
    ctx = _ctx()
    if _int("flags", flags) != 0:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"flags must be 0, got {flags}")
    check_event(ctx, event).make_wait(ctx.stream(stream))


# ------------------------------------------------------------------ 2.5 events
@_api(1)
def mcEventCreate() -> Event:
    """Seed 002 §2.5.3.1."""
    return mcEventCreateWithFlags.__wrapped__(0)


@_api(1)
def mcEventCreateWithFlags(flags: int) -> Event:
    """Seed 002 §2.5.3.2."""
    ctx = _ctx()
    if _int("flags", flags) & ~0x7:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"unknown event flags 0x{flags:x}")
    e = Event(ctx, flags)
    ctx.events.add(e)
    return e


@_api(0)
def mcEventRecord(event: Any, stream: Any = None) -> None:
    """Seed 002 §2.5.3.7."""
    ctx = _ctx()
    check_event(ctx, event).record(ctx.stream(stream))


@_api(0)
def mcEventQuery(event: Any) -> None:
    """Seed 002 §2.5.3.6: mcSuccess or mcErrorNotReady."""
    ctx = _ctx()
    if not check_event(ctx, event).done():
        raise DriverError(mcError_t.mcErrorNotReady, f"{event!r} has not completed")


@_api(0)
def mcEventSynchronize(event: Any) -> None:
    """Seed 002 §2.5.3.9."""
    check_event(_ctx(), event).synchronize()


@_api(0)
def mcEventDestroy(event: Any) -> None:
    """Seed 002 §2.5.3.3."""
    ctx = _ctx()
    e = check_event(ctx, event)
    e.destroyed = True
    ctx.events.discard(e)


# ------------------------------------------------------------------ 2.8 errors
def mcGetLastError() -> tuple:
    """Seed 002 §2.8.3.3: the thread's last error, then reset to mcSuccess."""
    code = getattr(_tls, "last", _S)
    _tls.last, _tls.message = _S, ""
    return (code,)


def mcPeekAtLastError() -> tuple:
    """Seed 002 §2.8.3.4: the thread's last error, not reset."""
    return (getattr(_tls, "last", _S),)


def mcGetErrorName(error: Any) -> tuple:
    """Seed 002 §2.8.3.1: the code's name, "unrecognized error code" if unknown."""
    return (_S, error_name(int(error)) if isinstance(error, (int, np.integer)) else error_name(-1))


def mcGetErrorString(error: Any) -> tuple:
    """Seed 002 §2.8.3.2: the code's description, "unrecognized error code" if unknown."""
    return (_S, error_string(int(error)) if isinstance(error, (int, np.integer)) else error_string(-1))


def last_error_message() -> str:
    """The sentence explaining this thread's last error (gpudbg extension)."""
    return getattr(_tls, "message", "")


# ------------------------------------------------------------------ 2.9 allocation
@_api(1)
def mcMalloc(size: int) -> int:
    """Seed 002 §2.9.3.8: device memory; size 0 gives 0."""
    return _ctx().memory.alloc(_int("size", size), AllocationKind.DEVICE)


@_api(0)
def mcFree(ptr: int) -> None:
    """Seed 002 §2.9.3.2: waits for the device first, then frees; 0 is a no-op."""
    ctx = _ctx()
    if ptr:
        ctx.wait_idle_quietly()
    ctx.memory.free(ptr, (AllocationKind.DEVICE, AllocationKind.PITCHED, AllocationKind.MANAGED),
                    "mcFree")
    ctx.reap()


@_api(1)
def mcMallocHost(size: int, flags: int = 0) -> int:
    """Seed 002 §2.9.3.10: pinned host memory, an int pointer (see host_view)."""
    flags = _int("flags", flags)
    if flags & ~0x3:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"unknown mcMallocHost flags 0x{flags:x}")
    return _ctx().memory.alloc(_int("size", size), AllocationKind.HOST_PINNED, flags)


@_api(1)
def mcHostAlloc(size: int, flags: int = 0) -> int:
    """Pinned host memory with mcHostAlloc* flags (as cudaHostAlloc)."""
    flags = _int("flags", flags)
    if flags & ~int(mcHostAllocFlags.mcHostAllocPortable | mcHostAllocFlags.mcHostAllocMapped
                    | mcHostAllocFlags.mcHostAllocWriteCombined):
        raise DriverError(mcError_t.mcErrorInvalidValue, f"unknown mcHostAlloc flags 0x{flags:x}")
    return _ctx().memory.alloc(_int("size", size), AllocationKind.HOST_PINNED, flags)


@_api(0)
def mcFreeHost(ptr: int) -> None:
    """Seed 002 §2.9.3.3."""
    ctx = _ctx()
    if ptr:
        ctx.wait_idle_quietly()
    ctx.memory.free(ptr, (AllocationKind.HOST_PINNED,), "mcFreeHost")


@_api(1)
def mcMallocManaged(size: int, flags: int = int(mcMemAttachFlags.mcMemAttachGlobal)) -> int:
    """Managed (unified) memory, host-visible through host_view."""
    if _int("flags", flags) not in (1, 2):
        raise DriverError(mcError_t.mcErrorInvalidValue, "flags must be mcMemAttachGlobal or mcMemAttachHost")
    return _ctx().memory.alloc(_int("size", size), AllocationKind.MANAGED, flags)


@_api(1)
def mcHostGetDevicePointer(host_ptr: int, flags: int = 0) -> int:
    """Seed 002 §2.9.3.4: with UVA the device pointer is the host pointer."""
    _ctx()
    info = get_engine().resolve_pointer(host_ptr) if isinstance(host_ptr, int) else None
    if info is None or info.kind is not AllocationKind.HOST_PINNED or flags != 0:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"{host_ptr!r} is not pinned host memory")
    return host_ptr


@_api(2)
def mcMemGetInfo() -> tuple[int, int]:
    """(free, total) device memory in bytes."""
    mem = _ctx().gpu.memory
    return mem.capacity - mem.used, mem.capacity


def host_view(ptr: int, nbytes: int, dtype: Any = np.uint8) -> np.ndarray:
    """A live numpy view of pinned host or managed memory (gpudbg extension:
    what a C program does by dereferencing the pointer)."""
    info = get_engine().resolve_pointer(ptr) if isinstance(ptr, int) else None
    if info is None or info.kind not in (AllocationKind.HOST_PINNED, AllocationKind.MANAGED):
        raise ValueError(f"{ptr!r} is not pinned host or managed memory; copy device memory with mcMemcpy")
    if nbytes < 0 or nbytes > info.remaining:
        raise ValueError(f"{nbytes} bytes at 0x{ptr:x} exceed the {info.allocation.describe_short()}")
    return info.allocation.data[info.offset:info.offset + nbytes].view(np.dtype(dtype))


# ------------------------------------------------------------------ 2.10 memcpy
@_api(0)
def mcMemcpy(dst: Any, src: Any, count: int, kind: Any) -> None:
    """Seed 002 §2.10.3.3 with the synchronization rules of §1.2.1.1."""
    ctx = _ctx()
    _transfer.memcpy(ctx, dst, src, count, kind, ctx.legacy, is_async=False)


@_api(0)
def mcMemcpyAsync(dst: Any, src: Any, count: int, kind: Any, stream: Any = None) -> None:
    """Seed 002 §2.10.3.11 with the rules of §1.2.1.2."""
    ctx = _ctx()
    _transfer.memcpy(ctx, dst, src, count, kind, ctx.stream(stream), is_async=True)


@_api(0)
def mcMemcpyHtoD(dst: int, src: Any, count: int) -> None:
    """Seed 002 §2.10.3.18."""
    ctx = _ctx()
    _transfer.memcpy(ctx, dst, src, count, mcMemcpyKind.mcMemcpyHostToDevice, ctx.legacy, False)


@_api(0)
def mcMemcpyDtoH(dst: Any, src: int, count: int) -> None:
    """Seed 002 §2.10.3.14."""
    ctx = _ctx()
    _transfer.memcpy(ctx, dst, src, count, mcMemcpyKind.mcMemcpyDeviceToHost, ctx.legacy, False)


@_api(0)
def mcMemcpyDtoD(dst: int, src: int, count: int) -> None:
    """Seed 002 §2.10.3.12."""
    ctx = _ctx()
    _transfer.memcpy(ctx, dst, src, count, mcMemcpyKind.mcMemcpyDeviceToDevice, ctx.legacy, False)


# ------------------------------------------------------------------ 2.11 memset
def _memset(ptr: Any, value: Any, count: Any, size: int, stream: Any, is_async: bool) -> None:
    ctx = _ctx()
    s = ctx.legacy if stream is None and not is_async else ctx.stream(stream)
    _transfer.memset(ctx, ptr, value, size, _int("count", count), s, is_async)


@_api(0)
def mcMemset(ptr: int, value: int, count: int) -> None:
    """Seed 002 §2.11.3.1: bytes; asynchronous unless pinned/managed (§1.2.2)."""
    _memset(ptr, value, count, 1, None, False)


@_api(0)
def mcMemsetAsync(ptr: int, value: int, count: int, stream: Any = None) -> None:
    """Seed 002 §2.11.3.6."""
    _memset(ptr, value, count, 1, stream, True)


@_api(0)
def mcMemsetD8(ptr: int, value: int, count: int) -> None:
    """Seed 002 §2.11.3.17."""
    _memset(ptr, value, count, 1, None, False)


@_api(0)
def mcMemsetD16(ptr: int, value: int, count: int) -> None:
    """Seed 002 §2.11.3.7: 2-byte aligned destination."""
    _memset(ptr, value, count, 2, None, False)


@_api(0)
def mcMemsetD32(ptr: int, value: int, count: int) -> None:
    """Seed 002 §2.11.3.15: 4-byte aligned destination."""
    _memset(ptr, value, count, 4, None, False)


@_api(0)
def mcMemsetD8Async(ptr: int, value: int, count: int, stream: Any = None) -> None:
    """Seed 002 §2.11.3.18."""
    _memset(ptr, value, count, 1, stream, True)


@_api(0)
def mcMemsetD16Async(ptr: int, value: int, count: int, stream: Any = None) -> None:
    """Seed 002 §2.11.3.8."""
    _memset(ptr, value, count, 2, stream, True)


@_api(0)
def mcMemsetD32Async(ptr: int, value: int, count: int, stream: Any = None) -> None:
    """Seed 002 §2.11.3.16."""
    _memset(ptr, value, count, 4, stream, True)


# ------------------------------------------------------------------ 2.12 modules, 2.4 launch
@_api(1)
def mcModuleLoadData(image: Any) -> Any:
    """Seed 002 §2.12.3.12: PTX text (str or bytes, NUL-terminated allowed)."""
    return _module.load_data(_ctx(), image)


@_api(1)
def mcModuleLoad(fname: Any) -> Any:
    """Seed 002 §2.12.3.11: a .ptx file."""
    return _module.load_file(_ctx(), fname)


@_api(0)
def mcModuleUnload(module: Any) -> None:
    """Seed 002 §2.12.3.15: mcErrorNotFound for an unknown or unloaded module."""
    ctx = _ctx()
    if not isinstance(module, _module.Module) or module.context is not ctx:
        raise DriverError(mcError_t.mcErrorNotFound, f"{module!r} is not a module of this context")
    module.unload()


@_api(1)
def mcModuleGetFunction(module: Any, name: str) -> Any:
    """Seed 002 §2.12.3.9: mcErrorNotFound when there is no such kernel."""
    _ctx()
    if not isinstance(module, _module.Module) or module.unloaded:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"{module!r} is not a loaded module")
    return module.get_function(name)


@_api(2)
def mcModuleGetGlobal(module: Any, name: str) -> tuple[int, int]:
    """Seed 002 §2.12.3.10: (device pointer, size in bytes)."""
    _ctx()
    if not isinstance(module, _module.Module) or module.unloaded:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"{module!r} is not a loaded module")
    return module.get_global(name)


@_api(0)
def mcModuleLaunchKernel(f: Any, gridDimX: int, gridDimY: int, gridDimZ: int, blockDimX: int,
                         blockDimY: int, blockDimZ: int, sharedMemBytes: int, stream: Any,
                         kernelParams: Sequence[Any] | None, extra: Any) -> None:
    """Seed 002 §2.4.3.2: kernelParams are Python/numpy values matched to the
    PTX parameter types; extra is a packed buffer or a
    [MC_LAUNCH_PARAM_BUFFER_POINTER, buf, MC_LAUNCH_PARAM_BUFFER_SIZE, n,
    MC_LAUNCH_PARAM_END] list."""
    ctx = _ctx()
    _module.launch(ctx, f, (gridDimX, gridDimY, gridDimZ), (blockDimX, blockDimY, blockDimZ),
                   sharedMemBytes, ctx.stream(stream), kernelParams, extra)


def _dim3(name: str, d: Any) -> tuple[int, int, int]:
    if isinstance(d, int) and not isinstance(d, bool):
        return (d, 1, 1)
    try:
        t = tuple(d)
    except TypeError:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"{name} must be an int or up to 3 ints") from None
    if not 1 <= len(t) <= 3:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"{name} must have 1 to 3 dimensions")
    return tuple(t) + (1,) * (3 - len(t))  # type: ignore[return-value]


@_api(0)
def mcLaunchKernel(func: Any, gridDim: Any, blockDim: Any, args: Sequence[Any] = (),
                   sharedMem: int = 0, stream: Any = None) -> None:
    """Seed 002 §2.4.3.1: func is an mcFunction_t; dims are ints or tuples."""
    ctx = _ctx()
    _module.launch(ctx, func, _dim3("gridDim", gridDim), _dim3("blockDim", blockDim), sharedMem,
                   ctx.stream(stream), list(args), None)


def fault_report() -> Any:
    """The FaultReport of the current context's sticky error, or None
    (gpudbg extension, for the CLI)."""
    eng = get_engine()
    st = eng.threads
    if st.stack:
        return st.stack[-1].fault_report
    dev = eng.current_device()
    return dev.primary.fault_report if dev.primary is not None else None


def last_launch_stats() -> Any:
    """The simulator's statistics for the current device's most recent
    kernel launch (thread-instructions, waves, blocks per SM), or None
    (gpudbg extension, for benchmarks and tools)."""
    return get_engine().current_device().gpu.last_launch_stats


__all__ = [n for n in dir() if n.startswith("mc")] + ["host_view", "last_error_message", "fault_report",
                                                       "last_launch_stats"]
