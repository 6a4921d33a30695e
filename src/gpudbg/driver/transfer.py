"""memcpy and memset: classify the operands, pick the path, apply seed 002's
host-synchronization rules (chapter 1.2), for 1D, pitched 2D and 3D shapes.

Every operand is either a host buffer object (pageable memory, anything with
the buffer protocol, unless it was registered with mcHostRegister, which
makes it pinned) or an integer pointer that the UVA registry resolves to
device, pinned host, registered host or managed memory. Every copy is a
`Region` (width bytes x height rows x depth slices) read and written through
a `Layout` (pitch, slice pitch) on each side; a 1D copy is the region of one
row. The GPU only sees device-visible addresses, so pageable memory travels
through a pinned STAGING buffer holding the region packed: the host packs
it before a host-to-device copy, or unpacks it after a device-to-host copy
retired. A 1D copy within one device is a COPY command; anything pitched,
or touching another device's memory, is COPY_2D (one per slice unless the
slices are contiguous), which the copy engine walks itself. Copies between
host memories are done by the CPU. Which calls wait is one function of the
seed's rules (`_host_waits`), not scattered conditions; every range is
checked before anything is queued.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from gpudbg.driver import commands as C
from gpudbg.driver import mempool as _mempool
from gpudbg.driver.host_register import host_address
from gpudbg.driver.memory import PointerInfo
from gpudbg.driver.status import Cause, CUresult, EngineError
from gpudbg.sim.memory.spaces import AllocationKind

INVALID = CUresult.CUDA_ERROR_INVALID_VALUE


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
_PLACES = {AllocationKind.HOST_PINNED: Place.PINNED, AllocationKind.HOST_REGISTERED: Place.PINNED,
           AllocationKind.MANAGED: Place.MANAGED}


@dataclass(frozen=True)
class Region:
    """What moves: width bytes x height rows x depth slices."""

    width: int
    height: int = 1
    depth: int = 1

    @property
    def nbytes(self) -> int:
        return self.width * self.height * self.depth

    @property
    def packed(self) -> "Layout":
        return Layout(self.width, self.width * self.height)


@dataclass(frozen=True)
class Layout:
    """How a region sits in one operand: bytes between rows and between slices."""

    pitch: int
    slice: int

    def extent(self, r: Region) -> int:
        """Bytes from the first to one past the last byte touched."""
        if r.nbytes == 0:
            return 0
        return (r.depth - 1) * self.slice + (r.height - 1) * self.pitch + r.width

    def contiguous_slices(self, r: Region) -> bool:
        return r.depth == 1 or self.slice == self.pitch * r.height


@dataclass
class Operand:
    place: Place
    address: int = 0                 # device-visible address (pointers, registered buffers)
    buffer: memoryview | None = None  # byte view of a pageable host buffer object
    info: PointerInfo | None = None

    def host_array(self, nbytes: int) -> np.ndarray:
        """The operand's first nbytes as a flat uint8 array the CPU can use."""
        if self.buffer is not None:
            return np.frombuffer(self.buffer, dtype=np.uint8)[:nbytes] if nbytes else np.zeros(0, np.uint8)
        assert self.info is not None
        return self.info.allocation.data[self.info.offset:self.info.offset + nbytes]


def _is_pointer(obj: Any) -> bool:
    return isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_))


def _int_arg(name: str, value: Any) -> int:
    if not _is_pointer(value) or int(value) < 0:
        raise EngineError(INVALID, f"{name} must be a non-negative int, got {value!r}")
    return int(value)


def classify(engine: Any, obj: Any, nbytes: int, role: str, writable: bool,
             bad_pointer: CUresult = INVALID) -> Operand:
    """Resolve one memcpy/memset operand and check it can hold nbytes.
    `bad_pointer` is the code for an integer that names no allocation."""
    if _is_pointer(obj):
        ptr = int(obj)
        if ptr == 0:
            raise EngineError(INVALID, f"{role} is the null pointer")
        # stream-ordered blocks, freed blocks, VMM access flags (driver/mempool.py)
        info = _mempool.checked_pointer(engine, ptr, engine.resolve_pointer(ptr), writable, role)
        if info is None:
            raise EngineError(bad_pointer, f"{role}: {engine.uva.describe(ptr)}")
        if nbytes > info.remaining:
            raise EngineError(INVALID, f"{role}: {nbytes} bytes at 0x{ptr:x} run "
                                       f"{nbytes - info.remaining} bytes past the end of the "
                                       f"{info.allocation.describe_short()}")
        if writable and info.kind is AllocationKind.HOST_REGISTERED and info.allocation.readonly:
            raise EngineError(INVALID, f"{role}: 0x{ptr:x} was registered with mcHostRegisterReadOnly")
        return Operand(_PLACES.get(info.kind, Place.DEVICE), address=ptr, info=info)
    try:
        mv = memoryview(obj)
    except TypeError:
        raise EngineError(INVALID, f"{role} must be a pointer (int) or a buffer-protocol object, "
                                   f"not {type(obj).__name__}") from None
    if not mv.c_contiguous:
        raise EngineError(INVALID, f"{role} buffer must be C-contiguous")
    if writable and mv.readonly:
        raise EngineError(INVALID, f"{role} buffer is read-only")
    mv = mv.cast("B") if mv.nbytes else mv
    if nbytes > mv.nbytes:
        raise EngineError(INVALID, f"{role} buffer holds {mv.nbytes} bytes, {nbytes} requested")
    if mv.nbytes:
        found = engine.uva.host.lookup(host_address(np.frombuffer(mv, dtype=np.uint8)), max(nbytes, 1))
        if found is not None:          # registered: the pinned path, through its device mapping
            reg, off = found
            return classify(engine, reg.device_address + off, nbytes, role, writable, bad_pointer)
    return Operand(Place.PAGEABLE, buffer=mv)


def _check_role(op: Operand, need: str | None, role: str, kind: int) -> None:
    if need == _HOST and not op.place.host_side:
        raise EngineError(INVALID, f"{KIND_NAMES[kind]}: {role} is {op.place.value}, not host memory")
    if need == _DEV and (op.place is Place.PAGEABLE):
        raise EngineError(INVALID, f"{KIND_NAMES[kind]}: {role} is a host buffer object, "
                                   f"not a device pointer")


def check_kind(kind: Any) -> int:
    if isinstance(kind, bool) or not _is_pointer(kind) or int(kind) not in KIND_ROLES:
        raise EngineError(Cause.MEMCPY_DIRECTION, f"{kind!r} is not an mcMemcpyKind")
    return int(kind)


def _strided(flat: np.ndarray, r: Region, lay: Layout) -> np.ndarray:
    return as_strided(flat, shape=(r.depth, r.height, r.width), strides=(lay.slice, lay.pitch, 1))


def copy_commands(gpu: Any, src: int, slay: Layout, dst: int, dlay: Layout, r: Region) -> list[C.Command]:
    """The ring commands moving region r (both addresses device-visible)."""
    local = gpu.memory.contains_range(src) and gpu.memory.contains_range(dst)
    if r.height == 1 and r.depth == 1 and local:
        return [C.make(C.Opcode.COPY, src=src, dst=dst, size=r.width)]
    if slay.contiguous_slices(r) and dlay.contiguous_slices(r):
        return [C.make(C.Opcode.COPY_2D, src=src, dst=dst, spitch=slay.pitch, dpitch=dlay.pitch,
                       width=r.width, height=r.height * r.depth)]
    return [C.make(C.Opcode.COPY_2D, src=src + z * slay.slice, dst=dst + z * dlay.slice,
                   spitch=slay.pitch, dpitch=dlay.pitch, width=r.width, height=r.height)
            for z in range(r.depth)]


def _host_waits(s: Operand, d: Operand, is_async: bool) -> bool:
    """Seed 002 §1.2.1: does a copy between device-visible memory (after
    staging) return only once it is done?"""
    if d.place is Place.PAGEABLE:
        return True                      # to pageable host memory: always (sync and async)
    if is_async:
        return False                     # everything else Async is fully asynchronous
    if Place.MANAGED in (s.place, d.place):
        return True                      # unified memory: fully synchronous
    if d.place is Place.PINNED or s.place is Place.PINNED:
        return True                      # device to pinned host; pinned host to device
    return False                         # device to device; pageable source once staged


def copy(ctx: Any, dst: Any, src: Any, region: Region, dlay: Layout, slay: Layout, kind: Any,
         stream: Any, is_async: bool, bad_pointer: CUresult = INVALID) -> None:
    """Every memcpy form: validate everything, then queue (or do) the copy
    and wait as chapter 1.2 says."""
    kind = check_kind(kind)
    engine = ctx.engine
    s = classify(engine, src, slay.extent(region), "source", writable=False, bad_pointer=bad_pointer)
    d = classify(engine, dst, dlay.extent(region), "destination", writable=True, bad_pointer=bad_pointer)
    need_src, need_dst = KIND_ROLES[kind]
    _check_role(s, need_src, "source", kind)
    _check_role(d, need_dst, "destination", kind)
    if region.nbytes == 0:
        return

    host_to_host = (kind == 0) or (kind == 4 and s.place in (Place.PAGEABLE, Place.PINNED)
                                   and d.place in (Place.PAGEABLE, Place.PINNED))
    if getattr(stream, "capture", None) is not None and (
            host_to_host or Place.PAGEABLE in (s.place, d.place)):
        raise EngineError(CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                          "a copy done by the CPU or through pageable host memory cannot be "
                          "captured into a graph; use pinned or device memory")
    if host_to_host:
        # Fully synchronous, by the CPU, after the stream's earlier work.
        if s.place is not Place.PAGEABLE or d.place is not Place.PAGEABLE:
            stream.wait()
            ctx.after_wait()
        src_v = _strided(s.host_array(slay.extent(region)), region, slay)
        dst_v = _strided(d.host_array(dlay.extent(region)), region, dlay)
        dst_v[...] = src_v.copy() if np.may_share_memory(src_v, dst_v) else src_v
        if d.place is not Place.PAGEABLE:
            with ctx.gpu.cv:
                ctx.gpu.cv.notify_all()   # a WAIT_VALUE on this pinned memory re-checks now
        return

    gpu = ctx.gpu
    if s.place is Place.PAGEABLE and not is_async:
        stream.wait()                    # §1.2.1.1: a stream sync before a pageable upload
        ctx.after_wait()
    staging_in = staging_out = None
    src_addr, dst_addr, s_lay, d_lay = s.address, d.address, slay, dlay
    if s.place is Place.PAGEABLE:
        staging_in = gpu.alloc_internal(region.nbytes, AllocationKind.STAGING, "staging (host to device)")
        _strided(staging_in.data, region, region.packed)[...] = \
            _strided(s.host_array(slay.extent(region)), region, slay)
        src_addr, s_lay = staging_in.base, region.packed
    if d.place is Place.PAGEABLE:
        staging_out = gpu.alloc_internal(region.nbytes, AllocationKind.STAGING, "staging (device to host)")
        dst_addr, d_lay = staging_out.base, region.packed
    try:
        fence = stream.submit(copy_commands(gpu, src_addr, s_lay, dst_addr, d_lay, region))
    except BaseException:
        for st in (staging_in, staging_out):
            if st is not None:
                gpu.free_internal(st)
        raise
    if staging_in is not None:
        ctx.defer_free(stream, fence, staging_in)
    if not _host_waits(s, d, is_async):
        ctx.reap()
        return
    stream.channel.wait(fence)
    try:
        if staging_out is not None and stream.channel.error is None:
            _strided(d.host_array(dlay.extent(region)), region, dlay)[...] = \
                _strided(staging_out.data, region, region.packed)
    finally:
        if staging_out is not None:
            gpu.free_internal(staging_out)
    ctx.after_wait()


def memcpy(ctx: Any, dst: Any, src: Any, count: int, kind: int, stream: Any, is_async: bool) -> None:
    """mcMemcpy / mcMemcpyAsync on `stream` (a driver Stream)."""
    check_kind(kind)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise EngineError(INVALID, f"count must be a non-negative int, got {count!r}")
    copy(ctx, dst, src, Region(count), Layout(count, count), Layout(count, count), kind, stream,
         is_async)


def copy_2d(ctx: Any, dst: Any, dpitch: Any, src: Any, spitch: Any, width: Any, height: Any,
            kind: Any, stream: Any, is_async: bool, max_pitch: int) -> None:
    """mcMemcpy2D and friends: pitches are checked against the width and
    the device's maximum pitch (mcErrorInvalidPitchValue)."""
    check_kind(kind)
    width, height = _int_arg("width", width), _int_arg("height", height)
    dpitch, spitch = _int_arg("dpitch", dpitch), _int_arg("spitch", spitch)
    for name, pitch in (("dpitch", dpitch), ("spitch", spitch)):
        if pitch < width:
            raise EngineError(Cause.PITCH,
                              f"{name}={pitch} is smaller than the width of {width} bytes")
        if pitch > max_pitch:
            raise EngineError(Cause.PITCH,
                              f"{name}={pitch} exceeds the device's maximum pitch of {max_pitch}")
    r = Region(width, height)
    copy(ctx, dst, src, r, Layout(dpitch, 0), Layout(spitch, 0), kind, stream, is_async,
         bad_pointer=Cause.DEVICE_POINTER)


# ------------------------------------------------------------------ memset
def _memset_value(value: Any, element_size: int, low_byte: bool) -> int:
    bits = 8 * element_size
    if not _is_pointer(value) or not -(1 << (bits - 1)) <= int(value) < (1 << bits):
        if low_byte and _is_pointer(value) and -(1 << 31) <= int(value) < (1 << 31):
            return int(value) & 0xFF    # mcMemset takes an int and uses its low byte
        raise EngineError(INVALID, f"value {value!r} does not fit in {bits} bits")
    return int(value) & ((1 << bits) - 1)


def memset_2d(ctx: Any, dst: Any, pitch: Any, value: Any, element_size: int, width: Any,
              height: Any, stream: Any, is_async: bool, depth: int = 1, slice_pitch: int = 0,
              low_byte: bool = False) -> None:
    """Every memset form: `width` elements of element_size bytes per row,
    `height` rows `pitch` bytes apart, `depth` slices `slice_pitch` apart.
    low_byte: the value is a C int of which the low byte is used (mcMemset*)."""
    value = _memset_value(value, element_size, low_byte)
    width, height = _int_arg("width", width), _int_arg("height", height)
    pitch = _int_arg("pitch", pitch)
    row = width * element_size
    if height > 1 and pitch < row:
        raise EngineError(INVALID, f"pitch={pitch} is smaller than the row of {row} bytes")
    if not _is_pointer(dst):
        raise EngineError(INVALID, f"memset destination must be a device pointer (int), "
                                   f"not {type(dst).__name__}")
    r = Region(row, height, depth)
    lay = Layout(pitch if height > 1 else row, slice_pitch)
    d = classify(ctx.engine, dst, lay.extent(r), "destination", writable=True)
    if d.address % element_size or (height > 1 and pitch % element_size):
        raise EngineError(INVALID, f"destination 0x{d.address:x} and pitch {pitch} must be "
                                   f"{element_size}-byte aligned")
    if r.nbytes == 0:
        return
    if height == 1 and depth == 1 and ctx.gpu.memory.contains_range(d.address):
        cmds = [C.make(C.Opcode.MEMSET, dst=d.address, value=value, element_size=element_size,
                       count=width)]
    elif lay.contiguous_slices(r):
        cmds = [C.make(C.Opcode.MEMSET_2D, dst=d.address, pitch=lay.pitch, value=value,
                       element_size=element_size, width=width, height=height * depth)]
    else:
        cmds = [C.make(C.Opcode.MEMSET_2D, dst=d.address + z * slice_pitch, pitch=lay.pitch,
                       value=value, element_size=element_size, width=width, height=height)
                for z in range(depth)]
    fence = stream.submit(cmds)
    # Seed 002 1.2.2: synchronous unless the target is pinned or unified memory.
    if not is_async and d.place in (Place.PINNED, Place.MANAGED):
        stream.channel.wait(fence)
        ctx.after_wait()
    else:
        ctx.reap()


def memset(ctx: Any, dst: Any, value: int, element_size: int, count: int, stream: Any,
           is_async: bool, low_byte: bool = False) -> None:
    """mcMemset* (element_size 1, 2 or 4; count elements)."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise EngineError(INVALID, f"count must be a non-negative int, got {count!r}")
    memset_2d(ctx, dst, 0, value, element_size, count, 1, stream, is_async, low_byte=low_byte)
