"""The structs of seed 001 as frozen dataclasses with the spec's exact field names.

Each dataclass declares its fields in the spec's order and carries
``C_FIELDS``, the (C type, name) pairs of its declaration, so a test can
hold both against the seed's "Public Members" lists. Construction checks
what C would leave to the caller: unsigned ranges, enum fields decoded into
their enums (an unknown value is an error, not a silent int), ``stype``
tags, and the union discipline of ``zet_debug_event_t`` (the one ``info``
member that ``type`` selects is set, none other). Pointers (``pNext``) have
no extensions to point at in this implementation, so they must be None.

``ze_device_thread_t`` is not in the seed (it is core Level Zero) but every
thread argument uses it; its "all" wildcard is UINT32_MAX per field.
What the numbers mean on the simulator is ``mapping``'s business.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from gpudbg.debug.zet.enums import (
    zet_debug_detach_reason_t,
    zet_debug_event_flag_t,
    zet_debug_event_type_t,
    zet_debug_memory_space_type_t,
    zet_debug_page_fault_reason_t,
    zet_debug_regset_flag_t,
    zet_module_debug_info_format_t,
    zet_structure_type_t,
)

UINT32_MAX = 0xFFFFFFFF
UINT64_MAX = 0xFFFFFFFFFFFFFFFF

# ze_device_thread_t wildcards: "UINT32_MAX (all)" for each coordinate.
ZE_DEVICE_THREAD_ALL_SLICES = UINT32_MAX
ZE_DEVICE_THREAD_ALL_SUBSLICES = UINT32_MAX
ZE_DEVICE_THREAD_ALL_EUS = UINT32_MAX
ZE_DEVICE_THREAD_ALL_THREADS = UINT32_MAX


class ZetStructError(ValueError):
    """A struct field holds a value its C type or enum cannot."""


def _uint(owner: str, name: str, value: Any, bits: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ZetStructError(f"{owner}.{name} must be an integer, got {type(value).__name__}")
    if not 0 <= value < 1 << bits:
        raise ZetStructError(f"{owner}.{name}={value} does not fit uint{bits}_t")
    return int(value)


def _enum(owner: str, name: str, value: Any, cls: type[enum.Enum]) -> Any:
    _uint(owner, name, int(value) if isinstance(value, enum.Enum) else value, 32)
    if issubclass(cls, enum.Flag):
        known = 0
        for member in cls.__members__.values():
            if int(member).bit_count() == 1:
                known |= int(member)
        if int(value) & ~known:
            raise ZetStructError(f"{owner}.{name}={int(value):#x} has bits outside {cls.__name__}")
    try:
        return cls(value)
    except ValueError:
        raise ZetStructError(f"{owner}.{name}={int(value):#x} is not a {cls.__name__} value") from None


def _check(obj: Any) -> None:
    """Normalize every field of a dataclass according to its C type."""
    owner = type(obj).__name__
    ctypes_by_name = {n: t for t, n in obj.C_FIELDS}
    for f in fields(obj):
        ctype, value = ctypes_by_name[f.name], getattr(obj, f.name)
        if ctype in ("uint32_t", "uint64_t"):
            norm = _uint(owner, f.name, value, 32 if ctype == "uint32_t" else 64)
        elif ctype in ENUM_CTYPES:
            norm = _enum(owner, f.name, value, ENUM_CTYPES[ctype])
        elif ctype.endswith("*"):
            if value is not None:
                raise ZetStructError(f"{owner}.{f.name} must be None: no extension structures are supported")
            norm = None
        else:
            want = STRUCTS[ctype]
            if not isinstance(value, want):
                raise ZetStructError(f"{owner}.{f.name} must be a {ctype}, got {type(value).__name__}")
            norm = value
        object.__setattr__(obj, f.name, norm)


@dataclass(frozen=True)
class ze_device_thread_t:
    """One EU hardware thread, or a set of them where fields are UINT32_MAX."""

    C_FIELDS: ClassVar = (("uint32_t", "slice"), ("uint32_t", "subslice"), ("uint32_t", "eu"), ("uint32_t", "thread"))
    slice: int = ZE_DEVICE_THREAD_ALL_SLICES
    subslice: int = ZE_DEVICE_THREAD_ALL_SUBSLICES
    eu: int = ZE_DEVICE_THREAD_ALL_EUS
    thread: int = ZE_DEVICE_THREAD_ALL_THREADS

    def __post_init__(self) -> None:
        _check(self)

    @property
    def is_single(self) -> bool:
        """True when no coordinate is the "all" wildcard."""
        return UINT32_MAX not in (self.slice, self.subslice, self.eu, self.thread)

    @property
    def is_all(self) -> bool:
        return (self.slice, self.subslice, self.eu, self.thread) == (UINT32_MAX,) * 4


ZE_DEVICE_THREAD_ALL = ze_device_thread_t()


@dataclass(frozen=True)
class zet_debug_config_t:
    C_FIELDS: ClassVar = (("uint32_t", "pid"),)
    pid: int

    def __post_init__(self) -> None:
        _check(self)


@dataclass(frozen=True)
class zet_debug_event_info_detached_t:
    C_FIELDS: ClassVar = (("zet_debug_detach_reason_t", "reason"),)
    reason: zet_debug_detach_reason_t = zet_debug_detach_reason_t.ZET_DEBUG_DETACH_REASON_INVALID

    def __post_init__(self) -> None:
        _check(self)


@dataclass(frozen=True)
class zet_debug_event_info_module_t:
    """``[moduleBegin, moduleEnd)`` is the module image in host-visible memory."""

    C_FIELDS: ClassVar = (("zet_module_debug_info_format_t", "format"), ("uint64_t", "moduleBegin"),
                          ("uint64_t", "moduleEnd"), ("uint64_t", "load"))
    format: zet_module_debug_info_format_t = zet_module_debug_info_format_t.ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF
    moduleBegin: int = 0
    moduleEnd: int = 0
    load: int = 0

    def __post_init__(self) -> None:
        _check(self)
        if self.moduleEnd < self.moduleBegin:
            raise ZetStructError(f"zet_debug_event_info_module_t: moduleEnd {self.moduleEnd:#x} "
                                 f"is below moduleBegin {self.moduleBegin:#x}")


@dataclass(frozen=True)
class zet_debug_event_info_thread_stopped_t:
    C_FIELDS: ClassVar = (("ze_device_thread_t", "thread"),)
    thread: ze_device_thread_t = field(default_factory=ze_device_thread_t)

    def __post_init__(self) -> None:
        _check(self)


@dataclass(frozen=True)
class zet_debug_event_info_page_fault_t:
    C_FIELDS: ClassVar = (("uint64_t", "address"), ("uint64_t", "mask"), ("zet_debug_page_fault_reason_t", "reason"))
    address: int = 0
    mask: int = 0
    reason: zet_debug_page_fault_reason_t = zet_debug_page_fault_reason_t.ZET_DEBUG_PAGE_FAULT_REASON_INVALID

    def __post_init__(self) -> None:
        _check(self)


# Which union member each event type fills (the seed's "[out] type == ..." notes).
EVENT_INFO_MEMBER: dict[zet_debug_event_type_t, str | None] = {
    zet_debug_event_type_t.ZET_DEBUG_EVENT_TYPE_INVALID: None,
    zet_debug_event_type_t.ZET_DEBUG_EVENT_TYPE_DETACHED: "detached",
    zet_debug_event_type_t.ZET_DEBUG_EVENT_TYPE_PROCESS_ENTRY: None,
    zet_debug_event_type_t.ZET_DEBUG_EVENT_TYPE_PROCESS_EXIT: None,
    zet_debug_event_type_t.ZET_DEBUG_EVENT_TYPE_MODULE_LOAD: "module",
    zet_debug_event_type_t.ZET_DEBUG_EVENT_TYPE_MODULE_UNLOAD: "module",
    zet_debug_event_type_t.ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED: "thread",
    zet_debug_event_type_t.ZET_DEBUG_EVENT_TYPE_THREAD_UNAVAILABLE: "thread",
    zet_debug_event_type_t.ZET_DEBUG_EVENT_TYPE_PAGE_FAULT: "page_fault",
}


@dataclass(frozen=True)
class zet_debug_event_info_t:
    """The C union: at most one member is set (None stands for "not this case")."""

    C_FIELDS: ClassVar = (("zet_debug_event_info_detached_t", "detached"), ("zet_debug_event_info_module_t", "module"),
                          ("zet_debug_event_info_thread_stopped_t", "thread"),
                          ("zet_debug_event_info_page_fault_t", "page_fault"))
    detached: zet_debug_event_info_detached_t | None = None
    module: zet_debug_event_info_module_t | None = None
    thread: zet_debug_event_info_thread_stopped_t | None = None
    page_fault: zet_debug_event_info_page_fault_t | None = None

    def __post_init__(self) -> None:
        types = {n: STRUCTS[t] for t, n in self.C_FIELDS}
        for name in self.members_set():
            value = getattr(self, name)
            if not isinstance(value, types[name]):
                raise ZetStructError(f"zet_debug_event_info_t.{name} must be a {types[name].__name__}, "
                                     f"got {type(value).__name__}")
        if len(self.members_set()) > 1:
            raise ZetStructError(f"zet_debug_event_info_t is a union: set one member, not {self.members_set()}")

    def members_set(self) -> list[str]:
        return [n for _, n in self.C_FIELDS if getattr(self, n) is not None]


@dataclass(frozen=True)
class zet_debug_event_t:
    C_FIELDS: ClassVar = (("zet_debug_event_type_t", "type"), ("zet_debug_event_flags_t", "flags"),
                          ("zet_debug_event_info_t", "info"))
    type: zet_debug_event_type_t = zet_debug_event_type_t.ZET_DEBUG_EVENT_TYPE_INVALID
    flags: zet_debug_event_flag_t = zet_debug_event_flag_t(0)
    info: zet_debug_event_info_t = field(default_factory=zet_debug_event_info_t)

    def __post_init__(self) -> None:
        _check(self)
        want = EVENT_INFO_MEMBER.get(self.type)
        if self.type is zet_debug_event_type_t.ZET_DEBUG_EVENT_TYPE_FORCE_UINT32:
            raise ZetStructError("ZET_DEBUG_EVENT_TYPE_FORCE_UINT32 marks the end of the enum, not an event type")
        have = self.info.members_set()
        if have != ([want] if want else []):
            raise ZetStructError(f"{self.type.name} carries info.{want or '(nothing)'}, not {have or 'nothing'}")

    @property
    def needs_ack(self) -> bool:
        return bool(self.flags & zet_debug_event_flag_t.ZET_DEBUG_EVENT_FLAG_NEED_ACK)

    @property
    def payload(self) -> Any:
        """The active union member, or None for types that carry none."""
        want = EVENT_INFO_MEMBER[self.type]
        return getattr(self.info, want) if want else None


@dataclass(frozen=True)
class zet_debug_memory_space_desc_t:
    C_FIELDS: ClassVar = (("zet_structure_type_t", "stype"), ("const void *", "pNext"),
                          ("zet_debug_memory_space_type_t", "type"), ("uint64_t", "address"))
    stype: zet_structure_type_t = zet_structure_type_t.ZET_STRUCTURE_TYPE_DEBUG_MEMORY_SPACE_DESC
    pNext: None = None
    type: zet_debug_memory_space_type_t = zet_debug_memory_space_type_t.ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT
    address: int = 0

    def __post_init__(self) -> None:
        _check(self)
        _stype(self, zet_structure_type_t.ZET_STRUCTURE_TYPE_DEBUG_MEMORY_SPACE_DESC)
        if self.type is zet_debug_memory_space_type_t.ZET_DEBUG_MEMORY_SPACE_TYPE_FORCE_UINT32:
            raise ZetStructError("ZET_DEBUG_MEMORY_SPACE_TYPE_FORCE_UINT32 is not a memory space")


@dataclass(frozen=True)
class zet_debug_regset_properties_t:
    C_FIELDS: ClassVar = (("zet_structure_type_t", "stype"), ("void *", "pNext"), ("uint32_t", "type"),
                          ("uint32_t", "version"), ("zet_debug_regset_flags_t", "generalFlags"),
                          ("uint32_t", "deviceFlags"), ("uint32_t", "count"), ("uint32_t", "bitSize"),
                          ("uint32_t", "byteSize"))
    stype: zet_structure_type_t = zet_structure_type_t.ZET_STRUCTURE_TYPE_DEBUG_REGSET_PROPERTIES
    pNext: None = None
    type: int = 0
    version: int = 0
    generalFlags: zet_debug_regset_flag_t = zet_debug_regset_flag_t(0)
    deviceFlags: int = 0
    count: int = 0
    bitSize: int = 0
    byteSize: int = 0

    def __post_init__(self) -> None:
        _check(self)
        _stype(self, zet_structure_type_t.ZET_STRUCTURE_TYPE_DEBUG_REGSET_PROPERTIES)
        if self.byteSize * 8 < self.bitSize:
            raise ZetStructError(f"zet_debug_regset_properties_t: byteSize {self.byteSize} cannot hold "
                                 f"a {self.bitSize}-bit register")


def _stype(obj: Any, want: zet_structure_type_t) -> None:
    if obj.stype is not want:
        raise ZetStructError(f"{type(obj).__name__}.stype must be {want.name}, got {obj.stype.name}")


ENUM_CTYPES: dict[str, type[enum.Enum]] = {
    "zet_structure_type_t": zet_structure_type_t,
    "zet_module_debug_info_format_t": zet_module_debug_info_format_t,
    "zet_debug_event_type_t": zet_debug_event_type_t,
    "zet_debug_event_flags_t": zet_debug_event_flag_t,
    "zet_debug_detach_reason_t": zet_debug_detach_reason_t,
    "zet_debug_page_fault_reason_t": zet_debug_page_fault_reason_t,
    "zet_debug_memory_space_type_t": zet_debug_memory_space_type_t,
    "zet_debug_regset_flags_t": zet_debug_regset_flag_t,
}

# The structs (and the one union) seed 001 defines, in its order.
SEED_STRUCTS: dict[str, type] = {
    "zet_debug_config_t": zet_debug_config_t,
    "zet_debug_event_info_detached_t": zet_debug_event_info_detached_t,
    "zet_debug_event_info_module_t": zet_debug_event_info_module_t,
    "zet_debug_event_info_thread_stopped_t": zet_debug_event_info_thread_stopped_t,
    "zet_debug_event_info_page_fault_t": zet_debug_event_info_page_fault_t,
    "zet_debug_event_info_t": zet_debug_event_info_t,
    "zet_debug_event_t": zet_debug_event_t,
    "zet_debug_memory_space_desc_t": zet_debug_memory_space_desc_t,
    "zet_debug_regset_properties_t": zet_debug_regset_properties_t,
}

STRUCTS: dict[str, type] = {"ze_device_thread_t": ze_device_thread_t, **SEED_STRUCTS}
