"""The engine's result vocabulary: CUresult's names and numbers, a cause
that refines a few of them, and the one exception the engine raises.

The engine speaks the CUDA driver API's language (seed 003: API layers sit
over one engine and translate its results into their own codes). Each API
layer maps an EngineError to its own code: the driver API returns `status`
as it is; the mc*/CUDA runtime layer refines it with `cause` where the
runtime has a finer code than the driver (an invalid launch configuration is
CUDA_ERROR_INVALID_VALUE to the driver, cudaErrorInvalidConfiguration to the
runtime). The CUresult members are those of CUDA 13's cuda.h, in its order.
This module imports nothing from gpudbg so every layer can share it.
"""
from __future__ import annotations

import enum


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_NOT_INITIALIZED = 3
    CUDA_ERROR_DEINITIALIZED = 4
    CUDA_ERROR_PROFILER_DISABLED = 5
    CUDA_ERROR_PROFILER_NOT_INITIALIZED = 6
    CUDA_ERROR_PROFILER_ALREADY_STARTED = 7
    CUDA_ERROR_PROFILER_ALREADY_STOPPED = 8
    CUDA_ERROR_STUB_LIBRARY = 34
    CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36
    CUDA_ERROR_DEVICE_UNAVAILABLE = 46
    CUDA_ERROR_NO_DEVICE = 100
    CUDA_ERROR_INVALID_DEVICE = 101
    CUDA_ERROR_DEVICE_NOT_LICENSED = 102
    CUDA_ERROR_INVALID_IMAGE = 200
    CUDA_ERROR_INVALID_CONTEXT = 201
    CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202
    CUDA_ERROR_MAP_FAILED = 205
    CUDA_ERROR_UNMAP_FAILED = 206
    CUDA_ERROR_ARRAY_IS_MAPPED = 207
    CUDA_ERROR_ALREADY_MAPPED = 208
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209
    CUDA_ERROR_ALREADY_ACQUIRED = 210
    CUDA_ERROR_NOT_MAPPED = 211
    CUDA_ERROR_NOT_MAPPED_AS_ARRAY = 212
    CUDA_ERROR_NOT_MAPPED_AS_POINTER = 213
    CUDA_ERROR_ECC_UNCORRECTABLE = 214
    CUDA_ERROR_UNSUPPORTED_LIMIT = 215
    CUDA_ERROR_CONTEXT_ALREADY_IN_USE = 216
    CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217
    CUDA_ERROR_INVALID_PTX = 218
    CUDA_ERROR_INVALID_GRAPHICS_CONTEXT = 219
    CUDA_ERROR_NVLINK_UNCORRECTABLE = 220
    CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222
    CUDA_ERROR_JIT_COMPILATION_DISABLED = 223
    CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY = 224
    CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC = 225
    CUDA_ERROR_CONTAINED = 226
    CUDA_ERROR_INVALID_SOURCE = 300
    CUDA_ERROR_FILE_NOT_FOUND = 301
    CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302
    CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303
    CUDA_ERROR_OPERATING_SYSTEM = 304
    CUDA_ERROR_INVALID_HANDLE = 400
    CUDA_ERROR_ILLEGAL_STATE = 401
    CUDA_ERROR_LOSSY_QUERY = 402
    CUDA_ERROR_NOT_FOUND = 500
    CUDA_ERROR_NOT_READY = 600
    CUDA_ERROR_ILLEGAL_ADDRESS = 700
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701
    CUDA_ERROR_LAUNCH_TIMEOUT = 702
    CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING = 703
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704
    CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705
    CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708
    CUDA_ERROR_CONTEXT_IS_DESTROYED = 709
    CUDA_ERROR_ASSERT = 710
    CUDA_ERROR_TOO_MANY_PEERS = 711
    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712
    CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713
    CUDA_ERROR_HARDWARE_STACK_ERROR = 714
    CUDA_ERROR_ILLEGAL_INSTRUCTION = 715
    CUDA_ERROR_MISALIGNED_ADDRESS = 716
    CUDA_ERROR_INVALID_ADDRESS_SPACE = 717
    CUDA_ERROR_INVALID_PC = 718
    CUDA_ERROR_LAUNCH_FAILED = 719
    CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720
    CUDA_ERROR_TENSOR_MEMORY_LEAK = 721
    CUDA_ERROR_NOT_PERMITTED = 800
    CUDA_ERROR_NOT_SUPPORTED = 801
    CUDA_ERROR_SYSTEM_NOT_READY = 802
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803
    CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804
    CUDA_ERROR_MPS_CONNECTION_FAILED = 805
    CUDA_ERROR_MPS_RPC_FAILURE = 806
    CUDA_ERROR_MPS_SERVER_NOT_READY = 807
    CUDA_ERROR_MPS_MAX_CLIENTS_REACHED = 808
    CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED = 809
    CUDA_ERROR_MPS_CLIENT_TERMINATED = 810
    CUDA_ERROR_CDP_NOT_SUPPORTED = 811
    CUDA_ERROR_CDP_VERSION_MISMATCH = 812
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900
    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901
    CUDA_ERROR_STREAM_CAPTURE_MERGE = 902
    CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903
    CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904
    CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905
    CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906
    CUDA_ERROR_CAPTURED_EVENT = 907
    CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908
    CUDA_ERROR_TIMEOUT = 909
    CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910
    CUDA_ERROR_EXTERNAL_DEVICE = 911
    CUDA_ERROR_INVALID_CLUSTER_SIZE = 912
    CUDA_ERROR_FUNCTION_NOT_LOADED = 913
    CUDA_ERROR_INVALID_RESOURCE_TYPE = 914
    CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION = 915
    CUDA_ERROR_KEY_ROTATION = 916
    CUDA_ERROR_UNKNOWN = 999


class Cause(enum.Enum):
    """What exactly was wrong, where the CUDA runtime names it and the
    driver API folds it into a broader CUresult (the member's value)."""

    CONFIGURATION = ("launch configuration", CUresult.CUDA_ERROR_INVALID_VALUE)
    PITCH = ("pitch", CUresult.CUDA_ERROR_INVALID_VALUE)
    SYMBOL = ("symbol", CUresult.CUDA_ERROR_NOT_FOUND)
    DEVICE_POINTER = ("device pointer", CUresult.CUDA_ERROR_INVALID_VALUE)
    MEMCPY_DIRECTION = ("memcpy direction", CUresult.CUDA_ERROR_INVALID_VALUE)
    DEVICE_FUNCTION = ("device function", CUresult.CUDA_ERROR_INVALID_HANDLE)
    DUPLICATE_VARIABLE_NAME = ("duplicate variable name", CUresult.CUDA_ERROR_INVALID_VALUE)

    @property
    def status(self) -> CUresult:
        return self.value[1]


class EngineError(Exception):
    """A failed engine operation: its CUresult, an optional finer cause, and
    a sentence saying exactly what was wrong (which argument, address,
    handle). Raised with a Cause, it carries the cause's CUresult."""

    def __init__(self, status: CUresult | Cause | int, message: str = ""):
        self.cause = status if isinstance(status, Cause) else None
        self.status = status.status if isinstance(status, Cause) else CUresult(status)
        self.message = message or self.status.name
        super().__init__(f"{self.status.name}: {self.message}")


def describe_exception(e: BaseException) -> str:
    """'Type: text at file:line' of an unexpected exception, for the
    internal-error messages every API layer returns (never failing itself)."""
    import os
    import traceback
    try:
        text = str(e)
    except Exception:
        text = "(unprintable)"
    if len(text) > 300:
        text = text[:300] + "..."
    where = ""
    try:
        frame = traceback.extract_tb(e.__traceback__)[-1]
        where = f" at {os.path.basename(frame.filename)}:{frame.lineno} ({frame.name})"
    except Exception:
        pass
    return f"{type(e).__name__}: {text}{where}"
