"""What gpudbg says in the Debug Adapter Protocol, as data: the
capabilities it announces, one exception-breakpoint filter per CUDA
exception kind, the stop reasons, and the three message shapes.

The one idea: everything a client can learn about the adapter before
talking to the device is in these tables, so the `initialize` response,
the tests and the VS Code extension's documentation read the same
source. Names follow the DAP specification's spelling exactly
(`supportsConditionalBreakpoints`, reason `"breakpoint"`, ...); the
exception filter ids are the CUDBGException_t names of seed 000.
"""
from __future__ import annotations

import enum
import itertools
import threading
from typing import Any

from gpudbg.sim.faults import EXCEPTION_TITLES, CUDBGException

ADAPTER_ID = "gpudbg"
TOKEN_ENV = "GPUDBG_DAP_TOKEN"     # the TCP server's token, when not given with --token


class StopReason(str, enum.Enum):
    """The `reason` of a DAP `stopped` event (specification spelling)."""

    BREAKPOINT = "breakpoint"
    FUNCTION_BREAKPOINT = "function breakpoint"
    DATA_BREAKPOINT = "data breakpoint"
    STEP = "step"
    EXCEPTION = "exception"
    PAUSE = "pause"
    ENTRY = "entry"


def exception_filters() -> list[dict[str, Any]]:
    """One filter per CUDA exception kind a lane or warp can raise (every
    CUDBGException_t value but NONE and UNKNOWN); all on by default, as
    cuda-gdb always stops on a device exception."""
    out = []
    for kind in CUDBGException:
        if kind in (CUDBGException.CUDBG_EXCEPTION_NONE, CUDBGException.CUDBG_EXCEPTION_UNKNOWN):
            continue
        title = EXCEPTION_TITLES.get(kind) or kind.name[len("CUDBG_EXCEPTION_"):].replace("_", " ").title()
        out.append({"filter": kind.name, "label": title, "default": True,
                    "description": f"Stop when a kernel raises {kind.name} ({int(kind)})"})
    return out


FILTER_KINDS: dict[str, CUDBGException] = {f["filter"]: CUDBGException[f["filter"]] for f in exception_filters()}

CAPABILITIES: dict[str, Any] = {
    "supportsConfigurationDoneRequest": True,
    "supportsFunctionBreakpoints": True,
    "supportsConditionalBreakpoints": True,
    "supportsHitConditionalBreakpoints": True,
    "supportsLogPoints": True,
    "supportsEvaluateForHovers": True,
    "supportsSetVariable": True,
    "supportsSetExpression": False,
    "supportsTerminateRequest": True,
    "supportTerminateDebuggee": True,
    "supportsReadMemoryRequest": True,
    "supportsWriteMemoryRequest": True,
    "supportsDisassembleRequest": True,
    "supportsSteppingGranularity": True,
    "supportsInstructionBreakpoints": False,
    "supportsExceptionInfoRequest": True,
    "supportsValueFormattingOptions": True,
    "supportsSingleThreadExecutionRequests": False,
    "supportsRestartRequest": False,
    "supportsStepBack": False,
    "supportsDataBreakpoints": True,
    "supportsCompletionsRequest": False,
    "supportsModulesRequest": False,
    "supportsDelayedStackTraceLoading": True,
    "exceptionBreakpointFilters": exception_filters(),
}


class DapError(Exception):
    """A request that fails: the response says `message` (and `error.format`
    the client may show); `show` asks the client to show it to the user."""

    def __init__(self, message: str, show: bool = False):
        super().__init__(message)
        self.message = message
        self.show = show


def int_arg(args: dict, name: str, default: int = 0, minimum: int | None = None) -> int:
    """An integer argument, or a DapError naming it (JSON has no other
    integers: a string, float or bool is the client's mistake)."""
    v = args.get(name)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        raise DapError(f"argument '{name}' must be an integer, got {v!r}.")
    if minimum is not None and v < minimum:
        raise DapError(f"argument '{name}' must be at least {minimum}, got {v}.")
    return v


def obj_arg(args: dict, name: str) -> dict:
    """An object argument ({} when absent), or a DapError naming it."""
    v = args.get(name)
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise DapError(f"argument '{name}' must be an object, got {v!r}.")
    return v


def list_arg(args: dict, name: str) -> list:
    """A list argument ([] when absent), or a DapError naming it."""
    v = args.get(name)
    if v is None:
        return []
    if not isinstance(v, list):
        raise DapError(f"argument '{name}' must be a list, got {v!r}.")
    return v


class Sequencer:
    """The adapter's `seq` numbers, one series across threads."""

    def __init__(self, start: int = 1) -> None:
        self._next = itertools.count(start)
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            return next(self._next)

    def peek(self) -> int:
        """The next number, without using it (a native handoff continues the series)."""
        with self._lock:
            n = next(self._next)
            self._next = itertools.count(n)
            return n


def response(seq: int, request: dict[str, Any], body: dict[str, Any] | None = None,
             error: str | None = None, show: bool = False) -> dict[str, Any]:
    msg: dict[str, Any] = {"seq": seq, "type": "response", "request_seq": request.get("seq", 0),
                           "command": request.get("command", ""), "success": error is None}
    if error is not None:
        msg["message"] = error
        msg["body"] = {"error": {"id": 1, "format": error, "showUser": show}}
    elif body is not None:
        msg["body"] = body
    return msg


def event(seq: int, name: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"seq": seq, "type": "event", "event": name}
    if body is not None:
        msg["body"] = body
    return msg
