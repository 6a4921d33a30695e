"""Types of seed 002 §2.2 (device management), §2.4 (execution control) and
§2.6 (occupancy): enums with the CUDA runtime's numbering and the
mcFuncAttributes / mcLaunchParams records.

Kept apart from runtime/types.py so the device, execution and occupancy
modules share one vocabulary that the driver can import too (this module
imports nothing from gpudbg). It holds no behaviour.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Sequence


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


mcSharedmemCarveoutDefault = -1
mcSharedmemCarveoutMaxShared = 100
mcSharedmemCarveoutMaxL1 = 0


@dataclass(frozen=True)
class mcFuncAttributes:
    """struct mcFuncAttributes, with cudaFuncAttributes' field names."""

    sharedSizeBytes: int
    constSizeBytes: int
    localSizeBytes: int
    maxThreadsPerBlock: int
    numRegs: int
    ptxVersion: int
    binaryVersion: int
    cacheModeCA: int
    maxDynamicSharedSizeBytes: int
    preferredShmemCarveout: int


@dataclass
class mcLaunchParams:
    """struct mcLaunchParams: one device's part of a multi-device launch."""

    func: Any
    gridDim: Any
    blockDim: Any
    args: Sequence[Any] = ()
    sharedMem: int = 0
    stream: Any = None


__all__ = ["mcLimit_t", "mcDeviceFlags", "mcDeviceScheduleMask", "mcFuncCache_t", "mcSharedMemConfig",
           "mcDeviceP2PAttr", "mcFuncAttribute", "mcOccupancyFlags", "mcCooperativeLaunchMultiDeviceFlags",
           "mcSharedmemCarveoutDefault", "mcSharedmemCarveoutMaxShared", "mcSharedmemCarveoutMaxL1",
           "mcFuncAttributes", "mcLaunchParams"]
