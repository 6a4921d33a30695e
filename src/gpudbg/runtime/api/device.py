"""Seed 002 §2.1 (initialization), §2.2 (device management) and §2.7
(versions).

Thin by design: the annotated kinds check the arguments (_args.py) and each
function makes one call
into the driver (engine devices, driver/limits.py for limits, flags and
configurations), so every answer comes from the device model or from driver
state, never from the runtime layer. Out-parameters of the seed's C
signatures are returned outputs, in order. The memory-pool functions of
§2.2 live in pools.py.
"""
from __future__ import annotations

import builtins
import dataclasses
from typing import Mapping

from gpudbg.driver import limits as _limits
from gpudbg.driver.engine import DRIVER_VERSION, RUNTIME_VERSION, get_engine
from gpudbg.driver.stream import PRIORITY_GREATEST, PRIORITY_LEAST
from gpudbg.runtime.api._args import Device, Devices, Enum, Flags, Int32, OptionalDevice, Struct, UInt64
from gpudbg.runtime.api._base import _api, _ctx, _int
from gpudbg.runtime.exec_types import mcFuncCache_t, mcLimit_t
from gpudbg.runtime.errors import McError, mcError_t
from gpudbg.runtime.exec_types import mcDeviceP2PAttr, mcSharedMemConfig
from gpudbg.runtime.types import attribute_values, mcDeviceAttribute_t, mcDeviceProp

_INVALID = mcError_t.mcErrorInvalidValue
Limit = Enum(mcLimit_t, mcError_t.mcErrorUnsupportedLimit)
PCI_BUS_ID_CHARS = 13        # "0000:1b:00.0" plus the terminating NUL


# ------------------------------------------------------------------ 2.1 init, 2.7 versions
@_api(0)
def mcInit(flags: Flags) -> None:
    """Seed 002 §2.1.3.1: explicit initialization (enumerates the simulated
    devices, creates no context); flags must be 0, as cuInit's."""
    get_engine().init(flags)


@_api(1)
def mcDriverGetVersion() -> int:
    """Seed 002 §2.7.3.1: 1000*major + 10*minor of the driver."""
    return DRIVER_VERSION


@_api(1)
def mcRuntimeGetVersion() -> int:
    """Seed 002 §2.7.3.2: 1000*major + 10*minor of the runtime."""
    return RUNTIME_VERSION


# ------------------------------------------------------------------ 2.2 devices
@_api(1)
def mcGetDeviceCount() -> int:
    """Seed 002 §2.2.3.22: the number of simulated devices (config or
    GPUDBG_DEVICES); mcErrorNoDevice when there are none."""
    n = get_engine().device_count()
    if n == 0:
        raise McError(mcError_t.mcErrorNoDevice, "no simulated devices")
    return n


@_api(0)
def mcSetDevice(deviceId: Device) -> None:
    """Seed 002 §2.2.3.25: the calling thread's device; no context is created yet."""
    get_engine().set_device(deviceId)


@_api(1)
def mcGetDevice() -> int:
    """Seed 002 §2.2.3.21: the calling thread's device."""
    return get_engine().current_device().ordinal


@_api(1)
def mcDeviceGet(ordinal: Device) -> int:
    """Seed 002 §2.2.3.2: the device handle (mcDevice_t is the ordinal, as
    CUdevice is)."""
    return get_engine().device(ordinal).ordinal


@_api(1)
def mcGetDeviceProperties(deviceId: Device) -> mcDeviceProp:
    """Seed 002 §2.2.3.24: every property from the device model."""
    return mcDeviceProp.from_model(get_engine().device(deviceId).model)


@_api(1)
def mcDeviceGetAttribute(attr: Enum(mcDeviceAttribute_t), deviceId: Device) -> int:
    """Seed 002 §2.2.3.3: one entry of the full attribute table."""
    dev = get_engine().device(deviceId)
    try:
        key = mcDeviceAttribute_t(attr)
    except ValueError:
        raise McError(_INVALID, f"{attr!r} is not an mcDeviceAttribute_t") from None
    return attribute_values(dev.model)[key]


# The fields mcChooseDevice compares (seed §2.2.3.1), plus the compute capability.
CHOOSE_FIELDS = ("major", "minor", "totalGlobalMem", "sharedMemPerBlock", "regsPerBlock", "warpSize",
                 "maxThreadsPerBlock", "totalConstMem", "multiProcessorCount", "l2CacheSize",
                 "maxThreadsPerMultiProcessor", "memoryClockRate", "memoryBusWidth")


@_api(1)
def mcChooseDevice(prop: Struct(mcDeviceProp, Mapping)) -> int:
    """Seed 002 §2.2.3.1: the device that best matches `prop` (an
    mcDeviceProp, or a mapping of some of its field names). Each requested
    field the device meets (at least the requested amount; the exact value
    for major/minor/warpSize) scores one; the highest score wins, the
    lowest ordinal among equals."""
    if prop is None:
        raise McError(_INVALID, "prop must be an mcDeviceProp or a mapping of its fields")
    if isinstance(prop, mcDeviceProp):
        wanted = {f: getattr(prop, f) for f in CHOOSE_FIELDS}
    elif isinstance(prop, Mapping):
        names = {f.name for f in dataclasses.fields(mcDeviceProp)}
        unknown = sorted(set(prop) - names)
        if unknown:
            raise McError(_INVALID, f"mcDeviceProp has no field(s) {unknown}")
        wanted = dict(prop)
    else:
        raise McError(_INVALID, f"prop must be an mcDeviceProp or a mapping, not {type(prop).__name__}")
    engine = get_engine()
    best, best_score = 0, -1
    for ordinal in range(engine.device_count()):
        have = mcDeviceProp.from_model(engine.device(ordinal).model)
        score = 0
        for name, want in wanted.items():
            value = getattr(have, name)
            if name in ("major", "minor", "warpSize", "name") or not isinstance(want, int):
                score += value == want
            else:
                score += value >= want
        if score > best_score:
            best, best_score = ordinal, score
    if best_score < 0:
        raise McError(mcError_t.mcErrorNoDevice, "no simulated devices")
    return best


@_api(1)
def mcDeviceGetName(len: Int32, device: Device) -> str:  # noqa: A002 (the seed's parameter name)
    """Seed 002 §2.2.3.8: the product name, at most len-1 characters (the
    C string's terminating NUL takes the last byte)."""
    n = _int("len", len, 1)
    return get_engine().device(device).model.name[:n - 1]


@_api(1)
def mcDeviceGetPCIBusId(len: Int32, device: OptionalDevice = None) -> str:  # noqa: A002
    """Seed 002 §2.2.3.10: '[domain]:[bus]:[device].[function]' in hex, at
    most len-1 characters. The one-argument form mcDeviceGetPCIBusId(device)
    of the core API remains accepted (full length)."""
    if device is None:
        n, device = PCI_BUS_ID_CHARS, len
    else:
        n = _int("len", len, 1)
    return get_engine().device(device).model.pci_bus_id[:n - 1]


@_api(1)
def mcDeviceGetUuid(device: Device) -> bytes:
    """Seed 002 §2.2.3.13: 16 bytes, unique per simulated device."""
    return get_engine().device(device).model.uuid


@_api(2)
def mcDeviceGetLuid(dev: Device) -> tuple[bytes, int]:
    """Seed 002 §2.2.3.6: (8-byte LUID, deviceNodeMask). A LUID is a WDDM
    notion; the seed lists no mcErrorNotSupported, so a stable one is made
    from the device's PCI location (unique per device), with node mask 1
    (one node per adapter), rather than refusing."""
    m = get_engine().device(dev).model
    luid = ((m.pci_domain & 0xFFFF) << 48 | (m.pci_bus & 0xFF) << 40 | (m.pci_device & 0xFF) << 32
            | int.from_bytes(m.uuid[-4:], "little"))
    return luid.to_bytes(8, "little"), 1


@_api(1)
def mcDeviceTotalMem(device: Device) -> int:
    """Seed 002 §2.2.3.20: bytes of device memory."""
    return get_engine().device(device).model.global_memory


@_api(1)
def mcDeviceGetP2PAttribute(attr: Enum(mcDeviceP2PAttr), srcDevice: Device, dstDevice: Device) -> int:
    """Seed 002 §2.2.3.9: the simulated devices share no memory bus, so a
    kernel cannot dereference a peer's memory: access, native atomics and
    array access are 0; the (only) link has performance rank 0."""
    engine = get_engine()
    src, dst = engine.device(srcDevice), engine.device(dstDevice)
    if src is dst:
        raise McError(mcError_t.mcErrorInvalidDevice, f"srcDevice and dstDevice are both {srcDevice}")
    try:
        which = mcDeviceP2PAttr(attr) if not isinstance(attr, bool) else None
    except ValueError:
        which = None
    if which is None:
        raise McError(_INVALID, f"{attr!r} is not an mcDeviceP2PAttr")
    return 0


@_api(1)
def mcDeviceGetLimit(limit: Limit) -> int:
    """Seed 002 §2.2.3.5: the current device's limit (its primary context's)."""
    return _limits.get_limit(_ctx(), limit)


@_api(0)
def mcDeviceSetLimit(limit: Limit, value: UInt64) -> None:
    """Seed 002 §2.2.3.16: stack size, printf FIFO and heap size really
    bound the simulator (driver/limits.py); the printf FIFO and heap cannot
    change after a kernel using them was launched."""
    _limits.set_limit(_ctx(), limit, value)


@_api(1)
def mcDeviceGetSharedMemConfig() -> mcSharedMemConfig:
    """Seed 002 §2.2.3.11: always 4-byte banks (the only configuration the
    seed's device supports)."""
    return mcSharedMemConfig(int(_limits.shared_mem_config(get_engine().current_device())))


@_api(0)
def mcDeviceSetSharedMemConfig(config: Enum(mcSharedMemConfig)) -> None:
    """Seed 002 §2.2.3.18: any mcSharedMemConfig is accepted and recorded;
    banks stay 4 bytes wide (a no-op on fixed-bank devices)."""
    _limits.set_shared_mem_config(get_engine().current_device(), config)


@_api(0)
def mcDeviceSetCacheConfig(cacheConfig: Enum(mcFuncCache_t)) -> None:
    """Seed 002 §2.2.3.15: the preferred L1/shared split, recorded per
    device; a preference only (it never changes occupancy here)."""
    _limits.set_cache_config(get_engine().current_device(), cacheConfig)


@_api(2)
def mcDeviceGetStreamPriorityRange() -> tuple[int, int]:
    """Seed 002 §2.2.3.12: (leastPriority, greatestPriority); lower numbers
    are higher priorities, as mcStreamCreateWithPriority clamps them."""
    get_engine().current_device()
    return PRIORITY_LEAST, PRIORITY_GREATEST


@_api(1)
def mcGetDeviceFlags() -> int:
    """Seed 002 §2.2.3.23: the current device's flags (mcDeviceMapHost is
    always included: host mapping is always allowed)."""
    return _limits.get_flags(get_engine().current_device())


@_api(0)
def mcSetDeviceFlags(flag: Flags) -> None:
    """Seed 002 §2.2.3.26: one schedule mode plus mcDeviceMapHost /
    mcDeviceLmemResizeToMax; mcErrorSetOnActiveProcess once the device's
    primary context is active with different flags."""
    _limits.set_flags(get_engine().current_device(), flag)


@_api(0)
def mcSetValidDevices(deviceArray: Devices, len: Int32) -> None:  # noqa: A002
    """Seed 002 §2.2.3.27: make the first usable device of the list current
    (every simulated device is in the default compute mode, so that is the
    first entry); len 0 keeps the default device order."""
    engine = get_engine()
    n = _int("len", len, 0)
    if n == 0:
        return
    if deviceArray is None:
        raise McError(_INVALID, "deviceArray is NULL but len is not 0")
    if n > engine.device_count():
        raise McError(_INVALID, f"len {n} exceeds the {engine.device_count()} devices")
    try:
        ids = list(deviceArray)[:n]
    except TypeError:
        raise McError(_INVALID, "deviceArray must be a sequence of device ordinals") from None
    if builtins.len(ids) < n:
        raise McError(_INVALID, f"deviceArray has {builtins.len(ids)} entries, len says {n}")
    for d in ids:
        engine.device(d)              # mcErrorInvalidDevice for an unknown ordinal
    engine.set_device(ids[0])


@_api(0)
def mcDeviceSynchronize() -> None:
    """Seed 002 §2.2.3.19: wait for all work of the current device; reports
    any earlier asynchronous error."""
    _ctx().synchronize()


@_api(0)
def mcDeviceReset() -> None:
    """Seed 002 §2.2.3.14: destroy every resource of the current device's
    primary context (streams, events, memory, modules, limits; pending work
    is discarded), release the device heap and forget the device's flags and
    configurations; the next call starts afresh."""
    _limits.reset_device(get_engine())


__all__ = ['mcInit', 'mcDriverGetVersion', 'mcRuntimeGetVersion', 'mcGetDeviceCount', 'mcSetDevice',
           'mcGetDevice', 'mcDeviceGet', 'mcGetDeviceProperties', 'mcDeviceGetAttribute', 'mcChooseDevice',
           'mcDeviceGetName', 'mcDeviceGetPCIBusId', 'mcDeviceGetUuid', 'mcDeviceGetLuid', 'mcDeviceTotalMem',
           'mcDeviceGetP2PAttribute', 'mcDeviceGetLimit', 'mcDeviceSetLimit', 'mcDeviceGetSharedMemConfig',
           'mcDeviceSetSharedMemConfig', 'mcDeviceSetCacheConfig', 'mcDeviceGetStreamPriorityRange',
           'mcGetDeviceFlags', 'mcSetDeviceFlags', 'mcSetValidDevices', 'mcDeviceSynchronize',
           'mcDeviceReset']
