"""Where things happen: device sites from a wave's state, host sites from
the calling thread's Python stack.

The host site of an allocation, a free or a launch is the stack of the
user's program at the API call, without gpudbg's, Numba's and
cuda-python's own frames (what compute-sanitizer calls the host backtrace
"up to driver entry point"). A native program has no Python frame of its
own (it calls through the C bridge): its host site is its C frames, as
glibc's backtrace_symbols names them (without debug information: module,
exported symbol or offset)."""
from __future__ import annotations

import os
from typing import Any

from gpudbg.driver.host_site import python_frames
from gpudbg.sanitizer.findings import DeviceSite
from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.instrument import Tool

# set in a native program's process (cli/native.py), where C frames are the user's
native_process = False


def host_site(limit: int = 8) -> list[str]:
    """The user's frames of the calling thread, outermost first, as
    'file:line in function'; for a native program (no Python frame of its
    own) the C frames of the program and its libraries."""
    frames = python_frames(limit)
    if not frames and native_process:
        frames = native_frames()
    return frames[-limit:]


# Shared objects that are the machinery between a native program and
# gpudbg's Python, never the user's code.
_MACHINERY = ("libpython", "libffi", "_ctypes", "libc.so", "ld-linux", "libcuda.so",
              "libcudart.so", "libnvJitLink.so", "libstdc++", "libgcc_s", "python3.")


def _is_machinery(frame: str) -> bool:
    module = os.path.basename(frame.split("(")[0].split(" ")[0])
    return module in ("python", "python3") or module.startswith(_MACHINERY)


def native_frames(depth: int = 64) -> list[str]:
    """The calling thread's C frames outside the machinery (glibc's
    backtrace/backtrace_symbols), outermost first: 'module(symbol+0x12)
    [0xaddr]' as glibc words them."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        buf = (ctypes.c_void_p * depth)()
        n = libc.backtrace(buf, depth)
        libc.backtrace_symbols.restype = ctypes.POINTER(ctypes.c_char_p)
        names = libc.backtrace_symbols(buf, n)
    except (OSError, AttributeError):
        return []
    if not names:
        return []
    try:
        frames = [names[i].decode(errors="replace") for i in range(n)]
    finally:
        libc.free(ctypes.cast(names, ctypes.c_void_p))
    own = [f for f in frames if not _is_machinery(f)]
    own.reverse()
    return own


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
