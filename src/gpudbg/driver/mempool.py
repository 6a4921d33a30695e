"""The stream-ordered allocator (seed 002 §2.14, cudaMallocAsync's model):
memory pools whose blocks become valid and invalid in stream order.

The one idea: the host decides addresses at once, the GPU makes them real
in stream order. A pool holds chunks, backed VA reservations (its "reserved"
memory); allocating carves a block out of a free extent and pushes a
POOL_ALLOC command that maps the block when the GPU reaches it; freeing
pushes POOL_FREE, which unmaps it and leaves it remembered as freed, so a
later access in stream order is a use-after-free the simulator reports. A
free extent remembers the (stream, fence) of every free not yet observed;
a later allocation may take it when stream order makes that safe: the same
stream, an event dependency (follow event dependencies), a fence the GPU
already passed (opportunistic), or by encoding a SEM_ACQUIRE on that fence
(internal dependencies; the freeing stream may be destroyed by then: its
semaphore stays while the acquire is queued, driver/fence.py). Host
synchronizations observe completed frees and return fully free chunks
above the release threshold to the device. Destroying a pool returns at
once; its chunks go back once no block is outstanding and every free has
retired.

Deliberately not done: a pool of one device used from a stream of another
(the rings of one GPU cannot order another GPU's page tables) maps at once
and frees after waiting for the stream; graph allocation nodes. `transfer`
asks checked_pointer() so copies see blocks before their POOL_ALLOC ran
and refuse freed ones and mappings whose access flags forbid the copy.
"""
from __future__ import annotations

import enum
import itertools
import struct
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpudbg.driver import commands as C
from gpudbg.driver import vmm as _vmm
from gpudbg.driver.memory import PointerInfo
from gpudbg.driver.status import CUresult, EngineError
from gpudbg.sim.memory.allocations import MapAccess
from gpudbg.sim.memory.spaces import Allocation, AllocationKind, OutOfMemory

CHUNK_GRANULARITY = _vmm.GRANULARITY
BLOCK_ALIGN = 256
INVALID = CUresult.CUDA_ERROR_INVALID_VALUE
EXPORT_MAGIC = b"GPDBGPTR"
_ids = itertools.count(1)


class PoolAttr(enum.IntEnum):
    """cudaMemPoolAttr numbering."""

    REUSE_FOLLOW_EVENT_DEPENDENCIES = 1
    REUSE_ALLOW_OPPORTUNISTIC = 2
    REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3
    RELEASE_THRESHOLD = 4
    RESERVED_MEM_CURRENT = 5
    RESERVED_MEM_HIGH = 6
    USED_MEM_CURRENT = 7
    USED_MEM_HIGH = 8


BOOL_ATTRS = {PoolAttr.REUSE_FOLLOW_EVENT_DEPENDENCIES, PoolAttr.REUSE_ALLOW_OPPORTUNISTIC,
              PoolAttr.REUSE_ALLOW_INTERNAL_DEPENDENCIES}
WATERMARKS = {PoolAttr.RESERVED_MEM_HIGH, PoolAttr.USED_MEM_HIGH}


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


@dataclass(frozen=True)
class Pending:
    """A free the host has not yet observed complete."""

    stream: Any
    semaphore: Any
    fence: int

    def reached(self) -> bool:
        return self.semaphore.reached(self.fence)


@dataclass
class Extent:
    start: int
    size: int
    pending: tuple[Pending, ...] = ()

    @property
    def end(self) -> int:
        return self.start + self.size


@dataclass(eq=False)
class Chunk:
    base: int
    size: int
    extents: list[Extent] = field(default_factory=list)

    def fully_free(self, completed_ok: bool) -> bool:
        return (len(self.extents) == 1 and self.extents[0].size == self.size
                and all(completed_ok and p.reached() for p in self.extents[0].pending))


@dataclass(eq=False)
class Block:
    ptr: int
    size: int
    span: int
    pool: "MemPool"
    chunk: Chunk
    record: Allocation          # what copies resolve the pointer to
    freed: bool = False
    imports: int = 0


class MemPool:
    """One mcMemPool_t: chunks of one device's memory plus its attributes."""

    def __init__(self, registry: "PoolRegistry", device: Any, handle_types: int = 0,
                 max_size: int = 0, default: bool = False):
        self.id = next(_ids)
        self.registry = registry
        self.device = device
        self.ctx = device.primary_context()
        self.gpu = device.gpu
        self.handle_types = handle_types
        self.max_size = max_size
        self.default = default
        self.destroyed = False
        self.attrs: dict[PoolAttr, int] = {a: 1 for a in BOOL_ATTRS}
        self.attrs[PoolAttr.RELEASE_THRESHOLD] = 0
        self.reserved_high = self.used_high = 0
        self.used = 0
        self.access: dict[int, int] = {device.ordinal: int(MapAccess.READ_WRITE)}
        self.chunks: list[Chunk] = []
        self.live: dict[int, Block] = {}

    def __repr__(self) -> str:
        return f"<mcMemPool {self.id} on device {self.device.ordinal}{' (default)' if self.default else ''}>"

    @property
    def reserved(self) -> int:
        return sum(c.size for c in self.chunks)

    def check(self) -> None:
        if self.destroyed or self.ctx.destroyed:
            raise EngineError(INVALID, f"{self!r} was destroyed")

    # ------------------------------------------------------------ attributes
    def get_attribute(self, attr: PoolAttr) -> int:
        if attr is PoolAttr.RESERVED_MEM_CURRENT:
            return self.reserved
        if attr is PoolAttr.RESERVED_MEM_HIGH:
            return self.reserved_high
        if attr is PoolAttr.USED_MEM_CURRENT:
            return self.used
        if attr is PoolAttr.USED_MEM_HIGH:
            return self.used_high
        return self.attrs[attr]

    def set_attribute(self, attr: PoolAttr, value: int) -> None:
        if attr in WATERMARKS:
            if value != 0:
                raise EngineError(INVALID, f"{attr.name} can only be reset to 0, not {value}")
            if attr is PoolAttr.RESERVED_MEM_HIGH:
                self.reserved_high = self.reserved
            else:
                self.used_high = self.used
            return
        if attr in (PoolAttr.RESERVED_MEM_CURRENT, PoolAttr.USED_MEM_CURRENT):
            raise EngineError(INVALID, f"{attr.name} is read-only")
        if attr in BOOL_ATTRS and value not in (0, 1):
            raise EngineError(INVALID, f"{attr.name} is a boolean (0 or 1), not {value}")
        self.attrs[attr] = value

    # ------------------------------------------------------------ placement
    def _usable(self, e: Extent, stream: Any) -> tuple[bool, list[Pending]]:
        """Whether stream may take extent e, and the fences it must acquire."""
        deps: list[Pending] = []
        for p in e.pending:
            if p.stream is stream:
                continue
            if self.attrs[PoolAttr.REUSE_FOLLOW_EVENT_DEPENDENCIES] and \
                    stream.seen.get(p.stream.channel.id, 0) >= p.fence:
                continue
            if self.attrs[PoolAttr.REUSE_ALLOW_OPPORTUNISTIC] and p.reached():
                continue
            if self.attrs[PoolAttr.REUSE_ALLOW_INTERNAL_DEPENDENCIES]:
                deps.append(p)
                continue
            return False, []
        return True, deps

    def _find(self, span: int, stream: Any) -> tuple[Chunk, Extent, list[Pending]] | None:
        with_deps = None
        for c in self.chunks:
            for e in c.extents:
                if e.size < span:
                    continue
                ok, deps = self._usable(e, stream)
                if ok and not deps:
                    return c, e, []
                if ok and with_deps is None:
                    with_deps = (c, e, deps)
        return with_deps

    def _grow(self, span: int) -> Chunk:
        size = _align(span, CHUNK_GRANULARITY)
        opportunistic = bool(self.attrs[PoolAttr.REUSE_ALLOW_OPPORTUNISTIC])
        if self.max_size and self.reserved + size > self.max_size:
            self.trim_to(0, completed_ok=opportunistic)
            if self.reserved + size > self.max_size:
                raise EngineError(CUresult.CUDA_ERROR_OUT_OF_MEMORY,
                                  f"{self!r}: {size} more bytes exceed its maxSize {self.max_size}")
        for attempt in (0, 1):
            try:
                with self.gpu.cv:
                    base = self.gpu.memory.reserve(size, CHUNK_GRANULARITY, backed=True)
                break
            except OutOfMemory as e:
                if attempt or not self.trim_to(0, completed_ok=opportunistic):
                    raise EngineError(CUresult.CUDA_ERROR_OUT_OF_MEMORY, str(e)) from None
        c = Chunk(base, size, [Extent(base, size)])
        self.chunks.append(c)
        self.reserved_high = max(self.reserved_high, self.reserved)
        return c

    # ------------------------------------------------------------ alloc / free
    def allocate(self, size: int, stream: Any) -> int:
        self.check()
        if size <= 0:
            raise EngineError(INVALID, f"allocation size must be positive, got {size}")
        span = _align(size, BLOCK_ALIGN)
        with self.registry.lock:
            found = self._find(span, stream)
            if found is None:
                c = self._grow(span)
                found = (c, c.extents[0], [])
            chunk, ext, deps = found
            ptr = ext.start
            if ext.size == span:
                chunk.extents.remove(ext)
            else:
                ext.start += span
                ext.size -= span
            record = Allocation(ptr, size, AllocationKind.DEVICE, "stream-ordered allocation",
                                np.zeros(0, dtype=np.uint8), footprint=size)
            block = Block(ptr, size, span, self, chunk, record)
            self.registry.purge_freed(ptr, span)
            self.live[ptr] = block
            self.registry.blocks[ptr] = block
            self.used += span
            self.used_high = max(self.used_high, self.used)
        if stream.context.gpu is not self.gpu:
            with self.gpu.cv:
                self.gpu.memory.map_backed(ptr, size, label="stream-ordered allocation")
            return ptr
        for p in deps:
            stream.wait_for(p.semaphore, p.fence)
        stream.submit([C.make(C.Opcode.POOL_ALLOC, address=ptr, size=size)])
        return ptr

    def free(self, block: Block, stream: Any) -> None:
        # Claim the block first, atomically: two threads freeing the same
        # pointer must give one free and one error, never two POOL_FREEs
        # (the second unmapped a range that was no longer mapped).
        cross_device = stream.context.gpu is not self.gpu
        if cross_device:
            with self.gpu.cv:
                mapped = self.gpu.memory.mapping_access(block.ptr) is not None
            if not mapped:     # its POOL_ALLOC has not run on the pool's device yet
                raise EngineError(INVALID, f"0x{block.ptr:x} is freed on another device's stream "
                                           f"before its allocation took place on device "
                                           f"{self.gpu.ordinal}; synchronize the allocating stream first")
        with self.registry.lock:
            if block.freed or self.live.get(block.ptr) is not block:
                raise EngineError(INVALID, f"0x{block.ptr:x} is not a live stream-ordered allocation "
                                           f"(already freed)")
            block.freed = True
            del self.live[block.ptr]
            self.used -= block.span
        if cross_device:
            stream.wait()
            with self.gpu.cv:
                self.gpu.memory.unmap(block.ptr, remember_freed=True)
            pending: tuple[Pending, ...] = ()
        else:
            fence = stream.submit([C.make(C.Opcode.POOL_FREE, address=block.ptr)])
            pending = (Pending(stream, stream.channel.semaphore, fence),)
        with self.registry.lock:
            self._insert(block.chunk, Extent(block.ptr, block.span, pending))

    @staticmethod
    def _insert(chunk: Chunk, ext: Extent) -> None:
        chunk.extents.append(ext)
        MemPool._coalesce(chunk)

    @staticmethod
    def _coalesce(chunk: Chunk) -> None:
        """Merge neighbours with the same outstanding frees only, so a block
        freed on one stream does not make fresh memory next to it wait."""
        chunk.extents.sort(key=lambda e: e.start)
        merged: list[Extent] = []
        for e in chunk.extents:
            if merged and merged[-1].end == e.start and set(merged[-1].pending) == set(e.pending):
                last = merged[-1]
                merged[-1] = Extent(last.start, last.size + e.size, last.pending)
            else:
                merged.append(e)
        chunk.extents = merged

    # ------------------------------------------------------------ release
    def observe(self) -> None:
        """A host synchronization: completed frees become unconditionally
        reusable, then memory above the release threshold goes back."""
        with self.registry.lock:
            for c in self.chunks:
                for e in c.extents:
                    e.pending = tuple(p for p in e.pending if not p.reached())
                self._coalesce(c)
            self.trim_to(self.attrs[PoolAttr.RELEASE_THRESHOLD], completed_ok=False)
            if self.destroyed and not self.live:
                self.trim_to(0, completed_ok=True)

    def trim_to(self, keep: int, completed_ok: bool = True) -> bool:
        """Release fully free chunks while at least `keep` bytes stay reserved."""
        released = False
        with self.registry.lock:
            for c in sorted(self.chunks, key=lambda c: -c.base):
                if self.reserved - c.size < keep or not c.fully_free(completed_ok):
                    continue
                with self.gpu.cv:
                    mem = self.gpu.memory
                    for a in mem.mappings_in(c.base, c.size):
                        mem.unmap(a.base, remember_freed=True)   # frees a faulted GPU never ran
                    mem.release(c.base)
                self.chunks.remove(c)
                self.registry.purge_freed(c.base, c.size)
                released = True
        return released

    def destroy(self) -> None:
        """Returns at once; chunks go back once no block is outstanding."""
        self.check()
        if self.default:
            raise EngineError(INVALID, f"{self!r} is a device's default pool and cannot be destroyed")
        self.destroyed = True
        self.registry.forget_current(self)
        self.observe()

    def teardown(self) -> None:
        with self.registry.lock:
            for b in list(self.live.values()):
                self.registry.blocks.pop(b.ptr, None)
            self.live.clear()
            with self.gpu.cv:
                mem = self.gpu.memory
                for c in self.chunks:
                    for a in mem.mappings_in(c.base, c.size):
                        mem.unmap(a.base, remember_freed=True)
                    mem.release(c.base)
            self.chunks.clear()
            self.destroyed = True


@dataclass(eq=False)
class ImportedPool:
    """A pool opened from a shareable handle: allocations can be imported
    from it, not made in it."""

    source: MemPool

    @property
    def ctx(self) -> Any:
        return self.source.ctx

    def __repr__(self) -> str:
        return f"<imported mcMemPool of {self.source!r}>"


class PoolRegistry:
    """All pools of one engine, the current pool per device, and the
    pointer -> block map of every stream-ordered allocation."""

    def __init__(self, engine: Any):
        self.engine = engine
        self.lock = threading.RLock()
        self.pools: list[MemPool] = []
        self.defaults: dict[int, MemPool] = {}
        self.current: dict[int, MemPool] = {}
        self.blocks: dict[int, Block] = {}
        self._hooked: "weakref.WeakSet[Any]" = weakref.WeakSet()

    def _hook(self, ctx: Any) -> None:
        if ctx not in self._hooked:
            self._hooked.add(ctx)
            ctx.sync_hooks.append(lambda c=ctx: self.observe(c))
            ctx.teardown_hooks.append(lambda c=ctx: self.teardown(c))

    def default_pool(self, device: Any) -> MemPool:
        with self.lock:
            p = self.defaults.get(device.ordinal)
            if p is None or p.ctx.destroyed:
                p = MemPool(self, device, default=True)
                self.defaults[device.ordinal] = p
                self.pools.append(p)
                self._hook(p.ctx)
            return p

    def current_pool(self, device: Any) -> MemPool:
        with self.lock:
            p = self.current.get(device.ordinal)
            if p is None or p.destroyed or p.ctx.destroyed:
                return self.default_pool(device)
            return p

    def set_current(self, device: Any, pool: Any) -> None:
        if not isinstance(pool, MemPool):
            raise EngineError(INVALID, f"{pool!r} is not a memory pool that allocations can come from")
        pool.check()
        if pool.device is not device:
            raise EngineError(INVALID, f"{pool!r} is not local to device {device.ordinal}")
        with self.lock:
            self.current[device.ordinal] = pool

    def forget_current(self, pool: MemPool) -> None:
        with self.lock:
            if self.current.get(pool.device.ordinal) is pool:
                del self.current[pool.device.ordinal]

    def create(self, device: Any, handle_types: int, max_size: int) -> MemPool:
        _vmm.check_handle_types(handle_types, "mcMemPoolCreate")
        if max_size and max_size % CHUNK_GRANULARITY:
            raise EngineError(INVALID, f"maxSize {max_size} is not a multiple of "
                                       f"{CHUNK_GRANULARITY} bytes")
        with self.lock:
            p = MemPool(self, device, handle_types, max_size)
            self.pools.append(p)
            self._hook(p.ctx)
            return p

    def observe(self, ctx: Any) -> None:
        with self.lock:
            for p in list(self.pools):
                if p.ctx is ctx:
                    p.observe()

    def teardown(self, ctx: Any) -> None:
        with self.lock:
            for p in [p for p in self.pools if p.ctx is ctx]:
                p.teardown()
                self.pools.remove(p)
            self.blocks = {k: b for k, b in self.blocks.items() if b.pool.ctx is not ctx}

    def block(self, ptr: Any, api: str) -> Block:
        b = self.blocks.get(ptr) if isinstance(ptr, int) and not isinstance(ptr, bool) else None
        if b is None:
            raise EngineError(INVALID, f"{api}: {ptr!r} was not returned by a stream-ordered "
                                       f"allocation")
        if b.freed:
            raise EngineError(INVALID, f"{api}: 0x{ptr:x} was already freed (double free)")
        return b

    def free(self, ptr: Any, stream: Any, api: str) -> None:
        b = self.block(ptr, api)
        if b.imports:
            b.imports -= 1          # an importer's free (in-process import): the memory stays
            return
        b.pool.free(b, stream)

    def containing(self, ptr: int) -> Block | None:
        with self.lock:
            for b in self.blocks.values():
                if b.ptr <= ptr < b.ptr + max(b.size, 1):
                    return b
        return None

    def purge_freed(self, start: int, size: int) -> None:
        """Forget freed blocks whose range is reused or returned (caller holds lock)."""
        self.blocks = {k: b for k, b in self.blocks.items()
                       if not (b.freed and b.ptr < start + size and start < b.ptr + b.span)}

    # ------------------------------------------------------------ sharing
    def export_pool(self, pool: Any, handle_type: int) -> int:
        if not isinstance(pool, MemPool):
            raise EngineError(INVALID, f"{pool!r} is not an exportable memory pool")
        pool.check()
        if not pool.handle_types & handle_type:
            raise EngineError(INVALID, f"{pool!r} was created without handle type 0x{handle_type:x} "
                                       f"(handleTypes 0x{pool.handle_types:x})")
        return _vmm.state(self.engine).fds.add("memory pool", pool)

    def import_pool(self, fd: Any) -> ImportedPool:
        pool = _vmm.state(self.engine).fds.get(fd, "memory pool")
        pool.check()
        return ImportedPool(pool)

    def export_pointer(self, ptr: Any) -> bytes:
        b = self.block(ptr, "mcMemPoolExportPointer")
        if not b.pool.handle_types:
            raise EngineError(INVALID, f"0x{ptr:x} comes from {b.pool!r}, which is not shareable "
                                       f"(created with mcMemHandleTypeNone)")
        return EXPORT_MAGIC + struct.pack("<QQ", b.pool.id, b.ptr) + bytes(40)

    def import_pointer(self, pool: Any, data: bytes) -> int:
        if not isinstance(pool, ImportedPool):
            raise EngineError(INVALID, f"{pool!r} is not a pool imported with "
                                       f"mcMemPoolImportFromShareableHandle")
        if len(data) != 64 or data[:8] != EXPORT_MAGIC:
            raise EngineError(INVALID, "export data was not made by mcMemPoolExportPointer")
        pool_id, ptr = struct.unpack_from("<QQ", data, 8)
        if pool_id != pool.source.id:
            raise EngineError(INVALID, f"export data names pool {pool_id}, not {pool.source!r}")
        b = self.block(ptr, "mcMemPoolImportPointer")
        b.imports += 1
        return ptr


_registries: "weakref.WeakKeyDictionary[Any, PoolRegistry]" = weakref.WeakKeyDictionary()
_registries_lock = threading.Lock()


def registry(engine: Any) -> PoolRegistry:
    with _registries_lock:
        r = _registries.get(engine)
        if r is None:
            r = _registries[engine] = PoolRegistry(engine)
        return r


def checked_pointer(engine: Any, ptr: int, info: PointerInfo | None, writable: bool,
                    role: str) -> PointerInfo | None:
    """What a copy or memset may use ptr as: stream-ordered blocks resolve
    (even before their POOL_ALLOC ran), freed ones and VMM mappings whose
    access flags forbid the access are refused with a reason."""
    reg = _registries.get(engine)
    block = reg.containing(ptr) if reg is not None else None
    if block is not None:
        if block.freed:
            raise EngineError(INVALID, f"{role}: 0x{ptr:x} is inside a freed {block.size}-byte "
                                       f"allocation at 0x{block.ptr:x} (freed by mcFreeAsync)")
        return PointerInfo(block.pool.gpu, block.record, ptr - block.ptr, block.pool.ctx, 0)
    if info is not None and info.allocation.mapped_in is not None:
        why = info.gpu.memory.access_denied(ptr, 1, writable)
        if why is not None:
            raise EngineError(INVALID, f"{role}: 0x{ptr:x} {why}")
    return info


# Device memory a synchronous free (cudaFree, cuMemFree) takes.
SYNC_FREEABLE = (AllocationKind.DEVICE, AllocationKind.PITCHED, AllocationKind.MANAGED)


def free_synchronously(ctx: Any, ptr: int, api: str) -> None:
    """cudaFree/cuMemFree: wait for the context's work, then free device,
    pitched or managed memory, or a stream-ordered block (released in order
    on the legacy stream and waited for); 0 is a no-op."""
    if not ptr:
        return
    ctx.wait_idle_quietly()
    pools = registry(ctx.engine)
    block = pools.blocks.get(ptr)
    if block is not None and not block.freed:
        stream = ctx.stream(0x1)
        pools.free(ptr, stream, api)
        stream.wait()
    else:
        ctx.memory.free(ptr, SYNC_FREEABLE, api)
    ctx.reap()

