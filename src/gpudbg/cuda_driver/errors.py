"""cuGetErrorName and cuGetErrorString: a CUresult's name and description.

The descriptions are NVIDIA's own (the texts its driver and runtime return
for these numbers, taken from CUDA 13's libcudart, which shares them; 202
and 916, unknown to the runtime, carry cuda.h's wording). The one idea:
the C caller receives a `const char*` that must stay valid for the life of
the process, so each answer is a NUL-terminated ctypes buffer made once and
kept in a dict; the same code always yields the same address. An unknown
code is CUDA_ERROR_INVALID_VALUE and the out-pointer receives NULL, as with
NVIDIA's driver. Works before cuInit.
"""
from __future__ import annotations


from gpudbg import cabi
from gpudbg.cuda_driver._base import R, entry, fail
from gpudbg.driver.status import CUresult

__all__ = ["cuGetErrorName", "cuGetErrorString"]

DESCRIPTIONS: dict[CUresult, str] = {
    CUresult.CUDA_SUCCESS: 'no error',
    CUresult.CUDA_ERROR_INVALID_VALUE: 'invalid argument',
    CUresult.CUDA_ERROR_OUT_OF_MEMORY: 'out of memory',
    CUresult.CUDA_ERROR_NOT_INITIALIZED: 'initialization error',
    CUresult.CUDA_ERROR_DEINITIALIZED: 'driver shutting down',
    CUresult.CUDA_ERROR_PROFILER_DISABLED: 'profiler disabled while using external profiling tool',
    CUresult.CUDA_ERROR_PROFILER_NOT_INITIALIZED: 'profiler not initialized: call cudaProfilerInitialize()',
    CUresult.CUDA_ERROR_PROFILER_ALREADY_STARTED: 'profiler already started',
    CUresult.CUDA_ERROR_PROFILER_ALREADY_STOPPED: 'profiler already stopped',
    CUresult.CUDA_ERROR_STUB_LIBRARY: 'CUDA driver is a stub library',
    CUresult.CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER: 'API call is not supported in the installed CUDA driver',
    CUresult.CUDA_ERROR_DEVICE_UNAVAILABLE: 'CUDA-capable device(s) is/are busy or unavailable',
    CUresult.CUDA_ERROR_NO_DEVICE: 'no CUDA-capable device is detected',
    CUresult.CUDA_ERROR_INVALID_DEVICE: 'invalid device ordinal',
    CUresult.CUDA_ERROR_DEVICE_NOT_LICENSED: "device doesn't have valid Grid license",
    CUresult.CUDA_ERROR_INVALID_IMAGE: 'device kernel image is invalid',
    CUresult.CUDA_ERROR_INVALID_CONTEXT: 'invalid device context',
    CUresult.CUDA_ERROR_CONTEXT_ALREADY_CURRENT: 'context already current',
    CUresult.CUDA_ERROR_MAP_FAILED: 'mapping of buffer object failed',
    CUresult.CUDA_ERROR_UNMAP_FAILED: 'unmapping of buffer object failed',
    CUresult.CUDA_ERROR_ARRAY_IS_MAPPED: 'array is mapped',
    CUresult.CUDA_ERROR_ALREADY_MAPPED: 'resource already mapped',
    CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU: 'no kernel image is available for execution on the device',
    CUresult.CUDA_ERROR_ALREADY_ACQUIRED: 'resource already acquired',
    CUresult.CUDA_ERROR_NOT_MAPPED: 'resource not mapped',
    CUresult.CUDA_ERROR_NOT_MAPPED_AS_ARRAY: 'resource not mapped as array',
    CUresult.CUDA_ERROR_NOT_MAPPED_AS_POINTER: 'resource not mapped as pointer',
    CUresult.CUDA_ERROR_ECC_UNCORRECTABLE: 'uncorrectable ECC error encountered',
    CUresult.CUDA_ERROR_UNSUPPORTED_LIMIT: 'limit is not supported on this architecture',
    CUresult.CUDA_ERROR_CONTEXT_ALREADY_IN_USE: 'exclusive-thread device already in use by a different thread',
    CUresult.CUDA_ERROR_PEER_ACCESS_UNSUPPORTED: 'peer access is not supported between these two devices',
    CUresult.CUDA_ERROR_INVALID_PTX: 'a PTX JIT compilation failed',
    CUresult.CUDA_ERROR_INVALID_GRAPHICS_CONTEXT: 'invalid OpenGL or DirectX context',
    CUresult.CUDA_ERROR_NVLINK_UNCORRECTABLE: 'uncorrectable NVLink error detected during the execution',
    CUresult.CUDA_ERROR_JIT_COMPILER_NOT_FOUND: 'PTX JIT compiler library not found',
    CUresult.CUDA_ERROR_UNSUPPORTED_PTX_VERSION: 'the provided PTX was compiled with an unsupported toolchain.',
    CUresult.CUDA_ERROR_JIT_COMPILATION_DISABLED: 'PTX JIT compilation was disabled',
    CUresult.CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY: 'the provided execution affinity is not supported',
    CUresult.CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC: 'the provided PTX contains unsupported call to cudaDeviceSynchronize',
    CUresult.CUDA_ERROR_CONTAINED: 'Invalid access of peer GPU memory over nvlink or a hardware error',
    CUresult.CUDA_ERROR_INVALID_SOURCE: 'device kernel image is invalid',
    CUresult.CUDA_ERROR_FILE_NOT_FOUND: 'file not found',
    CUresult.CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND: 'shared object symbol not found',
    CUresult.CUDA_ERROR_SHARED_OBJECT_INIT_FAILED: 'shared object initialization failed',
    CUresult.CUDA_ERROR_OPERATING_SYSTEM: 'OS call failed or operation not supported on this OS',
    CUresult.CUDA_ERROR_INVALID_HANDLE: 'invalid resource handle',
    CUresult.CUDA_ERROR_ILLEGAL_STATE: 'the operation cannot be performed in the present state',
    CUresult.CUDA_ERROR_LOSSY_QUERY: 'attempted introspection would be semantically lossy',
    CUresult.CUDA_ERROR_NOT_FOUND: 'named symbol not found',
    CUresult.CUDA_ERROR_NOT_READY: 'device not ready',
    CUresult.CUDA_ERROR_ILLEGAL_ADDRESS: 'an illegal memory access was encountered',
    CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: 'too many resources requested for launch',
    CUresult.CUDA_ERROR_LAUNCH_TIMEOUT: 'the launch timed out and was terminated',
    CUresult.CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING: 'launch uses incompatible texturing mode',
    CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: 'peer access is already enabled',
    CUresult.CUDA_ERROR_PEER_ACCESS_NOT_ENABLED: 'peer access has not been enabled',
    CUresult.CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE: 'cannot set while device is active in this process',
    CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED: 'context is destroyed',
    CUresult.CUDA_ERROR_ASSERT: 'device-side assert triggered',
    CUresult.CUDA_ERROR_TOO_MANY_PEERS: 'peer mapping resources exhausted',
    CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: 'part or all of the requested memory range is already mapped',
    CUresult.CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: 'pointer does not correspond to a registered memory region',
    CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR: 'hardware stack error',
    CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION: 'an illegal instruction was encountered',
    CUresult.CUDA_ERROR_MISALIGNED_ADDRESS: 'misaligned address',
    CUresult.CUDA_ERROR_INVALID_ADDRESS_SPACE: 'operation not supported on global/shared address space',
    CUresult.CUDA_ERROR_INVALID_PC: 'invalid program counter',
    CUresult.CUDA_ERROR_LAUNCH_FAILED: 'unspecified launch failure',
    CUresult.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: 'too many blocks in cooperative launch',
    CUresult.CUDA_ERROR_TENSOR_MEMORY_LEAK: 'tensor memory not completely freed',
    CUresult.CUDA_ERROR_NOT_PERMITTED: 'operation not permitted',
    CUresult.CUDA_ERROR_NOT_SUPPORTED: 'operation not supported',
    CUresult.CUDA_ERROR_SYSTEM_NOT_READY: 'system not yet initialized',
    CUresult.CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: 'system has unsupported display driver / cuda driver combination',
    CUresult.CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: 'forward compatibility was attempted on non supported HW',
    CUresult.CUDA_ERROR_MPS_CONNECTION_FAILED: 'MPS client failed to connect to the MPS control daemon or the MPS server',
    CUresult.CUDA_ERROR_MPS_RPC_FAILURE: 'the remote procedural call between the MPS server and the MPS client failed',
    CUresult.CUDA_ERROR_MPS_SERVER_NOT_READY: 'MPS server is not ready to accept new MPS client requests',
    CUresult.CUDA_ERROR_MPS_MAX_CLIENTS_REACHED: 'the hardware resources required to create MPS client have been exhausted',
    CUresult.CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED: 'the hardware resources required to support device connections have been exhausted',
    CUresult.CUDA_ERROR_MPS_CLIENT_TERMINATED: 'the MPS client has been terminated by the server',
    CUresult.CUDA_ERROR_CDP_NOT_SUPPORTED: 'is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it',
    CUresult.CUDA_ERROR_CDP_VERSION_MISMATCH: 'unsupported interaction between different versions of CUDA Dynamic Parallelism',
    CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: 'operation not permitted when stream is capturing',
    CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: 'operation failed due to a previous error during capture',
    CUresult.CUDA_ERROR_STREAM_CAPTURE_MERGE: 'operation would result in a merge of separate capture sequences',
    CUresult.CUDA_ERROR_STREAM_CAPTURE_UNMATCHED: 'capture was not ended in the same stream as it began',
    CUresult.CUDA_ERROR_STREAM_CAPTURE_UNJOINED: 'capturing stream has unjoined work',
    CUresult.CUDA_ERROR_STREAM_CAPTURE_ISOLATION: 'dependency created on uncaptured work in another stream',
    CUresult.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: 'operation would make the legacy stream depend on a capturing blocking stream',
    CUresult.CUDA_ERROR_CAPTURED_EVENT: 'operation not permitted on an event last recorded in a capturing stream',
    CUresult.CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: 'attempt to terminate a thread-local capture sequence from another thread',
    CUresult.CUDA_ERROR_TIMEOUT: 'wait operation timed out',
    CUresult.CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE: 'the graph update was not performed because it included changes which violated constraints specific to instantiated graph update',
    CUresult.CUDA_ERROR_EXTERNAL_DEVICE: 'an async error has occured in external entity outside of CUDA',
    CUresult.CUDA_ERROR_INVALID_CLUSTER_SIZE: 'a kernel launch error has occurred due to cluster misconfiguration',
    CUresult.CUDA_ERROR_FUNCTION_NOT_LOADED: 'the function handle is not loaded when calling an API that requires a loaded function',
    CUresult.CUDA_ERROR_INVALID_RESOURCE_TYPE: 'one or more resources passed in are not valid resource types for the operation',
    CUresult.CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION: 'one or more resources are insufficient or non-applicable for the operation',
    CUresult.CUDA_ERROR_KEY_ROTATION: 'an error occurred during the key rotation sequence',
    CUresult.CUDA_ERROR_UNKNOWN: 'unknown error',
}

def _lookup(error: int, pStr: int) -> CUresult:
    if not pStr:
        raise fail(R.CUDA_ERROR_INVALID_VALUE, "pStr is NULL")
    try:
        return CUresult(int(error))
    except ValueError:
        cabi.store(pStr, "u64", 0, "pStr")
        raise fail(R.CUDA_ERROR_INVALID_VALUE, f"{error!r} is not a CUresult") from None


@entry
def cuGetErrorName(error: int, pStr: int) -> None:
    """*pStr = the CUresult's enumerator name, e.g. "CUDA_ERROR_INVALID_VALUE"."""
    code = _lookup(error, pStr)
    cabi.store(pStr, "u64", cabi.lasting_c_string(code.name), "pStr")


@entry
def cuGetErrorString(error: int, pStr: int) -> None:
    """*pStr = the driver's description, e.g. "invalid argument"."""
    code = _lookup(error, pStr)
    cabi.store(pStr, "u64", cabi.lasting_c_string(DESCRIPTIONS[code]), "pStr")
