"""The host-side checks every sanitizer tool keeps: where memory was
allocated and freed, double and invalid frees, and failing API calls.

The one idea: the checks listen where the program meets the device, never
inside it. The memory registry's `allocated`/`freed` events give each user
allocation its allocation and free sites (`Allocation.alloc_site`,
`free_site`: "file.py:12"), which the simulator's own fault messages then
name ("is inside a freed 1024-byte allocation at 0x... (freed at
host.py:12)"); the API layers' error hooks (mc* and cuda* through
runtime/api/_base.py, cu* through cuda_driver/_base.py) report each failing
call the program made, once, named as it called it:

    Program hit cudaErrorInvalidValue (error 1) due to "invalid argument" on CUDA API call to cudaFree.

A failing free function (mcFree, cudaFree, cuMemFree, their Host/Async
variants) is classified against the registry instead, as one finding of
kind "double_free" or "invalid_free" with a precise second line ("Double
free of 0x... (the 1024-byte allocation made at x.py:5 was freed at
x.py:9)"), whatever --report-api-errors says: it is a memory error.

Deliberately not reported: mcErrorNotReady (not a failure), and the sticky
error by which a device fault reaches later calls (the fault itself was
reported where it happened, with every faulting thread). `all` and
`explicit` report the same calls: the API layers make no hidden calls of
their own that could fail. Device memory leaks are memcheck's
(sanitizer/memcheck.py)."""
from __future__ import annotations

import os
import re
import threading
import weakref
from typing import Any

from gpudbg.driver.status import CUresult
from gpudbg.sanitizer.config import ApiErrors, CheckConfig
from gpudbg.sanitizer.findings import Finding
from gpudbg.sanitizer.report import Reporter
from gpudbg.sanitizer.sites import host_site
from gpudbg.sim.command_execution import FAULT_CODES
from gpudbg.sim.instrument import Tool
from gpudbg.sim.memory.spaces import DRIVER_KINDS, Allocation

# cudaFree, cuMemFree_v2, mcFreeHost, cudaFreeAsync_ptsz, ...
FREE_FUNCTION = re.compile(r"^(mc|cuda|cu)(Mem)?Free(Host|Async)?(_v2)?(_ptsz|_ptds)?$")
# the codes (same numbers in every layer) by which a device fault reaches
# the host's later calls
DEVICE_FAULT_CODES = frozenset({int(s) for s in FAULT_CODES.values()}
                               | {int(CUresult.CUDA_ERROR_LAUNCH_FAILED),
                                  int(CUresult.CUDA_ERROR_LAUNCH_TIMEOUT)})
INVALID_VALUE = 1                  # cudaErrorInvalidValue = CUDA_ERROR_INVALID_VALUE = mcErrorInvalidValue
_POINTER = re.compile(r"0x[0-9a-fA-F]+")
_PREFIX = re.compile(r"^\w+(\(0x[0-9a-fA-F]+\))?: ")


def short_site(frames: list[str]) -> str | None:
    """'file.py:12' of the innermost frame of a host site (a native
    program's C frame as it is)."""
    if not frames:
        return None
    head, sep, _func = frames[-1].rpartition(" in ")
    path, colon, line = head.rpartition(":")
    if sep and colon and line.isdigit():
        return f"{os.path.basename(path)}:{line}"
    return frames[-1]


def _error_words(function: str, code: Any) -> tuple[str, int, str]:
    """(error name in the calling layer's enum, number, description)."""
    number = int(code)
    if function.startswith("cuda"):
        from gpudbg.cuda_runtime.errors import DESCRIPTIONS, NAMES
        return NAMES.get(number, f"cudaError {number}"), number, DESCRIPTIONS.get(number, "unknown error")
    if function.startswith("mc"):
        from gpudbg.runtime.errors import error_name, error_string
        return error_name(number), number, error_string(number)
    from gpudbg.cuda_driver.errors import DESCRIPTIONS as CU_DESCRIPTIONS
    try:
        status = CUresult(number)
    except ValueError:
        return f"CUresult {number}", number, "unknown error"
    return status.name, number, CU_DESCRIPTIONS.get(status, "unknown error")


def _reason(message: str, pointer: int) -> str:
    """The layer's sentence without its 'mcFree: ' prefix, about 'it'."""
    text = _PREFIX.sub("", message, count=1)
    named = f"0x{pointer:x} "
    return "it " + text[len(named):] if text.startswith(named) else text


def _made_at(a: Allocation) -> str:
    return f" made at {a.alloc_site}" if a.alloc_site else ""


def api_error_title(function: str, code: Any) -> str:
    """compute-sanitizer's line for a failing call."""
    name, number, text = _error_words(function, code)
    api = "API" if function.startswith("mc") else "CUDA API"
    return f'Program hit {name} (error {number}) due to "{text}" on {api} call to {function}.'


class HostChecks(Tool):
    """Allocation and free sites, double/invalid frees, failing API calls."""

    name = "host checks"

    def __init__(self, config: CheckConfig, reporter: Reporter):
        from gpudbg.cuda_driver import _base as cu_base
        from gpudbg.runtime.api import _base as mc_base
        self.config = config
        self.reporter = reporter
        self._memories: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._lock = threading.Lock()
        self._hooks = ((mc_base, self._api_failed), (cu_base, self._api_failed))
        for layer, hook in self._hooks:
            layer.add_api_error_hook(hook)

    # ------------------------------------------------------------ the registry's events
    def allocated(self, memory: Any, allocation: Allocation) -> None:
        if allocation.kind in DRIVER_KINDS:
            return
        with self._lock:
            self._memories.add(memory)
        allocation.alloc_site = short_site(host_site())

    def freed(self, memory: Any, allocation: Allocation) -> None:
        if allocation.kind not in DRIVER_KINDS:
            allocation.free_site = short_site(host_site())

    # ------------------------------------------------------------ API calls
    def _api_failed(self, function: str, code: Any, message: str) -> None:
        number = int(code)
        if number in DEVICE_FAULT_CODES:
            return
        frames = host_site()
        if FREE_FUNCTION.match(function) and number == INVALID_VALUE:
            pointer = _POINTER.search(message or "")
            if pointer is not None:
                self._bad_free(function, code, message, int(pointer.group(0), 16), frames)
                return
        if self.config.report_api_errors is ApiErrors.NO:
            return
        name = _error_words(function, code)[0]
        details = [message] if message else []
        self.reporter.add(Finding(tool=self.config.tool, kind="api_error",
                                  title=api_error_title(function, code), details=details,
                                  host_site=frames,
                                  extra={"function": function, "error": name, "code": number}))

    def _lookup(self, pointer: int) -> tuple[Allocation | None, Allocation | None]:
        """(live allocation containing pointer, freed record containing it)."""
        with self._lock:
            memories = list(self._memories)
        for memory in memories:
            live = memory.find(pointer)
            gone = memory.freed_record(pointer)
            if live is not None or gone is not None:
                return live, gone
        return None, None

    def _bad_free(self, function: str, code: Any, message: str, pointer: int,
                  frames: list[str]) -> None:
        live, gone = self._lookup(pointer)
        made = _made_at
        record = None
        if live is None and ("double free" in message or (gone is not None and gone.base == pointer)):
            kind, record = "double_free", gone
            if gone is None or gone.base != pointer:
                line = f"Double free of 0x{pointer:x}"
            elif gone.free_site:
                line = (f"Double free of 0x{pointer:x} (the {gone.size}-byte allocation{made(gone)} "
                        f"was freed at {gone.free_site})")
            else:
                line = f"Double free of 0x{pointer:x} (the {gone.size}-byte allocation{made(gone)} was already freed)"
        else:
            kind = "invalid_free"
            if live is not None and live.base != pointer:
                record = live
                line = (f"Invalid free of 0x{pointer:x}: it points {pointer - live.base} bytes into the "
                        f"{live.size}-byte allocation at 0x{live.base:x}{made(live)}, not at its start")
            elif live is not None:
                record = live
                line = (f"Invalid free of 0x{pointer:x}: the {live.size}-byte {live.kind.value} "
                        f"allocation{made(live)} is not freed by {function}")
            elif gone is not None:
                record = gone
                line = (f"Invalid free of 0x{pointer:x}: it points {pointer - gone.base} bytes into a "
                        f"freed {gone.size}-byte allocation at 0x{gone.base:x}{made(gone)}")
            else:
                line = f"Invalid free of 0x{pointer:x}: {_reason(message, pointer)}"
        self.reporter.add(Finding(tool=self.config.tool, kind=kind, title=api_error_title(function, code),
                                  details=[line], address=pointer,
                                  size=record.size if record is not None else None, host_site=frames,
                                  extra={"function": function, "error": _error_words(function, code)[0],
                                         "code": int(code)}))

    # ------------------------------------------------------------ end of the run
    def finish(self) -> None:
        for layer, hook in self._hooks:
            layer.remove_api_error_hook(hook)
