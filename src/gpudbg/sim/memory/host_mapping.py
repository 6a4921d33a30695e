"""The simulated GPU's address range, reserved in the host process, and the
real host pages behind pinned and managed allocations.

The one idea: device pointers are addresses of this very process. At import
the whole device arena (every simulated device's VA window) is reserved
with one `mmap(PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE)` placed
with MAP_FIXED_NOREPLACE semantics, so no host allocation ever lands at a
device address and a host dereference of a device pointer is a SIGSEGV in
the host program, as with a real GPU. Memory the host must see (pinned host
memory, managed memory) is then made real by mapping read-write pages with
MAP_FIXED over part of the reservation; the simulator's allocation is a
numpy array over exactly those pages, so a kernel's store, a copy engine's
write and a C program's `p[i] = x` touch the same bytes with nothing to
keep in sync. Releasing pages maps PROT_NONE over them again (one atomic
replacement: the hole is never open for another mapping to take).

The arena is tried at the simulator's fixed base (0x7000_0000_0000) first,
then at a few fixed fallbacks; `GlobalMemory.GLOBAL_BASE` is whatever the
reservation got. When no base can be reserved, `arena()` is None and
`arena_error()` says why; `GPUDBG_HOST_MAPPING=0` turns the whole mechanism
off (host-visible memory is then plain numpy, reachable only through the
Python API's host_view).

Pages stay mapped while explicitly held: `HostPages.release()` unmaps them
even if numpy views still exist (a dangling pointer faults, as after
cudaFreeHost). Pages whose last reference dies without a release (a
simulator object dropped with live allocations) are released by a
finalizer. It does not lock pages in RAM (no mlock) and is Linux-only.
"""
from __future__ import annotations

import ctypes
import errno
import mmap
import os
import sys
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from gpudbg.sim.memory.spaces import SHARED_WINDOW_BASE

__all__ = ["PAGE", "NOMINAL_BASE", "ARENA_SIZE", "FALLBACK_BASES", "Arena", "HostPages",
           "HostReservationError", "arena", "arena_error", "arena_failure", "enabled", "map_pages", "live_ranges",
           "is_mapped", "page_round"]

PAGE = mmap.PAGESIZE
NOMINAL_BASE = 0x7000_0000_0000
ARENA_SIZE = SHARED_WINDOW_BASE - NOMINAL_BASE        # 14 TiB: device windows 0..13
FALLBACK_BASES = (0x6000_0000_0000, 0x4000_0000_0000, 0x3000_0000_0000)

_PROT_NONE, _PROT_RW = 0, 0x1 | 0x2
_MAP_PRIVATE, _MAP_FIXED, _MAP_ANONYMOUS = 0x02, 0x10, 0x20
_MAP_NORESERVE, _MAP_FIXED_NOREPLACE = 0x4000, 0x100000
_MS_ASYNC = 1
_FAILED = ctypes.c_void_p(-1).value


class HostReservationError(OSError):
    """The device address range cannot be reserved in (or mapped into) the
    host process."""


@dataclass(frozen=True)
class Arena:
    """The reserved device address range [base, base + size)."""

    base: int
    size: int

    @property
    def end(self) -> int:
        return self.base + self.size

    def covers(self, start: int, size: int) -> bool:
        return self.base <= start and start + size <= self.end


def page_round(n: int) -> int:
    """n rounded up to whole pages (at least one page)."""
    return max(PAGE, (n + PAGE - 1) // PAGE * PAGE)


# ------------------------------------------------------------------ libc

_libc = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.mmap.restype = ctypes.c_void_p
        lib.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                             ctypes.c_int, ctypes.c_long]
        lib.munmap.restype = ctypes.c_int
        lib.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        lib.msync.restype = ctypes.c_int
        lib.msync.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        _libc = lib
    return _libc


def _mmap(address: int, length: int, prot: int, flags: int) -> tuple[int | None, int]:
    """(address mapped or None, errno)."""
    ctypes.set_errno(0)
    r = _lib().mmap(address, length, prot, flags | _MAP_PRIVATE | _MAP_ANONYMOUS, -1, 0)
    if r is None or r == _FAILED:
        return None, ctypes.get_errno()
    return int(r), 0


def _reserve_at(base: int, size: int) -> tuple[str, int] | None:
    """Reserve [base, base+size) PROT_NONE without replacing anything; None
    on success, else (why not, errno)."""
    got, err = _mmap(base, size, _PROT_NONE, _MAP_NORESERVE | _MAP_FIXED_NOREPLACE)
    if got is not None and got != base:   # a kernel without MAP_FIXED_NOREPLACE: a hint
        _lib().munmap(got, size)
        got, err = None, errno.EEXIST
    if got is None:
        why = "part of it is already mapped" if err == errno.EEXIST else os.strerror(err)
        if err == errno.ENOMEM:
            why += " (is the address space limited, e.g. by ulimit -v?)"
        return f"0x{base:x}-0x{base + size:x}: {why}", err
    return None


# ------------------------------------------------------------------ the arena

_lock = threading.RLock()
_arena: Arena | None = None
_arena_error: str | None = None
_arena_errno = 0
_tried = False


def enabled() -> bool:
    """Whether device memory is to be mapped into the host process at all
    (GPUDBG_HOST_MAPPING=0 turns it off; read once, at the first arena())."""
    return not _off


_off = os.environ.get("GPUDBG_HOST_MAPPING", "1").strip().lower() in ("0", "no", "off", "false")


def arena() -> Arena | None:
    """The process's device arena, reserved on the first call (None when
    it could not be reserved or host mapping is turned off)."""
    global _arena, _arena_error, _arena_errno, _tried
    with _lock:
        if _tried:
            return _arena
        _tried = True
        if not sys.platform.startswith("linux"):
            _arena_error = f"host mapping of device memory needs Linux, not {sys.platform}"
            return None
        if _off:
            _arena_error = "host mapping of device memory is turned off (GPUDBG_HOST_MAPPING=0)"
            return None
        failures = []
        for base in (NOMINAL_BASE, *FALLBACK_BASES):
            failed = _reserve_at(base, ARENA_SIZE)
            if failed is None:
                _arena = Arena(base, ARENA_SIZE)
                return _arena
            failures.append(failed[0])
            _arena_errno = _arena_errno or failed[1]
        _arena_error = ("cannot reserve the simulated GPU's address range in this process (tried "
                        + "; ".join(failures) + "); set GPUDBG_HOST_MAPPING=0 to run with device, "
                        "pinned and managed memory visible to Python only")
        return None


def arena_error() -> str | None:
    """Why there is no arena (None when there is one)."""
    arena()
    return _arena_error


def arena_failure() -> HostReservationError:
    """The error to raise where the arena is needed and missing."""
    arena()
    return HostReservationError(_arena_errno or errno.ENOMEM, _arena_error)


# ------------------------------------------------------------------ real pages

_live: dict[int, int] = {}        # start -> length of read-write pages handed out


def _unmap_pages(start: int, length: int) -> None:
    with _lock:
        if _live.get(start) != length:
            return
        got, err = _mmap(start, length, _PROT_NONE, _MAP_NORESERVE | _MAP_FIXED)
        if got is None:             # cannot re-reserve: at least give the pages back
            _lib().munmap(start, length)
        del _live[start]


class HostPages:
    """Read-write pages [start, start+length) inside the arena; `array` is a
    uint8 numpy view of all of them."""

    def __init__(self, start: int, length: int):
        self.start = start
        self.length = length
        self._buffer = (ctypes.c_uint8 * length).from_address(start)
        self.array = np.ctypeslib.as_array(self._buffer)
        # the pages outlive every view; dropped without release(): unmap
        self._finalizer = weakref.finalize(self._buffer, _unmap_pages, start, length)

    @property
    def released(self) -> bool:
        return not self._finalizer.alive

    def release(self) -> None:
        """Unmap now (re-reserved PROT_NONE); views left over now fault."""
        self._finalizer()

    def __repr__(self) -> str:
        state = "released" if self.released else "mapped"
        return f"HostPages(0x{self.start:x}+0x{self.length:x}, {state})"


def map_pages(start: int, length: int) -> HostPages:
    """Zero-filled read-write pages at exactly `start` (page aligned,
    inside the arena, not overlapping pages already handed out)."""
    a = arena()
    if a is None:
        raise arena_failure()
    if start % PAGE or length <= 0 or length % PAGE or not a.covers(start, length):
        raise ValueError(f"0x{start:x}+0x{length:x} is not a page-aligned range inside the device "
                         f"arena 0x{a.base:x}-0x{a.end:x}")
    with _lock:
        for s, n in _live.items():
            if s < start + length and start < s + n:
                raise ValueError(f"0x{start:x}+0x{length:x} overlaps host pages already mapped at "
                                 f"0x{s:x}+0x{n:x}")
        got, err = _mmap(start, length, _PROT_RW, _MAP_FIXED)
        if got is None:
            raise HostReservationError(err, f"cannot map {length} bytes of host memory at "
                                            f"0x{start:x}: {os.strerror(err)}")
        _live[start] = length
        return HostPages(start, length)


def live_ranges(lo: int, hi: int) -> list[tuple[int, int]]:
    """Sorted (start, end) of mapped pages overlapping [lo, hi), whoever
    holds them (several simulator memories may share the arena)."""
    with _lock:
        return sorted((s, s + n) for s, n in _live.items() if s < hi and lo < s + n)


def is_mapped(address: int, size: int) -> bool:
    """Whether every page of [address, address+size) is mapped in this
    process (msync fails with ENOMEM on an unmapped page)."""
    if size <= 0:
        return True
    start = address // PAGE * PAGE
    length = page_round(address + size - start)
    ctypes.set_errno(0)
    return _lib().msync(start, length, _MS_ASYNC) == 0
