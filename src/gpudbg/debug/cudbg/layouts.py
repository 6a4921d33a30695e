"""Packed structs of seed 000 as data: one (field, type) table per struct.

A ``Layout`` pairs a record dataclass with the table of its C fields in
declaration order; the table alone yields the ``struct`` format (``<`` plus
each field's codes, so ``#pragma pack(1)`` holds by construction) and drives
both ``pack`` and ``unpack``. Field types are few: fixed-width scalars
(optionally decoded into an enum), ``CuDim3``, fixed arrays, nested layouts,
``char[N]`` strings and explicit padding for the one unpacked struct
(CUDBGAttributeValuePair, whose uint64_t is naturally aligned). Tests check
each table's names and sizes against the header's declarations.

Only the 13.0 (latest) struct versions are described; the numbered older
versions (CUDBGWarpState60, CUDBGGridInfo55, ...) serve deprecated entries.
The variable-length device-info buffer is built in ``devinfo``, the event
union in ``events``, both from these pieces.
"""
from __future__ import annotations

import dataclasses
import enum
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from gpudbg.debug.cudbg.enums import (
    CUDBGAttribute,
    CUDBGCbuThreadState,
    CUDBGCudaLogLevel,
    CUDBGDeviceInfoQueryType_t,
    CUDBGException_t,
    CUDBGKernelOrigin,
    CUDBGKernelType,
)

CUDBG_MAX_DEVICES = 64
CUDBG_MAX_SMS = 256
CUDBG_MAX_WARPS = 64
CUDBG_MAX_LANES = 32
CUDBG_MAX_WARP_BARRIERS = 16
CUDBG_MAX_LOG_LEN = 256


class CuDim3(NamedTuple):
    """3-dimensional thread/block/grid coordinates (``uint32_t x, y, z``)."""

    x: int = 0
    y: int = 0
    z: int = 0


class LayoutError(ValueError):
    """A value does not fit its field, or a buffer is too short for a struct."""


# ----------------------------------------------------------------- field types

_RANGES = {"B": 8, "H": 16, "I": 32, "Q": 64}


@dataclass(frozen=True)
class Scalar:
    """An unsigned integer of ``code`` width, decoded into ``enum`` when given."""

    code: str
    enum: type[enum.IntEnum] | None = None

    @property
    def fmt(self) -> str:
        return self.code

    def flatten(self, value: Any, where: str) -> list[int]:
        if isinstance(value, bool) or not isinstance(value, int):
            raise LayoutError(f"{where}: expected an integer, got {type(value).__name__}")
        if not 0 <= value < 1 << _RANGES[self.code]:
            raise LayoutError(f"{where}: {value} does not fit uint{_RANGES[self.code]}_t")
        if self.enum is not None and value not in self.enum._value2member_map_:
            raise LayoutError(f"{where}: {value} is not a {self.enum.__name__}")
        return [int(value)]

    def build(self, items: Iterator[Any], where: str) -> Any:
        value = next(items)
        if self.enum is None:
            return value
        try:
            return self.enum(value)
        except ValueError:
            raise LayoutError(f"{where}: {value} is not a {self.enum.__name__}") from None


@dataclass(frozen=True)
class Dim3:
    """A ``CuDim3`` field."""

    @property
    def fmt(self) -> str:
        return "III"

    def flatten(self, value: Any, where: str) -> list[int]:
        if not isinstance(value, tuple) or len(value) != 3:
            raise LayoutError(f"{where}: expected a CuDim3 (x, y, z), got {value!r}")
        out: list[int] = []
        for axis, v in zip("xyz", value):
            out += U32.flatten(v, f"{where}.{axis}")
        return out

    def build(self, items: Iterator[Any], where: str) -> CuDim3:
        return CuDim3(next(items), next(items), next(items))


@dataclass(frozen=True)
class Array:
    """``elem name[count]``; the value is a tuple of exactly ``count`` elements."""

    elem: Any
    count: int

    @property
    def fmt(self) -> str:
        return self.elem.fmt * self.count

    def flatten(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, (tuple, list)) or len(value) != self.count:
            got = len(value) if isinstance(value, (tuple, list)) else type(value).__name__
            raise LayoutError(f"{where}: expected {self.count} elements, got {got}")
        out: list[Any] = []
        for i, v in enumerate(value):
            out += self.elem.flatten(v, f"{where}[{i}]")
        return out

    def build(self, items: Iterator[Any], where: str) -> tuple[Any, ...]:
        return tuple(self.elem.build(items, f"{where}[{i}]") for i in range(self.count))


@dataclass(frozen=True)
class Chars:
    """``char name[size]`` holding a NUL-terminated string; the value is the bytes before the NUL."""

    size: int

    @property
    def fmt(self) -> str:
        return f"{self.size}s"

    def flatten(self, value: Any, where: str) -> list[bytes]:
        if not isinstance(value, bytes):
            raise LayoutError(f"{where}: expected bytes, got {type(value).__name__}")
        if len(value) >= self.size or b"\0" in value:
            raise LayoutError(f"{where}: a C string of at most {self.size - 1} bytes without NUL is "
                              f"required, got {len(value)} bytes")
        return [value]

    def build(self, items: Iterator[Any], where: str) -> bytes:
        return next(items).split(b"\0", 1)[0]


@dataclass(frozen=True)
class Pad:
    """Alignment padding the compiler inserts in a non-packed struct; not a record field."""

    size: int

    @property
    def fmt(self) -> str:
        return f"{self.size}x"


@dataclass(frozen=True)
class Nested:
    """A struct-typed field."""

    layout: Layout

    @property
    def fmt(self) -> str:
        return self.layout.body_fmt

    def flatten(self, value: Any, where: str) -> list[Any]:
        return self.layout.flatten(value, where)

    def build(self, items: Iterator[Any], where: str) -> Any:
        return self.layout.build(items, where)


U8, U32, U64 = Scalar("B"), Scalar("I"), Scalar("Q")
DIM3 = Dim3()


def E(enum_cls: type[enum.IntEnum]) -> Scalar:
    """A C enum field: 4 bytes (every enum of the header is uint32-sized)."""
    return Scalar("I", enum_cls)


# ----------------------------------------------------------------------- Layout

class Layout:
    """One C struct: its record class and its (field, type) table in declaration order."""

    def __init__(self, cname: str, record: type, fields: Sequence[tuple[str, Any]]) -> None:
        self.cname = cname
        self.record = record
        self.fields = tuple(fields)
        named = [name for name, ftype in self.fields if not isinstance(ftype, Pad)]
        declared = [f.name for f in dataclasses.fields(record)]
        if named != declared:
            raise TypeError(f"{cname}: table fields {named} differ from {record.__name__} fields {declared}")
        self.body_fmt = "".join(ftype.fmt for _, ftype in self.fields)
        self.struct = struct.Struct("<" + self.body_fmt)

    @property
    def size(self) -> int:
        return self.struct.size

    def offsets(self) -> dict[str, int]:
        """Byte offset of every named field."""
        out, pos = {}, 0
        for name, ftype in self.fields:
            if not isinstance(ftype, Pad):
                out[name] = pos
            pos += struct.calcsize("<" + ftype.fmt)
        return out

    def flatten(self, value: Any, where: str = "") -> list[Any]:
        if not isinstance(value, self.record):
            raise LayoutError(f"{where or self.cname}: expected {self.record.__name__}, "
                              f"got {type(value).__name__}")
        out: list[Any] = []
        for name, ftype in self.fields:
            if not isinstance(ftype, Pad):
                out += ftype.flatten(getattr(value, name), f"{where or self.cname}.{name}")
        return out

    def build(self, items: Iterator[Any], where: str = "") -> Any:
        return self.record(**{name: ftype.build(items, f"{where or self.cname}.{name}")
                              for name, ftype in self.fields if not isinstance(ftype, Pad)})

    def pack(self, value: Any) -> bytes:
        return self.struct.pack(*self.flatten(value))

    def unpack(self, data: bytes | bytearray | memoryview, offset: int = 0) -> Any:
        if offset < 0 or len(data) - offset < self.size:
            raise LayoutError(f"{self.cname} needs {self.size} bytes at offset {offset}, "
                              f"buffer has {max(len(data) - offset, 0)}")
        return self.build(iter(self.struct.unpack_from(data, offset)))


# ------------------------------------------------------------ batched device info

N_ATTR_SLOTS = 32  # each *AttributeSizes array of CUDBGDeviceInfoSizes


@dataclass(frozen=True)
class CUDBGDeviceInfoSizes:
    """Sizes of the device-info structs and of each defined attribute; the
    ``*InfoSize`` values let a reader skip fields appended by a newer API."""

    requiredBufferSize: int
    deviceInfoSize: int
    deviceInfoAttributeSizes: tuple[int, ...]
    smInfoSize: int
    smInfoAttributeSizes: tuple[int, ...]
    warpInfoSize: int
    warpInfoAttributeSizes: tuple[int, ...]
    laneInfoSize: int
    laneInfoAttributeSizes: tuple[int, ...]


@dataclass(frozen=True)
class CUDBGDeviceInfo:
    """First element of every getDeviceInfo buffer."""

    responseType: CUDBGDeviceInfoQueryType_t
    deviceAttributeFlags: int


@dataclass(frozen=True)
class CUDBGSMInfo:
    warpValidMask: int
    warpBrokenMask: int
    smAttributeFlags: int


@dataclass(frozen=True)
class CUDBGWarpInfo:
    gridId: int
    blockIdx: CuDim3
    baseThreadIdx: CuDim3
    validLanes: int
    activeLanes: int
    warpAttributeFlags: int


@dataclass(frozen=True)
class CUDBGLaneInfo:
    virtualPC: int


ATTR_SIZES = Array(U32, N_ATTR_SLOTS)
DEVICE_INFO_SIZES = Layout("CUDBGDeviceInfoSizes", CUDBGDeviceInfoSizes, [
    ("requiredBufferSize", U32),
    ("deviceInfoSize", U32), ("deviceInfoAttributeSizes", ATTR_SIZES),
    ("smInfoSize", U32), ("smInfoAttributeSizes", ATTR_SIZES),
    ("warpInfoSize", U32), ("warpInfoAttributeSizes", ATTR_SIZES),
    ("laneInfoSize", U32), ("laneInfoAttributeSizes", ATTR_SIZES),
])
DEVICE_INFO = Layout("CUDBGDeviceInfo", CUDBGDeviceInfo, [
    ("responseType", E(CUDBGDeviceInfoQueryType_t)), ("deviceAttributeFlags", U32),
])
SM_INFO = Layout("CUDBGSMInfo", CUDBGSMInfo, [
    ("warpValidMask", U64), ("warpBrokenMask", U64), ("smAttributeFlags", U32),
])
WARP_INFO = Layout("CUDBGWarpInfo", CUDBGWarpInfo, [
    ("gridId", U64), ("blockIdx", DIM3), ("baseThreadIdx", DIM3),
    ("validLanes", U32), ("activeLanes", U32), ("warpAttributeFlags", U32),
])
LANE_INFO = Layout("CUDBGLaneInfo", CUDBGLaneInfo, [("virtualPC", U64)])

# ------------------------------------------------------------ other state structs


@dataclass(frozen=True)
class CUDBGLaneState:
    virtualPC: int
    threadIdx: CuDim3
    exception: CUDBGException_t


@dataclass(frozen=True)
class CUDBGWarpState:
    """readWarpState's record: the whole warp in one call (13.0 version)."""

    gridId: int
    errorPC: int
    blockIdx: CuDim3
    validLanes: int
    activeLanes: int
    errorPCValid: int
    lane: tuple[CUDBGLaneState, ...]
    clusterIdx: CuDim3
    clusterDim: CuDim3
    clusterExceptionTargetBlockIdxValid: int
    clusterExceptionTargetBlockIdx: CuDim3
    inSyscallLanes: int


@dataclass(frozen=True)
class CUDBGWarpResources:
    sharedMemSize: int
    numRegisters: int


@dataclass(frozen=True)
class CUDBGMemoryInfo:
    startAddress: int
    size: int


@dataclass(frozen=True)
class CUDBGLoadedFunctionInfo:
    sectionIndex: int
    address: int


@dataclass(frozen=True)
class CUDBGGridInfo:
    """getGridInfo's record (12.7+ version, with preferredClusterDim)."""

    dev: int
    gridId64: int
    tid: int
    context: int
    module: int
    function: int
    functionEntry: int
    gridDim: CuDim3
    blockDim: CuDim3
    type: CUDBGKernelType
    parentGridId: int
    origin: CUDBGKernelOrigin
    clusterDim: CuDim3
    preferredClusterDim: CuDim3


@dataclass(frozen=True)
class CUDBGCbuWarpState:
    activeMask: int
    exitedMask: int
    collectiveMask: int
    barrierMasks: tuple[int, ...]
    threadState: tuple[CUDBGCbuThreadState, ...]


@dataclass(frozen=True)
class CUDBGCudaLogMessage:
    unixTimestampNs: int
    osThreadId: int
    logLevel: CUDBGCudaLogLevel
    message: bytes


@dataclass(frozen=True)
class CUDBGAttributeValuePair:
    """Not packed in the header: 4 bytes of padding align ``value`` to 8."""

    attribute: CUDBGAttribute
    value: int


LANE_STATE = Layout("CUDBGLaneState", CUDBGLaneState, [
    ("virtualPC", U64), ("threadIdx", DIM3), ("exception", E(CUDBGException_t)),
])
WARP_STATE = Layout("CUDBGWarpState", CUDBGWarpState, [
    ("gridId", U64), ("errorPC", U64), ("blockIdx", DIM3),
    ("validLanes", U32), ("activeLanes", U32), ("errorPCValid", U32),
    ("lane", Array(Nested(LANE_STATE), CUDBG_MAX_LANES)),
    ("clusterIdx", DIM3), ("clusterDim", DIM3),
    ("clusterExceptionTargetBlockIdxValid", U32), ("clusterExceptionTargetBlockIdx", DIM3),
    ("inSyscallLanes", U32),
])
WARP_RESOURCES = Layout("CUDBGWarpResources", CUDBGWarpResources, [
    ("sharedMemSize", U32), ("numRegisters", U32),
])
MEMORY_INFO = Layout("CUDBGMemoryInfo", CUDBGMemoryInfo, [("startAddress", U64), ("size", U64)])
LOADED_FUNCTION_INFO = Layout("CUDBGLoadedFunctionInfo", CUDBGLoadedFunctionInfo, [
    ("sectionIndex", U64), ("address", U64),
])
GRID_INFO = Layout("CUDBGGridInfo", CUDBGGridInfo, [
    ("dev", U32), ("gridId64", U64), ("tid", U32), ("context", U64), ("module", U64),
    ("function", U64), ("functionEntry", U64), ("gridDim", DIM3), ("blockDim", DIM3),
    ("type", E(CUDBGKernelType)), ("parentGridId", U64), ("origin", E(CUDBGKernelOrigin)),
    ("clusterDim", DIM3), ("preferredClusterDim", DIM3),
])
CBU_WARP_STATE = Layout("CUDBGCbuWarpState", CUDBGCbuWarpState, [
    ("activeMask", U32), ("exitedMask", U32), ("collectiveMask", U32),
    ("barrierMasks", Array(U32, CUDBG_MAX_WARP_BARRIERS)),
    ("threadState", Array(E(CUDBGCbuThreadState), CUDBG_MAX_LANES)),
])
CUDA_LOG_MESSAGE = Layout("CUDBGCudaLogMessage", CUDBGCudaLogMessage, [
    ("unixTimestampNs", U64), ("osThreadId", U32), ("logLevel", E(CUDBGCudaLogLevel)),
    ("message", Chars(CUDBG_MAX_LOG_LEN)),
])
ATTRIBUTE_VALUE_PAIR = Layout("CUDBGAttributeValuePair", CUDBGAttributeValuePair, [
    ("attribute", E(CUDBGAttribute)), ("_pad", Pad(4)), ("value", U64),
])

# Every packed struct of the header that has a table here, by C name.
PACKED_LAYOUTS: dict[str, Layout] = {layout.cname: layout for layout in (
    DEVICE_INFO_SIZES, DEVICE_INFO, SM_INFO, WARP_INFO, LANE_INFO,
    LANE_STATE, WARP_STATE, WARP_RESOURCES, MEMORY_INFO, LOADED_FUNCTION_INFO,
    GRID_INFO, CBU_WARP_STATE, CUDA_LOG_MESSAGE,
)}
