"""`set cuda api_failures`: notice mc* calls of the program that fail.

The runtime calls its API error hooks (runtime/api/_base.py) on the
calling thread whenever an mc* function returns an error other than
mcErrorNotReady, after recording the thread's last error; the
interceptor is one such hook while a program is debugged. The
error-query functions (mcGetLastError, ...) return errors as their result
and do not fire it.

It does not change what the call returns: the failure is reported, and in
`stop` mode the calling thread is parked until the debugger resumes it.
"""
from __future__ import annotations

import enum
import threading
from dataclasses import dataclass
from typing import Any, Callable


class ApiFailureMode(enum.Enum):
    IGNORE = "ignore"   # print a warning, go on (cuda-gdb's default)
    STOP = "stop"       # report and pause the program
    HIDE = "hide"       # say nothing


@dataclass(frozen=True)
class ApiFailure:
    function: str
    code: Any          # mcError_t
    message: str

    def describe(self) -> str:
        return (f"Cuda API error detected: {self.function} returned {self.code.name} "
                f"(0x{int(self.code):x}){': ' + self.message if self.message else ''}")


class ApiInterceptor:
    """Calls `on_failure` (on the calling thread) for failures of calls
    made on a thread `watch` accepts."""

    def __init__(self, on_failure: Callable[[ApiFailure], None], watch: Callable[[], bool]):
        self.on_failure = on_failure
        self.watch = watch
        self._installed = False
        self._lock = threading.Lock()

    @property
    def installed(self) -> bool:
        return self._installed

    def install(self) -> None:
        from gpudbg.runtime.api._base import add_api_error_hook
        with self._lock:
            if not self._installed:
                add_api_error_hook(self._hook)
                self._installed = True

    def uninstall(self) -> None:
        from gpudbg.runtime.api._base import remove_api_error_hook
        with self._lock:
            remove_api_error_hook(self._hook)
            self._installed = False

    def _hook(self, name: str, code: Any, message: str) -> None:
        if self.watch():
            self.on_failure(ApiFailure(name, code, message))
