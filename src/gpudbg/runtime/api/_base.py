"""The shared calling convention of the mc* functions: (err, *outputs)
tuples, the per-thread last error, and the argument checks.

Every mc* module in this package decorates its functions with `_api(n)`.
Before the body runs, the wrapper binds and checks the arguments against
the parameters' annotated kinds (_args.py: one validation layer driven by
the signatures). The body returns its n outputs or raises McError (its own
checks) or the engine's EngineError (translated here, the one place the mc*
layer turns engine results into mcError_t), and the wrapper converts that
into the cuda-python convention and records the calling thread's last error
(the only state the runtime layer keeps).

Nothing raises out of an mc* call: host memory exhaustion (MemoryError) is
mcErrorMemoryAllocation, and any other exception is mcErrorUnknown whose
message names the exception and where it came from, as the gpudbg bug it
is. Only KeyboardInterrupt and SystemExit (not errors but requests to stop)
pass through.
"""
from __future__ import annotations

from typing import Any, Callable
import functools
import sys
import threading

import numpy as np

from gpudbg.driver.engine import get_engine
from gpudbg.driver.status import EngineError, describe_exception
from gpudbg.driver.watchdog import HangTimeoutError
from gpudbg.sim.kernel_watch import LaunchSettingError
from gpudbg.sim.native.engine import EngineError as NativeEngineError
from gpudbg.sim.native.parallel import ThreadsError
from gpudbg.sim.schedule import ScheduleError
from gpudbg.runtime.api._args import REBIND, Plan, show
from gpudbg.runtime.errors import McError, from_engine, mcError_t


_S = mcError_t.mcSuccess
SETTING_ERRORS = (HangTimeoutError, LaunchSettingError, ScheduleError, NativeEngineError, ThreadsError)
_tls = threading.local()


def _record(code: mcError_t, message: str) -> None:
    _tls.last = code
    _tls.message = message


# Observers of failing calls (a debugger's `set cuda api_failures`, the
# sanitizer's API error check), called on the calling thread with (function
# name, code, message) after the thread's last error is recorded;
# mcErrorNotReady is not a failure. Only the program's own call is
# reported: the outermost API call of the thread (a cuda* export that calls
# its mc* twin reports as the cuda* function, once), named as the program
# called it; the calls an API function makes inside do not report.
_error_hooks: list[Callable[[str, mcError_t, str], None]] = []


def begin_call(name: str) -> bool:
    """Enter an API function; True when it is the thread's outermost call
    (the caller then ends it with end_call and reports its failure)."""
    if getattr(_tls, "call", None) is None:
        _tls.call = name
        return True
    return False


def end_call() -> None:
    _tls.call = None


def current_call() -> str | None:
    """The API function the program called that is running on this thread
    (outermost; None outside any call)."""
    return getattr(_tls, "call", None)


def last_message() -> str:
    return getattr(_tls, "message", "")


def notify_failure(name: str, code: mcError_t, message: str) -> None:
    """Tell the observers that the program's call `name` failed with `code`."""
    if code is mcError_t.mcErrorNotReady:
        return
    for hook in tuple(_error_hooks):
        try:
            hook(name, code, message)
        except Exception as e:    # an observer's bug must not turn the call into a traceback
            print(f"gpudbg: an API error observer failed on {name}: {describe_exception(e)}", file=sys.stderr)


def add_api_error_hook(hook: Callable[[str, mcError_t, str], None]) -> None:
    if hook not in _error_hooks:
        _error_hooks.append(hook)


def remove_api_error_hook(hook: Callable[[str, mcError_t, str], None]) -> None:
    if hook in _error_hooks:
        _error_hooks.remove(hook)


def as_mc_error(name: str, e: Exception) -> McError:
    """The McError any exception out of an mc* body becomes."""
    if isinstance(e, McError):
        return e
    try:
        if isinstance(e, EngineError):
            return from_engine(e)
    except Exception as inner:        # an engine result the runtime cannot name
        e = inner
    if isinstance(e, SETTING_ERRORS):                # a bad GPUDBG_* environment value, named in e
        return McError(mcError_t.mcErrorInvalidValue, f"{name}: {e}")
    if isinstance(e, MemoryError):
        return McError(mcError_t.mcErrorMemoryAllocation,
                       f"{name}: out of host memory ({describe_exception(e)})")
    if isinstance(e, RecursionError):
        return McError(mcError_t.mcErrorUnknown, f"{name}: input nested too deeply to process "
                                                 f"({describe_exception(e)}); this is a gpudbg bug, please report it")
    return McError(mcError_t.mcErrorUnknown,
                   f"{name}: internal error ({describe_exception(e)}); this is a gpudbg bug, please report it")


def _api(outputs: int) -> Callable:
    """Turn a function that returns outputs or raises McError into one
    returning (err, *outputs) and keeping the thread's last error; its
    arguments are checked against its annotations first (_args.Plan)."""
    def deco(fn: Callable) -> Callable:
        plan = Plan(fn)
        name = fn.__name__
        failed = (None,) * outputs
        fast, arity = plan.fast, len(plan.checks)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> tuple:
            outer = getattr(_tls, "call", None) is None      # begin_call(name), inline
            if outer:
                _tls.call = name
            try:
                # plan.call, its every-argument-by-position path without the call's frame
                out = fast(fn, args) if fast is not None and not kwargs and len(args) == arity else REBIND
                if out is REBIND:
                    out = plan.call_bound(fn, args, kwargs)
                if outputs == 0:
                    return (_S,)
                if outputs == 1:
                    return (_S, out)
                return (_S, *out)
            except Exception as exc:
                e = as_mc_error(name, exc)
                if e.code is not mcError_t.mcErrorNotReady:   # "not ready" is not a failure
                    _record(e.code, e.message)
                    if outer:
                        notify_failure(name, e.code, e.message)
                return (e.code,) + failed
            finally:
                if outer:
                    _tls.call = None                         # end_call()
        wrapper._outputs = outputs  # type: ignore[attr-defined]
        wrapper._plan = plan  # type: ignore[attr-defined]
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
        raise McError(mcError_t.mcErrorInvalidValue, f"{name} must be an int >= {minimum}, got {show(value)}")
    return int(value)



# Functions that exist with the seed's signature but cannot work on the
# simulator, with the reason; the coverage report lists them.
NOT_SUPPORTED: dict[str, str] = {}


def not_supported(reason: str) -> Callable:
    """Mark an mc* function as returning mcErrorNotSupported, for `reason`
    (shown in its docstring, its error message and the coverage report)."""
    def deco(fn: Callable) -> Callable:
        NOT_SUPPORTED[fn.__name__] = reason
        outputs = getattr(fn, "_outputs", 0)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> tuple:
            _record(mcError_t.mcErrorNotSupported, f"{fn.__name__}: {reason}")
            if current_call() is None:
                notify_failure(fn.__name__, mcError_t.mcErrorNotSupported, f"{fn.__name__}: {reason}")
            return (mcError_t.mcErrorNotSupported,) + (None,) * outputs
        wrapper.__doc__ = (fn.__doc__ or "") + f"\n\nNot supported on the simulator: {reason}"
        return wrapper
    return deco
