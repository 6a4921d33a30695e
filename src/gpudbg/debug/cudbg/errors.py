"""Result strings of seed 000: ``cudbgGetErrorString`` and ``getErrorStringEx``.

Two different texts exist and are kept apart. ``cudbgGetErrorString`` is the
header's inline function: it returns the enumerator's *name* from
``CUDBGResultNames`` (or ``"*UNDEFINED*"`` past the end), so tools print
"CUDBG_ERROR_INVALID_WARP". ``describe`` gives the human sentence the
header's comments attach to each code. ``getErrorStringEx`` is a third
thing: the message of the *last failed call*, copied NUL-terminated into a
caller buffer of ``bufSz`` bytes with ``msgSz`` always reporting the size
needed, so a client can ask with a zero-sized buffer, then allocate.

``LastError`` holds that message per API object. Reading it does not clear
it (the two-call size-then-copy pattern would otherwise be impossible); the
next recorded call replaces or clears it, which is the header's "invalidated
after every API call". This module does not decide which calls fail.
"""
from __future__ import annotations

from gpudbg.debug.cudbg.enums import CUDBGResult

R = CUDBGResult
UINT32_MAX = 0xFFFFFFFF

# CUDBGResultNames[] of the header, indexed by code.
CUDBG_RESULT_NAMES: tuple[str, ...] = tuple(r.name for r in sorted(CUDBGResult))

UNDEFINED = "*UNDEFINED*"


def cudbgGetErrorString(error: int) -> str:
    """The enumerator name for ``error``; codes past the table give ``*UNDEFINED*`` (as in C,
    where the argument is taken as unsigned, so negative values are out of range too)."""
    code = int(error)
    if code < 0 or code >= len(CUDBG_RESULT_NAMES):
        return UNDEFINED
    return CUDBG_RESULT_NAMES[code]


DESCRIPTIONS: dict[CUDBGResult, str] = {
    R.CUDBG_SUCCESS: "Successful execution",
    R.CUDBG_ERROR_UNKNOWN: "Unknown error (none of the specific error kinds)",
    R.CUDBG_ERROR_BUFFER_TOO_SMALL: "The buffer argument is too small to hold all the queried data",
    R.CUDBG_ERROR_UNKNOWN_FUNCTION: "The function cannot be found in the CUDA kernel",
    R.CUDBG_ERROR_INVALID_ARGS: "Wrong use of arguments (NULL pointer, illegal value, ...)",
    R.CUDBG_ERROR_UNINITIALIZED: "The debugger API has not been initialized",
    R.CUDBG_ERROR_INVALID_COORDINATES: "Invalid block or thread coordinates",
    R.CUDBG_ERROR_INVALID_MEMORY_SEGMENT: "Invalid memory segment requested for a read or write",
    R.CUDBG_ERROR_INVALID_MEMORY_ACCESS: "The address (plus size) is outside the segment's boundaries",
    R.CUDBG_ERROR_MEMORY_MAPPING_FAILED: "The memory is not mapped and cannot be mapped",
    R.CUDBG_ERROR_INTERNAL: "A debugger internal error occurred",
    R.CUDBG_ERROR_INVALID_DEVICE: "The specified device cannot be found",
    R.CUDBG_ERROR_INVALID_SM: "The specified SM cannot be found",
    R.CUDBG_ERROR_INVALID_WARP: "The specified warp cannot be found",
    R.CUDBG_ERROR_INVALID_LANE: "The specified lane cannot be found",
    R.CUDBG_ERROR_SUSPENDED_DEVICE: "The device is suspended",
    R.CUDBG_ERROR_RUNNING_DEVICE: "The device is running, not suspended",
    R.CUDBG_ERROR_RESERVED_0: "Reserved error code",
    R.CUDBG_ERROR_INVALID_ADDRESS: "The address is out of range",
    R.CUDBG_ERROR_INCOMPATIBLE_API: "The requested API version does not match",
    R.CUDBG_ERROR_INITIALIZATION_FAILURE: "The CUDA driver failed to initialize",
    R.CUDBG_ERROR_INVALID_GRID: "The specified grid cannot be found",
    R.CUDBG_ERROR_NO_EVENT_AVAILABLE: "No event left to be processed",
    R.CUDBG_ERROR_SOME_DEVICES_WATCHDOGGED: "One or more devices have an associated watchdog (e.g. X)",
    R.CUDBG_ERROR_ALL_DEVICES_WATCHDOGGED: "All devices have an associated watchdog (e.g. X)",
    R.CUDBG_ERROR_INVALID_ATTRIBUTE: "The specified attribute does not exist or is incorrect",
    R.CUDBG_ERROR_ZERO_CALL_DEPTH: "No function calls have been made on the device",
    R.CUDBG_ERROR_INVALID_CALL_LEVEL: "The specified call level is invalid",
    R.CUDBG_ERROR_COMMUNICATION_FAILURE: "Communication error between the debugger and the application",
    R.CUDBG_ERROR_INVALID_CONTEXT: "The specified context cannot be found",
    R.CUDBG_ERROR_ADDRESS_NOT_IN_DEVICE_MEM:
        "The address was not allocated from device memory (it is most likely system memory)",
    R.CUDBG_ERROR_MEMORY_UNMAPPING_FAILED: "The memory is not unmapped and cannot be unmapped",
    R.CUDBG_ERROR_INCOMPATIBLE_DISPLAY_DRIVER: "The display driver is incompatible with the API",
    R.CUDBG_ERROR_INVALID_MODULE: "The specified module is not valid",
    R.CUDBG_ERROR_LANE_NOT_IN_SYSCALL: "The specified lane is not inside a device syscall",
    R.CUDBG_ERROR_MEMCHECK_NOT_ENABLED: "Memcheck has not been enabled",
    R.CUDBG_ERROR_INVALID_ENVVAR_ARGS: "An environment variable has an invalid value",
    R.CUDBG_ERROR_OS_RESOURCES: "Allocating resources from the OS failed",
    R.CUDBG_ERROR_FORK_FAILED: "Forking the debugger process failed",
    R.CUDBG_ERROR_NO_DEVICE_AVAILABLE: "No CUDA-capable device was found",
    R.CUDBG_ERROR_ATTACH_NOT_POSSIBLE: "Attaching to the CUDA program is not possible",
    R.CUDBG_ERROR_WARP_RESUME_NOT_POSSIBLE:
        "resumeWarpsUntilPC() is not possible here; use resumeDevice() or singleStepWarp() instead",
    R.CUDBG_ERROR_INVALID_WARP_MASK: "The warp mask is zero or contains invalid warps",
    R.CUDBG_ERROR_AMBIGUOUS_MEMORY_ADDRESS: "The address cannot be resolved to one GPU unambiguously",
    R.CUDBG_ERROR_RECURSIVE_API_CALL: "A debug API entry point was called from within a debug API callback",
    R.CUDBG_ERROR_MISSING_DATA: "The requested data is missing",
    R.CUDBG_ERROR_NOT_SUPPORTED: "The operation is not supported",
}


def describe(result: int) -> str:
    """The human sentence for a result code; unknown codes say so with their number."""
    try:
        return DESCRIPTIONS[CUDBGResult(int(result))]
    except ValueError:
        return f"Unknown CUDBGResult code {int(result)}"


def fill_error_string(message: str, bufSz: int) -> tuple[CUDBGResult, bytes, int]:
    """getErrorStringEx's buffer contract for ``message``: ``(result, buf, msgSz)``.

    ``msgSz`` is the message size including the terminating NUL, reported
    whatever the outcome so the caller can size its buffer. When ``bufSz``
    is smaller the result is CUDBG_ERROR_BUFFER_TOO_SMALL and nothing is
    copied (a truncated message would read as a complete one); otherwise
    ``buf`` holds the ASCII message and its NUL. A size that is not a
    uint32_t is CUDBG_ERROR_INVALID_ARGS."""
    if isinstance(bufSz, bool) or not isinstance(bufSz, int) or not 0 <= bufSz <= UINT32_MAX:
        return R.CUDBG_ERROR_INVALID_ARGS, b"", 0
    encoded = message.encode("ascii", errors="replace") + b"\0"
    if len(encoded) > bufSz:
        return R.CUDBG_ERROR_BUFFER_TOO_SMALL, b"", len(encoded)
    return R.CUDBG_SUCCESS, encoded, len(encoded)


class LastError:
    """The message of the last API call that failed, for getErrorStringEx.

    The facade records every call's outcome: a success clears the message,
    a failure sets it to the code's name and description plus the call's own
    detail ("readRegister: CUDBG_ERROR_INVALID_LANE: The specified lane
    cannot be found (lane 40 >= 32)")."""

    def __init__(self) -> None:
        self.message = ""

    def record(self, call: str, result: int, detail: str = "") -> None:
        code = int(result)
        if code == R.CUDBG_SUCCESS:
            self.message = ""
            return
        text = f"{call}: {cudbgGetErrorString(code)}: {describe(code)}"
        self.message = f"{text} ({detail})" if detail else text

    def clear(self) -> None:
        self.message = ""

    def getErrorStringEx(self, bufSz: int) -> tuple[CUDBGResult, bytes, int]:
        """``(result, buf, msgSz)``; an empty message (no failure since the last call) is ``b"\\0"``."""
        return fill_error_string(self.message, bufSz)
