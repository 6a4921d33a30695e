"""Virtual memory management (seed 002 §2.13, the cuMem* model): address
reservations, physical allocation handles, mappings with per-device access
flags, and the in-process table of shareable (OS) handles.

The one idea: a handle is a numpy buffer charged against its device's
capacity; mapping it is GlobalMemory.map() with a slice of that buffer as
shared backing, so aliases see the same bytes and the simulator's ordinary
access checks enforce reservations (unmapped VA faults as "reserved but
unmapped") and access flags. A mapping starts with no access, as in CUDA,
until set_access. Physical memory lives while a handle reference or a
mapping (or an exported OS handle) holds it.

Deliberately not done: cross-process sharing. Exported "file descriptors"
are integers in a process-wide table, importable only by this process;
mappings are per-mapping for access flags (a set_access range must consist
of whole mappings), and the flags of a device other than the one owning the
reservation's VA window are recorded and reported, not enforced (no other
simulated GPU can address that window).
"""
from __future__ import annotations

import itertools
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpudbg.driver.status import CUresult, EngineError
from gpudbg.sim.memory.allocations import MapAccess
from gpudbg.sim.memory.spaces import OutOfMemory

GRANULARITY = 2 << 20          # minimum and recommended, as CUDA reports on current GPUs
HANDLE_TYPE_POSIX_FD = 0x1     # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
HANDLE_TYPE_WIN32 = 0x2
HANDLE_TYPE_WIN32_KMT = 0x4
HANDLE_TYPE_FABRIC = 0x8
ALL_HANDLE_TYPES = HANDLE_TYPE_POSIX_FD | HANDLE_TYPE_WIN32 | HANDLE_TYPE_WIN32_KMT | HANDLE_TYPE_FABRIC
INVALID = CUresult.CUDA_ERROR_INVALID_VALUE

_ids = itertools.count(1)


def check_granular(name: str, value: int) -> int:
    if value % GRANULARITY:
        raise EngineError(INVALID, f"{name} {value} is not a multiple of the {GRANULARITY}-byte "
                                   f"allocation granularity")
    return value


def check_handle_types(types: int, what: str) -> int:
    """Only POSIX file descriptors exist on this (simulated Linux) platform."""
    if types & ~ALL_HANDLE_TYPES:
        raise EngineError(INVALID, f"{what}: unknown handle type bits 0x{types:x}")
    if types & ~HANDLE_TYPE_POSIX_FD:
        raise EngineError(INVALID, f"{what}: only mcMemHandleTypePosixFileDescriptor handles exist "
                                   f"on this platform, not 0x{types:x}")
    return types


class HandleTable:
    """Process-wide integers standing for OS handles (POSIX fds) of exported
    memory handles and pools. Numbering starts above the usual fds."""

    def __init__(self) -> None:
        self._next = 1000
        self._entries: dict[int, tuple[str, Any]] = {}
        self.lock = threading.Lock()

    def add(self, kind: str, obj: Any) -> int:
        with self.lock:
            fd = self._next
            self._next += 1
            self._entries[fd] = (kind, obj)
            return fd

    def get(self, fd: Any, kind: str) -> Any:
        with self.lock:
            entry = self._entries.get(fd) if isinstance(fd, int) and not isinstance(fd, bool) else None
        if entry is None or entry[0] != kind:
            raise EngineError(INVALID, f"{fd!r} is not a shareable handle of an exported {kind} "
                                       f"in this process")
        return entry[1]

    def drop_owned_by(self, ctx: Any) -> None:
        with self.lock:
            self._entries = {k: v for k, v in self._entries.items()
                             if getattr(v[1], "ctx", None) is not ctx}


@dataclass(eq=False)
class Physical:
    """Device memory of one mcMemCreate: freed when nothing holds it."""

    gpu: Any
    ordinal: int
    size: int
    handle_types: int
    buffer: np.ndarray
    ctx: Any
    holders: int = 0
    freed: bool = False


@dataclass(eq=False)
class Handle:
    id: int
    physical: Physical
    refs: int = 1

    @property
    def ctx(self) -> Any:
        return self.physical.ctx


@dataclass(eq=False)
class Mapping:
    gpu: Any
    va: int
    size: int
    physical: Physical
    offset: int
    ctx: Any
    access: dict[int, int] = field(default_factory=dict)   # device ordinal -> MapAccess value

    @property
    def end(self) -> int:
        return self.va + self.size


@dataclass(eq=False)
class Reservation:
    gpu: Any
    base: int
    size: int
    ctx: Any


class VmmState:
    """Every VMM object of one engine (process)."""

    def __init__(self, engine: Any):
        self.engine = engine
        self.lock = threading.RLock()
        self.handles: dict[int, Handle] = {}
        self.reservations: dict[int, Reservation] = {}
        self.mappings: dict[int, Mapping] = {}
        self.fds = HandleTable()
        self._hooked: "weakref.WeakSet[Any]" = weakref.WeakSet()

    # ------------------------------------------------------------ lifetime
    def _own(self, ctx: Any) -> None:
        if ctx not in self._hooked:
            self._hooked.add(ctx)
            ctx.teardown_hooks.append(lambda c=ctx: self.teardown(c))

    def teardown(self, ctx: Any) -> None:
        """Context destroyed: unmap, release and free everything it made."""
        with self.lock:
            for va, m in list(self.mappings.items()):
                if m.ctx is ctx or m.physical.ctx is ctx:
                    self._unmap_one(m)
            for base, r in list(self.reservations.items()):
                if r.ctx is ctx:
                    with r.gpu.cv:
                        r.gpu.memory.release(base)
                    del self.reservations[base]
            for hid, h in list(self.handles.items()):
                if h.ctx is ctx:
                    del self.handles[hid]
                    self._drop(h.physical)
            self.fds.drop_owned_by(ctx)

    def _drop(self, p: Physical, force: bool = True) -> None:
        p.holders = 0 if force else p.holders - 1
        if p.holders <= 0 and not p.freed:
            p.freed = True
            with p.gpu.cv:
                p.gpu.memory.discharge(p.size)
            p.buffer = np.zeros(0, dtype=np.uint8)

    # ------------------------------------------------------------ reservations
    def reserve(self, ctx: Any, size: int, alignment: int, addr: int) -> int:
        check_granular("size", size)
        if size <= 0:
            raise EngineError(INVALID, "reservation size must be positive")
        if alignment == 0:
            alignment = GRANULARITY
        if alignment & (alignment - 1) or alignment % GRANULARITY:
            raise EngineError(INVALID, f"alignment {alignment} must be a power of two multiple of "
                                       f"the {GRANULARITY}-byte granularity (or 0)")
        gpu = ctx.gpu
        for g in self.engine.uva._gpus:
            if addr and g.memory.contains_range(addr):
                gpu = g
        with self.lock, gpu.cv:
            base = 0
            if addr and addr % alignment == 0:
                try:
                    base = gpu.memory.reserve(size, alignment, addr)
                except OutOfMemory:
                    base = 0      # the address is a hint, as in CUDA: place it elsewhere
            if not base:
                try:
                    base = gpu.memory.reserve(size, alignment)
                except OutOfMemory as e:
                    raise EngineError(CUresult.CUDA_ERROR_OUT_OF_MEMORY, str(e)) from None
            self.reservations[base] = Reservation(gpu, base, size, ctx)
            self._own(ctx)
            return base

    def address_free(self, ptr: int, size: int) -> None:
        with self.lock:
            r = self.reservations.get(ptr)
            if r is None or r.size != size:
                raise EngineError(INVALID, f"0x{ptr:x}+{size} is not a whole reservation made by "
                                           f"mcMemAddressReserve")
            if any(r.base <= m.va < r.base + r.size for m in self.mappings.values()):
                raise EngineError(INVALID, f"reservation at 0x{ptr:x} still has mappings; "
                                           f"unmap them first")
            with r.gpu.cv:
                r.gpu.memory.release(ptr)
            del self.reservations[ptr]

    # ------------------------------------------------------------ handles
    def create(self, ctx: Any, size: int, device: Any, handle_types: int) -> int:
        check_granular("size", size)
        if size <= 0:
            raise EngineError(INVALID, "allocation size must be positive")
        check_handle_types(handle_types, "mcMemCreate")
        gpu = device.gpu
        with gpu.cv:
            try:
                gpu.memory.charge(size)
            except OutOfMemory as e:
                raise EngineError(CUresult.CUDA_ERROR_OUT_OF_MEMORY, str(e)) from None
        p = Physical(gpu, device.ordinal, size, handle_types, np.zeros(size, dtype=np.uint8), ctx)
        with self.lock:
            self._own(ctx)
            return self._new_handle(p)

    def _new_handle(self, p: Physical) -> int:
        h = Handle(next(_ids), p)
        p.holders += 1
        self.handles[h.id] = h
        return h.id

    def handle(self, handle: Any) -> Handle:
        h = self.handles.get(handle) if isinstance(handle, int) and not isinstance(handle, bool) else None
        if h is None:
            raise EngineError(INVALID, f"{handle!r} is not a live memory allocation handle")
        return h

    def release(self, handle: Any) -> None:
        with self.lock:
            h = self.handle(handle)
            h.refs -= 1
            if h.refs == 0:
                del self.handles[h.id]
                self._drop(h.physical, force=False)

    def retain(self, addr: int) -> int:
        with self.lock:
            m = self._mapping_at(addr)
            for h in self.handles.values():
                if h.physical is m.physical:
                    h.refs += 1
                    return h.id
            return self._new_handle(m.physical)

    # ------------------------------------------------------------ mappings
    def _mapping_at(self, addr: int) -> Mapping:
        for m in self.mappings.values():
            if m.va <= addr < m.end:
                return m
        raise EngineError(INVALID, f"0x{addr:x} is not inside a mapping made by mcMemMap")

    def _tiling(self, ptr: int, size: int, verb: str) -> list[Mapping]:
        maps = sorted((m for m in self.mappings.values() if m.va < ptr + size and ptr < m.end),
                      key=lambda m: m.va)
        pos = ptr
        for m in maps:
            if m.va != pos:
                break
            pos = m.end
        if not maps or pos != ptr + size:
            raise EngineError(INVALID, f"{verb}: 0x{ptr:x}+{size} is not a range of whole, "
                                       f"contiguous mappings")
        return maps

    def map(self, ctx: Any, ptr: int, size: int, offset: int, handle: Any) -> None:
        check_granular("size", size)
        check_granular("offset", offset)
        with self.lock:
            h = self.handle(handle)
            p = h.physical
            if size <= 0 or offset + size > p.size:
                raise EngineError(INVALID, f"offset {offset} + size {size} exceeds the "
                                           f"{p.size}-byte allocation")
            r = next((r for r in self.reservations.values()
                      if r.base <= ptr and ptr + size <= r.base + r.size), None)
            if r is None:
                raise EngineError(INVALID, f"0x{ptr:x}+{size} is not inside one reservation made "
                                           f"by mcMemAddressReserve")
            check_granular("address offset in the reservation", ptr - r.base)
            if any(m.va < ptr + size and ptr < m.end for m in self.mappings.values()):
                raise EngineError(INVALID, f"0x{ptr:x}+{size} overlaps an existing mapping")
            with r.gpu.cv:
                r.gpu.memory.map(ptr, size, p.buffer[offset:offset + size],
                                 label=f"mcMemMap of handle {h.id}", access=MapAccess.NONE)
            p.holders += 1
            self.mappings[ptr] = Mapping(r.gpu, ptr, size, p, offset, ctx)

    def _unmap_one(self, m: Mapping) -> None:
        with m.gpu.cv:
            m.gpu.memory.unmap(m.va)
        del self.mappings[m.va]
        self._drop(m.physical, force=False)

    def unmap(self, ctx: Any, ptr: int, size: int) -> None:
        with self.lock:
            maps = self._tiling(ptr, size, "mcMemUnmap")
        ctx.wait_idle_quietly()      # earlier work may still use the mapping
        with self.lock:
            for m in maps:
                if m.va in self.mappings:
                    self._unmap_one(m)

    def set_access(self, ptr: int, size: int, descs: list[tuple[int, int]]) -> None:
        """descs: (device ordinal, MapAccess value), validated by the caller."""
        with self.lock:
            maps = self._tiling(ptr, size, "mcMemSetAccess")
            for m in maps:
                for ordinal, flags in descs:
                    m.access[ordinal] = flags
                    if ordinal == m.gpu.ordinal:
                        with m.gpu.cv:
                            m.gpu.memory.set_access(m.va, m.size, MapAccess(flags))

    def get_access(self, ordinal: int, ptr: int) -> int:
        with self.lock:
            return self._mapping_at(ptr).access.get(ordinal, int(MapAccess.NONE))

    # ------------------------------------------------------------ sharing
    def export(self, handle: Any, handle_type: int) -> int:
        with self.lock:
            h = self.handle(handle)
            if not h.physical.handle_types & handle_type:
                raise EngineError(INVALID, f"handle {h.id} was not created with requested handle "
                                           f"type 0x{handle_type:x}")
            h.physical.holders += 1        # an OS handle keeps the memory alive
            return self.fds.add("memory allocation", h.physical)

    def import_(self, fd: Any) -> int:
        with self.lock:
            p = self.fds.get(fd, "memory allocation")
            if p.freed:
                raise EngineError(INVALID, f"the allocation behind shareable handle {fd} is gone")
            return self._new_handle(p)


_states: "weakref.WeakKeyDictionary[Any, VmmState]" = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()


def state(engine: Any) -> VmmState:
    with _states_lock:
        s = _states.get(engine)
        if s is None:
            s = _states[engine] = VmmState(engine)
        return s
