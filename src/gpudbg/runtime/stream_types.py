"""The vocabulary of streams, events, capture and stream memory operations
(seed 002 §2.3, §2.5, §2.15), with the CUDA runtime's numbering of each
cuda* twin.

Like errors.py this module imports nothing from gpudbg, so the driver can
share the codes. Stream attribute values are small dataclasses standing in
for C's mcStreamAttrValue union: mcStreamGetAttribute fills the member the
attribute names and leaves the others at their defaults.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field


class mcStreamCaptureMode(enum.IntEnum):
    mcStreamCaptureModeGlobal = 0
    mcStreamCaptureModeThreadLocal = 1
    mcStreamCaptureModeRelaxed = 2


class mcStreamCaptureStatus(enum.IntEnum):
    mcStreamCaptureStatusNone = 0
    mcStreamCaptureStatusActive = 1
    mcStreamCaptureStatusInvalidated = 2


class mcStreamUpdateCaptureDependenciesFlags(enum.IntEnum):
    mcStreamAddCaptureDependencies = 0x0
    mcStreamSetCaptureDependencies = 0x1


class mcStreamAttrID(enum.IntEnum):
    mcStreamAttributeAccessPolicyWindow = 1
    mcStreamAttributeSynchronizationPolicy = 3
    mcStreamAttributePriority = 8


class mcAccessProperty(enum.IntEnum):
    mcAccessPropertyNormal = 0
    mcAccessPropertyStreaming = 1
    mcAccessPropertyPersisting = 2


class mcSynchronizationPolicy(enum.IntEnum):
    mcSyncPolicyAuto = 1
    mcSyncPolicySpin = 2
    mcSyncPolicyYield = 3
    mcSyncPolicyBlockingSync = 4


@dataclass(frozen=True)
class mcAccessPolicyWindow:
    """An L2 persistence hint for [base_ptr, base_ptr + num_bytes): stored
    and reported; the simulator has no L2 to apply it to."""

    base_ptr: int = 0
    num_bytes: int = 0
    hitRatio: float = 0.0
    hitProp: mcAccessProperty = mcAccessProperty.mcAccessPropertyNormal
    missProp: mcAccessProperty = mcAccessProperty.mcAccessPropertyNormal


@dataclass(frozen=True)
class mcStreamAttrValue:
    accessPolicyWindow: mcAccessPolicyWindow = field(default_factory=mcAccessPolicyWindow)
    syncPolicy: mcSynchronizationPolicy = mcSynchronizationPolicy.mcSyncPolicyAuto
    priority: int = 0


class mcEventRecordFlags(enum.IntFlag):
    mcEventRecordDefault = 0x0
    mcEventRecordExternal = 0x1


class mcEventWaitFlags(enum.IntFlag):
    mcEventWaitDefault = 0x0
    mcEventWaitExternal = 0x1


class mcEventElapsedTimeFlags(enum.IntFlag):
    mcEventElapsedTimeDefault = 0x0
    mcEventElapsedTimeInterDevice = 0x1


class mcStreamWaitValueFlags(enum.IntFlag):
    """CU_STREAM_WAIT_VALUE_*: GEQ is a cyclic comparison
    ((int32_t)(*addr - value) >= 0), AND waits for a common bit, NOR for
    ~(*addr | value) != 0; FLUSH may be or-ed into any of them."""

    mcStreamWaitValueGeq = 0x0
    mcStreamWaitValueEq = 0x1
    mcStreamWaitValueAnd = 0x2
    mcStreamWaitValueNor = 0x3
    mcStreamWaitValueFlush = 1 << 30


class mcStreamWriteValueFlags(enum.IntFlag):
    mcStreamWriteValueDefault = 0x0
    mcStreamWriteValueNoMemoryBarrier = 0x1


__all__ = ["mcStreamCaptureMode", "mcStreamCaptureStatus", "mcStreamUpdateCaptureDependenciesFlags",
           "mcStreamAttrID", "mcAccessProperty", "mcSynchronizationPolicy", "mcAccessPolicyWindow",
           "mcStreamAttrValue", "mcEventRecordFlags", "mcEventWaitFlags", "mcEventElapsedTimeFlags",
           "mcStreamWaitValueFlags", "mcStreamWriteValueFlags"]
