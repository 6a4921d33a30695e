"""What every cu* function shares: the CUresult calling convention, the
driver's init state, the calling thread's current context, and handles.

One decorator, `entry`, turns a function that returns nothing (or raises
EngineError) into one returning a CUresult: the engine already speaks
CUresult (gpudbg.driver.status), so this layer only adds the driver API's
own rules on top: nothing works before cuInit (CUDA_ERROR_NOT_INITIALIZED),
a NULL required pointer is CUDA_ERROR_INVALID_VALUE, a handle that names no
live object is CUDA_ERROR_INVALID_HANDLE (CUDA_ERROR_INVALID_CONTEXT for
contexts), and unlike the runtime API the current context is never created
implicitly (CUDA_ERROR_INVALID_CONTEXT when the thread has none).
`per_thread_variant` makes the `_ptsz`/`_ptds` exports from one body.
A C caller never sees a Python traceback: an argument that does not convert
(TypeError, ValueError, OverflowError) is CUDA_ERROR_INVALID_VALUE, host
memory exhaustion CUDA_ERROR_OUT_OF_MEMORY, and anything else
CUDA_ERROR_UNKNOWN with a message naming the exception as a gpudbg bug;
only KeyboardInterrupt and SystemExit pass through.
Observers of failing calls (add_api_error_hook: the sanitizer's API error
check) hear of the program's own failing calls only: the thread's outermost
cu* call, named as called, never CUDA_ERROR_NOT_READY.
"""
from __future__ import annotations

import functools
import struct
import sys
import threading
from typing import Any, Callable

from gpudbg.cabi import NullPointer, StaleHandle, handles
from gpudbg.driver.context import STREAM_PER_THREAD
from gpudbg.driver.engine import get_engine
from gpudbg.driver.status import CUresult, EngineError, describe_exception

R = CUresult


class HandleKind:
    """The kinds of handle in cabi.handles that the driver API hands out."""

    CONTEXT = "CUcontext"
    MODULE = "CUmodule"
    FUNCTION = "CUfunction"
    LIBRARY = "CUlibrary"
    KERNEL = "CUkernel"
    STREAM = "CUstream"
    EVENT = "CUevent"
    LINK_STATE = "CUlinkState"
    MEMPOOL = "CUmemoryPool"
    GRAPH = "CUgraph"
    GRAPH_EXEC = "CUgraphExec"


def fail(status: CUresult, message: str) -> EngineError:
    return EngineError(status, message)


_error_hooks: list[Callable[[str, CUresult, str], None]] = []
_calls = threading.local()


def add_api_error_hook(hook: Callable[[str, CUresult, str], None]) -> None:
    """Call hook(function name, CUresult, message) on the calling thread
    when a cu* call of the program fails."""
    if hook not in _error_hooks:
        _error_hooks.append(hook)


def remove_api_error_hook(hook: Callable[[str, CUresult, str], None]) -> None:
    if hook in _error_hooks:
        _error_hooks.remove(hook)


def current_call() -> str | None:
    """The cu* function the program called that runs on this thread."""
    return getattr(_calls, "name", None)


def _failed(name: str, outer: bool, status: CUresult, message: str) -> int:
    if outer and status is not R.CUDA_ERROR_NOT_READY:
        for hook in tuple(_error_hooks):
            try:
                hook(name, status, message)
            except Exception as e:   # an observer's bug must not become the C caller's traceback
                print(f"gpudbg: an API error observer failed on {name}: {describe_exception(e)}", file=sys.stderr)
    return int(status)


def entry(fn: Callable[..., Any]) -> Callable[..., int]:
    """Make `fn` a cu* export: returns 0 or its int result, or the CUresult
    of what went wrong."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args: Any) -> int:
        outer = getattr(_calls, "name", None) is None
        if outer:
            _calls.name = name
        try:
            result = fn(*args)
        except EngineError as e:
            return _failed(name, outer, e.status, e.message)
        except NullPointer as e:
            return _failed(name, outer, R.CUDA_ERROR_INVALID_VALUE, f"{name}: {e}")
        except StaleHandle as e:
            kind = str(e.args[0]) if e.args else ""
            return _failed(name, outer, R.CUDA_ERROR_INVALID_CONTEXT if HandleKind.CONTEXT in kind
                           else R.CUDA_ERROR_INVALID_HANDLE, f"{name}: {kind}")
        except (TypeError, ValueError, OverflowError, struct.error) as e:
            # a C argument that does not convert (a bad dim3, an int too big for its C type)
            return _failed(name, outer, R.CUDA_ERROR_INVALID_VALUE, f"{name}: {describe_exception(e)}")
        except MemoryError as e:
            return _failed(name, outer, R.CUDA_ERROR_OUT_OF_MEMORY, f"{name}: out of host memory ({describe_exception(e)})")
        except Exception as e:
            return _failed(name, outer, R.CUDA_ERROR_UNKNOWN,
                           f"{name}: internal error ({describe_exception(e)}); this is a gpudbg bug, please report it")
        finally:
            if outer:
                _calls.name = None
        return 0 if result is None else int(result)
    wrapper.cu_entry = True  # type: ignore[attr-defined]
    return wrapper


def require_init() -> Any:
    """The engine, once cuInit (or the runtime, which calls it) has run."""
    engine = get_engine()
    if not engine.initialized:
        raise fail(R.CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called")
    return engine


def current_context() -> Any:
    """The calling thread's current context, after its sticky error check;
    CUDA_ERROR_INVALID_CONTEXT when there is none (never made implicitly)."""
    engine = require_init()
    stack = engine.threads.stack
    if not stack:
        raise fail(R.CUDA_ERROR_INVALID_CONTEXT, "the calling thread has no current context")
    ctx = stack[-1]
    if ctx.destroyed and ctx.is_primary and ctx.device.primary_retains > 0:
        # a retained primary context survives cuDevicePrimaryCtxReset
        ctx = stack[-1] = ctx.device.primary_context()
    if ctx.destroyed:
        raise fail(R.CUDA_ERROR_CONTEXT_IS_DESTROYED, f"{ctx!r} was destroyed")
    ctx.check()
    return ctx


def handle_of(kind: str, obj: Any) -> int:
    return handles.handle(kind, obj)


def object_of(kind: str, number: int) -> Any:
    if not number:
        raise fail(R.CUDA_ERROR_INVALID_CONTEXT if kind == HandleKind.CONTEXT else R.CUDA_ERROR_INVALID_HANDLE,
                   f"{kind} is NULL")
    return handles.lookup(kind, number)


def stream_of(ctx: Any, number: int, per_thread: bool = False) -> Any:
    """The engine stream a CUstream names: 0 is the default stream (the
    per-thread one in a `_ptsz`/`_ptds` variant), CU_STREAM_LEGACY (0x1) and
    CU_STREAM_PER_THREAD (0x2) name the two defaults explicitly."""
    number = int(number)
    if number == 0:
        return ctx.stream(STREAM_PER_THREAD if per_thread else 0)
    if number in (1, 2):
        return ctx.stream(number)
    return ctx.stream(handles.lookup(HandleKind.STREAM, number))


def per_thread_variant(fn: Callable[..., int], name: str, stream_index: int) -> Callable[..., int]:
    """The `_ptsz`/`_ptds` export of a stream-taking `fn`: the same call
    with a 0 stream argument (at `stream_index`) meaning the calling
    thread's per-thread default stream. Synchronous calls whose `_ptds`
    variant has no stream argument take a `per_thread` flag instead."""
    @functools.wraps(fn)
    def variant(*args: Any) -> int:
        args_list = list(args)
        if int(args_list[stream_index]) == 0:
            args_list[stream_index] = STREAM_PER_THREAD
        return fn(*args_list)
    variant.__name__ = variant.__qualname__ = name
    return variant
