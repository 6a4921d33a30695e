"""CUDBGEvent (seed 000, the packed 13.0 version) and its union members.

The C event is ``kind`` followed by a union ``cases`` whose active member
the kind selects; here each member is a dataclass with a layout table, and
``CUDBGEvent.cases`` holds the one that is active (None for kinds that
carry no payload: TIMEOUT, ATTACH/DETACH_COMPLETE, the CUDA-log kinds).
The kind -> member mapping follows the member names (the header does not
spell it out). Packed, the union is as wide as its widest member
(kernelReady, 88 bytes), so every event is 92 bytes and shorter members are
zero-filled on the wire.

The older event versions (CUDBGEvent30...55, with host pointers to ELF
images) are not described: they belong to deprecated entries, except
CUDBGEvent55 of getNextSyncEvent55/getNextAsyncEvent55, which the 13.0
getNextEvent(type) replaces in practice.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from gpudbg.debug.cudbg.enums import CUDBGEventKind, CUDBGKernelOrigin, CUDBGKernelType, CUDBGResult
from gpudbg.debug.cudbg.layouts import DIM3, U32, U64, CuDim3, E, Layout, LayoutError

K = CUDBGEventKind


@dataclass(frozen=True)
class ElfImageLoaded:
    CASE: ClassVar[str] = "elfImageLoaded"
    dev: int
    context: int
    module: int
    size: int
    handle: int
    properties: int


@dataclass(frozen=True)
class ElfImageUnloaded:
    CASE: ClassVar[str] = "elfImageUnloaded"
    dev: int
    context: int
    module: int
    size: int
    handle: int


@dataclass(frozen=True)
class KernelReady:
    CASE: ClassVar[str] = "kernelReady"
    dev: int
    tid: int
    gridId: int
    context: int
    module: int
    function: int
    functionEntry: int
    gridDim: CuDim3
    blockDim: CuDim3
    type: CUDBGKernelType
    parentGridId: int
    origin: CUDBGKernelOrigin


@dataclass(frozen=True)
class KernelFinished:
    CASE: ClassVar[str] = "kernelFinished"
    dev: int
    tid: int
    context: int
    module: int
    function: int
    functionEntry: int
    gridId: int


@dataclass(frozen=True)
class ContextPush:
    CASE: ClassVar[str] = "contextPush"
    dev: int
    tid: int
    context: int


@dataclass(frozen=True)
class ContextPop:
    CASE: ClassVar[str] = "contextPop"
    dev: int
    tid: int
    context: int


@dataclass(frozen=True)
class ContextCreate:
    CASE: ClassVar[str] = "contextCreate"
    dev: int
    tid: int
    context: int


@dataclass(frozen=True)
class ContextDestroy:
    CASE: ClassVar[str] = "contextDestroy"
    dev: int
    tid: int
    context: int


@dataclass(frozen=True)
class InternalError:
    CASE: ClassVar[str] = "internalError"
    errorType: CUDBGResult


@dataclass(frozen=True)
class FunctionsLoaded:
    CASE: ClassVar[str] = "functionsLoaded"
    dev: int
    count: int
    context: int
    module: int


@dataclass(frozen=True)
class AllDevicesSuspended:
    """Bit i of each mask stands for device i."""

    CASE: ClassVar[str] = "allDevicesSuspended"
    brokenDevicesMask: int
    faultedDevicesMask: int


EventCase = (ElfImageLoaded | ElfImageUnloaded | KernelReady | KernelFinished | ContextPush
             | ContextPop | ContextCreate | ContextDestroy | InternalError | FunctionsLoaded
             | AllDevicesSuspended)

_CTX = [("dev", U32), ("tid", U32), ("context", U64)]
CASE_LAYOUTS: dict[type, Layout] = {layout.record: layout for layout in (
    Layout("elfImageLoaded_st", ElfImageLoaded, [
        ("dev", U32), ("context", U64), ("module", U64), ("size", U64), ("handle", U64),
        ("properties", U32)]),
    Layout("elfImageUnloaded_st", ElfImageUnloaded, [
        ("dev", U32), ("context", U64), ("module", U64), ("size", U64), ("handle", U64)]),
    Layout("kernelReady_st", KernelReady, [
        ("dev", U32), ("tid", U32), ("gridId", U64), ("context", U64), ("module", U64),
        ("function", U64), ("functionEntry", U64), ("gridDim", DIM3), ("blockDim", DIM3),
        ("type", E(CUDBGKernelType)), ("parentGridId", U64), ("origin", E(CUDBGKernelOrigin))]),
    Layout("kernelFinished_st", KernelFinished, [
        ("dev", U32), ("tid", U32), ("context", U64), ("module", U64), ("function", U64),
        ("functionEntry", U64), ("gridId", U64)]),
    Layout("contextPush_st", ContextPush, _CTX),
    Layout("contextPop_st", ContextPop, _CTX),
    Layout("contextCreate_st", ContextCreate, _CTX),
    Layout("contextDestroy_st", ContextDestroy, _CTX),
    Layout("internalError_st", InternalError, [("errorType", E(CUDBGResult))]),
    Layout("functionsLoaded_st", FunctionsLoaded, [
        ("dev", U32), ("count", U32), ("context", U64), ("module", U64)]),
    Layout("allDevicesSuspended_st", AllDevicesSuspended, [
        ("brokenDevicesMask", U64), ("faultedDevicesMask", U64)]),
)}

# Which union member each kind fills; kinds absent here carry no payload.
KIND_CASES: dict[CUDBGEventKind, type] = {
    K.CUDBG_EVENT_ELF_IMAGE_LOADED: ElfImageLoaded,
    K.CUDBG_EVENT_ELF_IMAGE_UNLOADED: ElfImageUnloaded,
    K.CUDBG_EVENT_KERNEL_READY: KernelReady,
    K.CUDBG_EVENT_KERNEL_FINISHED: KernelFinished,
    K.CUDBG_EVENT_CTX_PUSH: ContextPush,
    K.CUDBG_EVENT_CTX_POP: ContextPop,
    K.CUDBG_EVENT_CTX_CREATE: ContextCreate,
    K.CUDBG_EVENT_CTX_DESTROY: ContextDestroy,
    K.CUDBG_EVENT_INTERNAL_ERROR: InternalError,
    K.CUDBG_EVENT_FUNCTIONS_LOADED: FunctionsLoaded,
    K.CUDBG_EVENT_ALL_DEVICES_SUSPENDED: AllDevicesSuspended,
}

UNION_SIZE = max(layout.size for layout in CASE_LAYOUTS.values())
KIND_SIZE = 4  # CUDBGEventKind, like every enum of the header, is uint32-sized
EVENT_SIZE = KIND_SIZE + UNION_SIZE


@dataclass(frozen=True)
class CUDBGEvent:
    """One debugger event: ``kind`` and the union member it selects (or None)."""

    kind: CUDBGEventKind
    cases: EventCase | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, CUDBGEventKind):
            raise LayoutError(f"CUDBGEvent.kind must be a CUDBGEventKind, got {self.kind!r}")
        expected = KIND_CASES.get(self.kind)
        if expected is None and self.cases is not None:
            raise LayoutError(f"{self.kind.name} carries no payload, got {type(self.cases).__name__}")
        if expected is not None and not isinstance(self.cases, expected):
            got = "None" if self.cases is None else type(self.cases).__name__
            raise LayoutError(f"{self.kind.name} carries cases.{expected.CASE} ({expected.__name__}), got {got}")

    def pack(self) -> bytes:
        """The 92-byte packed event; the union's unused tail is zero."""
        body = b"" if self.cases is None else CASE_LAYOUTS[type(self.cases)].pack(self.cases)
        return int(self.kind).to_bytes(4, "little") + body.ljust(UNION_SIZE, b"\0")

    @classmethod
    def unpack(cls, data: bytes | bytearray | memoryview, offset: int = 0) -> CUDBGEvent:
        if offset < 0 or len(data) - offset < EVENT_SIZE:
            raise LayoutError(f"CUDBGEvent needs {EVENT_SIZE} bytes at offset {offset}, "
                              f"buffer has {max(len(data) - offset, 0)}")
        raw = int.from_bytes(data[offset:offset + 4], "little")
        try:
            kind = CUDBGEventKind(raw)
        except ValueError:
            raise LayoutError(f"CUDBGEvent.kind {raw} is not a CUDBGEventKind") from None
        case = KIND_CASES.get(kind)
        if case is None:
            return cls(kind)
        return cls(kind, CASE_LAYOUTS[case].unpack(data, offset + KIND_SIZE))
