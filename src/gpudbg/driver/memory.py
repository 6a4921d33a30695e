"""The driver's memory manager: user allocations and the process-wide UVA
registry that resolves any pointer to (device, allocation, kind, offset).

Backing comes from each simulated GPU's GlobalMemory (every device owns a
disjoint VA window, so one integer names one byte in the whole process).
The registry adds what only the driver knows: which context made an
allocation and with which API (device, pinned host, managed) and flags, so
free functions can refuse the wrong kind and memcpy can infer directions.
Driver-internal memory (rings, staging, launch descriptors) is not user
visible: resolving it reports "not an allocation of this API". Registered
host buffers (host_register.py) are mappings backed by the buffer itself,
tracked by host address in `UVARegistry.host`; managed allocations carry
their stream attachment (stream-ordered: in effect once its fence retired).
Every GPU added here becomes a peer of the others, so copy engines reach
each other's memory (peer copies, pinned memory of another device).

Pinned and managed allocations are real pages of the host process at their
device address (sim/memory/host_mapping.py): the pointer returned is both
the host pointer a program dereferences and the device pointer (UVA).
Device memory lies in the same reserved range but is not host mapped, so
dereferencing it on the host faults as with a real GPU. A registered range
keeps its host address and gets a device address of its own;
`page_locked()` maps either kind of host pointer to its device pointer.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Iterable

from gpudbg.driver.host_register import HostRegistry, Registration
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.sim.memory.spaces import Allocation, AllocationKind, InvalidFree, OutOfMemory

USER_KINDS = frozenset({AllocationKind.DEVICE, AllocationKind.PITCHED, AllocationKind.HOST_PINNED,
                        AllocationKind.HOST_REGISTERED, AllocationKind.MANAGED,
                        AllocationKind.MODULE_GLOBAL, AllocationKind.MODULE_CONST, AllocationKind.ARRAY})
DEVICE_SIDE = frozenset({AllocationKind.DEVICE, AllocationKind.PITCHED, AllocationKind.MANAGED,
                         AllocationKind.MODULE_GLOBAL, AllocationKind.MODULE_CONST, AllocationKind.ARRAY})
HOST_SIDE = frozenset({AllocationKind.HOST_PINNED, AllocationKind.HOST_REGISTERED,
                       AllocationKind.MANAGED})
PAGE_LOCKED = frozenset({AllocationKind.HOST_PINNED, AllocationKind.HOST_REGISTERED})


@dataclass
class PointerInfo:
    """What a pointer resolves to."""

    gpu: Any
    allocation: Allocation
    offset: int
    context: Any = None
    flags: int = 0

    @property
    def kind(self) -> AllocationKind:
        return self.allocation.kind

    @property
    def address(self) -> int:
        return self.allocation.base + self.offset

    @property
    def remaining(self) -> int:
        return self.allocation.size - self.offset

    @property
    def is_host(self) -> bool:
        return self.kind in PAGE_LOCKED

    @property
    def is_device(self) -> bool:
        return self.kind in DEVICE_SIDE


class UVARegistry:
    """All GPUs' memories plus the driver's per-allocation records."""

    def __init__(self) -> None:
        self._gpus: list[Any] = []
        self._records: dict[tuple[int, int], tuple[Any, int]] = {}   # (ordinal, base) -> (ctx, flags)
        self.lock = threading.RLock()
        self.host = HostRegistry()

    def add_gpu(self, gpu: Any) -> None:
        with self.lock:
            for other in self._gpus:      # every simulated device reaches every other (peer copies)
                other.peers[gpu.ordinal] = gpu
                gpu.peers[other.ordinal] = other
            self._gpus.append(gpu)

    def resolve(self, ptr: int) -> PointerInfo | None:
        """The user allocation containing ptr, or None."""
        with self.lock:
            for gpu in self._gpus:
                mem = gpu.memory
                if not mem.contains_range(ptr):
                    continue
                a = mem.find(ptr)
                if a is None or a.kind not in USER_KINDS:
                    return None
                ctx, flags = self._records.get((gpu.ordinal, a.base), (None, 0))
                return PointerInfo(gpu, a, ptr - a.base, ctx, flags)
            return None

    def page_locked(self, ptr: int) -> tuple[int, int] | None:
        """(device pointer, flags) of a page-locked host pointer: pinned
        memory is its own device pointer; a registered host address (or its
        device mapping) gives the mapping's address. None otherwise."""
        info = self.resolve(ptr)
        if info is not None and info.kind in PAGE_LOCKED:
            return ptr, info.flags
        try:
            found = self.host.lookup(ptr, 1)
        except EngineError:
            found = None
        if found is None:
            return None
        reg, offset = found
        return reg.device_address + offset, reg.flags

    def describe(self, ptr: int) -> str:
        with self.lock:
            for gpu in self._gpus:
                if gpu.memory.contains_range(ptr):
                    return f"0x{ptr:x} {gpu.memory.describe(ptr)}"
        return f"0x{ptr:x} is not a device, pinned host or managed address"

    def record(self, gpu: Any, allocation: Allocation, ctx: Any, flags: int) -> None:
        with self.lock:
            self._records[(gpu.ordinal, allocation.base)] = (ctx, flags)

    def forget(self, gpu: Any, base: int) -> None:
        with self.lock:
            self._records.pop((gpu.ordinal, base), None)


class MemoryManager:
    """One context's user allocations on its device."""

    def __init__(self, context: Any, registry: UVARegistry):
        self.context = context
        self.gpu = context.gpu
        self.registry = registry
        self.live: dict[int, Allocation] = {}
        self.attachments: dict[int, tuple[Any, int, int]] = {}   # managed base -> (stream, flags, fence)

    def alloc(self, size: int, kind: AllocationKind, flags: int = 0, label: str = "",
              align: int = 256) -> int:
        """Allocate; size 0 gives the null pointer, as the API specifies."""
        if not isinstance(size, int) or size < 0:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"size must be a non-negative int, got {size!r}")
        if size == 0:
            return 0
        from gpudbg.driver import capture
        capture.check_unsafe_call("a memory allocation")   # "potentially unsafe" during stream capture
        try:
            a = self.gpu.alloc_internal(size, kind, label or kind.value, align=align)
        except OutOfMemory as e:
            raise EngineError(CUresult.CUDA_ERROR_OUT_OF_MEMORY, str(e)) from None
        self.registry.record(self.gpu, a, self.context, flags)
        self.live[a.base] = a
        return a.base

    def free(self, ptr: int, kinds: Iterable[AllocationKind], api: str) -> None:
        """Free a user pointer of one of `kinds`; the null pointer is a no-op."""
        if not isinstance(ptr, int):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{api}: pointer must be an int, got {ptr!r}")
        if ptr == 0:
            return
        a = self.live.get(ptr)
        if a is None:
            info = self.registry.resolve(ptr)
            if info is not None and info.context is not None and info.context is not self.context \
                    and info.offset == 0:
                info.context.memory.free(ptr, kinds, api)
                return
            self._explain_bad_free(ptr, api)
        kinds = frozenset(kinds)
        if a.kind not in kinds:
            what = "pinned host memory (use mcFreeHost)" if a.kind is AllocationKind.HOST_PINNED \
                else f"a {a.kind.value} allocation"
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{api}(0x{ptr:x}): pointer is {what}")
        try:
            self.gpu.free_internal(a)
        except InvalidFree as e:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{api}: {e.reason}") from None
        del self.live[ptr]
        self.attachments.pop(ptr, None)
        self.registry.forget(self.gpu, ptr)

    def _explain_bad_free(self, ptr: int, api: str) -> None:
        mem = self.gpu.memory
        host = self.registry.host
        if host.by_device_address(ptr) is not None or host.by_host_address(ptr) is not None:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              f"{api}: 0x{ptr:x} is registered host memory; use mcHostUnregister")
        if any(f.base == ptr for f in mem.freed_allocations()):
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{api}: double free of 0x{ptr:x}")
        inside = self.registry.resolve(ptr)
        if inside is not None:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                              f"{api}: 0x{ptr:x} points {inside.offset} bytes into the allocation "
                              f"at 0x{inside.allocation.base:x}, not at its start")
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE,
                          f"{api}: 0x{ptr:x} was not returned by an allocation function")

    # ------------------------------------------------------------ registered host memory
    def register_host(self, obj: Any, size: int, flags: int) -> Registration:
        reg = self.registry.host.register(self.context, obj, size, flags)
        self.registry.record(self.gpu, reg.allocation, self.context, flags)
        return reg

    def unregister_host(self, obj: Any) -> None:
        reg = self.registry.host.find_host(obj)
        reg.context.wait_idle_quietly()      # queued work may still use the range
        self.registry.host.unregister(reg)
        self.registry.forget(reg.context.gpu, reg.device_address)

    # ------------------------------------------------------------ managed memory attachment
    def attach(self, ptr: int, length: int, flags: int, stream: Any, fence: int) -> None:
        """Record a stream association that takes effect when `fence`
        (the stream's work before it) retires."""
        with self.registry.lock:
            self.attachments[ptr] = (stream, flags, fence)

    def attachment(self, ptr: int) -> tuple[int, Any]:
        """(effective mcMemAttach* flags, stream or None) of a managed allocation."""
        info = self.registry.resolve(ptr)
        if info is None or info.kind is not AllocationKind.MANAGED:
            raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"0x{ptr:x} is not managed memory")
        owner = info.context.memory if info.context is not None else self
        with self.registry.lock:
            entry = owner.attachments.get(info.allocation.base)
        default = info.flags or 0x1
        if entry is None:
            return default, None
        stream, flags, fence = entry
        if stream.destroyed:                # destroying the stream restores the default
            return default, None
        if not stream.channel.semaphore.reached(fence):
            return default, None
        return flags, stream

    def release_all(self) -> None:
        for reg in self.registry.host.owned_by(self.context):
            self.registry.host.unregister(reg)
            self.registry.forget(self.gpu, reg.device_address)
        self.attachments.clear()
        for base, a in list(self.live.items()):
            self.gpu.free_internal(a)
            self.registry.forget(self.gpu, base)
        self.live.clear()
