"""The engine's own types: the CUDA driver API's enums, with cuda.h's
names and numbers (CUDA 13), and the engine's launch records.

The engine speaks the driver API's vocabulary (see status.py for results);
API layers with other names (the mc* runtime) convert their enums to these
by number at their boundary. The enum bodies were generated from CUDA 13's
cuda.h (names and values only) and are data: do not edit them by hand.
Sentinel members such as CU_LIMIT_MAX are left out.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Sequence



class CUlimit(enum.IntEnum):
    CU_LIMIT_STACK_SIZE = 0
    CU_LIMIT_PRINTF_FIFO_SIZE = 1
    CU_LIMIT_MALLOC_HEAP_SIZE = 2
    CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH = 3
    CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT = 4
    CU_LIMIT_MAX_L2_FETCH_GRANULARITY = 5
    CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 6
    CU_LIMIT_SHMEM_SIZE = 7
    CU_LIMIT_CIG_ENABLED = 8
    CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED = 9


class CUfunc_cache(enum.IntEnum):
    CU_FUNC_CACHE_PREFER_NONE = 0
    CU_FUNC_CACHE_PREFER_SHARED = 1
    CU_FUNC_CACHE_PREFER_L1 = 2
    CU_FUNC_CACHE_PREFER_EQUAL = 3


class CUsharedconfig(enum.IntEnum):
    CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE = 0
    CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE = 1
    CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE = 2


class CUfunction_attribute(enum.IntEnum):
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
    CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4
    CU_FUNC_ATTRIBUTE_PTX_VERSION = 5
    CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6
    CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
    CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9
    CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET = 10
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT = 12
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH = 13
    CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
    CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15


class CUoccupancy_flags(enum.IntFlag):
    CU_OCCUPANCY_DEFAULT = 0
    CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE = 1


class CUstreamCaptureMode(enum.IntEnum):
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
    CU_STREAM_CAPTURE_MODE_RELAXED = 2


class CUstreamCaptureStatus(enum.IntEnum):
    CU_STREAM_CAPTURE_STATUS_NONE = 0
    CU_STREAM_CAPTURE_STATUS_ACTIVE = 1
    CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2


class CUjit_option(enum.IntEnum):
    CU_JIT_MAX_REGISTERS = 0
    CU_JIT_THREADS_PER_BLOCK = 1
    CU_JIT_WALL_TIME = 2
    CU_JIT_INFO_LOG_BUFFER = 3
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
    CU_JIT_ERROR_LOG_BUFFER = 5
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
    CU_JIT_OPTIMIZATION_LEVEL = 7
    CU_JIT_TARGET_FROM_CUCONTEXT = 8
    CU_JIT_TARGET = 9
    CU_JIT_FALLBACK_STRATEGY = 10
    CU_JIT_GENERATE_DEBUG_INFO = 11
    CU_JIT_LOG_VERBOSE = 12
    CU_JIT_GENERATE_LINE_INFO = 13
    CU_JIT_CACHE_MODE = 14
    CU_JIT_NEW_SM3X_OPT = 15
    CU_JIT_FAST_COMPILE = 16
    CU_JIT_GLOBAL_SYMBOL_NAMES = 17
    CU_JIT_GLOBAL_SYMBOL_ADDRESSES = 18
    CU_JIT_GLOBAL_SYMBOL_COUNT = 19
    CU_JIT_LTO = 20
    CU_JIT_FTZ = 21
    CU_JIT_PREC_DIV = 22
    CU_JIT_PREC_SQRT = 23
    CU_JIT_FMA = 24
    CU_JIT_REFERENCED_KERNEL_NAMES = 25
    CU_JIT_REFERENCED_KERNEL_COUNT = 26
    CU_JIT_REFERENCED_VARIABLE_NAMES = 27
    CU_JIT_REFERENCED_VARIABLE_COUNT = 28
    CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES = 29
    CU_JIT_POSITION_INDEPENDENT_CODE = 30
    CU_JIT_MIN_CTA_PER_SM = 31
    CU_JIT_MAX_THREADS_PER_BLOCK = 32
    CU_JIT_OVERRIDE_DIRECTIVE_VALUES = 33
    CU_JIT_SPLIT_COMPILE = 34


class CUjitInputType(enum.IntEnum):
    CU_JIT_INPUT_CUBIN = 0
    CU_JIT_INPUT_PTX = 1
    CU_JIT_INPUT_FATBINARY = 2
    CU_JIT_INPUT_OBJECT = 3
    CU_JIT_INPUT_LIBRARY = 4
    CU_JIT_INPUT_NVVM = 5


class CUjit_cacheMode(enum.IntEnum):
    CU_JIT_CACHE_OPTION_NONE = 0
    CU_JIT_CACHE_OPTION_CG = 1
    CU_JIT_CACHE_OPTION_CA = 2


class CUjit_fallback(enum.IntEnum):
    CU_PREFER_PTX = 0
    CU_PREFER_BINARY = 1


class CUctx_flags(enum.IntFlag):
    CU_CTX_SCHED_AUTO = 0
    CU_CTX_SCHED_SPIN = 1
    CU_CTX_SCHED_YIELD = 2
    CU_CTX_SCHED_BLOCKING_SYNC = 4
    CU_CTX_BLOCKING_SYNC = 4
    CU_CTX_MAP_HOST = 8
    CU_CTX_COREDUMP_ENABLE = 32
    CU_CTX_USER_COREDUMP_ENABLE = 64
    CU_CTX_SYNC_MEMOPS = 128


class CUmemorytype(enum.IntEnum):
    CU_MEMORYTYPE_HOST = 1
    CU_MEMORYTYPE_DEVICE = 2
    CU_MEMORYTYPE_ARRAY = 3
    CU_MEMORYTYPE_UNIFIED = 4


class CUshared_carveout(enum.IntEnum):
    CU_SHAREDMEM_CARVEOUT_DEFAULT = -1
    CU_SHAREDMEM_CARVEOUT_MAX_SHARED = 100
    CU_SHAREDMEM_CARVEOUT_MAX_L1 = 0


CU_CTX_SCHED_MASK = 0x07
CU_CTX_FLAGS_MASK = 0xFF

# cuLaunchCooperativeKernelMultiDevice flags
CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC = 0x01
CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC = 0x02


@dataclass
class LaunchParams:
    """One device's part of a multi-device cooperative launch (the engine's
    form of CUDA_LAUNCH_PARAMS / cudaLaunchParams)."""

    func: Any
    gridDim: Any
    blockDim: Any
    args: Sequence[Any] = ()
    sharedMem: int = 0
    stream: Any = None


@dataclass(frozen=True)
class FunctionAttributes:
    """What a kernel reports about itself (cudaFuncAttributes' fields,
    which the CUfunction_attribute queries read one at a time)."""

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
    clusterDimMustBeSet: int = 0           # the kernel's __cluster_dims__ (.reqnctapercluster)
    requiredClusterWidth: int = 0
    requiredClusterHeight: int = 0
    requiredClusterDepth: int = 0
    clusterSchedulingPolicyPreference: int = 0
    nonPortableClusterSizeAllowed: int = 0
