"""memcheck beyond the simulator's own faults: the leak check.

memcheck's device side needs no tool here: the simulator checks every
global, shared and local access itself and faults precisely, naming every
faulting thread (FaultReport.faulting_count/faulting_lanes), use after free
(the freed range stays quarantined and its record says where it was freed),
and driver memory a kernel may not touch. Double and invalid frees and
failing API calls are the host checks every tool keeps (host_checks.py).
What is memcheck's own, as compute-sanitizer's `--leak-check full`, is the
leak check: every user allocation (device, pitched, managed, pinned host)
made while the tool is installed and still not freed by the program when
it ends is reported at `finish()`, with its allocation site, then the
summary line:

    Leaked 1024 bytes at 0x700000000000
        Saved host backtrace up to driver entry point
            Host Frame: prog.py:16 in <module>
    LEAK SUMMARY: 1024 bytes leaked in 1 allocations

The one idea: a leak is an allocation the program never freed, so a free
made by a context's destruction (mcDeviceReset, cuCtxDestroy, the engine's
teardown) does not count as freeing it, as compute-sanitizer reports at
context destruction what is still allocated. Device arrays the Python
program dropped are freed first (their frees are queued for the next call).
Not covered: blocks of stream-ordered pools (the pool owns them until it is
trimmed or destroyed), device-side malloc, module globals and driver memory.
"""
from __future__ import annotations

import sys
import threading
from typing import Any

from gpudbg.driver.context import Context
from gpudbg.sanitizer.config import CheckConfig
from gpudbg.sanitizer.findings import Finding, ToolName
from gpudbg.sanitizer.report import PREFIX, Reporter
from gpudbg.sanitizer.sites import host_site
from gpudbg.sim.instrument import Tool
from gpudbg.sim.memory.spaces import Allocation, AllocationKind

LEAK_KINDS = frozenset({AllocationKind.DEVICE, AllocationKind.PITCHED, AllocationKind.MANAGED,
                        AllocationKind.HOST_PINNED})
# frees made by these functions are a context's teardown, not the program's
_TEARDOWN_CODE = frozenset({Context.destroy.__code__})


def _in_teardown(depth: int = 40) -> bool:
    f = sys._getframe(2)
    while f is not None and depth:
        if f.f_code in _TEARDOWN_CODE:
            return True
        f, depth = f.f_back, depth - 1
    return False


def _api_call() -> str | None:
    """The API function the program called that is allocating."""
    from gpudbg.cuda_driver import _base as cu_base
    from gpudbg.runtime.api import _base as mc_base
    return mc_base.current_call() or cu_base.current_call()


class MemcheckTool(Tool):
    """compute-sanitizer's memcheck: the leak check (--leak-check full)."""

    name = "memcheck"

    def __init__(self, config: CheckConfig, reporter: Reporter):
        self.config = config
        self.reporter = reporter
        # id(allocation) -> (allocation, host site, API function), in allocation order
        self._live: dict[int, tuple[Allocation, list[str], str | None]] = {}
        self._lock = threading.Lock()
        self.leak_summary: tuple[int, int] | None = None    # (bytes, allocations) once finished

    def allocated(self, memory: Any, allocation: Allocation) -> None:
        if self.config.leak_check and allocation.kind in LEAK_KINDS:
            entry = (allocation, host_site(), _api_call())
            with self._lock:
                self._live[id(allocation)] = entry

    def freed(self, memory: Any, allocation: Allocation) -> None:
        if id(allocation) in self._live and not _in_teardown():
            with self._lock:
                self._live.pop(id(allocation), None)

    def leaks(self) -> list[tuple[Allocation, list[str], str | None]]:
        """What is allocated and not freed by the program, in allocation order."""
        with self._lock:
            return list(self._live.values())

    def finish(self) -> None:
        if not self.config.leak_check:
            return
        arrays = sys.modules.get("gpudbg.api.memory")
        if arrays is not None:
            arrays.drain_pending_frees()         # collected device arrays: freed, not leaked
        leaks = self.leaks()
        for a, frames, api in leaks:
            self.reporter.add(Finding(
                tool=ToolName.MEMCHECK, kind="leak", title=f"Leaked {a.size} bytes at 0x{a.base:x}",
                address=a.base, size=a.size, host_site=list(frames),
                extra={"allocation": a.kind.value, **({"api": api} if api else {})}))
        total = sum(a.size for a, _f, _api in leaks)
        self.leak_summary = (total, len(leaks))
        line = f"{PREFIX} LEAK SUMMARY: {total} bytes leaked in {len(leaks)} allocations"
        self.reporter.write(f"{PREFIX}\n{line}" if self.reporter.separator_needed() else line)
