"""Seed 002 §2.8: error handling (per-host-thread last error, names and
strings of codes).

These four keep their own convention (the last error itself, or a name),
so they are not `_api` functions; `_own_convention` still binds their
arguments through the validation layer and turns any failure into
(mcErrorInvalidValue, None...) instead of an exception.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from gpudbg.runtime.api._args import Anything, Plan
from gpudbg.runtime.api._base import _S, _tls, as_mc_error
from gpudbg.runtime.errors import error_name, error_string


def _own_convention(outputs: int) -> Callable:
    def deco(fn: Callable) -> Callable:
        plan = Plan(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> tuple:
            try:
                return plan.call(fn, args, kwargs)
            except Exception as exc:     # a wrong argument count or keyword: not this thread's last error
                return (as_mc_error(fn.__name__, exc).code,) + (None,) * outputs
        wrapper._plan = plan  # type: ignore[attr-defined]
        return wrapper
    return deco


# ------------------------------------------------------------------ 2.8 errors
@_own_convention(0)
def mcGetLastError() -> tuple:
    """Seed 002 §2.8.3.3: the thread's last error, then reset to mcSuccess."""
    code = getattr(_tls, "last", _S)
    _tls.last, _tls.message = _S, ""
    return (code,)


@_own_convention(0)
def mcPeekAtLastError() -> tuple:
    """Seed 002 §2.8.3.4: the thread's last error, not reset."""
    return (getattr(_tls, "last", _S),)


@_own_convention(1)
def mcGetErrorName(error: Anything) -> tuple:
    """Seed 002 §2.8.3.1: the code's name, "unrecognized error code" if unknown."""
    return (_S, error_name(int(error)) if isinstance(error, (int, np.integer)) else error_name(-1))


@_own_convention(1)
def mcGetErrorString(error: Anything) -> tuple:
    """Seed 002 §2.8.3.2: the code's description, "unrecognized error code" if unknown."""
    return (_S, error_string(int(error)) if isinstance(error, (int, np.integer)) else error_string(-1))


def last_error_message() -> str:
    """The sentence explaining this thread's last error (gpudbg extension)."""
    return getattr(_tls, "message", "")


__all__ = ['mcGetLastError', 'mcPeekAtLastError', 'mcGetErrorName', 'mcGetErrorString', 'last_error_message']
