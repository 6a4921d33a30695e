"""Devices and versions: cudaGetDeviceCount, cudaSetDevice, cudaGetDevice,
cudaGetDeviceProperties (cudaDeviceProp as CUDA 13's driver_types.h lays
it out), cudaDeviceGetAttribute (every cudaDeviceAttr), limits, flags,
cache config, priorities, synchronize, reset, versions, PCI ids, peers.

Each export calls its mc* twin. Two things mc* does not cover come from
the engine's device model through the driver API's attribute table
(gpudbg.cuda_driver.device.attribute_values, keyed by CUdevice_attribute
numbers, which are cudaDeviceAttr's numbers): the attributes mc* has no
name for, and the cudaDeviceProp fields mcDeviceProp lacks (texture and
surface limits, NUMA, RDMA ...). The versions reported are CUDA 13.0's,
the toolkit of the programs that load libcudart.so.13.
"""
from __future__ import annotations

import ctypes

from gpudbg import cabi
from gpudbg.driver.device_attributes import PCI_DEVICE_H100_SXM5, PCI_VENDOR_NVIDIA, attribute_values
from gpudbg.cuda_runtime._base import E, call, export, fail, need
from gpudbg.cuda_runtime.error_table import CUDART_VERSION
from gpudbg.driver.engine import CUDA_DRIVER_VERSION, get_engine
from gpudbg.runtime import mc
from gpudbg.runtime.types import mcDeviceAttribute_t

__all__ = ["cudaGetDeviceCount", "cudaSetDevice", "cudaGetDevice", "cudaGetDeviceProperties",
           "cudaGetDeviceProperties_v2", "cudaDeviceGetAttribute", "cudaDeviceSynchronize", "cudaDeviceReset",
           "cudaDeviceSetLimit", "cudaDeviceGetLimit", "cudaDriverGetVersion", "cudaRuntimeGetVersion",
           "cudaSetDeviceFlags", "cudaGetDeviceFlags", "cudaDeviceGetStreamPriorityRange", "cudaChooseDevice",
           "cudaDeviceSetCacheConfig", "cudaDeviceGetCacheConfig", "cudaDeviceGetPCIBusId",
           "cudaDeviceCanAccessPeer", "cudaInitDevice", "cudaSetValidDevices"]

_I, _Z, _U = ctypes.c_int, ctypes.c_size_t, ctypes.c_uint


class cudaDeviceProp(ctypes.Structure):
    """struct cudaDeviceProp of CUDA 13's driver_types.h, field for field."""

    _fields_ = [
        ("name", ctypes.c_char * 256), ("uuid", ctypes.c_char * 16), ("luid", ctypes.c_char * 8),
        ("luidDeviceNodeMask", _U), ("totalGlobalMem", _Z), ("sharedMemPerBlock", _Z), ("regsPerBlock", _I),
        ("warpSize", _I), ("memPitch", _Z), ("maxThreadsPerBlock", _I), ("maxThreadsDim", _I * 3),
        ("maxGridSize", _I * 3), ("totalConstMem", _Z), ("major", _I), ("minor", _I), ("textureAlignment", _Z),
        ("texturePitchAlignment", _Z), ("multiProcessorCount", _I), ("integrated", _I), ("canMapHostMemory", _I),
        ("maxTexture1D", _I), ("maxTexture1DMipmap", _I), ("maxTexture2D", _I * 2), ("maxTexture2DMipmap", _I * 2),
        ("maxTexture2DLinear", _I * 3), ("maxTexture2DGather", _I * 2), ("maxTexture3D", _I * 3),
        ("maxTexture3DAlt", _I * 3), ("maxTextureCubemap", _I), ("maxTexture1DLayered", _I * 2),
        ("maxTexture2DLayered", _I * 3), ("maxTextureCubemapLayered", _I * 2), ("maxSurface1D", _I),
        ("maxSurface2D", _I * 2), ("maxSurface3D", _I * 3), ("maxSurface1DLayered", _I * 2),
        ("maxSurface2DLayered", _I * 3), ("maxSurfaceCubemap", _I), ("maxSurfaceCubemapLayered", _I * 2),
        ("surfaceAlignment", _Z), ("concurrentKernels", _I), ("ECCEnabled", _I), ("pciBusID", _I),
        ("pciDeviceID", _I), ("pciDomainID", _I), ("tccDriver", _I), ("asyncEngineCount", _I),
        ("unifiedAddressing", _I), ("memoryBusWidth", _I), ("l2CacheSize", _I), ("persistingL2CacheMaxSize", _I),
        ("maxThreadsPerMultiProcessor", _I), ("streamPrioritiesSupported", _I), ("globalL1CacheSupported", _I),
        ("localL1CacheSupported", _I), ("sharedMemPerMultiprocessor", _Z), ("regsPerMultiprocessor", _I),
        ("managedMemory", _I), ("isMultiGpuBoard", _I), ("multiGpuBoardGroupID", _I),
        ("hostNativeAtomicSupported", _I), ("pageableMemoryAccess", _I), ("concurrentManagedAccess", _I),
        ("computePreemptionSupported", _I), ("canUseHostPointerForRegisteredMem", _I), ("cooperativeLaunch", _I),
        ("sharedMemPerBlockOptin", _Z), ("pageableMemoryAccessUsesHostPageTables", _I),
        ("directManagedMemAccessFromHost", _I), ("maxBlocksPerMultiProcessor", _I),
        ("accessPolicyMaxWindowSize", _I), ("reservedSharedMemPerBlock", _Z), ("hostRegisterSupported", _I),
        ("sparseCudaArraySupported", _I), ("hostRegisterReadOnlySupported", _I),
        ("timelineSemaphoreInteropSupported", _I), ("memoryPoolsSupported", _I), ("gpuDirectRDMASupported", _I),
        ("gpuDirectRDMAFlushWritesOptions", _U), ("gpuDirectRDMAWritesOrdering", _I),
        ("memoryPoolSupportedHandleTypes", _U), ("deferredMappingCudaArraySupported", _I),
        ("ipcEventSupported", _I), ("clusterLaunch", _I), ("unifiedFunctionPointers", _I),
        ("deviceNumaConfig", _I), ("deviceNumaId", _I), ("mpsEnabled", _I), ("hostNumaId", _I),
        ("gpuPciDeviceID", _U), ("gpuPciSubsystemID", _U), ("hostNumaMultinodeIpcSupported", _I),
        ("reserved", _I * 56),
    ]


# cudaDeviceProp fields that mcDeviceProp lacks: their cudaDeviceAttr numbers
FROM_ATTRIBUTES: dict[str, int | tuple[int, ...]] = {
    "maxTexture1D": 21, "maxTexture1DMipmap": 77, "maxTexture2D": (22, 23), "maxTexture2DMipmap": (73, 74),
    "maxTexture2DLinear": (70, 71, 72), "maxTexture2DGather": (45, 46), "maxTexture3D": (24, 25, 26),
    "maxTexture3DAlt": (47, 48, 49), "maxTextureCubemap": 52, "maxTexture1DLayered": (42, 43),
    "maxTexture2DLayered": (27, 28, 29), "maxTextureCubemapLayered": (53, 54), "maxSurface1D": 55,
    "maxSurface2D": (56, 57), "maxSurface3D": (58, 59, 60), "maxSurface1DLayered": (61, 62),
    "maxSurface2DLayered": (63, 64, 65), "maxSurfaceCubemap": 66, "maxSurfaceCubemapLayered": (67, 68),
    "surfaceAlignment": 30, "tccDriver": 35, "pageableMemoryAccessUsesHostPageTables": 100,
    "directManagedMemAccessFromHost": 101, "accessPolicyMaxWindowSize": 109, "hostRegisterSupported": 99,
    "sparseCudaArraySupported": 112, "hostRegisterReadOnlySupported": 113,
    "timelineSemaphoreInteropSupported": 114, "memoryPoolsSupported": 115, "gpuDirectRDMASupported": 116,
    "gpuDirectRDMAFlushWritesOptions": 117, "gpuDirectRDMAWritesOrdering": 118,
    "memoryPoolSupportedHandleTypes": 119, "deferredMappingCudaArraySupported": 121, "ipcEventSupported": 125,
    "clusterLaunch": 120, "unifiedFunctionPointers": 129, "deviceNumaConfig": 130, "deviceNumaId": 131,
    "mpsEnabled": 133, "hostNumaId": 134, "hostNumaMultinodeIpcSupported": 143,
}
ATTRIBUTE_MAX = 144      # cudaDevAttrMax of CUDA 13.0's driver_types.h


def properties(device: int) -> cudaDeviceProp:
    """The cudaDeviceProp of `device` (mcGetDeviceProperties plus the attribute table)."""
    p = call(mc.mcGetDeviceProperties, int(device))
    values = attribute_values(get_engine().device(int(device)).model)
    out = cudaDeviceProp()
    names = {f for f, _ in cudaDeviceProp._fields_}
    for field in names:
        if field in ("name", "uuid") or not hasattr(p, field):
            continue
        value = getattr(p, field)
        if isinstance(value, (tuple, list)):
            getattr(out, field)[:] = [int(v) for v in value]
        else:
            setattr(out, field, int(value))
    out.name = p.name.encode()[:255]
    out.uuid = bytes(p.uuid)[:16]
    for field, attrs in FROM_ATTRIBUTES.items():
        if isinstance(attrs, tuple):
            getattr(out, field)[:] = [int(values.get(a, 0)) for a in attrs]
        else:
            setattr(out, field, int(values.get(attrs, 0)))
    out.gpuPciDeviceID = (PCI_DEVICE_H100_SXM5 << 16) | PCI_VENDOR_NVIDIA
    return out


@export
def cudaGetDeviceCount(count: int) -> None:
    need(count, "count")
    cabi.store(count, "i32", call(mc.mcGetDeviceCount))


@export
def cudaSetDevice(device: int) -> None:
    call(mc.mcSetDevice, int(device))


@export
def cudaGetDevice(device: int) -> None:
    need(device, "device")
    cabi.store(device, "i32", call(mc.mcGetDevice))


@export
def cudaInitDevice(device: int, deviceFlags: int, flags: int) -> None:
    """Make `device` ready (its primary context); flags must be 0, device
    flags are cudaSetDeviceFlags'."""
    if int(flags) != 0:
        raise fail(E.mcErrorInvalidValue, f"flags must be 0, got {int(flags)}")
    previous = call(mc.mcGetDevice)
    call(mc.mcSetDevice, int(device))
    try:
        if int(deviceFlags):
            call(mc.mcSetDeviceFlags, int(deviceFlags))
        call(mc.mcDeviceSynchronize)
    finally:
        mc.mcSetDevice(previous)


@export
def cudaSetValidDevices(device_arr: int, len: int) -> None:  # noqa: A002 (the header's name)
    n = int(len)
    ids = cabi.load_array(device_arr, "i32", n, "device_arr") if n > 0 else None
    call(mc.mcSetValidDevices, ids, n)


@export
def cudaGetDeviceProperties(prop: int, device: int) -> None:
    """Every field of CUDA 13's cudaDeviceProp."""
    need(prop, "prop")
    cabi.store_struct(prop, properties(device), "prop")


cudaGetDeviceProperties_v2 = export(cudaGetDeviceProperties.__wrapped__)   # CUDA 12's name for it


@export
def cudaDeviceGetAttribute(value: int, attr: int, device: int) -> None:
    """One cudaDeviceAttr of `device`."""
    need(value, "value")
    attr, device = int(attr), int(device)
    if attr in mcDeviceAttribute_t._value2member_map_:
        cabi.store(value, "i32", call(mc.mcDeviceGetAttribute, attr, device))
        return
    call(mc.mcDeviceGet, device)          # the device check, as mc* reports it
    values = attribute_values(get_engine().device(device).model)
    if not 0 < attr < ATTRIBUTE_MAX or attr not in values:
        raise fail(E.mcErrorInvalidValue, f"{attr} is not a cudaDeviceAttr")
    cabi.store(value, "i32", values[attr])


@export
def cudaChooseDevice(device: int, prop: int) -> None:
    """The device best matching the nonzero fields of `prop` among those
    mcChooseDevice compares (CUDA 13's struct has no clock rates)."""
    need(device, "device")
    wanted = cabi.struct_at(need(prop, "prop"), cudaDeviceProp, "prop")
    from gpudbg.runtime.api.device import CHOOSE_FIELDS
    fields = {f: int(getattr(wanted, f)) for f in CHOOSE_FIELDS if hasattr(wanted, f)}  # CUDA 13 dropped some
    cabi.store(device, "i32", call(mc.mcChooseDevice, {f: v for f, v in fields.items() if v}))


@export
def cudaDeviceSynchronize() -> None:
    call(mc.mcDeviceSynchronize)


@export
def cudaDeviceReset() -> None:
    call(mc.mcDeviceReset)


@export
def cudaDeviceSetLimit(limit: int, value: int) -> None:
    call(mc.mcDeviceSetLimit, int(limit), int(value))


@export
def cudaDeviceGetLimit(pValue: int, limit: int) -> None:
    need(pValue, "pValue")
    cabi.store(pValue, "u64", call(mc.mcDeviceGetLimit, int(limit)))


@export
def cudaDriverGetVersion(driverVersion: int) -> None:
    """The drop-in driver's version (13000: CUDA 13 programs check for it)."""
    need(driverVersion, "driverVersion")
    cabi.store(driverVersion, "i32", CUDA_DRIVER_VERSION)


@export
def cudaRuntimeGetVersion(runtimeVersion: int) -> None:
    """CUDART_VERSION of the headers this runtime implements (13000)."""
    need(runtimeVersion, "runtimeVersion")
    cabi.store(runtimeVersion, "i32", CUDART_VERSION)


@export
def cudaSetDeviceFlags(flags: int) -> None:
    call(mc.mcSetDeviceFlags, int(flags))


@export
def cudaGetDeviceFlags(flags: int) -> None:
    need(flags, "flags")
    cabi.store(flags, "u32", call(mc.mcGetDeviceFlags))


@export
def cudaDeviceGetStreamPriorityRange(leastPriority: int, greatestPriority: int) -> None:
    """Either pointer may be NULL."""
    least, greatest = call(mc.mcDeviceGetStreamPriorityRange)
    if leastPriority:
        cabi.store(leastPriority, "i32", least)
    if greatestPriority:
        cabi.store(greatestPriority, "i32", greatest)


@export
def cudaDeviceSetCacheConfig(cacheConfig: int) -> None:
    call(mc.mcDeviceSetCacheConfig, int(cacheConfig))


@export
def cudaDeviceGetCacheConfig(pCacheConfig: int) -> None:
    need(pCacheConfig, "pCacheConfig")
    from gpudbg.driver import limits
    call(mc.mcGetDevice)
    cabi.store(pCacheConfig, "i32", int(limits.settings(get_engine().current_device()).cache_config))


@export
def cudaDeviceGetPCIBusId(pciBusId: int, len: int, device: int) -> None:  # noqa: A002
    need(pciBusId, "pciBusId")
    if int(len) <= 0:
        raise fail(E.mcErrorInvalidValue, f"len {int(len)} must be positive")
    text = call(mc.mcDeviceGetPCIBusId, 64, int(device))
    cabi.store_c_string(pciBusId, int(len), text, "pciBusId")


@export
def cudaDeviceCanAccessPeer(canAccessPeer: int, device: int, peerDevice: int) -> None:
    """0: simulated devices have no peer access (mcDeviceGetP2PAttribute)."""
    need(canAccessPeer, "canAccessPeer")
    call(mc.mcDeviceGet, int(device))
    call(mc.mcDeviceGet, int(peerDevice))
    access = 0 if int(device) == int(peerDevice) else call(mc.mcDeviceGetP2PAttribute, 2, int(device),
                                                             int(peerDevice))
    cabi.store(canAccessPeer, "i32", access)
