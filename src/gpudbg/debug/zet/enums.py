"""The enums of seed 001 (Level Zero 1.18 tools debug API) with Level Zero's values.

The seed (the rendered spec) names every enumerator but prints no values;
the values here are those of Level Zero's ``ze_api.h``/``zet_api.h``, which
follow two rules a test can hold against the seed's enumerator order:
plain enums count 0, 1, 2... in declaration order and ``*_flag_t`` enums
take ``ZE_BIT(i)`` in order, with ``*_FORCE_UINT32 = 0x7fffffff`` closing
each one. Each C enum becomes one IntEnum (IntFlag for the ``*_flag_t``
bit sets, whose ``*_flags_t`` typedef is the same class) named exactly like
the C type, and its members are exported flat as C code names them.

Three enums the seed uses but defines elsewhere in Level Zero are here too,
restricted to what the debug API needs: ``ze_result_t`` (the whole 1.18
table: the facade returns these), ``zet_structure_type_t`` (only the
``stype`` values of the two debug structs) and
``zet_module_debug_info_format_t`` (module events). Nothing here knows the
simulator; mapping simulator faults onto these codes is the facade's job.
"""
from __future__ import annotations

import enum

FORCE_UINT32 = 0x7FFFFFFF


class ze_result_t(enum.IntEnum):
    """Return code of every zetDebug* call (ze_api.h, Level Zero 1.18)."""

    ZE_RESULT_SUCCESS = 0
    ZE_RESULT_NOT_READY = 1
    ZE_RESULT_ERROR_DEVICE_LOST = 0x70000001
    ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY = 0x70000002
    ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY = 0x70000003
    ZE_RESULT_ERROR_MODULE_BUILD_FAILURE = 0x70000004
    ZE_RESULT_ERROR_MODULE_LINK_FAILURE = 0x70000005
    ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET = 0x70000006
    ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE = 0x70000007
    ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX = 0x7FF00001
    ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE = 0x7FF00002
    ZE_RESULT_EXP_ERROR_REMOTE_DEVICE = 0x7FF00003
    ZE_RESULT_EXP_ERROR_OPERANDS_INCOMPATIBLE = 0x7FF00004
    ZE_RESULT_EXP_RTAS_BUILD_RETRY = 0x7FF00005
    ZE_RESULT_EXP_RTAS_BUILD_DEFERRED = 0x7FF00006
    ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS = 0x70010000
    ZE_RESULT_ERROR_NOT_AVAILABLE = 0x70010001
    ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE = 0x70020000
    ZE_RESULT_WARNING_DROPPED_DATA = 0x70020001
    ZE_RESULT_ERROR_UNINITIALIZED = 0x78000001
    ZE_RESULT_ERROR_UNSUPPORTED_VERSION = 0x78000002
    ZE_RESULT_ERROR_UNSUPPORTED_FEATURE = 0x78000003
    ZE_RESULT_ERROR_INVALID_ARGUMENT = 0x78000004
    ZE_RESULT_ERROR_INVALID_NULL_HANDLE = 0x78000005
    ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE = 0x78000006
    ZE_RESULT_ERROR_INVALID_NULL_POINTER = 0x78000007
    ZE_RESULT_ERROR_INVALID_SIZE = 0x78000008
    ZE_RESULT_ERROR_UNSUPPORTED_SIZE = 0x78000009
    ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT = 0x7800000A
    ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT = 0x7800000B
    ZE_RESULT_ERROR_INVALID_ENUMERATION = 0x7800000C
    ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION = 0x7800000D
    ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT = 0x7800000E
    ZE_RESULT_ERROR_INVALID_NATIVE_BINARY = 0x7800000F
    ZE_RESULT_ERROR_INVALID_GLOBAL_NAME = 0x78000010
    ZE_RESULT_ERROR_INVALID_KERNEL_NAME = 0x78000011
    ZE_RESULT_ERROR_INVALID_FUNCTION_NAME = 0x78000012
    ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION = 0x78000013
    ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION = 0x78000014
    ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX = 0x78000015
    ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE = 0x78000016
    ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE = 0x78000017
    ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED = 0x78000018
    ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE = 0x78000019
    ZE_RESULT_ERROR_OVERLAPPING_REGIONS = 0x7800001A
    ZE_RESULT_WARNING_ACTION_REQUIRED = 0x7800001B
    ZE_RESULT_ERROR_INVALID_KERNEL_HANDLE = 0x7800001C
    ZE_RESULT_EXT_RTAS_BUILD_RETRY = 0x7800001D
    ZE_RESULT_EXT_RTAS_BUILD_DEFERRED = 0x7800001E
    ZE_RESULT_EXT_ERROR_OPERANDS_INCOMPATIBLE = 0x7800001F
    ZE_RESULT_ERROR_SURVIVABILITY_MODE_DETECTED = 0x78000020
    ZE_RESULT_ERROR_UNKNOWN = 0x7FFFFFFE
    ZE_RESULT_FORCE_UINT32 = FORCE_UINT32


class zet_structure_type_t(enum.IntEnum):
    """``stype`` tags; only those of the debug structs (zet_api.h values)."""

    ZET_STRUCTURE_TYPE_DEBUG_MEMORY_SPACE_DESC = 0x7
    ZET_STRUCTURE_TYPE_DEBUG_REGSET_PROPERTIES = 0x8
    ZET_STRUCTURE_TYPE_FORCE_UINT32 = FORCE_UINT32


class zet_module_debug_info_format_t(enum.IntEnum):
    """Format of the in-memory module a MODULE_LOAD event points at."""

    ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF = 0
    ZET_MODULE_DEBUG_INFO_FORMAT_FORCE_UINT32 = FORCE_UINT32


class zet_debug_event_flag_t(enum.IntFlag, boundary=enum.KEEP):
    """Event flags; ``zet_debug_event_flags_t`` is a combination of them."""

    ZET_DEBUG_EVENT_FLAG_NEED_ACK = 1 << 0
    ZET_DEBUG_EVENT_FLAG_FORCE_UINT32 = FORCE_UINT32


zet_debug_event_flags_t = zet_debug_event_flag_t


class zet_debug_event_type_t(enum.IntEnum):
    ZET_DEBUG_EVENT_TYPE_INVALID = 0
    ZET_DEBUG_EVENT_TYPE_DETACHED = 1
    ZET_DEBUG_EVENT_TYPE_PROCESS_ENTRY = 2
    ZET_DEBUG_EVENT_TYPE_PROCESS_EXIT = 3
    ZET_DEBUG_EVENT_TYPE_MODULE_LOAD = 4
    ZET_DEBUG_EVENT_TYPE_MODULE_UNLOAD = 5
    ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED = 6
    ZET_DEBUG_EVENT_TYPE_THREAD_UNAVAILABLE = 7
    ZET_DEBUG_EVENT_TYPE_PAGE_FAULT = 8
    ZET_DEBUG_EVENT_TYPE_FORCE_UINT32 = FORCE_UINT32


class zet_debug_detach_reason_t(enum.IntEnum):
    ZET_DEBUG_DETACH_REASON_INVALID = 0
    ZET_DEBUG_DETACH_REASON_HOST_EXIT = 1
    ZET_DEBUG_DETACH_REASON_FORCE_UINT32 = FORCE_UINT32


class zet_debug_page_fault_reason_t(enum.IntEnum):
    ZET_DEBUG_PAGE_FAULT_REASON_INVALID = 0
    ZET_DEBUG_PAGE_FAULT_REASON_MAPPING_ERROR = 1
    ZET_DEBUG_PAGE_FAULT_REASON_PERMISSION_ERROR = 2
    ZET_DEBUG_PAGE_FAULT_REASON_FORCE_UINT32 = FORCE_UINT32


class zet_debug_memory_space_type_t(enum.IntEnum):
    """DEFAULT is the flat device address space; SLM is shared memory."""

    ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT = 0
    ZET_DEBUG_MEMORY_SPACE_TYPE_SLM = 1
    ZET_DEBUG_MEMORY_SPACE_TYPE_ELF = 2
    ZET_DEBUG_MEMORY_SPACE_TYPE_BARRIER = 3
    ZET_DEBUG_MEMORY_SPACE_TYPE_FORCE_UINT32 = FORCE_UINT32


class zet_debug_regset_flag_t(enum.IntFlag, boundary=enum.KEEP):
    """Register set access; ``zet_debug_regset_flags_t`` combines them."""

    ZET_DEBUG_REGSET_FLAG_READABLE = 1 << 0
    ZET_DEBUG_REGSET_FLAG_WRITEABLE = 1 << 1
    ZET_DEBUG_REGSET_FLAG_FORCE_UINT32 = FORCE_UINT32


zet_debug_regset_flags_t = zet_debug_regset_flag_t

# The enums seed 001 defines, by C name, in the seed's order.
SEED_ENUMS: dict[str, type[enum.IntEnum] | type[enum.IntFlag]] = {
    "zet_debug_event_flag_t": zet_debug_event_flag_t,
    "zet_debug_event_type_t": zet_debug_event_type_t,
    "zet_debug_detach_reason_t": zet_debug_detach_reason_t,
    "zet_debug_page_fault_reason_t": zet_debug_page_fault_reason_t,
    "zet_debug_memory_space_type_t": zet_debug_memory_space_type_t,
    "zet_debug_regset_flag_t": zet_debug_regset_flag_t,
}

# The ``*_flags_t`` typedef names the seed titles its flag enums with.
FLAGS_TYPEDEFS: dict[str, type[enum.IntFlag]] = {
    "zet_debug_event_flags_t": zet_debug_event_flags_t,
    "zet_debug_regset_flags_t": zet_debug_regset_flags_t,
}

# Everything here, seed-defined or borrowed from the rest of Level Zero.
ENUMS: dict[str, type[enum.IntEnum] | type[enum.IntFlag]] = {
    "ze_result_t": ze_result_t,
    "zet_structure_type_t": zet_structure_type_t,
    "zet_module_debug_info_format_t": zet_module_debug_info_format_t,
    **SEED_ENUMS,
}

FLAT: dict[str, enum.Enum] = {name: member for cls in ENUMS.values() for name, member in cls.__members__.items()}
globals().update(FLAT)


def result_name(code: int) -> str:
    """The enumerator name of a ze_result_t value, for messages and logs."""
    try:
        return ze_result_t(code).name
    except ValueError:
        raise ValueError(f"{code:#x} is not a ze_result_t value") from None
