"""Driver initialization and devices: cuInit, versions, device handles,
names, UUIDs, attributes, PCI ids, peers and memory pools of a device.

A CUdevice is the device's ordinal, as in NVIDIA's driver. Every answer
comes from the engine's DeviceModel (gpudbg/sim/device_model.py) through
one table, `attribute_values`, which lists every CUdevice_attribute of
CUDA 13's cuda.h (aliases included, by number): cuDeviceGetAttribute,
cuDeviceGetProperties and cuDeviceComputeCapability all read it. Values
that the model does not describe are what the simulator can honestly do
(0 for interop, NUMA, MPS, multicast, RDMA and compression; it has none).
Nothing here needs a context, and nothing works before cuInit except
cuDriverGetVersion.
"""
from __future__ import annotations

import ctypes
import enum
import re

from gpudbg import cabi
from gpudbg.cuda_driver._base import HandleKind, R, entry, fail, handle_of, object_of, require_init
from gpudbg.driver import mempool as _mempool
from gpudbg.driver.engine import CUDA_DRIVER_VERSION, get_engine
from gpudbg.sim.device_model import DeviceModel

__all__ = ["cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName",
           "cuDeviceGetUuid", "cuDeviceGetUuid_v2", "cuDeviceGetLuid", "cuDeviceTotalMem_v2",
           "cuDeviceGetAttribute", "cuDeviceComputeCapability", "cuDeviceGetProperties",
           "cuDeviceGetPCIBusId", "cuDeviceGetByPCIBusId", "cuDeviceCanAccessPeer",
           "cuDeviceGetP2PAttribute", "cuDeviceGetDefaultMemPool", "cuDeviceGetMemPool",
           "cuDeviceSetMemPool", "cuDeviceGetTexture1DLinearMaxWidth", "cuDeviceGetExecAffinitySupport",
           "cuFlushGPUDirectRDMAWrites"]

INVALID = R.CUDA_ERROR_INVALID_VALUE
PCI_VENDOR_NVIDIA = 0x10DE
PCI_DEVICE_H100_SXM5 = 0x2330     # the hardware the DeviceModel describes
MEM_SYNC_DOMAINS = 4              # compute capability 9.0


class CUdevice_attribute(enum.IntEnum):
    """CUDA 13 cuda.h's CUdevice_attribute (names and numbers; aliases kept)."""

    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8
    CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK = 8
    CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10
    CU_DEVICE_ATTRIBUTE_MAX_PITCH = 11
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12
    CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK = 12
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13
    CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT = 14
    CU_DEVICE_ATTRIBUTE_GPU_OVERLAP = 15
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
    CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 17
    CU_DEVICE_ATTRIBUTE_INTEGRATED = 18
    CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19
    CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH = 21
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH = 22
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT = 23
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH = 24
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT = 25
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH = 26
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH = 27
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT = 28
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS = 29
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_WIDTH = 27
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_HEIGHT = 28
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES = 29
    CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT = 30
    CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31
    CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34
    CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39
    CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40
    CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH = 42
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS = 43
    CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER = 44
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH = 45
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT = 46
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE = 47
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE = 48
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE = 49
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50
    CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT = 51
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH = 52
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH = 53
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS = 54
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH = 55
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH = 56
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT = 57
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH = 58
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT = 59
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH = 60
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH = 61
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS = 62
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH = 63
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT = 64
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS = 65
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH = 66
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH = 67
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS = 68
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH = 69
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH = 70
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT = 71
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH = 72
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH = 73
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT = 74
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH = 77
    CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED = 78
    CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED = 79
    CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED = 80
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82
    CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83
    CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84
    CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID = 85
    CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED = 86
    CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = 87
    CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88
    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89
    CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED = 90
    CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91
    CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 = 92
    CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1 = 93
    CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1 = 94
    CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95
    CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH = 96
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
    CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES = 98
    CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 99
    CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 100
    CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 101
    CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED = 102
    CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED = 104
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED = 105
    CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106
    CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED = 107
    CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108
    CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE = 109
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110
    CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111
    CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED = 112
    CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED = 113
    CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED = 114
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING = 118
    CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 119
    CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120
    CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED = 121
    CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 122
    CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR = 123
    CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124
    CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED = 125
    CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT = 126
    CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED = 127
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 128
    CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS = 129
    CU_DEVICE_ATTRIBUTE_NUMA_CONFIG = 130
    CU_DEVICE_ATTRIBUTE_NUMA_ID = 131
    CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 132
    CU_DEVICE_ATTRIBUTE_MPS_ENABLED = 133
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID = 134
    CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED = 135
    CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK = 136
    CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH = 137
    CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED = 138
    CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 139
    CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID = 140
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 141
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED = 142
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED = 143
    CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED = 144
    CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 145
    CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED = 146
    CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED = 147


A = CUdevice_attribute

# Image limits of a compute capability 9.0 device (the runtime's table
# reports the same; textures and surfaces are limits only here).
_CC90_IMAGE_LIMITS = {
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH: 131072, A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH: 131072,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT: 65536, A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH: 16384,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT: 16384, A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH: 16384,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS: 2048,
    A.CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: 512,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS: 2048,
    A.CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER: 1,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE: 8192,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE: 8192,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS: 2046,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH: 32768, A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH: 131072,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT: 65536, A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH: 16384,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT: 16384, A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH: 16384,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS: 2048,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS: 2048,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS: 2046,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH: 268435456,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH: 131072,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT: 65000,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH: 2097120,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT: 32768,
    A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH: 32768,
}


def attribute_values(m: DeviceModel) -> dict[int, int]:
    """Every CUdevice_attribute number's value for a device model."""
    v = {
        A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: m.max_threads_per_block,
        A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: m.max_block_dims[0],
        A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: m.max_block_dims[1],
        A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: m.max_block_dims[2],
        A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: m.max_grid_dims[0],
        A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: m.max_grid_dims[1],
        A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: m.max_grid_dims[2],
        A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: m.shared_per_block,
        A.CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: m.const_memory,
        A.CU_DEVICE_ATTRIBUTE_WARP_SIZE: m.lanes,
        A.CU_DEVICE_ATTRIBUTE_MAX_PITCH: m.max_pitch,
        A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: m.registers_per_block,
        A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE: m.clock_rate_khz,
        A.CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: m.texture_alignment,
        A.CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: int(m.async_engine_count > 0),
        A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: m.sm_count,
        A.CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: 0,
        A.CU_DEVICE_ATTRIBUTE_INTEGRATED: 0,
        A.CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: 1,
        A.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: 0,            # CU_COMPUTEMODE_DEFAULT
        A.CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: 1,
        A.CU_DEVICE_ATTRIBUTE_ECC_ENABLED: 0,
        A.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: m.pci_bus,
        A.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: m.pci_device,
        A.CU_DEVICE_ATTRIBUTE_TCC_DRIVER: 0,
        A.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: m.memory_clock_rate_khz,
        A.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: m.memory_bus_width,
        A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: m.l2_cache_size,
        A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: m.max_threads_per_sm,
        A.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: m.async_engine_count,
        A.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: 1,
        A.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: m.pci_domain,
        A.CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: m.texture_pitch_alignment,
        A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: m.compute_capability[0],
        A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: m.compute_capability[1],
        A.CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: 1,   # channels are scheduled by priority
        A.CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: 1,
        A.CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: 1,
        A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: m.shared_per_sm,
        A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: m.registers_per_sm,
        A.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: 1,
        A.CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: 0,
        A.CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: 0,
        A.CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: 2,
        A.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: 0,     # kernels reach no pageable host memory
        A.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: 0,
        A.CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: 1,
        # cuMemHostRegister maps the range at a device address of its own
        # (cuMemHostGetDevicePointer), not at the host address
        A.CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: 0,
        A.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1: 1,
        A.CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1: 1,
        A.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1: 1,
        A.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: 1,
        A.CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH: 1,
        A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: m.shared_per_block_optin,
        A.CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES: 0,
        A.CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: 1,
        A.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: 0,
        A.CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: 1,
        A.CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: 1,     # driver/vmm.py
        A.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: 1,
        A.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: m.max_blocks_per_sm,
        A.CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: m.persisting_l2_max,
        A.CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: 128 * 1024 * 1024,
        A.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: m.reserved_shared_per_block,
        A.CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED: 1,
        A.CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: 1,                  # driver/mempool.py
        A.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS: 0,
        A.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING: 0,
        A.CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: 1,          # POSIX file descriptors
        A.CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: 0,                          # no thread block clusters
        A.CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS: 1,
        A.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR: 1,
        A.CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT: MEM_SYNC_DOMAINS,
        A.CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED: 0,             # no TMA in the PTX executor
        A.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS: 0,
        A.CU_DEVICE_ATTRIBUTE_NUMA_CONFIG: 0,                             # CU_DEVICE_NUMA_CONFIG_NONE
        A.CU_DEVICE_ATTRIBUTE_NUMA_ID: -1,
        A.CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_MPS_ENABLED: 0,
        A.CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: -1,
        A.CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK: 0,
        A.CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH: 0,
        A.CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID: PCI_DEVICE_H100_SXM5 << 16 | PCI_VENDOR_NVIDIA,
        A.CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID: 0,
        A.CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED: 0,
        A.CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED: 0,
    }
    v.update(_CC90_IMAGE_LIMITS)
    return {int(k): int(x) for k, x in v.items()}


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
