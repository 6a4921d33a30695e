"""Where things happen: device sites from a wave's state, host sites from
the calling thread's Python stack.

The host site of an allocation, a free or a launch is the stack of the
user's program at the API call, without gpudbg's, Numba's and
cuda-python's own frames (what compute-sanitizer calls the host backtrace
"up to driver entry point"). Native programs call through the C bridge, so
their Python stack ends at the bridge: their host site is empty."""
from __future__ import annotations

import os
import sys
from typing import Any

from gpudbg.sanitizer.findings import DeviceSite
from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.instrument import Tool

_LIBRARY_ROOTS: tuple[str, ...] = ()


def _roots() -> tuple[str, ...]:
    global _LIBRARY_ROOTS
    if not _LIBRARY_ROOTS:
        import gpudbg
        roots = [os.path.dirname(os.path.abspath(gpudbg.__file__)) + os.sep]
        for name in ("numba", "numba_cuda", "cuda", "runpy", "importlib", "threading"):
            mod = sys.modules.get(name)
            path = getattr(mod, "__file__", None) if mod is not None else None
            if path:
                roots.append(os.path.dirname(os.path.abspath(path)) + os.sep)
        _LIBRARY_ROOTS = tuple(roots)
    return _LIBRARY_ROOTS


def host_site(limit: int = 8) -> list[str]:
    """The user's frames of the calling thread, outermost first, as
    'file:line in function'."""
    roots = _roots()
    frames = []
    f = sys._getframe(1)
    while f is not None:
        path = f.f_code.co_filename
        if not path.startswith("<frozen") and not os.path.abspath(path).startswith(roots):
            frames.append(f"{path}:{f.f_lineno} in {f.f_code.co_name}")
        f = f.f_back
    frames.reverse()
    return frames[-limit:]


def device_site(X: Any, pc: int, slot: int | None) -> DeviceSite:
    """The instruction at `pc` executed by wave slot `slot` (None: no thread)."""
    r = X._report(CUDBGException.CUDBG_EXCEPTION_NONE, "", pc, slot)
    prog = X.program
    entry = prog.functions[r.function].entry_pc if r.function in prog.functions else 0
    offset = r.pc - prog.code_address(entry)
    return DeviceSite(kernel=r.kernel, function=r.function, pc=r.pc, offset=offset,
                      instruction=r.instruction, source_file=r.source_file,
                      source_line=r.source_line, block=r.block, thread=r.thread,
                      device=getattr(X.gpu, "ordinal", None), grid_id=X.grid_id)


class LaunchSites(Tool):
    """Remembers the host call site of every launch (captured on the
    launching thread), so a device finding names the Python line that
    launched its kernel. Installed first by every sanitizer session."""

    name = "launch sites"
    LIMIT = 4096          # launches remembered (the oldest are forgotten)

    def __init__(self, config: Any = None, reporter: Any = None):
        self.sites: dict[tuple[int | None, int], list[str]] = {}
        if reporter is not None:
            reporter.launch_sites = self

    def launch_enqueued(self, gpu: Any, grid_id: int, kernel: str) -> None:
        if len(self.sites) >= self.LIMIT:
            self.sites.pop(next(iter(self.sites)))
        self.sites[(getattr(gpu, "ordinal", None), grid_id)] = host_site()

    def site_of(self, site: DeviceSite | None) -> list[str]:
        if site is None or site.grid_id is None:
            return []
        return list(self.sites.get((site.device, site.grid_id), []))
