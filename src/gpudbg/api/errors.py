"""Exceptions of the Pythonic layer and the one place mc* results are checked.

Every call the Pythonic API makes goes through `call()`, which turns the
`(err, *outputs)` convention into outputs or an exception. A code that means
a kernel faulted becomes KernelFaultError carrying the context's FaultReport;
because the runtime reports a fault as a sticky error at the next
synchronizing call, so does this layer (launches themselves are
asynchronous). This module holds no state.
"""
from __future__ import annotations

from typing import Any, Callable

from gpudbg.runtime import mc
from gpudbg.runtime.errors import error_string, mcError_t

E = mcError_t

# Codes with which the runtime reports that a kernel faulted or hung.
DEVICE_FAULT_CODES = frozenset({
    E.mcErrorIllegalAddress, E.mcErrorMisalignedAddress, E.mcErrorIllegalInstruction,
    E.mcErrorAssert, E.mcErrorInvalidAddressSpace, E.mcErrorInvalidPc,
    E.mcErrorHardwareStackError, E.mcErrorLaunchTimeout, E.mcErrorLaunchFailure,
})


class GPUError(Exception):
    """An mc* call failed; `code` is the mcError_t, `message` says why."""

    def __init__(self, code: mcError_t | int, message: str = ""):
        try:
            self.code: mcError_t | int = mcError_t(code)
        except ValueError:
            self.code = int(code)
        self.message = message or error_string(int(code))
        name = self.code.name if isinstance(self.code, mcError_t) else str(self.code)
        super().__init__(f"{name}: {self.message}")


class KernelFaultError(GPUError):
    """A kernel faulted (or hung); `report` is the simulator's FaultReport
    (None only when the front end had no lane to blame)."""

    def __init__(self, code: mcError_t | int, message: str = "", report: Any = None):
        super().__init__(code, message)
        self.report = report

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base}\n{self.report.format()}" if self.report is not None else base


def error_for(code: mcError_t, what: str) -> GPUError:
    """The exception for a failed call `what` that returned `code`."""
    detail = mc.last_error_message() or error_string(int(code))
    if code in DEVICE_FAULT_CODES:
        report = mc.fault_report()
        if report is not None:   # the report is the detail; str() appends it
            detail = error_string(int(code))
        return KernelFaultError(code, f"{what}: {detail}", report)
    return GPUError(code, f"{what}: {detail}")


def call(fn: Callable[..., tuple], *args: Any, **kwargs: Any) -> Any:
    """Call an mc* function; return its outputs (None, one value or a tuple)
    or raise the matching GPUError."""
    result = fn(*args, **kwargs)
    err = result[0]
    if err != mcError_t.mcSuccess:
        raise error_for(mcError_t(err), fn.__name__)
    out = result[1:]
    if not out:
        return None
    return out[0] if len(out) == 1 else out
