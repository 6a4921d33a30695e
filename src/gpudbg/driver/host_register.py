"""Registered host memory (mcHostRegister): an existing Python buffer made
device-accessible, "page-locked", without copying it.

The one idea: the device range is a mapping whose backing store *is* the
buffer (GlobalMemory.map with external data), so a kernel's store is
visible in the numpy array at once and a host write is seen by the next
kernel, as with real page-locked memory. The registry is keyed by the
buffer's host address, so copies that are handed the buffer object itself
(not the device pointer) find the registration too and take the pinned
path ("the range is added to the same tracking as mcMallocHost"). A buffer
that only partly overlaps a registration is refused, as the seed requires.
A C program's memory is registered the same way: the C ABI layer hands in
`cabi.host_view(address, size)`, a numpy view of the program's bytes.
Device memory, pinned and managed memory (the host process's device arena,
sim/memory/host_mapping.py) and unmapped addresses are refused before any
byte is touched. The registered range keeps a device address of its own in
the simulated GPU's VA (mcHostGetDevicePointer), distinct from the host
address; both name the same bytes. It does not pin anything for real and
does not follow a buffer that Python reallocates: an exported buffer
(bytearray, numpy array) cannot be resized while registered, which is what
keeps the alias valid.
"""
from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpudbg.driver.status import CUresult, EngineError
from gpudbg.sim.memory import host_mapping
from gpudbg.sim.memory.spaces import Allocation, AllocationKind

INVALID = CUresult.CUDA_ERROR_INVALID_VALUE
READ_ONLY_FLAG = 0x8
GUARD = 256        # unmapped bytes after the range, like an allocation's redzone


@dataclass(eq=False)
class Registration:
    host_address: int
    size: int
    flags: int
    context: Any
    allocation: Allocation
    reservation: int
    array: np.ndarray          # the uint8 alias of the user's buffer (keeps it exported)

    @property
    def device_address(self) -> int:
        return self.allocation.base

    @property
    def host_end(self) -> int:
        return self.host_address + self.size


def host_bytes(obj: Any) -> np.ndarray:
    """A flat uint8 array aliasing a buffer-protocol object."""
    try:
        mv = memoryview(obj)
    except TypeError:
        raise EngineError(INVALID, f"host memory must be a buffer-protocol object (numpy array, "
                                   f"bytearray), not {type(obj).__name__}") from None
    if not mv.c_contiguous:
        raise EngineError(INVALID, "host buffer must be C-contiguous")
    return np.frombuffer(mv.cast("B") if mv.nbytes else mv, dtype=np.uint8)


def host_address(arr: np.ndarray) -> int:
    return int(arr.__array_interface__["data"][0])


class HostRegistry:
    """Process-wide table of registered host ranges (portable: every
    context sees them)."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._regs: list[Registration] = []
        self.lock = threading.RLock()

    # ------------------------------------------------------------ queries
    def lookup(self, address: int, nbytes: int) -> tuple[Registration, int] | None:
        """The registration wholly containing [address, address+nbytes),
        None when the range touches no registration; a partial overlap is
        an error."""
        with self.lock:
            end = address + max(nbytes, 1)
            i = bisect.bisect_right(self._starts, address) - 1
            if i >= 0:
                r = self._regs[i]
                if address < r.host_end:
                    if end <= r.host_end:
                        return r, address - r.host_address
                    raise EngineError(INVALID, f"host range 0x{address:x}+{nbytes} runs past the "
                                               f"end of the {r.size}-byte registered range")
            j = i + 1
            if j < len(self._regs) and self._regs[j].host_address < end:
                raise EngineError(INVALID, f"host range 0x{address:x}+{nbytes} is partly "
                                           f"registered memory; it must be all registered or none")
            return None

    def lookup_buffer(self, obj: Any, nbytes: int | None = None) -> tuple[Registration, int] | None:
        arr = host_bytes(obj)
        return self.lookup(host_address(arr), arr.size if nbytes is None else nbytes)

    def by_device_address(self, address: int) -> Registration | None:
        with self.lock:
            for r in self._regs:
                if r.device_address == address:
                    return r
            return None

    def by_host_address(self, address: int) -> Registration | None:
        """The registration starting at host address `address`."""
        with self.lock:
            i = bisect.bisect_left(self._starts, address)
            if i < len(self._starts) and self._starts[i] == address:
                return self._regs[i]
            return None

    # ------------------------------------------------------------ changes
    def register(self, context: Any, obj: Any, size: int, flags: int) -> Registration:
        arr = host_bytes(obj)
        if size <= 0 or size > arr.size:
            raise EngineError(INVALID, f"sizeBytes={size} must be in 1..{arr.size} (the buffer's size)")
        read_only = bool(flags & READ_ONLY_FLAG)
        if not arr.flags.writeable and not read_only:
            raise EngineError(INVALID, "the buffer is read-only; register it with "
                                       "mcHostRegisterReadOnly")
        arr = arr[:size]
        start = host_address(arr)
        _check_host_range(start, size)
        gpu = context.gpu
        with self.lock:
            i = bisect.bisect_right(self._starts, start) - 1
            clash = (i >= 0 and self._regs[i].host_end > start) or \
                (i + 1 < len(self._regs) and self._regs[i + 1].host_address < start + size)
            if clash:
                raise EngineError(CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                                  f"host range 0x{start:x}+{size} overlaps a registered range")
            with gpu.cv:
                base = gpu.memory.reserve(size + GUARD, align=4096)
                alloc = gpu.memory.map(base, size, data=arr, kind=AllocationKind.HOST_REGISTERED,
                                       label=f"registered host 0x{start:x}", readonly=read_only)
            reg = Registration(start, size, flags, context, alloc, base, arr)
            self._starts.insert(i + 1, start)
            self._regs.insert(i + 1, reg)
            return reg

    def unregister(self, reg: Registration) -> None:
        gpu = reg.context.gpu
        with self.lock:
            i = self._regs.index(reg)
            del self._regs[i]
            del self._starts[i]
            with gpu.cv:
                gpu.memory.unmap(reg.device_address)
                gpu.memory.release(reg.reservation)

    def find_host(self, obj: Any) -> Registration:
        """The registration that starts at a buffer's first byte (for
        mcHostUnregister: the base must be the registered base)."""
        if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
            reg = self.by_host_address(int(obj)) or self.by_device_address(int(obj))
        else:
            found = self.lookup_buffer(obj, 1) if host_bytes(obj).size else None
            reg = found[0] if found is not None and found[1] == 0 else None
        if reg is None:
            raise EngineError(CUresult.CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
                              f"{_describe(obj)} is not the start of a registered host range")
        return reg

    def owned_by(self, context: Any) -> list[Registration]:
        with self.lock:
            return [r for r in self._regs if r.context is context]


def _check_host_range(start: int, size: int) -> None:
    """Refuse what is not ordinary mapped host memory, without touching it."""
    arena = host_mapping.arena()
    if arena is not None and start < arena.end and arena.base < start + size:
        if host_mapping.live_ranges(start, start + size):
            raise EngineError(CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                              f"host range 0x{start:x}+{size} is pinned or managed memory, "
                              f"which is page-locked and device-accessible already")
        raise EngineError(INVALID, f"host range 0x{start:x}+{size} is in the simulated GPU's "
                                   f"address range 0x{arena.base:x}-0x{arena.end:x}; it is not "
                                   f"host memory")
    if not host_mapping.is_mapped(start, size):
        raise EngineError(INVALID, f"host range 0x{start:x}+{size} is not mapped memory of this "
                                   f"process")


def _describe(obj: Any) -> str:
    if isinstance(obj, (int, np.integer)):
        return f"0x{int(obj):x}"
    return f"the {type(obj).__name__} buffer"
