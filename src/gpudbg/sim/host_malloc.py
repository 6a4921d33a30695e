"""The host allocator's settings for a simulator process: fixed glibc
malloc thresholds, so that the interpreter's large numpy temporaries
(megabytes per instruction for a wave of 2^18 threads) are reused instead
of being returned to the kernel and faulted back in on every instruction.

Why: glibc adapts its mmap threshold to the largest block freed so far
and trims a heap's top once twice that much lies free. The thresholds a
run ends up with therefore depend on its allocation history: a launch
whose address arithmetic runs natively (sim/native) never frees the big
temporaries an interpreted one does, the threshold stays low, and every
later interpreted load (a sanitizer's memory instructions) then pays an
madvise(MADV_DONTNEED) and refaults its pages: measured here, `gpudbg
check --tool initcheck examples/matmul.py 512` took 36 s (11 s of it in
the kernel) instead of 5 s. Fixed thresholds make the cost independent of
history: blocks up to MMAP_THRESHOLD come from the heap, and free memory
goes back to the system once TRIM_THRESHOLD of it lies at a heap's top.

What it deliberately does not do: anything on a C library without glibc's
mallopt (musl, macOS): there `tune` does nothing and returns False. The
environment's own MALLOC_*_ and glibc.malloc tunables win: `tune` leaves
the allocator alone when any is set.
"""
from __future__ import annotations

import ctypes
import os
import threading

M_TRIM_THRESHOLD = -1     # mallopt parameters (glibc malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20      # glibc's largest accepted value on 64-bit hosts (HEAP_MAX_SIZE / 2)
TRIM_THRESHOLD = 128 << 20
_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")

_lock = threading.Lock()
_done: bool | None = None


def tune() -> bool:
    """Set the thresholds once per process; whether they are set (False:
    not glibc, or the user's environment configures malloc)."""
    global _done
    with _lock:
        if _done is None:
            _done = _apply()
        return _done


def _apply() -> bool:
    if any(os.environ.get(name) for name in _USER_SETTINGS) or "malloc" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success; the mmap threshold first (setting either
    # turns off glibc's adaptive thresholds)
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
