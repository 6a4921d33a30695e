"""One device virtual address space (UVA: device, pinned host and managed
memory all live in it) and the registry of allocations backing it.

The one idea: the registry is a sorted list of non-overlapping allocations,
each owning a numpy buffer that never moves; addresses are handed out first
fit from a sorted list of occupied VA ranges, so placement is deterministic.
Freed memory stays poisoned as in AddressSanitizer: the backing is released
at once, but the VA range waits in a bounded FIFO quarantine before first
fit may reuse it, and the freed record stays until its range is reused, so
a stale pointer lands in a freed record and is reported as use after free
(with the free site when a tool recorded it; quarantine.py). Driver memory
skips the quarantine: kernels cannot touch it, and the launch copies made
at every launch must not push user memory out. A fixed-address reservation
or a full VA space takes quarantined ranges back. Virtual memory management
is modelled as reserve (VA only) + map (backing inside a reservation) +
unmap + release; each mapping carries access flags (none, read,
read-write) that kernels obey through the ordinary checks (no access: a
suballocator that rejects every byte; read only: `readonly`). A
reservation may own a backing buffer (a pool's physical memory), mapped
piecewise with map_backed().

Host-side accesses (driver, copy engine, debugger) are checked like device
ones but ignore `readonly`: the driver is what fills constant banks. The
vectorized device-side paths live in access.py and atomics.py.

A memory whose VA window lies in the host process's device arena
(host_mapping.py: reserved PROT_NONE, so a host dereference of a device
pointer faults) backs pinned and managed allocations with real host pages
at their device address, page aligned: the pointer a program dereferences
is the device pointer. Device memory stays numpy (not host visible, as on
a real GPU). Several memories may share the arena (a test's own
GlobalMemory beside the engine's): host pages are placed where no other
memory holds host pages.
"""
from __future__ import annotations

import bisect
import enum
from typing import Any, Iterable

import numpy as np

from gpudbg.sim.faults import CUDBGException
from gpudbg.sim.memory import access, host_mapping
from gpudbg.sim.memory.describe import describe_address
from gpudbg.sim.memory.quarantine import QUARANTINE_BYTES, QUARANTINE_ENTRIES, FreedRecords, Quarantine
from gpudbg.sim.memory.spaces import (
    DRIVER_KINDS, FREE_HINTS, SHARED_WINDOW_BASE, AccessFault, AccessType, Allocation, AllocationKind,
    InvalidFree, OutOfMemory, Space, fault_message, misaligned_phrase,
)

# Kinds whose backing is host RAM and so does not count against device capacity.
HOST_KINDS = frozenset({AllocationKind.HOST_PINNED, AllocationKind.HOST_REGISTERED})
# Kinds the host program dereferences at their device address: real host pages.
HOST_MAPPED_KINDS = frozenset({AllocationKind.HOST_PINNED, AllocationKind.MANAGED})
MIN_ALIGN = 16


# Unmapped guard bytes after every allocation, as compute-sanitizer pads
# allocations: an access just past the end of one buffer faults instead of
# landing silently in its neighbour.
REDZONE = 256

# The analysis tools' event sink (sim/instrument.py installs it; None when
# no tool runs): allocations, frees and host-side writes are reported here.
_observer: Any = None


def set_observer(observer: Any) -> None:
    global _observer
    _observer = observer


class MapAccess(enum.IntEnum):
    """Access flags of a mapping, numbered as CU_MEM_ACCESS_FLAGS_PROT_*."""

    NONE = 0
    READ = 1
    READ_WRITE = 3


class _NoAccess:
    """Suballocator of a mapping with access flags none: every byte faults."""

    def __init__(self, allocation: Allocation):
        self.allocation = allocation

    def bad_mask(self, offsets: np.ndarray, size: int) -> np.ndarray:
        return np.ones(offsets.shape[0], dtype=bool)

    def describe(self, address: int, size: int) -> str:
        a = self.allocation
        return (f"is {address - a.base} bytes inside the {a.describe_short()}, which is "
                f"mapped without access (its access flags are none)")


def _align_up(x: int, align: int) -> int:
    return (x + align - 1) & ~(align - 1)


def _as_bytes(data: Any) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    try:
        return np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    except TypeError:
        raise TypeError(f"cannot write a {type(data).__name__}; pass bytes-like data or a numpy array") from None


_ARENA = host_mapping.arena()      # reserved as early as possible: at import


class GlobalMemory:
    """The device address space: allocation registry plus checked accessors."""

    # where the host process's device arena got placed (normally 0x7000_0000_0000)
    GLOBAL_BASE = _ARENA.base if _ARENA is not None else host_mapping.NOMINAL_BASE
    DEFAULT_VA_SIZE = 1 << 43

    def __init__(self, capacity: int = 80 * 2**30, base: int | None = None,
                 va_size: int = DEFAULT_VA_SIZE, quarantine_bytes: int = QUARANTINE_BYTES,
                 quarantine_entries: int = QUARANTINE_ENTRIES):
        base = self.GLOBAL_BASE if base is None else base
        if capacity <= 0 or base <= 0 or base % 4096 or va_size <= 0:
            raise ValueError("capacity and VA size must be positive and base 4 KiB aligned")
        if base < SHARED_WINDOW_BASE and base + va_size > SHARED_WINDOW_BASE:
            raise ValueError(f"global VA range 0x{base:x}+0x{va_size:x} overlaps the shared and "
                             f"local windows at 0x{SHARED_WINDOW_BASE:x}")
        arena = host_mapping.arena()
        # pinned and managed memory are real host pages only inside the arena
        self.host_backed = arena is not None and arena.covers(base, va_size)
        if arena is None and host_mapping.enabled() and \
                base < host_mapping.NOMINAL_BASE + host_mapping.ARENA_SIZE and \
                host_mapping.NOMINAL_BASE < base + va_size:
            raise host_mapping.arena_failure()
        self.capacity = capacity
        self.base = base
        self.va_limit = base + va_size
        self.used = 0
        # The live allocations sorted by base, and their bases. Both lists are
        # replaced, never changed in place, and published together in _index,
        # so a device thread reading them while the host allocates sees one
        # consistent table (copy on write; concurrent engines read unlocked).
        self._live: list[Allocation] = []
        self._live_bases: list[int] = []
        self._index: tuple[list[Allocation], list[int]] = (self._live, self._live_bases)
        self._version = 0          # bumped by every change sorted_arrays() depends on
        self._occupied: list[tuple[int, int]] = []      # VA ranges held (allocations, reservations)
        self._freed = FreedRecords()
        self._quarantine = Quarantine(quarantine_bytes, quarantine_entries)
        self._reservations: list[Allocation] = []
        self._access: dict[int, tuple[MapAccess, bool]] = {}  # mapping id -> (flags, readonly at map)
        self._next_id = 1
        self._arrays: tuple | None = None

    # ------------------------------------------------------------------ placement

    def _find_va(self, nbytes: int, align: int, also: list[tuple[int, int]] | None = None) -> int:
        """First fit; `also` are ranges held outside this registry. When the
        VA space is full the quarantine gives its ranges back first."""
        try:
            return self._first_fit(nbytes, align, also)
        except OutOfMemory:
            if not self._quarantine:
                raise
            self._release_quarantine(self.base, self.va_limit)
            return self._first_fit(nbytes, align, also)

    def _first_fit(self, nbytes: int, align: int, also: list[tuple[int, int]] | None) -> int:
        prev_end = self.base
        for start, end in (sorted(self._occupied + also) if also else self._occupied):
            cand = _align_up(prev_end, align)
            if cand + nbytes <= start:
                return cand
            prev_end = max(prev_end, end)
        cand = _align_up(prev_end, align)
        if cand + nbytes > self.va_limit:
            raise OutOfMemory(f"out of device virtual address space: cannot place {nbytes} bytes "
                              f"aligned to {align}", nbytes)
        return cand

    def _va_free(self, start: int, end: int) -> bool:
        if start < self.base or end > self.va_limit:
            return False
        i = bisect.bisect_left(self._occupied, (start, start))
        if i > 0 and self._occupied[i - 1][1] > start:
            return False
        return not (i < len(self._occupied) and self._occupied[i][0] < end)

    def _occupy(self, start: int, end: int) -> None:
        bisect.insort(self._occupied, (start, end))
        self._freed.forget(start, end)

    # ------------------------------------------------------------------ freed memory

    def freed_record(self, address: int) -> Allocation | None:
        """The remembered freed allocation containing `address`, if any."""
        return self._freed.find(address)

    def _quarantine_range(self, a: Allocation) -> None:
        """Keep a freed allocation's VA range occupied for a while (its
        backing is already released); the oldest ranges over the bounds
        return to first fit."""
        i = bisect.bisect_left(self._occupied, (a.base, 0))
        start, end = self._occupied[i]
        for base in self._quarantine.add(start, end - start):
            self._vacate(base)

    def _release_quarantine(self, start: int, end: int) -> None:
        """Give the quarantined ranges overlapping [start, end) back to first fit."""
        for base in self._quarantine.take(start, end):
            self._vacate(base)

    def quarantined(self) -> list[tuple[int, int]]:
        """The freed (base, VA bytes) ranges kept out of reuse, oldest first."""
        return self._quarantine.ranges()

    def _vacate(self, start: int) -> None:
        i = bisect.bisect_left(self._occupied, (start, 0))
        if i < len(self._occupied) and self._occupied[i][0] == start:
            del self._occupied[i]

    def _register(self, a: Allocation) -> None:
        i = bisect.bisect_left(self._live_bases, a.base)
        self._publish(self._live[:i] + [a] + self._live[i:],
                      self._live_bases[:i] + [a.base] + self._live_bases[i:])

    def _unregister(self, a: Allocation) -> None:
        i = bisect.bisect_left(self._live_bases, a.base)
        self._publish(self._live[:i] + self._live[i + 1:], self._live_bases[:i] + self._live_bases[i + 1:])

    def _publish(self, live: list[Allocation], bases: list[int]) -> None:
        self._version += 1
        self._index = (live, bases)
        self._live, self._live_bases = live, bases

    def _charge(self, size: int, kind: AllocationKind) -> None:
        if kind in HOST_KINDS:
            return
        if self.used + size > self.capacity:
            raise OutOfMemory(f"out of memory: cannot allocate {size} bytes "
                              f"({self.used} of {self.capacity} bytes in use)", size)
        self.used += size

    def _charged_zeros(self, size: int, kind: AllocationKind) -> np.ndarray:
        """Charge `size` bytes and back them with zeroed host memory; when the
        host cannot back them (MemoryError) nothing stays charged."""
        self._charge(size, kind)
        try:
            return np.zeros(size, dtype=np.uint8)
        except MemoryError:
            if kind not in HOST_KINDS:
                self.used -= size
            raise OutOfMemory(f"out of host memory: cannot back {size} bytes", size) from None

    @staticmethod
    def _check_align(align: int) -> int:
        if not isinstance(align, int) or align <= 0 or align & (align - 1):
            raise ValueError(f"alignment must be a positive power of two, got {align!r}")
        return max(align, MIN_ALIGN)

    def alloc(self, size: int, kind: AllocationKind = AllocationKind.DEVICE, align: int = 256,
              label: str = "", readonly: bool = False) -> Allocation:
        """Zero-filled allocation, first fit; a zero-size one still gets a
        unique address (it occupies one byte of VA and contains nothing)."""
        if not isinstance(size, (int, np.integer)) or size < 0:
            raise ValueError(f"allocation size must be a non-negative integer, got {size!r}")
        if kind is AllocationKind.RESERVED:
            raise ValueError("use reserve() for address reservations")
        size = int(size)
        align = self._check_align(align)
        footprint = max(size, 1)
        if self.host_backed and kind in HOST_MAPPED_KINDS:
            return self._alloc_host_pages(size, kind, max(align, host_mapping.PAGE), label, readonly)
        base = self._find_va(footprint + REDZONE, align)
        data = self._charged_zeros(size, kind)
        a = Allocation(base, size, kind, label, data, readonly,
                       alloc_id=self._next_id, footprint=footprint, charged=kind not in HOST_KINDS)
        self._next_id += 1
        self._occupy(base, base + footprint + REDZONE)
        self._register(a)
        if _observer is not None:
            _observer.allocated(self, a)
        return a

    def _alloc_host_pages(self, size: int, kind: AllocationKind, align: int, label: str,
                          readonly: bool) -> Allocation:
        """Pinned/managed memory: real zero-filled host pages at the
        allocation's address, first fit among this registry's ranges and
        the host pages any other memory holds in the arena."""
        span = host_mapping.page_round(size)
        base = self._find_va(span + REDZONE, align,
                             also=host_mapping.live_ranges(self.base, self.va_limit))
        self._charge(size, kind)
        try:
            pages = host_mapping.map_pages(base, span)
        except OSError as e:
            if kind not in HOST_KINDS:
                self.used -= size
            raise OutOfMemory(f"out of host memory: cannot map {span} bytes at 0x{base:x} ({e})",
                              size) from None
        a = Allocation(base, size, kind, label, pages.array[:size], readonly, alloc_id=self._next_id,
                       footprint=max(size, 1), charged=kind not in HOST_KINDS, host_pages=pages)
        self._next_id += 1
        self._occupy(base, base + span + REDZONE)
        self._register(a)
        if _observer is not None:
            _observer.allocated(self, a)
        return a

    def free(self, base: int, kind: "AllocationKind | Iterable[AllocationKind] | None" = None
             ) -> Allocation | None:
        """Release an allocation by its base; freeing 0 does nothing (returns
        None). `kind` restricts which kinds this free function may release."""
        base = int(base)
        if base == 0:
            return None
        i = bisect.bisect_left(self._live_bases, base)
        if i < len(self._live_bases) and self._live_bases[i] == base:
            a = self._live[i]
            allowed = None if kind is None else (
                {kind} if isinstance(kind, AllocationKind) else set(kind))
            if a.mapped_in is not None:
                raise InvalidFree(f"0x{base:x} is a virtual memory mapping; unmap it instead", base)
            if allowed is not None and a.kind not in allowed:
                hint = FREE_HINTS.get(a.kind, f"a {a.kind.value} allocation; it cannot be freed here")
                raise InvalidFree(f"0x{base:x} is {hint}", base)
            self._unregister(a)
            if a.kind in DRIVER_KINDS:
                self._vacate(a.base)
            else:
                self._quarantine_range(a)
            if a.kind not in HOST_KINDS:
                self.used -= a.size
            a.freed = True
            a.data = np.zeros(0, dtype=np.uint8)
            a._views.clear()
            if a.host_pages is not None:     # unmapped: the host pointer now faults too
                a.host_pages.release()
                a.host_pages = None
            self._freed.remember(a)
            if _observer is not None:
                _observer.freed(self, a)
            return a
        gone = self.freed_record(base)
        if gone is not None and gone.base == base:
            raise InvalidFree(f"double free of 0x{base:x}", base)
        inside = self.find(base)
        if inside is not None:
            raise InvalidFree(f"0x{base:x} points inside the allocation at 0x{inside.base:x} "
                              f"(offset {base - inside.base})", base)
        raise InvalidFree(f"0x{base:x} was not returned by this allocator", base)

    # ------------------------------------------------------------------ virtual memory

    def reserve(self, size: int, align: int = 2 << 20, address: int = 0,
                backed: bool = False) -> int:
        """Reserve VA without backing; `address` asks for a fixed placement.
        `backed` also gives the reservation `size` bytes of physical memory
        (charged against capacity) for map_backed()."""
        if size <= 0:
            raise ValueError(f"reservation size must be positive, got {size}")
        align = self._check_align(align)
        if address:
            if not address % align:          # a fixed request outranks the quarantine
                self._release_quarantine(address, address + size)
            if address % align or not self._va_free(address, address + size):
                raise OutOfMemory(f"cannot reserve {size} bytes at 0x{address:x}: range is "
                                  f"misaligned or already in use", size)
            base = address
        else:
            base = self._find_va(size, align)
        data = self._charged_zeros(size, AllocationKind.DEVICE) if backed else np.zeros(0, dtype=np.uint8)
        r = Allocation(base, size, AllocationKind.RESERVED, "reserved", data, alloc_id=self._next_id,
                       footprint=size, charged=backed)
        self._next_id += 1
        self._occupy(base, base + size)
        self._reservations.append(r)
        return base

    def _reservation_at(self, address: int, size: int) -> Allocation | None:
        for r in self._reservations:
            if r.base <= address and address + size <= r.end:
                return r
        return None

    def map(self, address: int, size: int, data: np.ndarray | None = None,
            kind: AllocationKind = AllocationKind.DEVICE, label: str = "",
            readonly: bool = False, access: MapAccess = MapAccess.READ_WRITE) -> Allocation:
        """Back [address, address+size) inside a reservation. `data` (exactly
        `size` uint8) lets several mappings share one physical buffer."""
        r = self._reservation_at(address, size)
        if r is None or size <= 0:
            raise ValueError(f"0x{address:x}+{size} is not inside one reservation")
        if address % MIN_ALIGN:
            raise ValueError(f"mapping address 0x{address:x} must be {MIN_ALIGN}-byte aligned")
        for a in self._live:
            if a.base < address + size and address < a.end:
                raise ValueError(f"0x{address:x}+{size} overlaps the mapping at 0x{a.base:x}")
        if data is None:
            buf = self._charged_zeros(size, kind)
        else:
            if data.dtype != np.uint8 or data.shape != (size,):
                raise ValueError(f"backing must be a uint8 array of exactly {size} bytes")
            buf = data
        a = Allocation(address, size, kind, label, buf, readonly, alloc_id=self._next_id,
                       footprint=size, mapped_in=r.base, charged=data is None)
        self._next_id += 1
        self._freed.forget(address, address + size)
        self._register(a)
        self._access[a.alloc_id] = (MapAccess.READ_WRITE, readonly)
        self._apply_access(a, MapAccess(access))
        return a

    def map_backed(self, address: int, size: int, label: str = "",
                   access: MapAccess = MapAccess.READ_WRITE) -> Allocation:
        """Map part of a backed reservation's own physical memory."""
        r = self._reservation_at(address, size)
        if r is None or r.data.shape[0] != r.size:
            raise ValueError(f"0x{address:x}+{size} is not inside one backed reservation")
        off = address - r.base
        return self.map(address, size, r.data[off:off + size], label=label, access=access)

    def _apply_access(self, a: Allocation, access: MapAccess) -> None:
        readonly = self._access[a.alloc_id][1]
        self._access[a.alloc_id] = (access, readonly)
        a.readonly = readonly or access is MapAccess.READ
        a.suballocator = _NoAccess(a) if access is MapAccess.NONE else None
        a._views.clear()
        self._version += 1

    def mapping_access(self, address: int) -> MapAccess | None:
        """The access flags of the mapping containing address (None: not a mapping)."""
        a = self.find(address)
        if a is None or a.mapped_in is None:
            return None
        return self._access[a.alloc_id][0]

    def mappings_in(self, address: int, size: int) -> list[Allocation]:
        """Live mappings overlapping [address, address+size), by address."""
        return [a for a in self._live
                if a.mapped_in is not None and a.base < address + size and address < a.end]

    def set_access(self, address: int, size: int, access: MapAccess) -> list[Allocation]:
        """Set the access flags of the whole mappings that exactly tile the range."""
        maps = self.mappings_in(address, size)
        pos = address
        for a in maps:
            if a.base != pos:
                break
            pos = a.end
        if not maps or pos != address + size:
            raise ValueError(f"0x{address:x}+{size} is not a range of whole, contiguous mappings")
        for a in maps:
            self._apply_access(a, MapAccess(access))
        return maps

    def access_denied(self, address: int, nbytes: int, write: bool) -> str | None:
        """Why a copy engine access to a mapping is refused by its access flags
        (None when allowed or not a mapping): the driver's pre-submit check."""
        access = self.mapping_access(address)
        if access is None or access is MapAccess.READ_WRITE:
            return None
        if access is MapAccess.READ and not write:
            return None
        a = self.find(address)
        how = "without access (its access flags are none)" if access is MapAccess.NONE \
            else "read-only, without write access"
        return f"is inside the {a.describe_short()}, which is mapped {how}"

    def charge(self, size: int) -> None:
        """Count physical memory held outside any mapping (a VMM handle)."""
        self._charge(size, AllocationKind.DEVICE)

    def discharge(self, size: int) -> None:
        self.used -= size

    def unmap(self, address: int, remember_freed: bool = False) -> Allocation:
        """Remove a mapping; `remember_freed` keeps it as a freed allocation so
        a stale access reads as use-after-free (stream-ordered pools)."""
        i = bisect.bisect_left(self._live_bases, address)
        if i == len(self._live) or self._live_bases[i] != address or self._live[i].mapped_in is None:
            raise ValueError(f"0x{address:x} is not the start of a mapping")
        a = self._live[i]
        self._unregister(a)
        self._access.pop(a.alloc_id, None)
        if a.charged and a.kind not in HOST_KINDS:
            self.used -= a.size
        a.freed = True
        if remember_freed:
            a.suballocator = None
            a.data = np.zeros(0, dtype=np.uint8)
            a._views.clear()
            self._freed.remember(a)
        return a

    def release(self, address: int) -> None:
        for j, r in enumerate(self._reservations):
            if r.base == address:
                if any(a.mapped_in == address for a in self._live):
                    raise ValueError(f"reservation at 0x{address:x} still has mappings")
                del self._reservations[j]
                self._vacate(address)
                if r.charged:
                    self.used -= r.size
                r.data = np.zeros(0, dtype=np.uint8)
                return
        raise ValueError(f"0x{address:x} is not the start of a reservation")

    def reservations(self) -> list[tuple[int, int]]:
        return [(r.base, r.size) for r in self._reservations]

    # ------------------------------------------------------------------ queries

    def find(self, address: int) -> Allocation | None:
        live, bases = self._index          # one consistent table (see __init__)
        i = bisect.bisect_right(bases, address) - 1
        if i >= 0:
            a = live[i]
            if address < a.base + a.size:
                return a
        return None

    def allocations(self) -> list[Allocation]:
        return list(self._live)

    def freed_allocations(self) -> list[Allocation]:
        """The remembered freed allocations, by address."""
        return self._freed.all()

    def describe(self, address: int, size: int = 1) -> str:
        gone = self.freed_record(address)
        return describe_address(address, size, self._live, () if gone is None else (gone,),
                                self._reservations)

    def sorted_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[Allocation]]:
        """(bases, sizes, readonly, driver_only, allocations) of the live
        allocations as arrays for np.searchsorted, cached."""
        version = self._version            # read before the table: a change after it re-tags
        cached = self._arrays
        if cached is None or cached[0] != version:
            live, bases = self._index
            cached = (version, (np.array(bases, dtype=np.uint64),
                                np.array([a.size for a in live], dtype=np.uint64),
                                np.array([a.readonly for a in live], dtype=bool),
                                np.array([a.driver_only for a in live], dtype=bool),
                                list(live)))
            self._arrays = cached
        return cached[1]

    def contains_range(self, address: int) -> bool:
        """Whether an address lies in this space's VA range (isspacep.global)."""
        return self.base <= address < self.va_limit

    # ------------------------------------------------------------------ host side

    def _host_alloc(self, address: int, nbytes: int, verb: AccessType) -> Allocation:
        if nbytes < 0:
            raise ValueError(f"byte count must be non-negative, got {nbytes}")
        a = self.find(address)
        if a is None or address + nbytes > a.end:
            raise AccessFault(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS, Space.GLOBAL, -1,
                              address, nbytes,
                              fault_message("__global__", verb, nbytes, address,
                                            self.describe(address, max(nbytes, 1))))
        return a

    def view(self, address: int, nbytes: int, _verb: AccessType = AccessType.READ) -> np.ndarray:
        """A live uint8 view of bytes inside one allocation; a WRITE view
        is reported to the analysis tools as a host write of its bytes."""
        if nbytes == 0:
            return np.zeros(0, dtype=np.uint8)
        a = self._host_alloc(int(address), int(nbytes), _verb)
        off = int(address) - a.base
        if _observer is not None and _verb is AccessType.WRITE:
            _observer.host_write(self, int(address), int(nbytes))
        return a.data[off:off + int(nbytes)]

    def read(self, address: int, nbytes: int) -> np.ndarray:
        return self.view(address, nbytes).copy()

    def write(self, address: int, data: Any) -> None:
        src = _as_bytes(data)
        self.view(address, src.shape[0], AccessType.WRITE)[:] = src

    def fill(self, address: int, value: int, elem_size: int, count: int) -> None:
        """memset with an 8/16/32/64-bit pattern (little-endian)."""
        if elem_size not in (1, 2, 4, 8):
            raise ValueError(f"fill element size must be 1, 2, 4 or 8, got {elem_size}")
        if address % elem_size:
            raise AccessFault(CUDBGException.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS, Space.GLOBAL,
                              -1, address, elem_size,
                              fault_message("__global__", AccessType.WRITE, elem_size, address,
                                            misaligned_phrase(elem_size)))
        region = self.view(address, elem_size * count, AccessType.WRITE)
        region.view(np.dtype(f"<u{elem_size}"))[:] = int(value) & ((1 << (8 * elem_size)) - 1)

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        """Device to device, overlapping ranges allowed (memmove)."""
        s = self.view(src, nbytes)
        d = self.view(dst, nbytes, AccessType.WRITE)
        d[:] = s
        if _observer is not None:
            _observer.host_copy(self, int(dst), int(src), int(nbytes))

    # ------------------------------------------------------------------ device side

    def load(self, addrs: Any, dtype: Any, count: int = 1, space_name: str = "__global__",
             lanes: np.ndarray | None = None) -> np.ndarray:
        """Checked gather for all lanes: shape (n,) or (n, count)."""
        return access.load(self, addrs, dtype, count, space_name, lanes)

    def store(self, addrs: Any, values: Any, dtype: Any, count: int = 1,
              space_name: str = "__global__", lanes: np.ndarray | None = None) -> None:
        """Checked scatter; colliding lanes: the highest index wins."""
        access.store(self, addrs, values, dtype, count, space_name, lanes)

    def atomic(self, op: str, addrs: Any, values: Any, dtype: Any, compare: Any = None,
               space_name: str = "__global__", lanes: np.ndarray | None = None,
               ftz: bool | None = None) -> np.ndarray:
        """Returns old values; collisions serialized in ascending lane order.
        `dtype` may be a PTX type name ("bf16", "f16x2") where numpy is ambiguous;
        ftz=None follows PTX (.add.f32 flushes subnormals)."""
        return access.atomic(self, op, addrs, values, dtype, compare, space_name, lanes, ftz=ftz)

    def reduce(self, op: str, addrs: Any, values: Any, dtype: Any,
               space_name: str = "__global__", lanes: np.ndarray | None = None,
               ftz: bool | None = None) -> None:
        """`red`: the effect of atomic() without the old values."""
        access.reduce(self, op, addrs, values, dtype, space_name, lanes, ftz=ftz)
