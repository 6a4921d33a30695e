"""Seed 002 §2.1 (initialization), §2.2 (device management) and §2.7
(versions).
"""
from __future__ import annotations

from typing import Any

from gpudbg.driver.engine import DRIVER_VERSION, RUNTIME_VERSION, get_engine
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.errors import DriverError, mcError_t
from gpudbg.runtime.types import (
    attribute_values, mcDeviceAttribute_t, mcDeviceProp,
)


# ------------------------------------------------------------------ 2.1 init, 2.7 versions
@_api(0)
def mcInit(flags: int) -> None:
    """Seed 002 §2.1.3.1: explicit initialization; flags must be 0."""
    get_engine().init(flags)


@_api(1)
def mcDriverGetVersion() -> int:
    """Seed 002 §2.7.3.1: 1000*major + 10*minor."""
    return DRIVER_VERSION


@_api(1)
def mcRuntimeGetVersion() -> int:
    """Seed 002 §2.7.3.2."""
    return RUNTIME_VERSION


# ------------------------------------------------------------------ 2.2 devices
@_api(1)
def mcGetDeviceCount() -> int:
    """Seed 002 §2.2.3.22."""
    n = get_engine().device_count()
    if n == 0:
        raise DriverError(mcError_t.mcErrorNoDevice, "no simulated devices")
    return n


@_api(0)
def mcSetDevice(device: int) -> None:
    """Seed 002 §2.2.3.25: the thread's device; no context is created yet."""
    get_engine().set_device(device)


@_api(1)
def mcGetDevice() -> int:
    """Seed 002 §2.2.3.21."""
    return get_engine().current_device().ordinal


@_api(1)
def mcGetDeviceProperties(device: int) -> mcDeviceProp:
    """Seed 002 §2.2.3.24."""
    return mcDeviceProp.from_model(get_engine().device(device).model)


@_api(1)
def mcDeviceGetAttribute(attr: Any, device: int) -> int:
    """Seed 002 §2.2.3.3 (cuda-python argument order: attr, device)."""
    dev = get_engine().device(device)
    try:
        key = mcDeviceAttribute_t(attr)
    except ValueError:
        raise DriverError(mcError_t.mcErrorInvalidValue, f"{attr!r} is not an mcDeviceAttribute_t") from None
    return attribute_values(dev.model)[key]


@_api(1)
def mcDeviceGetPCIBusId(device: int) -> str:
    """Seed 002 §2.2.3.10."""
    return get_engine().device(device).model.pci_bus_id


@_api(1)
def mcDeviceGetUuid(device: int) -> bytes:
    """Seed 002 §2.2.3.13."""
    return get_engine().device(device).model.uuid


@_api(1)
def mcDeviceTotalMem(device: int) -> int:
    """Seed 002 §2.2.3.20."""
    return get_engine().device(device).model.global_memory


@_api(0)
def mcDeviceSynchronize() -> None:
    """Seed 002 §2.2.3.19: wait for all work of the current device; reports
    any earlier asynchronous error."""
    _ctx().synchronize()


@_api(0)
def mcDeviceReset() -> None:
    """Seed 002 §2.2.3.14: destroy the primary context of the current device
    (pending work is discarded); the next call makes a fresh one."""
    get_engine().reset_device()


__all__ = ['mcInit', 'mcDriverGetVersion', 'mcRuntimeGetVersion', 'mcGetDeviceCount', 'mcSetDevice', 'mcGetDevice', 'mcGetDeviceProperties', 'mcDeviceGetAttribute', 'mcDeviceGetPCIBusId', 'mcDeviceGetUuid', 'mcDeviceTotalMem', 'mcDeviceSynchronize', 'mcDeviceReset']
