"""What every cuda* export shares: the cudaError_t calling convention over
the mc* runtime, the per-thread last error (the mc layer's), and turning C
arguments (addresses, handle numbers, dim3 bytes) into what mc* takes.

The one idea: the runtime API's semantics live in gpudbg.runtime (mc*),
whose codes already are cudaError_t's numbers. An export unpacks its C
arguments, calls its mc* twin through `call` (which raises `CudaFail` with
the mc code; mc has already recorded the thread's last error) and stores
the outputs through the C out-pointers. This layer's own refusals (a NULL
out-pointer, a stale handle) are recorded into the same last error, so
cudaGetLastError sees exactly what mcGetLastError sees.

A C caller never sees a Python traceback: an argument that does not convert
is cudaErrorInvalidValue, host memory exhaustion cudaErrorMemoryAllocation,
anything else cudaErrorUnknown naming the exception as a gpudbg bug.

It does not keep any state of its own: handles are cabi.handles numbers
(the same kinds as the driver API, so a cudaStream_t is a CUstream), and
registration tables live in registration.py.
"""
from __future__ import annotations

import functools
import struct
from typing import Any, Callable

from gpudbg import cabi
from gpudbg.cabi import NullPointer, StaleHandle, handles
from gpudbg.cuda_driver._base import HandleKind, per_thread_variant
from gpudbg.driver.context import STREAM_LEGACY, STREAM_PER_THREAD
from gpudbg.driver.engine import get_engine
from gpudbg.driver.status import EngineError
from gpudbg.runtime.api import _base as _mc_base
from gpudbg.runtime.errors import from_engine, mcError_t

E = mcError_t
KERNEL_KIND = "cudaKernel_t"   # a registered kernel (host stub's entry); not a driver CUkernel


class CudaFail(Exception):
    """A failed cuda* call: its cudaError_t number and why. `recorded` when
    the mc layer already made it the thread's last error."""

    def __init__(self, code: int, message: str = "", recorded: bool = False):
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.recorded = recorded


def fail(code: mcError_t, message: str) -> CudaFail:
    return CudaFail(int(code), message)


def record(name: str, code: mcError_t, message: str, notify: bool = True) -> None:
    """Make `code` the calling thread's last error, as the mc layer does
    (not for cudaErrorNotReady, which is not a failure), and tell the API
    error observers when `notify` (the program's own call failed)."""
    if code is E.mcErrorNotReady:
        return
    _mc_base._record(code, message)
    if notify:
        _mc_base.notify_failure(name, code, message)


def export(fn: Callable[..., Any]) -> Callable[..., int]:
    """Make `fn` a cuda* export returning a cudaError_t int."""
    @functools.wraps(fn)
    def wrapper(*args: Any) -> int:
        outer = _mc_base.begin_call(fn.__name__)     # failures report as this cuda* call
        try:
            result = fn(*args)
        except CudaFail as e:
            if not e.recorded:
                record(fn.__name__, E(e.code), e.message, outer)
            elif outer:
                _mc_base.notify_failure(fn.__name__, E(e.code), _mc_base.last_message())
            return e.code
        except EngineError as e:
            err = from_engine(e)
            record(fn.__name__, err.code, err.message, outer)
            return int(err.code)
        except NullPointer as e:
            record(fn.__name__, E.mcErrorInvalidValue, f"{fn.__name__}: {e}", outer)
            return int(E.mcErrorInvalidValue)
        except StaleHandle as e:
            record(fn.__name__, E.mcErrorInvalidResourceHandle, f"{fn.__name__}: {e.args[0] if e.args else e}",
                   outer)
            return int(E.mcErrorInvalidResourceHandle)
        except (TypeError, ValueError, OverflowError, struct.error) as e:
            record(fn.__name__, E.mcErrorInvalidValue, f"{fn.__name__}: {_mc_base._describe(e)}", outer)
            return int(E.mcErrorInvalidValue)
        except Exception as e:      # MemoryError, or a gpudbg bug: a code, never a traceback
            err = _mc_base.as_mc_error(fn.__name__, e)
            record(fn.__name__, err.code, err.message, outer)
            return int(err.code)
        finally:
            if outer:
                _mc_base.end_call()
        return 0 if result is None else int(result)
    wrapper.cuda_export = True  # type: ignore[attr-defined]
    return wrapper


def call(mc_fn: Callable[..., tuple], *args: Any) -> Any:
    """Call an mc* function: its single output, a tuple of several, or None;
    a failure raises CudaFail with the mc code (already recorded)."""
    err, *outputs = mc_fn(*args)
    if int(err) != 0:
        raise CudaFail(int(err), f"{mc_fn.__name__} failed", recorded=True)
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def need(address: int, what: str) -> int:
    if not address:
        raise NullPointer(what)
    return int(address)


# ------------------------------------------------------------------ arguments
def dim3(value: Any, what: str) -> tuple[int, int, int]:
    """A dim3 passed by value: 12 bytes (three unsigned ints), or from a
    Python caller a tuple/int."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) != 12:
            raise ValueError(f"{what} must be a 12-byte dim3, got {len(raw)} bytes")
        return struct.unpack("<3I", raw)  # type: ignore[return-value]
    if isinstance(value, int):
        return (value, 1, 1)
    t = tuple(int(v) for v in value)
    return t + (1,) * (3 - len(t))  # type: ignore[return-value]


def pack_dim3(d: tuple[int, int, int]) -> bytes:
    return struct.pack("<3I", *d)


def stream(number: int, per_thread: bool = False) -> Any:
    """What mc* takes for a cudaStream_t: 0 (the default stream; the
    per-thread one in a _ptsz variant), cudaStreamLegacy (0x1),
    cudaStreamPerThread (0x2), or the engine stream behind a handle."""
    n = int(number)
    if n == 0:
        return STREAM_PER_THREAD if per_thread else 0
    if n in (STREAM_LEGACY, STREAM_PER_THREAD):
        return n
    return handles.lookup(HandleKind.STREAM, n)


def event(number: int) -> Any:
    if not int(number):
        raise fail(E.mcErrorInvalidResourceHandle, "cudaEvent_t is NULL")
    return handles.lookup(HandleKind.EVENT, int(number))


def memory(address: int, nbytes: int, what: str, writable: bool = True) -> Any:
    """A C pointer argument as mc* takes it: memory the engine knows
    (device, pinned, managed) stays an int address; anything else is
    pageable host memory, passed as a live view of the process's bytes."""
    address = int(address)
    if not address or get_engine().resolve_pointer(address) is not None:
        return address
    return cabi.host_view(address, int(nbytes), what, writable)


def is_engine_memory(address: int) -> bool:
    return bool(address) and get_engine().resolve_pointer(int(address)) is not None


# The _ptsz export of a stream-taking function: a 0 stream argument means
# the calling thread's per-thread default stream (the same rule as cu*'s).
per_thread = per_thread_variant


def per_thread_sync(async_fn: Callable[..., int], name: str) -> Callable[..., int]:
    """The _ptds export of a synchronous call: its Async twin on the
    per-thread default stream, then a wait for that stream."""
    from gpudbg.runtime import mc

    @functools.wraps(async_fn)
    def variant(*args: Any) -> int:
        rc = async_fn(*args, STREAM_PER_THREAD)
        if rc:
            return rc
        err = mc.mcStreamSynchronize(STREAM_PER_THREAD)[0]
        return int(err)
    variant.__name__ = variant.__qualname__ = name
    return variant
