"""Driver initialization and devices: cuInit, versions, device handles,
names, UUIDs, attributes, PCI ids, peers and memory pools of a device.

A CUdevice is the device's ordinal, as in NVIDIA's driver. Every answer
comes from the engine's one table of device facts,
gpudbg.driver.device_attributes (every CUdevice_attribute of CUDA 13's
cuda.h): cuDeviceGetAttribute, cuDeviceGetProperties and
cuDeviceComputeCapability all read it. Nothing here needs a context, and nothing works before cuInit except
cuDriverGetVersion.
"""
from __future__ import annotations

import ctypes
import re

from gpudbg import cabi
from gpudbg.cuda_driver._base import HandleKind, R, entry, fail, handle_of, object_of, require_init
from gpudbg.driver import mempool as _mempool
from gpudbg.driver.engine import CUDA_DRIVER_VERSION, get_engine
from gpudbg.driver.device_attributes import A, attribute_values

__all__ = ["cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName",
           "cuDeviceGetUuid", "cuDeviceGetUuid_v2", "cuDeviceGetLuid", "cuDeviceTotalMem_v2",
           "cuDeviceGetAttribute", "cuDeviceComputeCapability", "cuDeviceGetProperties",
           "cuDeviceGetPCIBusId", "cuDeviceGetByPCIBusId", "cuDeviceCanAccessPeer",
           "cuDeviceGetP2PAttribute", "cuDeviceGetDefaultMemPool", "cuDeviceGetMemPool",
           "cuDeviceSetMemPool", "cuDeviceGetTexture1DLinearMaxWidth", "cuDeviceGetExecAffinitySupport",
           "cuFlushGPUDirectRDMAWrites"]

INVALID = R.CUDA_ERROR_INVALID_VALUE


class CUdevprop(ctypes.Structure):
    """cuda.h's CUdevprop_v1."""

    _fields_ = [("maxThreadsPerBlock", ctypes.c_int), ("maxThreadsDim", ctypes.c_int * 3),
                ("maxGridSize", ctypes.c_int * 3), ("sharedMemPerBlock", ctypes.c_int),
                ("totalConstantMemory", ctypes.c_int), ("SIMDWidth", ctypes.c_int),
                ("memPitch", ctypes.c_int), ("regsPerBlock", ctypes.c_int), ("clockRate", ctypes.c_int),
                ("textureAlign", ctypes.c_int)]


def _need(ptr: int, name: str) -> int:
    if not ptr:
        raise fail(INVALID, f"{name} is NULL")
    return int(ptr)


def _length(n: int, name: str) -> int:
    if int(n) <= 0:
        raise fail(INVALID, f"{name} must be positive, got {n}")
    return int(n)


def device_of(dev: int):
    """The engine Device a CUdevice names (CUDA_ERROR_INVALID_DEVICE)."""
    require_init()
    return get_engine().device(int(dev))


# ------------------------------------------------------------------ init and versions
@entry
def cuInit(Flags: int) -> None:
    """Enumerate the simulated devices (no context is made); Flags must be
    0; no device at all is CUDA_ERROR_NO_DEVICE, as with NVIDIA's driver."""
    engine = get_engine()
    engine.init(int(Flags))
    if engine.device_count() == 0:
        raise fail(R.CUDA_ERROR_NO_DEVICE, "no simulated devices (GPUDBG_DEVICES=0)")


@entry
def cuDriverGetVersion(driverVersion: int) -> None:
    """1000*major + 10*minor of the CUDA driver API this library provides
    (works before cuInit)."""
    cabi.store(_need(driverVersion, "driverVersion"), "i32", CUDA_DRIVER_VERSION)


# ------------------------------------------------------------------ devices
@entry
def cuDeviceGet(device: int, ordinal: int) -> None:
    _need(device, "device")
    cabi.store(device, "i32", device_of(ordinal).ordinal)


@entry
def cuDeviceGetCount(count: int) -> None:
    _need(count, "count")
    cabi.store(count, "i32", require_init().device_count())


@entry
def cuDeviceGetName(name: int, len: int, dev: int) -> None:  # noqa: A002 (cuda.h's name)
    _need(name, "name")
    cabi.store_c_string(name, _length(len, "len"), device_of(dev).model.name, "name")


def _uuid(uuid: int, dev: int) -> None:
    _need(uuid, "uuid")
    cabi.write(uuid, device_of(dev).model.uuid, "uuid")


@entry
def cuDeviceGetUuid(uuid: int, dev: int) -> None:
    """The 16-byte CUuuid (no MIG instances exist, so both versions agree)."""
    _uuid(uuid, dev)


@entry
def cuDeviceGetUuid_v2(uuid: int, dev: int) -> None:
    _uuid(uuid, dev)


@entry
def cuDeviceGetLuid(luid: int, deviceNodeMask: int, dev: int) -> None:
    """A LUID is a Windows (WDDM) notion: on Linux NVIDIA's driver answers
    CUDA_ERROR_NOT_SUPPORTED, and so does this one."""
    device_of(dev)
    _need(luid, "luid")
    _need(deviceNodeMask, "deviceNodeMask")
    raise fail(R.CUDA_ERROR_NOT_SUPPORTED, "device LUIDs exist on Windows only")


@entry
def cuDeviceTotalMem_v2(bytes: int, dev: int) -> None:  # noqa: A002
    _need(bytes, "bytes")
    cabi.store(bytes, "u64", device_of(dev).model.global_memory)


@entry
def cuDeviceGetAttribute(pi: int, attrib: int, dev: int) -> None:
    _need(pi, "pi")
    values = attribute_values(device_of(dev).model)
    value = values.get(int(attrib))
    if value is None:
        raise fail(INVALID, f"{attrib!r} is not a CUdevice_attribute")
    cabi.store(pi, "i32", value)


@entry
def cuDeviceComputeCapability(major: int, minor: int, dev: int) -> None:
    _need(major, "major")
    _need(minor, "minor")
    cc = device_of(dev).model.compute_capability
    cabi.store(major, "i32", cc[0])
    cabi.store(minor, "i32", cc[1])


@entry
def cuDeviceGetProperties(prop: int, dev: int) -> None:
    """The deprecated CUdevprop, from the attribute table."""
    _need(prop, "prop")
    m = device_of(dev).model
    v = attribute_values(m)
    p = CUdevprop(maxThreadsPerBlock=m.max_threads_per_block, maxThreadsDim=(ctypes.c_int * 3)(*m.max_block_dims),
                  maxGridSize=(ctypes.c_int * 3)(*m.max_grid_dims), sharedMemPerBlock=m.shared_per_block,
                  totalConstantMemory=m.const_memory, SIMDWidth=m.lanes,
                  memPitch=min(m.max_pitch, 2**31 - 1), regsPerBlock=m.registers_per_block,
                  clockRate=m.clock_rate_khz, textureAlign=v[int(A.CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)])
    cabi.store_struct(prop, p, "prop")


@entry
def cuDeviceGetPCIBusId(pciBusId: int, len: int, dev: int) -> None:  # noqa: A002
    """'domain:bus:device.function' in hex, truncated to len-1 characters."""
    _need(pciBusId, "pciBusId")
    cabi.store_c_string(pciBusId, _length(len, "len"), device_of(dev).model.pci_bus_id, "pciBusId")


_PCI = re.compile(r"^(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})(?:\.([0-9a-fA-F]))?$")


@entry
def cuDeviceGetByPCIBusId(dev: int, pciBusId: int) -> None:
    """The device at '[domain]:[bus]:[device].[function]' (or 'bus:device.function')."""
    _need(dev, "dev")
    text = cabi.c_string(pciBusId, "pciBusId").strip()
    match = _PCI.match(text)
    if match is None:
        raise fail(INVALID, f"{text!r} is not a PCI bus id of the form domain:bus:device.function")
    domain, bus, device = (int(g, 16) if g else 0 for g in match.groups()[:3])
    engine = require_init()
    for ordinal in range(engine.device_count()):
        m = engine.device(ordinal).model
        if (m.pci_domain, m.pci_bus, m.pci_device) == (domain, bus, device):
            cabi.store(dev, "i32", ordinal)
            return
    raise fail(R.CUDA_ERROR_INVALID_DEVICE, f"no simulated device at PCI location {text!r}")


# ------------------------------------------------------------------ peers
@entry
def cuDeviceCanAccessPeer(canAccessPeer: int, dev: int, peerDev: int) -> None:
    """0: a kernel cannot dereference another simulated device's memory
    (copies between devices work: cuMemcpyPeer)."""
    _need(canAccessPeer, "canAccessPeer")
    device_of(dev)
    device_of(peerDev)
    cabi.store(canAccessPeer, "i32", 0)


_P2P_ATTRIBUTES = {1: "PERFORMANCE_RANK", 2: "ACCESS_SUPPORTED", 3: "NATIVE_ATOMIC_SUPPORTED",
                   4: "CUDA_ARRAY_ACCESS_SUPPORTED", 5: "ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED"}


@entry
def cuDeviceGetP2PAttribute(value: int, attrib: int, srcDevice: int, dstDevice: int) -> None:
    """Every CUdevice_P2PAttribute is 0: no peer access, no atomics, one
    link of rank 0. The same device twice is CUDA_ERROR_INVALID_DEVICE."""
    _need(value, "value")
    src, dst = device_of(srcDevice), device_of(dstDevice)
    if src is dst:
        raise fail(R.CUDA_ERROR_INVALID_DEVICE, f"srcDevice and dstDevice are both device {src.ordinal}")
    if int(attrib) not in _P2P_ATTRIBUTES:
        raise fail(INVALID, f"{attrib!r} is not a CUdevice_P2PAttribute")
    cabi.store(value, "i32", 0)


# ------------------------------------------------------------------ memory pools
@entry
def cuDeviceGetDefaultMemPool(pool_out: int, dev: int) -> None:
    """The pool stream-ordered allocations of the device use by default."""
    _need(pool_out, "pool_out")
    device = device_of(dev)
    pool = _mempool.registry(get_engine()).default_pool(device)
    cabi.store(pool_out, "u64", handle_of(HandleKind.MEMPOOL, pool))


@entry
def cuDeviceGetMemPool(pool: int, dev: int) -> None:
    """The device's current pool (cuDeviceSetMemPool's, else the default)."""
    _need(pool, "pool")
    device = device_of(dev)
    current = _mempool.registry(get_engine()).current_pool(device)
    cabi.store(pool, "u64", handle_of(HandleKind.MEMPOOL, current))


@entry
def cuDeviceSetMemPool(dev: int, pool: int) -> None:
    device = device_of(dev)
    _mempool.registry(get_engine()).set_current(device, object_of(HandleKind.MEMPOOL, pool))


# ------------------------------------------------------------------ the rest
_CU_AD_FORMATS = {0x01: 1, 0x02: 2, 0x03: 4, 0x08: 1, 0x09: 2, 0x0A: 4, 0x10: 2, 0x20: 4}   # CUarray_format -> bytes


@entry
def cuDeviceGetTexture1DLinearMaxWidth(maxWidthInElements: int, format: int, numChannels: int,  # noqa: A002
                                       dev: int) -> None:
    """The 1D linear texture limit (bytes) in elements of format x channels."""
    _need(maxWidthInElements, "maxWidthInElements")
    limit = attribute_values(device_of(dev).model)[int(A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH)]
    size = _CU_AD_FORMATS.get(int(format))
    if size is None:
        raise fail(INVALID, f"{format!r} is not a CUarray_format this device supports")
    if int(numChannels) not in (1, 2, 4):
        raise fail(INVALID, f"numChannels must be 1, 2 or 4, got {numChannels!r}")
    cabi.store(maxWidthInElements, "u64", limit // (size * int(numChannels)))


@entry
def cuDeviceGetExecAffinitySupport(pi: int, type: int, dev: int) -> None:  # noqa: A002
    """0: contexts cannot be limited to a subset of SMs (no MPS)."""
    _need(pi, "pi")
    device_of(dev)
    if int(type) != 0:      # CU_EXEC_AFFINITY_TYPE_SM_COUNT is the only type
        raise fail(INVALID, f"{type!r} is not a CUexecAffinityType")
    cabi.store(pi, "i32", 0)


@entry
def cuFlushGPUDirectRDMAWrites(target: int, scope: int) -> None:
    """Nothing to flush: the simulator has no GPUDirect RDMA writers
    (target must be CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX, scope
    OWNER (100) or ALL_DEVICES (200))."""
    require_init()
    if int(target) != 0:
        raise fail(INVALID, f"{target!r} is not a CUflushGPUDirectRDMAWritesTarget")
    if int(scope) not in (100, 200):
        raise fail(INVALID, f"{scope!r} is not a CUflushGPUDirectRDMAWritesScope")
