"""Seed 002 §2.8: error handling (per-host-thread last error, names and
strings of codes).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gpudbg.runtime.api._base import _S, _tls
from gpudbg.runtime.errors import error_name, error_string


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


__all__ = ['mcGetLastError', 'mcPeekAtLastError', 'mcGetErrorName', 'mcGetErrorString', 'last_error_message']
