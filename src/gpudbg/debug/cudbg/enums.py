"""Every ``typedef enum`` of seed 000 (cudadebugger.h, CUDBGAPI 13.0).

Each C enum becomes one IntEnum (or IntFlag where the header builds values
from bits and callers OR them together) named exactly like its C typedef,
with the header's member names and values; ``ENUMS`` maps each C typedef
name to its class so a test can check the module against the header text
enumerator by enumerator. The members are also exported flat
(``CUDBG_SUCCESS``, ``REG_CLASS_REG_FULL``...) because C code names them
that way. Two enums already exist elsewhere and are re-exported, not
duplicated: CUDBGException_t (gpudbg.sim.faults, the simulator's fault
kinds) and CUDBGCoredumpGenerationFlags (gpudbg.dump.coredump.snapshot,
which uses them to decide what a dump skips).

Attribute enums (CUDBGWarpInfoAttribute_t...) are bit *positions*: the
``*AttributeFlags`` words of the device-info structs hold ``1 << attr``.
They stay IntEnums; ``attribute_mask`` makes the words.
"""
from __future__ import annotations

import enum
from collections.abc import Iterable

from gpudbg.dump.coredump.snapshot import CUDBGCoredumpGenerationFlags
from gpudbg.sim.faults import CUDBGException

CUDBGException_t = CUDBGException


class ptxStorageKind(enum.IntEnum):
    """Memory segments as DWARF location expressions name them."""

    ptxUNSPECIFIEDStorage = 0
    ptxCodeStorage = 1
    ptxRegStorage = 2
    ptxSregStorage = 3
    ptxConstStorage = 4
    ptxGlobalStorage = 5
    ptxLocalStorage = 6
    ptxParamStorage = 7
    ptxSharedStorage = 8
    ptxSurfStorage = 9
    ptxTexStorage = 10
    ptxTexSamplerStorage = 11
    ptxGenericStorage = 12
    ptxIParamStorage = 13
    ptxOParamStorage = 14
    ptxFrameStorage = 15
    ptxURegStorage = 16
    ptxMAXStorage = 17


class CUDBGCapabilityFlags(enum.IntFlag):
    """Capabilities the debugger front-end announces to the API."""

    CUDBG_DEBUGGER_CAPABILITY_NONE = 0
    CUDBG_DEBUGGER_CAPABILITY_LAZY_FUNCTION_LOADING = 1 << 0
    CUDBG_DEBUGGER_CAPABILITY_SUSPEND_EVENTS = 1 << 1
    CUDBG_DEBUGGER_CAPABILITY_REPORT_EXCEPTIONS_IN_EXITED_WARPS = 1 << 2
    CUDBG_DEBUGGER_CAPABILITY_NO_CONTEXT_PUSH_POP_EVENTS = 1 << 3
    CUDBG_DEBUGGER_CAPABILITY_ENABLE_CUDA_LOGS = 1 << 4
    CUDBG_DEBUGGER_CAPABILITY_COLLECT_CPU_CALL_STACK_FOR_KERNEL_LAUNCHES = 1 << 5


class CUDBGResult(enum.IntEnum):
    """Return code of every API entry; the values index CUDBGResultNames."""

    CUDBG_SUCCESS = 0x0000
    CUDBG_ERROR_UNKNOWN = 0x0001
    CUDBG_ERROR_BUFFER_TOO_SMALL = 0x0002
    CUDBG_ERROR_UNKNOWN_FUNCTION = 0x0003
    CUDBG_ERROR_INVALID_ARGS = 0x0004
    CUDBG_ERROR_UNINITIALIZED = 0x0005
    CUDBG_ERROR_INVALID_COORDINATES = 0x0006
    CUDBG_ERROR_INVALID_MEMORY_SEGMENT = 0x0007
    CUDBG_ERROR_INVALID_MEMORY_ACCESS = 0x0008
    CUDBG_ERROR_MEMORY_MAPPING_FAILED = 0x0009
    CUDBG_ERROR_INTERNAL = 0x000A
    CUDBG_ERROR_INVALID_DEVICE = 0x000B
    CUDBG_ERROR_INVALID_SM = 0x000C
    CUDBG_ERROR_INVALID_WARP = 0x000D
    CUDBG_ERROR_INVALID_LANE = 0x000E
    CUDBG_ERROR_SUSPENDED_DEVICE = 0x000F
    CUDBG_ERROR_RUNNING_DEVICE = 0x0010
    CUDBG_ERROR_RESERVED_0 = 0x0011
    CUDBG_ERROR_INVALID_ADDRESS = 0x0012
    CUDBG_ERROR_INCOMPATIBLE_API = 0x0013
    CUDBG_ERROR_INITIALIZATION_FAILURE = 0x0014
    CUDBG_ERROR_INVALID_GRID = 0x0015
    CUDBG_ERROR_NO_EVENT_AVAILABLE = 0x0016
    CUDBG_ERROR_SOME_DEVICES_WATCHDOGGED = 0x0017
    CUDBG_ERROR_ALL_DEVICES_WATCHDOGGED = 0x0018
    CUDBG_ERROR_INVALID_ATTRIBUTE = 0x0019
    CUDBG_ERROR_ZERO_CALL_DEPTH = 0x001A
    CUDBG_ERROR_INVALID_CALL_LEVEL = 0x001B
    CUDBG_ERROR_COMMUNICATION_FAILURE = 0x001C
    CUDBG_ERROR_INVALID_CONTEXT = 0x001D
    CUDBG_ERROR_ADDRESS_NOT_IN_DEVICE_MEM = 0x001E
    CUDBG_ERROR_MEMORY_UNMAPPING_FAILED = 0x001F
    CUDBG_ERROR_INCOMPATIBLE_DISPLAY_DRIVER = 0x0020
    CUDBG_ERROR_INVALID_MODULE = 0x0021
    CUDBG_ERROR_LANE_NOT_IN_SYSCALL = 0x0022
    CUDBG_ERROR_MEMCHECK_NOT_ENABLED = 0x0023
    CUDBG_ERROR_INVALID_ENVVAR_ARGS = 0x0024
    CUDBG_ERROR_OS_RESOURCES = 0x0025
    CUDBG_ERROR_FORK_FAILED = 0x0026
    CUDBG_ERROR_NO_DEVICE_AVAILABLE = 0x0027
    CUDBG_ERROR_ATTACH_NOT_POSSIBLE = 0x0028
    CUDBG_ERROR_WARP_RESUME_NOT_POSSIBLE = 0x0029
    CUDBG_ERROR_INVALID_WARP_MASK = 0x002A
    CUDBG_ERROR_AMBIGUOUS_MEMORY_ADDRESS = 0x002B
    CUDBG_ERROR_RECURSIVE_API_CALL = 0x002C
    CUDBG_ERROR_MISSING_DATA = 0x002D
    CUDBG_ERROR_NOT_SUPPORTED = 0x002E


class CUDBGReportDriverApiErrorFlags(enum.IntFlag):
    """What the driver leaves out when reporting API errors."""

    CUDBG_REPORT_DRIVER_API_ERROR_FLAGS_NONE = 0x0000
    CUDBG_REPORT_DRIVER_API_ERROR_FLAGS_SUPPRESS_NOT_READY = 1 << 0


class CUDBGReportedDriverApiErrorSource(enum.IntEnum):
    """Which API layer a reported error came from."""

    CUDBG_REPORTED_DRIVER_API_ERROR_SOURCE_NONE = 0x000
    CUDBG_REPORTED_DRIVER_API_ERROR_SOURCE_DRIVER = 0x001
    CUDBG_REPORTED_DRIVER_API_ERROR_SOURCE_RUNTIME = 0x002


class CUDBGAttribute(enum.IntEnum):
    """Grid attributes readable with getGridAttribute(s)."""

    CUDBG_ATTR_GRID_LAUNCH_BLOCKING = 0x000
    CUDBG_ATTR_GRID_TID = 0x001


class CUDBGGridStatus(enum.IntEnum):
    """Lifecycle of a grid as getGridStatus reports it."""

    CUDBG_GRID_STATUS_INVALID = 0
    CUDBG_GRID_STATUS_PENDING = 1
    CUDBG_GRID_STATUS_ACTIVE = 2
    CUDBG_GRID_STATUS_SLEEPING = 3
    CUDBG_GRID_STATUS_TERMINATED = 4
    CUDBG_GRID_STATUS_UNDETERMINED = 5


class CUDBGKernelType(enum.IntEnum):
    """System (driver-internal) versus application kernels."""

    CUDBG_KNL_TYPE_UNKNOWN = 0x000
    CUDBG_KNL_TYPE_SYSTEM = 0x001
    CUDBG_KNL_TYPE_APPLICATION = 0x002


class CUDBGElfImageProperties(enum.IntFlag):
    """Bits of elfImageLoaded.properties."""

    CUDBG_ELF_IMAGE_PROPERTIES_SYSTEM = 0x001


class CUDBGRegClass(enum.IntEnum):
    """Where a physical register lives (value 8 is unassigned in the header)."""

    REG_CLASS_INVALID = 0x000
    REG_CLASS_REG_CC = 0x001
    REG_CLASS_REG_PRED = 0x002
    REG_CLASS_REG_ADDR = 0x003
    REG_CLASS_REG_HALF = 0x004
    REG_CLASS_REG_FULL = 0x005
    REG_CLASS_MEM_LOCAL = 0x006
    REG_CLASS_LMEM_REG_OFFSET = 0x007
    REG_CLASS_UREG_PRED = 0x009
    REG_CLASS_UREG_HALF = 0x00A
    REG_CLASS_UREG_FULL = 0x00B


class CUDBGEventKind(enum.IntEnum):
    """Kind of a CUDBGEvent; selects the member of its ``cases`` union."""

    CUDBG_EVENT_INVALID = 0x000
    CUDBG_EVENT_ELF_IMAGE_LOADED = 0x001
    CUDBG_EVENT_KERNEL_READY = 0x002
    CUDBG_EVENT_KERNEL_FINISHED = 0x003
    CUDBG_EVENT_INTERNAL_ERROR = 0x004
    CUDBG_EVENT_CTX_PUSH = 0x005
    CUDBG_EVENT_CTX_POP = 0x006
    CUDBG_EVENT_CTX_CREATE = 0x007
    CUDBG_EVENT_CTX_DESTROY = 0x008
    CUDBG_EVENT_TIMEOUT = 0x009
    CUDBG_EVENT_ATTACH_COMPLETE = 0x00A
    CUDBG_EVENT_DETACH_COMPLETE = 0x00B
    CUDBG_EVENT_ELF_IMAGE_UNLOADED = 0x00C
    CUDBG_EVENT_FUNCTIONS_LOADED = 0x00D
    CUDBG_EVENT_ALL_DEVICES_SUSPENDED = 0x00E
    CUDBG_EVENT_CUDA_LOGS_AVAILABLE = 0x00F
    CUDBG_EVENT_CUDA_LOGS_THRESHOLD_REACHED = 0x010


class CUDBGKernelOrigin(enum.IntEnum):
    """Who launched a grid: the host or a parent grid (dynamic parallelism)."""

    CUDBG_KNL_ORIGIN_CPU = 0x000
    CUDBG_KNL_ORIGIN_GPU = 0x001


class CUDBGKernelLaunchNotifyMode(enum.IntEnum):
    """Whether kernel launches raise events now or are deferred."""

    CUDBG_KNL_LAUNCH_NOTIFY_EVENT = 0x000
    CUDBG_KNL_LAUNCH_NOTIFY_DEFER = 0x001


class CUDBGEventQueueType(enum.IntEnum):
    """The two event queues getNextEvent reads from."""

    CUDBG_EVENT_QUEUE_TYPE_SYNC = 0
    CUDBG_EVENT_QUEUE_TYPE_ASYNC = 1


class CUDBGElfImageType(enum.IntEnum):
    """Which copy of a module's ELF getElfImageByHandle returns."""

    CUDBG_ELF_IMAGE_TYPE_NONRELOCATED = 0
    CUDBG_ELF_IMAGE_TYPE_RELOCATED = 1


class CUDBGAdjAddrAction(enum.IntEnum):
    """Direction of getAdjustedCodeAddress."""

    CUDBG_ADJ_PREVIOUS_ADDRESS = 0x000
    CUDBG_ADJ_CURRENT_ADDRESS = 0x001
    CUDBG_ADJ_NEXT_ADDRESS = 0x002


class CUDBGSingleStepFlags(enum.IntFlag):
    """Flags of singleStepWarp."""

    CUDBG_SINGLE_STEP_FLAGS_NONE = 0
    CUDBG_SINGLE_STEP_FLAGS_NO_STEP_OVER_WARP_BARRIERS = 1 << 0


class CUDBGUvmMemoryAccessType_t(enum.IntEnum):
    """Access that caused a unified-memory fault."""

    CUDBG_UVM_MEMORY_ACCESS_TYPE_UNKNOWN = 0xFFFFFFFF
    CUDBG_UVM_MEMORY_ACCESS_TYPE_INVALID = 0
    CUDBG_UVM_MEMORY_ACCESS_TYPE_READ = 1
    CUDBG_UVM_MEMORY_ACCESS_TYPE_WRITE = 2
    CUDBG_UVM_MEMORY_ACCESS_TYPE_ATOMIC = 3
    CUDBG_UVM_MEMORY_ACCESS_TYPE_PREFETCH = 4


class CUDBGUvmFaultType_t(enum.IntEnum):
    """MMU fault type of a unified-memory fault."""

    CUDBG_UVM_FAULT_TYPE_UNKNOWN = 0xFFFFFFFF
    CUDBG_UVM_FAULT_TYPE_INVALID = 0
    CUDBG_UVM_FAULT_TYPE_INVALID_PDE = 1
    CUDBG_UVM_FAULT_TYPE_INVALID_PTE = 2
    CUDBG_UVM_FAULT_TYPE_WRITE = 3
    CUDBG_UVM_FAULT_TYPE_ATOMIC = 4
    CUDBG_UVM_FAULT_TYPE_INVALID_PDE_SIZE = 5
    CUDBG_UVM_FAULT_TYPE_LIMIT_VIOLATION = 6
    CUDBG_UVM_FAULT_TYPE_UNBOUND_INST_BLOCK = 7
    CUDBG_UVM_FAULT_TYPE_PRIV_VIOLATION = 8
    CUDBG_UVM_FAULT_TYPE_PITCH_MASK_VIOLATION = 9
    CUDBG_UVM_FAULT_TYPE_WORK_CREATION = 10
    CUDBG_UVM_FAULT_TYPE_UNSUPPORTED_APERTURE = 11
    CUDBG_UVM_FAULT_TYPE_COMPRESSION_FAILURE = 12
    CUDBG_UVM_FAULT_TYPE_UNSUPPORTED_KIND = 13
    CUDBG_UVM_FAULT_TYPE_REGION_VIOLATION = 14
    CUDBG_UVM_FAULT_TYPE_POISON = 15


class CUDBGUvmFatalReason_t(enum.IntEnum):
    """Why the unified-memory driver gave up on a fault."""

    CUDBG_UVM_FATAL_REASON_UNKNOWN = 0xFFFFFFFF
    CUDBG_UVM_FATAL_REASON_INVALID = 0
    CUDBG_UVM_FATAL_REASON_INVALID_ADDRESS = 1
    CUDBG_UVM_FATAL_REASON_INVALID_PERMISSIONS = 2
    CUDBG_UVM_FATAL_REASON_INVALID_FAULT_TYPE = 3
    CUDBG_UVM_FATAL_REASON_OUT_OF_MEMORY = 4
    CUDBG_UVM_FATAL_REASON_INTERNAL_ERROR = 5
    CUDBG_UVM_FATAL_REASON_INVALID_OPERATION = 6


class CUDBGDeviceInfoQueryType_t(enum.IntEnum):
    """FULL: every valid SM/warp/lane; UPDATE: only what changed since the last call."""

    CUDBG_RESPONSE_TYPE_FULL = 0
    CUDBG_RESPONSE_TYPE_UPDATE = 1
    CUDBG_RESPONSE_TYPE_UNKNOWN = 0xFFFFFFFF


class CUDBGDeviceInfoAttribute_t(enum.IntEnum):
    """Bit positions in CUDBGDeviceInfo.deviceAttributeFlags."""

    CUDBG_DEVICE_ATTRIBUTE_SM_UPDATE_MASK = 0
    CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK = 1
    CUDBG_DEVICE_ATTRIBUTE_SM_EXCEPTION_MASK = 2
    CUDBG_DEVICE_ATTRIBUTE_COUNT = 3


class CUDBGSMInfoAttribute_t(enum.IntEnum):
    """Bit positions in CUDBGSMInfo.smAttributeFlags."""

    CUDBG_SM_ATTRIBUTE_WARP_UPDATE_MASK = 0
    CUDBG_SM_ATTRIBUTE_COUNT = 1


class CUDBGWarpInfoAttribute_t(enum.IntEnum):
    """Bit positions in CUDBGWarpInfo.warpAttributeFlags."""

    CUDBG_WARP_ATTRIBUTE_LANE_UPDATE_MASK = 0
    CUDBG_WARP_ATTRIBUTE_LANE_ATTRIBUTES = 1
    CUDBG_WARP_ATTRIBUTE_EXCEPTION = 2
    CUDBG_WARP_ATTRIBUTE_ERRORPC = 3
    CUDBG_WARP_ATTRIBUTE_CLUSTERIDX = 4
    CUDBG_WARP_ATTRIBUTE_CLUSTERDIM = 5
    CUDBG_WARP_ATTRIBUTE_CLUSTER_EXCEPTION_TARGET_BLOCK_IDX = 6
    CUDBG_WARP_ATTRIBUTE_IN_SYSCALL_LANES = 7
    CUDBG_WARP_ATTRIBUTE_COUNT = 8


class CUDBGLaneInfoAttribute_t(enum.IntEnum):
    """Bit positions in laneAttributeFlags; 13.0 defines none yet."""

    CUDBG_LANE_ATTRIBUTE_COUNT = 0


class CUDBGCbuThreadState(enum.IntEnum):
    """Per-thread state of the convergence barrier unit."""

    CUDBG_CBU_THREAD_STATE_INVALID = 0xFFFFFFFF
    CUDBG_CBU_THREAD_STATE_EXITED = 0
    CUDBG_CBU_THREAD_STATE_READY = 1
    CUDBG_CBU_THREAD_STATE_YIELDED = 2
    CUDBG_CBU_THREAD_STATE_SLEEP = 3
    CUDBG_CBU_THREAD_STATE_SLEEPYIELD = 4
    CUDBG_CBU_THREAD_STATE_READYATNEXT = 5
    CUDBG_CBU_THREAD_STATE_BLOCKEDPLUS = 6
    CUDBG_CBU_THREAD_STATE_BLOCKEDALL = 7
    CUDBG_CBU_THREAD_STATE_BLOCKEDCOLLECTIVE = 8
    CUDBG_CBU_THREAD_STATE_BLOCKEDB0 = 9
    CUDBG_CBU_THREAD_STATE_BLOCKEDB1 = 10
    CUDBG_CBU_THREAD_STATE_BLOCKEDB2 = 11
    CUDBG_CBU_THREAD_STATE_BLOCKEDB3 = 12
    CUDBG_CBU_THREAD_STATE_BLOCKEDB4 = 13
    CUDBG_CBU_THREAD_STATE_BLOCKEDB5 = 14
    CUDBG_CBU_THREAD_STATE_BLOCKEDB6 = 15
    CUDBG_CBU_THREAD_STATE_BLOCKEDB7 = 16
    CUDBG_CBU_THREAD_STATE_BLOCKEDB8 = 17
    CUDBG_CBU_THREAD_STATE_BLOCKEDB9 = 18
    CUDBG_CBU_THREAD_STATE_BLOCKEDB10 = 19
    CUDBG_CBU_THREAD_STATE_BLOCKEDB11 = 20
    CUDBG_CBU_THREAD_STATE_BLOCKEDB12 = 21
    CUDBG_CBU_THREAD_STATE_BLOCKEDB13 = 22
    CUDBG_CBU_THREAD_STATE_BLOCKEDB14 = 23
    CUDBG_CBU_THREAD_STATE_BLOCKEDB15 = 24


class CUDBGCudaLogLevel(enum.IntEnum):
    """Severity of a CUDA log message."""

    CUDBG_CUDA_LOG_LEVEL_INVALID = 0xFFFFFFFF
    CUDBG_CUDA_LOG_LEVEL_ERROR = 0
    CUDBG_CUDA_LOG_LEVEL_WARNING = 1


# C typedef name -> class, in header order.
ENUMS: dict[str, type[enum.IntEnum] | type[enum.IntFlag]] = {
    "ptxStorageKind": ptxStorageKind,
    "CUDBGCapabilityFlags": CUDBGCapabilityFlags,
    "CUDBGResult": CUDBGResult,
    "CUDBGReportDriverApiErrorFlags": CUDBGReportDriverApiErrorFlags,
    "CUDBGReportedDriverApiErrorSource": CUDBGReportedDriverApiErrorSource,
    "CUDBGAttribute": CUDBGAttribute,
    "CUDBGGridStatus": CUDBGGridStatus,
    "CUDBGKernelType": CUDBGKernelType,
    "CUDBGElfImageProperties": CUDBGElfImageProperties,
    "CUDBGRegClass": CUDBGRegClass,
    "CUDBGEventKind": CUDBGEventKind,
    "CUDBGKernelOrigin": CUDBGKernelOrigin,
    "CUDBGKernelLaunchNotifyMode": CUDBGKernelLaunchNotifyMode,
    "CUDBGEventQueueType": CUDBGEventQueueType,
    "CUDBGElfImageType": CUDBGElfImageType,
    "CUDBGAdjAddrAction": CUDBGAdjAddrAction,
    "CUDBGSingleStepFlags": CUDBGSingleStepFlags,
    "CUDBGException_t": CUDBGException_t,
    "CUDBGUvmMemoryAccessType_t": CUDBGUvmMemoryAccessType_t,
    "CUDBGUvmFaultType_t": CUDBGUvmFaultType_t,
    "CUDBGUvmFatalReason_t": CUDBGUvmFatalReason_t,
    "CUDBGDeviceInfoQueryType_t": CUDBGDeviceInfoQueryType_t,
    "CUDBGDeviceInfoAttribute_t": CUDBGDeviceInfoAttribute_t,
    "CUDBGSMInfoAttribute_t": CUDBGSMInfoAttribute_t,
    "CUDBGWarpInfoAttribute_t": CUDBGWarpInfoAttribute_t,
    "CUDBGLaneInfoAttribute_t": CUDBGLaneInfoAttribute_t,
    "CUDBGCoredumpGenerationFlags": CUDBGCoredumpGenerationFlags,
    "CUDBGCbuThreadState": CUDBGCbuThreadState,
    "CUDBGCudaLogLevel": CUDBGCudaLogLevel,
}


def attribute_mask(attributes: Iterable[int]) -> int:
    """The ``*AttributeFlags`` word with one bit per attribute position."""
    mask = 0
    for attr in attributes:
        if not 0 <= int(attr) < 32:
            raise ValueError(f"attribute position {int(attr)} does not fit a 32-bit flags word")
        mask |= 1 << int(attr)
    return mask


def attributes_in(mask: int) -> list[int]:
    """The attribute positions set in a flags word, lowest first (their order in the buffer)."""
    if not 0 <= mask <= 0xFFFFFFFF:
        raise ValueError(f"attribute flags 0x{mask:x} do not fit in 32 bits")
    return [bit for bit in range(32) if mask >> bit & 1]


def _flat_names() -> dict[str, enum.Enum]:
    """Every member under its C name; two enums sharing a name would be a header misread."""
    flat: dict[str, enum.Enum] = {}
    for cname, cls in ENUMS.items():
        for name, member in cls.__members__.items():
            if name in flat:
                raise RuntimeError(f"enumerator {name} of {cname} already defined by another enum")
            flat[name] = member
    return flat


FLAT: dict[str, enum.Enum] = _flat_names()
globals().update(FLAT)
