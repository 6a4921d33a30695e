"""Vocabulary of the memory system: spaces, allocation kinds, the Allocation
record and the errors every memory operation can raise.

The one idea: a fault is a value with everything a report needs (kind, space,
first faulting lane and all the others, address, size, a compute-sanitizer-
style sentence), built in one place so every path words it the same way. This module holds no
memory and does no address arithmetic.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpudbg.sim.faults import CUDBGException, LaneFault


# Generic address = window base + space offset (windows.py); global VA stays below.
SHARED_WINDOW_BASE = 0x7E00_0000_0000
LOCAL_WINDOW_BASE = 0x7F00_0000_0000
WINDOW_SIZE = 1 << 32


class Space(enum.Enum):
    """PTX state spaces as the debugger names them."""

    GLOBAL = "global"
    SHARED = "shared"
    LOCAL = "local"
    CONST = "const"
    PARAM = "param"
    GENERIC = "generic"
    CODE = "code"

    @property
    def sanitizer_name(self) -> str:
        """The spelling compute-sanitizer uses: __global__, __shared__, ..."""
        return _SANITIZER_NAMES[self]


_SANITIZER_NAMES = {
    Space.GLOBAL: "__global__", Space.SHARED: "__shared__", Space.LOCAL: "__local__",
    Space.CONST: "__constant__", Space.PARAM: "__param__", Space.GENERIC: "__generic__",
    Space.CODE: "__code__",
}


class AllocationKind(enum.Enum):
    """Who made an allocation; decides which free function may release it."""

    DEVICE = "device"
    PITCHED = "pitched"
    HOST_PINNED = "host pinned"
    HOST_REGISTERED = "host registered"
    MANAGED = "managed"
    MODULE_GLOBAL = "module global"
    MODULE_CONST = "module constant"
    DEVICE_HEAP = "device heap"
    STAGING = "staging"
    LAUNCH = "launch"
    GRID_WORKSPACE = "grid workspace"   # a cooperative launch's grid.sync() barrier: kernels use it
    DEVICE_LAUNCH = "device launch"     # a device-side launch's parameter buffer (sim/device_runtime.py)
    RING = "ring"
    SEMAPHORE = "semaphore"
    CODE = "code"
    RESERVED = "reserved"  # a VA reservation without backing
    ARRAY = "CUDA array"  # texel storage of a CUDA (mipmapped) array (sim/texture)


# The driver's own memory (launch descriptors and parameter copies, command
# rings, semaphores, the code image, copy staging): the driver reads and
# writes it through host-side views, and a kernel's load, store or atomic
# there faults (allocations of these kinds carry `driver_only`).
DRIVER_KINDS = frozenset({AllocationKind.LAUNCH, AllocationKind.RING, AllocationKind.SEMAPHORE,
                          AllocationKind.CODE, AllocationKind.STAGING})

# How an InvalidFree names the allocator a wrongly freed kind belongs to.
FREE_HINTS = {
    AllocationKind.HOST_PINNED: "a pinned host allocation; free it with the host allocator",
    AllocationKind.HOST_REGISTERED: "a registered host range; unregister it instead of freeing it",
    AllocationKind.MANAGED: "a managed allocation; free it with the managed allocator",
    AllocationKind.MODULE_GLOBAL: "a module global; it is released when its module is unloaded",
    AllocationKind.MODULE_CONST: "a module constant; it is released when its module is unloaded",
    AllocationKind.DEVICE_HEAP: "the device malloc heap; it is owned by the context",
    AllocationKind.RESERVED: "a virtual address reservation; release it instead of freeing it",
}


class AccessType(enum.Enum):
    """The verb of a faulting access, as compute-sanitizer words it."""

    READ = "read"
    WRITE = "write"
    ATOMIC = "atomic"


@dataclass(eq=False)
class Allocation:
    """One contiguous, backed range of device virtual addresses.

    `data` is exactly `size` bytes and never moves, so views handed out stay
    valid for the allocation's lifetime. `suballocator`, when set (device
    heap), narrows which bytes inside the range are accessible. For pinned
    and managed memory `data` is a view of real host pages at `base`
    (`host_pages`): the host program dereferences the same bytes."""

    base: int
    size: int
    kind: AllocationKind
    label: str
    data: np.ndarray
    readonly: bool = False
    alloc_id: int = 0
    freed: bool = False
    footprint: int = 0          # bytes of VA this record occupies (>= 1)
    suballocator: Any = None
    mapped_in: int | None = None  # base of the VA reservation it is mapped into
    charged: bool = True          # counted against the device capacity
    host_pages: Any = None        # host_mapping.HostPages behind `data` (pinned, managed)
    # where the program allocated and freed it ("file.py:12"), when an
    # analysis tool recorded it (sanitizer/host_checks.py); fault messages
    # about freed memory name the free site
    alloc_site: str | None = None
    free_site: str | None = None
    _views: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # kernels may not touch driver memory (checked with `readonly` on
        # every device-side access, so kept as a plain attribute)
        self.driver_only = self.kind in DRIVER_KINDS

    @property
    def end(self) -> int:
        return self.base + self.size

    def contains(self, address: int, nbytes: int = 1) -> bool:
        return self.base <= address and address + nbytes <= self.end and self.size > 0

    def words(self, dtype: np.dtype, count: int = 1) -> np.ndarray | None:
        """The backing seen as elements of `count` x `dtype`, indexed by
        offset // (itemsize*count); None when the base is not aligned to
        the element size (callers then gather bytes)."""
        dtype = np.dtype(dtype)
        key = (dtype, count)
        view = self._views.get(key)
        if view is None:
            step = dtype.itemsize * count
            if self.base % step:
                return None
            usable = (self.size // step) * step
            view = self.data[:usable].view(dtype)
            if count > 1:
                view = view.reshape(-1, count)
            self._views[key] = view
        return view

    def describe_short(self) -> str:
        label = f" ({self.label})" if self.label else ""
        return f"{self.size}-byte allocation at 0x{self.base:x}{label}"


class OutOfMemory(MemoryError):
    """The address space or the device capacity cannot hold the request."""

    def __init__(self, message: str, requested: int = 0):
        super().__init__(message)
        self.requested = requested


class InvalidFree(Exception):
    """A free that names no live allocation of the right kind."""

    def __init__(self, reason: str, address: int, lane: int = -1):
        super().__init__(reason)
        self.reason = reason
        self.address = address
        self.lane = lane


class AccessFault(LaneFault):
    """An access the hardware would trap on, precise to the first lane.

    `lane` indexes the caller's address array (-1 for host-side accesses);
    `lanes`, when set, are all the faulting lanes of the access in the same
    index space (ascending, `lane` first), the message being `lane`'s."""

    def __init__(self, kind: CUDBGException, space: Space, lane: int, address: int,
                 size: int, message: str, lanes: np.ndarray | None = None):
        super().__init__(kind, message, lane, address, size, space, lanes)

    def relane(self, lane: int) -> "AccessFault":
        """The same fault attributed to a lane of an enclosing address array."""
        return AccessFault(self.kind, self.space, lane, self.address, self.size, self.message)

    def __repr__(self) -> str:
        return (f"AccessFault({self.kind.name}, {self.space.value}, lane={self.lane}, "
                f"address=0x{self.address:x}, size={self.size}, {self.message!r})")


def fault_message(space_name: str, access: AccessType, size: int, address: int,
                  phrase: str) -> str:
    """'Invalid __global__ read of size 4 bytes: address 0x... <phrase>'."""
    return (f"Invalid {space_name} {access.value} of size {size} bytes: "
            f"address 0x{address:x} {phrase}")


def misaligned_phrase(size: int) -> str:
    return f"is misaligned (not a multiple of the {size}-byte access size)"


def as_addresses(addrs: Any) -> np.ndarray:
    """Addresses as a 1-D uint64 array without copying when possible."""
    a = np.asarray(addrs)
    if a.size == 0:
        return np.zeros(0, dtype=np.uint64)
    if a.dtype == np.uint64:
        return a.reshape(-1)
    if a.dtype.kind == "i" and a.dtype.itemsize == 8:
        return a.reshape(-1).view(np.uint64)
    if a.dtype.kind in "iu":
        return a.reshape(-1).astype(np.uint64)
    if a.dtype == object:
        return np.array([int(x) & 0xFFFF_FFFF_FFFF_FFFF for x in a.reshape(-1)], dtype=np.uint64)
    raise TypeError(f"addresses must be integers, got an array of {a.dtype}")


def access_size(dtype: Any, count: int) -> tuple[np.dtype, int]:
    """The numpy dtype of one element and the byte size of the whole access."""
    if count not in (1, 2, 4, 8):
        raise ValueError(f"vector count must be 1, 2, 4 or 8, got {count}")
    dt = np.dtype(dtype)
    if dt.itemsize == 0 or dt.itemsize & (dt.itemsize - 1):
        raise ValueError(f"dtype {dt} has no power-of-two size")
    return dt, dt.itemsize * count
