"""Types of the mc* API: enums with CUDA's numbering and mcDeviceProp.

Everything a property query can answer is derived from one DeviceModel in
`attribute_values()`, so mcGetDeviceProperties and mcDeviceGetAttribute can
never disagree. Texture and surface limits are the compute-capability 9.0
hardware limits; the simulator does not implement textures, the numbers are
reported because programs query them.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from gpudbg.driver import device_attributes
from gpudbg.sim.device_model import DeviceModel


class mcMemcpyKind(enum.IntEnum):
    mcMemcpyHostToHost = 0
    mcMemcpyHostToDevice = 1
    mcMemcpyDeviceToHost = 2
    mcMemcpyDeviceToDevice = 3
    mcMemcpyDefault = 4


class mcStreamFlags(enum.IntFlag):
    mcStreamDefault = 0x0
    mcStreamNonBlocking = 0x1


class mcHostAllocFlags(enum.IntFlag):
    mcHostAllocDefault = 0x0
    mcHostAllocPortable = 0x1
    mcHostAllocMapped = 0x2
    mcHostAllocWriteCombined = 0x4


class mcMallocHostFlags(enum.IntFlag):
    mcMallocHostDefault = 0x0
    mcMallocHostPortable = 0x1
    mcMallocHostMapped = 0x2


class mcEventFlags(enum.IntFlag):
    mcEventDefault = 0x0
    mcEventBlockingSync = 0x1
    mcEventDisableTiming = 0x2
    mcEventInterprocess = 0x4


class mcMemAttachFlags(enum.IntFlag):
    mcMemAttachGlobal = 0x1
    mcMemAttachHost = 0x2
    mcMemAttachSingle = 0x4


class mcComputeMode(enum.IntEnum):
    mcComputeModeDefault = 0
    mcComputeModeExclusive = 1
    mcComputeModeProhibited = 2
    mcComputeModeExclusiveProcess = 3


class mcLaunchParam(enum.IntEnum):
    """Keys of the `extra` array of mcModuleLaunchKernel (CU_LAUNCH_PARAM_*)."""

    MC_LAUNCH_PARAM_END = 0x00
    MC_LAUNCH_PARAM_BUFFER_POINTER = 0x01
    MC_LAUNCH_PARAM_BUFFER_SIZE = 0x02


class mcFunction_attribute(enum.IntEnum):
    """mcFuncGetAttribute's attributes, numbered as CUfunction_attribute
    (the seed's MC_FUNC_CACHE_MODE_CA spelling is kept as an alias)."""

    MC_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
    MC_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
    MC_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2
    MC_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
    MC_FUNC_ATTRIBUTE_NUM_REGS = 4
    MC_FUNC_ATTRIBUTE_PTX_VERSION = 5
    MC_FUNC_ATTRIBUTE_BINARY_VERSION = 6
    MC_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7
    MC_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
    MC_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9
    MC_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET = 10
    MC_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11
    MC_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT = 12
    MC_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH = 13
    MC_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
    MC_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15
    MC_FUNC_CACHE_MODE_CA = 7


# Stream handles that name the default streams explicitly (cudaStreamLegacy,
# cudaStreamPerThread).
mcStreamLegacy = 0x1
mcStreamPerThread = 0x2


class mcDeviceAttribute_t(enum.IntEnum):
    mcDevAttrMaxThreadsPerBlock = 1
    mcDevAttrMaxBlockDimX = 2
    mcDevAttrMaxBlockDimY = 3
    mcDevAttrMaxBlockDimZ = 4
    mcDevAttrMaxGridDimX = 5
    mcDevAttrMaxGridDimY = 6
    mcDevAttrMaxGridDimZ = 7
    mcDevAttrMaxSharedMemoryPerBlock = 8
    mcDevAttrTotalConstantMemory = 9
    mcDevAttrWarpSize = 10
    mcDevAttrMaxPitch = 11
    mcDevAttrMaxRegistersPerBlock = 12
    mcDevAttrClockRate = 13
    mcDevAttrTextureAlignment = 14
    mcDevAttrGpuOverlap = 15
    mcDevAttrMultiProcessorCount = 16
    mcDevAttrKernelExecTimeout = 17
    mcDevAttrIntegrated = 18
    mcDevAttrCanMapHostMemory = 19
    mcDevAttrComputeMode = 20
    mcDevAttrMaxTexture1DWidth = 21
    mcDevAttrMaxTexture2DWidth = 22
    mcDevAttrMaxTexture2DHeight = 23
    mcDevAttrMaxTexture3DWidth = 24
    mcDevAttrMaxTexture3DHeight = 25
    mcDevAttrMaxTexture3DDepth = 26
    mcDevAttrMaxTexture2DLayeredWidth = 27
    mcDevAttrMaxTexture2DLayeredHeight = 28
    mcDevAttrMaxTexture2DLayeredLayers = 29
    mcDevAttrSurfaceAlignment = 30
    mcDevAttrConcurrentKernels = 31
    mcDevAttrEccEnabled = 32
    mcDevAttrPciBusId = 33
    mcDevAttrPciDeviceId = 34
    mcDevAttrMemoryClockRate = 36
    mcDevAttrGlobalMemoryBusWidth = 37
    mcDevAttrL2CacheSize = 38
    mcDevAttrMaxThreadsPerMultiProcessor = 39
    mcDevAttrAsyncEngineCount = 40
    mcDevAttrUnifiedAddressing = 41
    mcDevAttrMaxTexture1DLayeredWidth = 42
    mcDevAttrMaxTexture1DLayeredLayers = 43
    mcDevAttrMaxTexture3DWidthAlt = 47
    mcDevAttrMaxTexture3DHeightAlt = 48
    mcDevAttrMaxTexture3DDepthAlt = 49
    mcDevAttrPciDomainId = 50
    mcDevAttrTexturePitchAlignment = 51
    mcDevAttrMaxTextureCubemapWidth = 52
    mcDevAttrMaxTextureCubemapLayeredWidth = 53
    mcDevAttrMaxTextureCubemapLayeredLayers = 54
    mcDevAttrMaxSurface1DWidth = 55
    mcDevAttrMaxSurface2DWidth = 56
    mcDevAttrMaxSurface2DHeight = 57
    mcDevAttrMaxSurface3DWidth = 58
    mcDevAttrMaxSurface3DHeight = 59
    mcDevAttrMaxSurface3DDepth = 60
    mcDevAttrMaxSurface1DLayeredWidth = 61
    mcDevAttrMaxSurface1DLayeredLayers = 62
    mcDevAttrMaxSurface2DLayeredWidth = 63
    mcDevAttrMaxSurface2DLayeredHeight = 64
    mcDevAttrMaxSurface2DLayeredLayers = 65
    mcDevAttrMaxSurfaceCubemapWidth = 66
    mcDevAttrMaxSurfaceCubemapLayeredWidth = 67
    mcDevAttrMaxSurfaceCubemapLayeredLayers = 68
    mcDevAttrMaxTexture1DLinearWidth = 69
    mcDevAttrMaxTexture2DLinearWidth = 70
    mcDevAttrMaxTexture2DLinearHeight = 71
    mcDevAttrMaxTexture2DLinearPitch = 72
    mcDevAttrMaxTexture2DMipmappedWidth = 73
    mcDevAttrMaxTexture2DMipmappedHeight = 74
    mcDevAttrComputeCapabilityMajor = 75
    mcDevAttrComputeCapabilityMinor = 76
    mcDevAttrMaxTexture1DMipmappedWidth = 77
    mcDevAttrStreamPrioritiesSupported = 78
    mcDevAttrGlobalL1CacheSupported = 79
    mcDevAttrLocalL1CacheSupported = 80
    mcDevAttrMaxSharedMemoryPerMultiprocessor = 81
    mcDevAttrMaxRegistersPerMultiprocessor = 82
    mcDevAttrManagedMemory = 83
    mcDevAttrIsMultiGpuBoard = 84
    mcDevAttrMultiGpuBoardGroupID = 85
    mcDevAttrHostNativeAtomicSupported = 86
    mcDevAttrSingleToDoublePrecisionPerfRatio = 87
    mcDevAttrPageableMemoryAccess = 88
    mcDevAttrConcurrentManagedAccess = 89
    mcDevAttrComputePreemptionSupported = 90
    mcDevAttrCanUseHostPointerForRegisteredMem = 91
    mcDevAttrCooperativeLaunch = 95
    mcDevAttrCooperativeMultiDeviceLaunch = 96
    mcDevAttrMaxSharedMemoryPerBlockOptin = 97
    mcDevAttrCanFlushRemoteWrites = 98
    mcDevAttrHostRegisterSupported = 99
    mcDevAttrPageableMemoryAccessUsesHostPageTables = 100
    mcDevAttrDirectManagedMemAccessFromHost = 101
    mcDevAttrMaxBlocksPerMultiprocessor = 106
    mcDevAttrMaxPersistingL2CacheSize = 108
    mcDevAttrMaxAccessPolicyWindowSize = 109
    mcDevAttrReservedSharedMemoryPerBlock = 111
    mcDevAttrSparseMcArraySupported = 112
    mcDevAttrHostRegisterReadOnlySupported = 113
    mcDevAttrMemoryPoolsSupported = 115
    mcDevAttrGPUDirectRDMASupported = 116
    mcDevAttrGPUDirectRDMAFlushWritesOptions = 117
    mcDevAttrGPUDirectRDMAWritesOrdering = 118
    mcDevAttrMemoryPoolSupportedHandleTypes = 119
    mcDevAttrDeferredMappingMcArraySupported = 121


A = mcDeviceAttribute_t


def attribute_values(m: DeviceModel) -> dict[mcDeviceAttribute_t, int]:
    """Every attribute's value for a device model: the engine's one table
    of device facts (gpudbg.driver.device_attributes), by number, which the
    runtime's attributes share with CUdevice_attribute."""
    facts = device_attributes.attribute_values(m)
    return {a: facts[int(a)] for a in mcDeviceAttribute_t}


@dataclass(frozen=True)
class mcDeviceProp:
    """mcDeviceProp_t with the CUDA field names (cudaDeviceProp)."""

    name: str
    uuid: bytes
    totalGlobalMem: int
    sharedMemPerBlock: int
    regsPerBlock: int
    warpSize: int
    memPitch: int
    maxThreadsPerBlock: int
    maxThreadsDim: tuple[int, int, int]
    maxGridSize: tuple[int, int, int]
    clockRate: int
    totalConstMem: int
    major: int
    minor: int
    textureAlignment: int
    texturePitchAlignment: int
    deviceOverlap: int
    multiProcessorCount: int
    kernelExecTimeoutEnabled: int
    integrated: int
    canMapHostMemory: int
    computeMode: int
    concurrentKernels: int
    ECCEnabled: int
    pciBusID: int
    pciDeviceID: int
    pciDomainID: int
    asyncEngineCount: int
    unifiedAddressing: int
    memoryClockRate: int
    memoryBusWidth: int
    l2CacheSize: int
    persistingL2CacheMaxSize: int
    maxThreadsPerMultiProcessor: int
    streamPrioritiesSupported: int
    globalL1CacheSupported: int
    localL1CacheSupported: int
    sharedMemPerMultiprocessor: int
    regsPerMultiprocessor: int
    managedMemory: int
    isMultiGpuBoard: int
    multiGpuBoardGroupID: int
    singleToDoublePrecisionPerfRatio: int
    pageableMemoryAccess: int
    concurrentManagedAccess: int
    computePreemptionSupported: int
    canUseHostPointerForRegisteredMem: int
    cooperativeLaunch: int
    sharedMemPerBlockOptin: int
    maxBlocksPerMultiProcessor: int
    reservedSharedMemPerBlock: int
    hostNativeAtomicSupported: int

    @classmethod
    def from_model(cls, m: DeviceModel) -> "mcDeviceProp":
        v = attribute_values(m)
        return cls(
            name=m.name, uuid=m.uuid, totalGlobalMem=m.global_memory,
            sharedMemPerBlock=v[A.mcDevAttrMaxSharedMemoryPerBlock],
            regsPerBlock=v[A.mcDevAttrMaxRegistersPerBlock], warpSize=v[A.mcDevAttrWarpSize],
            memPitch=v[A.mcDevAttrMaxPitch], maxThreadsPerBlock=v[A.mcDevAttrMaxThreadsPerBlock],
            maxThreadsDim=m.max_block_dims, maxGridSize=m.max_grid_dims,
            clockRate=v[A.mcDevAttrClockRate], totalConstMem=v[A.mcDevAttrTotalConstantMemory],
            major=m.compute_capability[0], minor=m.compute_capability[1],
            textureAlignment=v[A.mcDevAttrTextureAlignment],
            texturePitchAlignment=v[A.mcDevAttrTexturePitchAlignment],
            deviceOverlap=v[A.mcDevAttrGpuOverlap], multiProcessorCount=m.sm_count,
            kernelExecTimeoutEnabled=v[A.mcDevAttrKernelExecTimeout],
            integrated=v[A.mcDevAttrIntegrated], canMapHostMemory=v[A.mcDevAttrCanMapHostMemory],
            computeMode=v[A.mcDevAttrComputeMode], concurrentKernels=v[A.mcDevAttrConcurrentKernels],
            ECCEnabled=v[A.mcDevAttrEccEnabled], pciBusID=m.pci_bus, pciDeviceID=m.pci_device,
            pciDomainID=m.pci_domain, asyncEngineCount=m.async_engine_count,
            unifiedAddressing=v[A.mcDevAttrUnifiedAddressing],
            memoryClockRate=m.memory_clock_rate_khz, memoryBusWidth=m.memory_bus_width,
            l2CacheSize=m.l2_cache_size, persistingL2CacheMaxSize=m.persisting_l2_max,
            maxThreadsPerMultiProcessor=m.max_threads_per_sm,
            streamPrioritiesSupported=v[A.mcDevAttrStreamPrioritiesSupported],
            globalL1CacheSupported=v[A.mcDevAttrGlobalL1CacheSupported],
            localL1CacheSupported=v[A.mcDevAttrLocalL1CacheSupported],
            sharedMemPerMultiprocessor=m.shared_per_sm, regsPerMultiprocessor=m.registers_per_sm,
            managedMemory=v[A.mcDevAttrManagedMemory], isMultiGpuBoard=v[A.mcDevAttrIsMultiGpuBoard],
            multiGpuBoardGroupID=v[A.mcDevAttrMultiGpuBoardGroupID],
            singleToDoublePrecisionPerfRatio=v[A.mcDevAttrSingleToDoublePrecisionPerfRatio],
            pageableMemoryAccess=v[A.mcDevAttrPageableMemoryAccess],
            concurrentManagedAccess=v[A.mcDevAttrConcurrentManagedAccess],
            computePreemptionSupported=v[A.mcDevAttrComputePreemptionSupported],
            canUseHostPointerForRegisteredMem=v[A.mcDevAttrCanUseHostPointerForRegisteredMem],
            cooperativeLaunch=v[A.mcDevAttrCooperativeLaunch],
            sharedMemPerBlockOptin=m.shared_per_block_optin,
            maxBlocksPerMultiProcessor=m.max_blocks_per_sm,
            reservedSharedMemPerBlock=m.reserved_shared_per_block,
            hostNativeAtomicSupported=v[A.mcDevAttrHostNativeAtomicSupported],
        )
