"""Types of seed 002 §2.2 (device management), §2.4 (execution control) and
§2.6 (occupancy): enums with the CUDA runtime's numbering and the
mcFuncAttributes / mcLaunchParams records, and the launch configuration
with attributes (cudaLaunchConfig_t) of mcLaunchKernelExC.

Kept apart from runtime/types.py so the device, execution and occupancy
modules share one vocabulary; the two records are the engine's types
(gpudbg.driver.types) under their mc* names. It holds no behaviour.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Sequence

from gpudbg.driver.types import FunctionAttributes, LaunchParams


class mcLimit_t(enum.IntEnum):
    mcLimitStackSize = 0x00
    mcLimitPrintfFifoSize = 0x01
    mcLimitMallocHeapSize = 0x02
    mcLimitDevRuntimeSyncDepth = 0x03
    mcLimitDevRuntimePendingLaunchCount = 0x04
    mcLimitMaxL2FetchGranularity = 0x05
    mcLimitPersistingL2CacheSize = 0x06


class mcDeviceFlags(enum.IntFlag):
    mcDeviceScheduleAuto = 0x00
    mcDeviceScheduleSpin = 0x01
    mcDeviceScheduleYield = 0x02
    mcDeviceScheduleBlockingSync = 0x04
    mcDeviceMapHost = 0x08
    mcDeviceLmemResizeToMax = 0x10


mcDeviceScheduleMask = 0x07


class mcFuncCache_t(enum.IntEnum):
    mcFuncCachePreferNone = 0
    mcFuncCachePreferShared = 1
    mcFuncCachePreferL1 = 2
    mcFuncCachePreferEqual = 3


class mcSharedMemConfig(enum.IntEnum):
    mcSharedMemBankSizeDefault = 0
    mcSharedMemBankSizeFourByte = 1
    mcSharedMemBankSizeEightByte = 2


class mcDeviceP2PAttr(enum.IntEnum):
    mcDevP2PAttrPerformanceRank = 1
    mcDevP2PAttrAccessSupported = 2
    mcDevP2PAttrNativeAtomicSupported = 3
    mcDevP2PAttrMcArrayAccessSupported = 4


class mcFuncAttribute(enum.IntEnum):
    mcFuncAttributeMaxDynamicSharedMemorySize = 8
    mcFuncAttributePreferredSharedMemoryCarveout = 9


class mcOccupancyFlags(enum.IntFlag):
    mcOccupancyDefault = 0x0
    mcOccupancyDisableCachingOverride = 0x1


class mcCooperativeLaunchMultiDeviceFlags(enum.IntFlag):
    mcCooperativeLaunchMultiDeviceNoPreSync = 0x01
    mcCooperativeLaunchMultiDeviceNoPostSync = 0x02


class mcLaunchAttributeID(enum.IntEnum):
    """cudaLaunchAttributeID's values (CUDA 13 driver_types.h) under the runtime's names."""

    mcLaunchAttributeIgnore = 0
    mcLaunchAttributeAccessPolicyWindow = 1
    mcLaunchAttributeCooperative = 2
    mcLaunchAttributeSynchronizationPolicy = 3
    mcLaunchAttributeClusterDimension = 4
    mcLaunchAttributeClusterSchedulingPolicyPreference = 5
    mcLaunchAttributeProgrammaticStreamSerialization = 6
    mcLaunchAttributeProgrammaticEvent = 7
    mcLaunchAttributePriority = 8
    mcLaunchAttributeMemSyncDomainMap = 9
    mcLaunchAttributeMemSyncDomain = 10
    mcLaunchAttributePreferredClusterDimension = 11
    mcLaunchAttributeLaunchCompletionEvent = 12
    mcLaunchAttributeDeviceUpdatableKernelNode = 13
    mcLaunchAttributePreferredSharedMemoryCarveout = 14


@dataclass
class mcLaunchAttribute_t:
    """One launch attribute: `val` is what the id takes (an int, or a dim3
    as 1-3 ints for the cluster dimensions)."""

    id: int
    val: Any = 0


@dataclass
class mcLaunchConfig_t:
    """cudaLaunchConfig_t: the launch shape, stream and attributes."""

    gridDim: Any
    blockDim: Any
    dynamicSmemBytes: int = 0
    stream: Any = None
    attrs: Sequence[mcLaunchAttribute_t] = field(default_factory=list)


mcSharedmemCarveoutDefault = -1
mcSharedmemCarveoutMaxShared = 100
mcSharedmemCarveoutMaxL1 = 0


# The records are the engine's own (the same fields as cudaFuncAttributes
# and cudaLaunchParams), under the runtime's names.
mcFuncAttributes = FunctionAttributes
mcLaunchParams = LaunchParams


__all__ = ["mcLimit_t", "mcDeviceFlags", "mcDeviceScheduleMask", "mcFuncCache_t", "mcSharedMemConfig",
           "mcDeviceP2PAttr", "mcFuncAttribute", "mcOccupancyFlags", "mcCooperativeLaunchMultiDeviceFlags",
           "mcSharedmemCarveoutDefault", "mcSharedmemCarveoutMaxShared", "mcSharedmemCarveoutMaxL1",
           "mcFuncAttributes", "mcLaunchParams", "mcLaunchAttributeID", "mcLaunchAttribute_t", "mcLaunchConfig_t"]
