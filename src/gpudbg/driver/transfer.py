"""memcpy and memset: classify the operands, pick the path, apply seed 002's
host-synchronization rules (chapter 1.2).

Every operand is either a host buffer object (pageable memory, anything with
the buffer protocol) or an integer pointer that the UVA registry resolves to
device, pinned host or managed memory. The GPU only sees device-visible
addresses, so pageable memory travels through a pinned STAGING buffer: the
host fills it before a host-to-device COPY, or drains it after a
device-to-host COPY has retired. Copies between host memories are done by the
CPU. Which calls wait for the copy is a table of the seed's rules, not
scattered conditions.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpudbg.driver import commands as C
from gpudbg.driver.memory import PointerInfo
from gpudbg.runtime.errors import DriverError, mcError_t
from gpudbg.sim.memory.spaces import AllocationKind

INVALID = mcError_t.mcErrorInvalidValue


class Place(enum.Enum):
    PAGEABLE = "pageable host memory"
    PINNED = "pinned host memory"
    DEVICE = "device memory"
    MANAGED = "managed memory"

    @property
    def host_side(self) -> bool:
        return self in (Place.PAGEABLE, Place.PINNED, Place.MANAGED)

    @property
    def device_side(self) -> bool:
        return self in (Place.DEVICE, Place.MANAGED, Place.PINNED)


# mcMemcpyKind values (runtime.types.mcMemcpyKind) -> (src must be, dst must be)
_HOST, _DEV = "host", "device"
KIND_ROLES = {0: (_HOST, _HOST), 1: (_HOST, _DEV), 2: (_DEV, _HOST), 3: (_DEV, _DEV), 4: (None, None)}
KIND_NAMES = {0: "mcMemcpyHostToHost", 1: "mcMemcpyHostToDevice", 2: "mcMemcpyDeviceToHost",
              3: "mcMemcpyDeviceToDevice", 4: "mcMemcpyDefault"}


@dataclass
class Operand:
    place: Place
    address: int = 0                 # device-visible address (pointers)
    buffer: memoryview | None = None  # byte view of a host buffer object
    info: PointerInfo | None = None


def _is_pointer(obj: Any) -> bool:
    return isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_))


def classify(engine: Any, obj: Any, nbytes: int, role: str, writable: bool) -> Operand:
    """Resolve one memcpy/memset operand and check it can hold nbytes."""
    if _is_pointer(obj):
        ptr = int(obj)
        if ptr == 0:
            raise DriverError(INVALID, f"{role} is the null pointer")
        info = engine.resolve_pointer(ptr)
        if info is None:
            raise DriverError(INVALID, f"{role}: {engine.uva.describe(ptr)}")
        if nbytes > info.remaining:
            raise DriverError(INVALID, f"{role}: {nbytes} bytes at 0x{ptr:x} run "
                                       f"{nbytes - info.remaining} bytes past the end of the "
                                       f"{info.allocation.describe_short()}")
        place = {AllocationKind.HOST_PINNED: Place.PINNED, AllocationKind.MANAGED: Place.MANAGED}.get(
            info.kind, Place.DEVICE)
        return Operand(place, address=ptr, info=info)
    try:
        mv = memoryview(obj)
    except TypeError:
        raise DriverError(INVALID, f"{role} must be a pointer (int) or a buffer-protocol object, "
                                   f"not {type(obj).__name__}") from None
    if not mv.c_contiguous:
        raise DriverError(INVALID, f"{role} buffer must be C-contiguous")
    if writable and mv.readonly:
        raise DriverError(INVALID, f"{role} buffer is read-only")
    mv = mv.cast("B") if mv.nbytes else mv
    if nbytes > mv.nbytes:
        raise DriverError(INVALID, f"{role} buffer holds {mv.nbytes} bytes, {nbytes} requested")
    return Operand(Place.PAGEABLE, buffer=mv)


def _check_role(op: Operand, need: str | None, role: str, kind: int) -> None:
    if need == _HOST and not op.place.host_side:
        raise DriverError(INVALID, f"{KIND_NAMES[kind]}: {role} is {op.place.value}, not host memory")
    if need == _DEV and (op.place is Place.PAGEABLE):
        raise DriverError(INVALID, f"{KIND_NAMES[kind]}: {role} is a host buffer object, "
                                   f"not a device pointer")


def memcpy(ctx: Any, dst: Any, src: Any, count: int, kind: int, stream: Any, is_async: bool) -> None:
    """mcMemcpy / mcMemcpyAsync on `stream` (a driver Stream)."""
    if isinstance(kind, bool) or not isinstance(kind, int) or int(kind) not in KIND_ROLES:
        raise DriverError(mcError_t.mcErrorInvalidMemcpyDirection, f"{kind!r} is not an mcMemcpyKind")
    kind = int(kind)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise DriverError(INVALID, f"count must be a non-negative int, got {count!r}")
    engine = ctx.engine
    s = classify(engine, src, count, "source", writable=False)
    d = classify(engine, dst, count, "destination", writable=True)
    need_src, need_dst = KIND_ROLES[kind]
    _check_role(s, need_src, "source", kind)
    _check_role(d, need_dst, "destination", kind)
    if count == 0:
        return
    gpu = ctx.gpu

    host_to_host = (kind == 0) or (kind == 4 and s.place in (Place.PAGEABLE, Place.PINNED)
                                   and d.place in (Place.PAGEABLE, Place.PINNED))
    if host_to_host:
        # Fully synchronous, by the CPU, after the stream's earlier work.
        if s.place is not Place.PAGEABLE or d.place is not Place.PAGEABLE:
            stream.wait()
            ctx.after_wait()
        src_bytes = s.buffer[:count] if s.buffer is not None else gpu.memory.view(s.address, count)
        dst_view = d.buffer[:count] if d.buffer is not None else gpu.memory.view(d.address, count)
        np.frombuffer(dst_view, dtype=np.uint8)[:] = np.frombuffer(src_bytes, dtype=np.uint8)
        return

    staging_in = staging_out = None
    src_addr, dst_addr = s.address, d.address
    if s.place is Place.PAGEABLE:
        staging_in = gpu.alloc_internal(count, AllocationKind.STAGING, "staging (host to device)")
        staging_in.data[:count] = np.frombuffer(s.buffer[:count], dtype=np.uint8)
        src_addr = staging_in.base
    if d.place is Place.PAGEABLE:
        staging_out = gpu.alloc_internal(count, AllocationKind.STAGING, "staging (device to host)")
        dst_addr = staging_out.base
    fence = stream.submit([C.make(C.Opcode.COPY, src=src_addr, dst=dst_addr, size=count)])
    if staging_in is not None:
        ctx.defer_free(stream, fence, staging_in)

    # Seed 002 1.2.1: which copies return only when done.
    if staging_out is not None:
        wait = True                          # to pageable host: always waits (sync and async)
    elif is_async:
        wait = False
    else:
        wait = d.place is Place.PINNED or (s.place is Place.PINNED and d.place is not Place.PAGEABLE
                                          and d.place is not Place.PINNED)
    if not wait:
        ctx.reap()
        return
    stream.channel.wait(fence)
    try:
        if staging_out is not None and stream.channel.error is None:
            np.frombuffer(d.buffer[:count], dtype=np.uint8)[:] = staging_out.data[:count]
    finally:
        if staging_out is not None:
            gpu.free_internal(staging_out)
    ctx.after_wait()


def memset(ctx: Any, dst: Any, value: int, element_size: int, count: int, stream: Any,
           is_async: bool) -> None:
    """mcMemset* (element_size 1, 2 or 4; count elements)."""
    bits = 8 * element_size
    if not _is_pointer(value) or not -(1 << (bits - 1)) <= int(value) < (1 << bits):
        if element_size == 1 and _is_pointer(value) and -(1 << 31) <= int(value) < (1 << 31):
            value = int(value) & 0xFF   # mcMemset takes an int and uses its low byte
        else:
            raise DriverError(INVALID, f"value {value!r} does not fit in {bits} bits")
    value = int(value) & ((1 << bits) - 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise DriverError(INVALID, f"count must be a non-negative int, got {count!r}")
    if not _is_pointer(dst):
        raise DriverError(INVALID, f"memset destination must be a device pointer (int), "
                                   f"not {type(dst).__name__}")
    d = classify(ctx.engine, dst, count * element_size, "destination", writable=True)
    if d.address % element_size:
        raise DriverError(INVALID, f"destination 0x{d.address:x} is not {element_size}-byte aligned")
    if count == 0:
        return
    fence = stream.submit([C.make(C.Opcode.MEMSET, dst=d.address, value=value,
                                  element_size=element_size, count=count)])
    # Seed 002 1.2.2: synchronous unless the target is pinned or unified memory.
    if not is_async and d.place in (Place.PINNED, Place.MANAGED):
        stream.channel.wait(fence)
        ctx.after_wait()
    else:
        ctx.reap()
