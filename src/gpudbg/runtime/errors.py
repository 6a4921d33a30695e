"""mcError_t: seed 002's error names with the CUDA runtime's numbers.

Every name seed 002 lists is a member (its typos corrected: mcErrorInvalidDevice,
not mcErrorInavlidDevice). Seed names that are synonyms of a CUDA runtime code
(mcErrorOutOfMemory of mcErrorMemoryAllocation, mcErrorInvalidHandle of
mcErrorInvalidResourceHandle, ...) are enum aliases with the same number, so
the name a code reports is the CUDA runtime's. The two seed codes CUDA has no
number for get numbers above cudaErrorUnknown (999). The mc* layer raises
McError for its own argument checks and translates the engine's
EngineError (CUresult plus an optional finer Cause) with `from_engine`:
a cause picks the runtime's finer code, otherwise the number is the same in
both APIs for every code the engine produces, and a CUresult the runtime
has no number for is matched by name (CUDA_ERROR_FOO_BAR ~ mcErrorFooBar)
before it falls back to mcErrorUnknown.
"""
from __future__ import annotations

import enum

from gpudbg.driver.status import Cause, CUresult, EngineError


class mcError_t(enum.IntEnum):
    mcSuccess = 0
    mcErrorInvalidValue = 1
    mcErrorMemoryAllocation = 2
    mcErrorInitializationError = 3
    mcErrorDeinitialized = 4  # cudaErrorCudartUnloading's number
    mcErrorInvalidConfiguration = 9
    mcErrorInvalidPitchValue = 12
    mcErrorInvalidSymbol = 13
    mcErrorInvalidHostPointer = 16
    mcErrorInvalidDevicePointer = 17
    mcErrorInvalidMemcpyDirection = 21
    mcErrorDuplicateVariableName = 43
    mcErrorMissingConfiguration = 52
    mcErrorSyncDepthExceeded = 68
    mcErrorLaunchPendingCountExceeded = 69
    mcErrorInvalidDeviceFunction = 98
    mcErrorNoDevice = 100
    mcErrorInvalidDevice = 101
    mcErrorStartupFailure = 127
    mcErrorInvalidImage = 200  # cudaErrorInvalidKernelImage
    mcErrorDeviceUninitialized = 201
    mcErrorAlreadyMapped = 208
    mcErrorNoKernelImageForDevice = 209
    mcErrorUnsupportedLimit = 215
    mcErrorDeviceAlreadyInUse = 216
    mcErrorInvalidKernelFile = 218  # cudaErrorInvalidPtx
    mcErrorJitCompilerNotFound = 221
    mcErrorFileNotFound = 301
    mcErrorInvalidResourceHandle = 400
    mcErrorIllegalState = 401
    mcErrorSymbolNotFound = 500
    mcErrorNotReady = 600
    mcErrorIllegalAddress = 700
    mcErrorLaunchOutOfResources = 701
    mcErrorLaunchTimeout = 702
    mcErrorSetOnActiveProcess = 708
    mcErrorContextIsDestroyed = 709
    mcErrorAssert = 710
    mcErrorHostMemoryAlreadyRegistered = 712
    mcErrorHostMemoryNotRegistered = 713
    mcErrorHardwareStackError = 714
    mcErrorIllegalInstruction = 715
    mcErrorMisalignedAddress = 716
    mcErrorInvalidAddressSpace = 717
    mcErrorInvalidPc = 718
    mcErrorLaunchFailure = 719
    mcErrorCooperativeLaunchTooLarge = 720
    mcErrorNotPermitted = 800
    mcErrorNotSupported = 801
    mcErrorStreamCaptureUnsupported = 900
    mcErrorStreamCaptureInvalidated = 901
    mcErrorStreamCaptureUnmatched = 903
    mcErrorStreamCaptureUnjoined = 904
    mcErrorStreamCaptureIsolation = 905
    mcErrorStreamCaptureImplicit = 906
    mcErrorStreamCaptureWrongThread = 908
    mcErrorTimeout = 909
    mcErrorInvalidClusterSize = 912
    mcErrorUnknown = 999
    mcErrorMemoryFree = 1001
    mcErrorDuplicateLoadModule = 1002
    # seed 002 synonyms of CUDA runtime codes (aliases: same number)
    mcErrorOutOfMemory = 2
    mcErrorNotInitialized = 3
    mcErrorNoBinaryForGpu = 209
    mcErrorInvalidHandle = 400
    mcErrorNotFound = 500


_STRINGS: dict[mcError_t, str] = {
    mcError_t.mcSuccess: "no error",
    mcError_t.mcErrorInvalidValue: "invalid argument",
    mcError_t.mcErrorMemoryAllocation: "out of memory",
    mcError_t.mcErrorInitializationError: "initialization error",
    mcError_t.mcErrorDeinitialized: "driver shutting down",
    mcError_t.mcErrorInvalidConfiguration: "invalid configuration argument",
    mcError_t.mcErrorInvalidPitchValue: "invalid pitch argument",
    mcError_t.mcErrorInvalidSymbol: "invalid device symbol",
    mcError_t.mcErrorInvalidHostPointer: "invalid host pointer",
    mcError_t.mcErrorInvalidDevicePointer: "invalid device pointer",
    mcError_t.mcErrorInvalidMemcpyDirection: "invalid copy direction for memcpy",
    mcError_t.mcErrorDuplicateVariableName: "duplicate global variable looked up by string name",
    mcError_t.mcErrorMissingConfiguration: "__global__ function call is not configured",
    mcError_t.mcErrorSyncDepthExceeded: "mcDeviceSynchronize failed because caller's grid depth exceeds mcLimitDevRuntimeSyncDepth",
    mcError_t.mcErrorLaunchPendingCountExceeded: "launch failed because launch would exceed the pending launch count limit",
    mcError_t.mcErrorInvalidDeviceFunction: "invalid device function",
    mcError_t.mcErrorNoDevice: "no MXMACA-capable device is detected",
    mcError_t.mcErrorInvalidDevice: "invalid device ordinal",
    mcError_t.mcErrorStartupFailure: "system not yet initialized",
    mcError_t.mcErrorInvalidImage: "device kernel image is invalid",
    mcError_t.mcErrorDeviceUninitialized: "invalid device context",
    mcError_t.mcErrorAlreadyMapped: "resource already mapped",
    mcError_t.mcErrorNoKernelImageForDevice: "no kernel image is available for execution on the device",
    mcError_t.mcErrorUnsupportedLimit: "limit is not supported on this architecture",
    mcError_t.mcErrorDeviceAlreadyInUse: "exclusive-thread device already in use by a different thread",
    mcError_t.mcErrorInvalidKernelFile: "a PTX JIT compilation failed",
    mcError_t.mcErrorJitCompilerNotFound: "PTX JIT compiler library not found",
    mcError_t.mcErrorFileNotFound: "file not found",
    mcError_t.mcErrorInvalidResourceHandle: "invalid resource handle",
    mcError_t.mcErrorIllegalState: "the operation cannot be performed in the present state",
    mcError_t.mcErrorSymbolNotFound: "named symbol not found",
    mcError_t.mcErrorNotReady: "device not ready",
    mcError_t.mcErrorIllegalAddress: "an illegal memory access was encountered",
    mcError_t.mcErrorLaunchOutOfResources: "too many resources requested for launch",
    mcError_t.mcErrorLaunchTimeout: "the launch timed out and was terminated",
    mcError_t.mcErrorSetOnActiveProcess: "cannot set while device is active in this process",
    mcError_t.mcErrorContextIsDestroyed: "context is destroyed",
    mcError_t.mcErrorAssert: "device-side assert triggered",
    mcError_t.mcErrorHostMemoryAlreadyRegistered: "part or all of the requested memory range is already mapped",
    mcError_t.mcErrorHostMemoryNotRegistered: "pointer does not correspond to a registered memory region",
    mcError_t.mcErrorHardwareStackError: "hardware stack error",
    mcError_t.mcErrorIllegalInstruction: "an illegal instruction was encountered",
    mcError_t.mcErrorMisalignedAddress: "misaligned address",
    mcError_t.mcErrorInvalidAddressSpace: "operation not supported on global/shared address space",
    mcError_t.mcErrorInvalidPc: "invalid program counter",
    mcError_t.mcErrorLaunchFailure: "unspecified launch failure",
    mcError_t.mcErrorCooperativeLaunchTooLarge: "too many blocks in cooperative launch",
    mcError_t.mcErrorNotPermitted: "operation not permitted",
    mcError_t.mcErrorNotSupported: "operation not supported",
    mcError_t.mcErrorStreamCaptureUnsupported: "operation not permitted when stream is capturing",
    mcError_t.mcErrorStreamCaptureInvalidated: "operation failed due to a previous error during capture",
    mcError_t.mcErrorStreamCaptureUnmatched: "the capture was not initiated in this stream",
    mcError_t.mcErrorStreamCaptureUnjoined: "capturing stream has unjoined work",
    mcError_t.mcErrorStreamCaptureIsolation: "dependency created on uncaptured work in another stream",
    mcError_t.mcErrorStreamCaptureImplicit: "operation would make the legacy stream depend on a capturing blocking stream",
    mcError_t.mcErrorStreamCaptureWrongThread: "attempt to terminate a thread-local capture sequence from another thread",
    mcError_t.mcErrorTimeout: "wait operation timed out",
    mcError_t.mcErrorInvalidClusterSize: "a kernel launch error has occurred due to cluster misconfiguration",
    mcError_t.mcErrorUnknown: "unknown error",
    mcError_t.mcErrorMemoryFree: "memory free failed",
    mcError_t.mcErrorDuplicateLoadModule: "module is already loaded",
}

UNRECOGNIZED = "unrecognized error code"


def error_name(code: int) -> str:
    """The enum name of a code, or "unrecognized error code"."""
    try:
        return mcError_t(code).name
    except ValueError:
        return UNRECOGNIZED


def error_string(code: int) -> str:
    """The human description of a code, or "unrecognized error code"."""
    try:
        return _STRINGS[mcError_t(code)]
    except (ValueError, KeyError):
        return UNRECOGNIZED


class McError(Exception):
    """A failed mc* call: the code the runtime returns plus a sentence
    saying exactly what was wrong."""

    def __init__(self, code: mcError_t, message: str = ""):
        self.code = mcError_t(code)
        self.message = message or error_string(code)
        super().__init__(f"{self.code.name}: {self.message}")


_BY_CAUSE: dict[Cause, mcError_t] = {
    Cause.CONFIGURATION: mcError_t.mcErrorInvalidConfiguration,
    Cause.PITCH: mcError_t.mcErrorInvalidPitchValue,
    Cause.SYMBOL: mcError_t.mcErrorInvalidSymbol,
    Cause.DEVICE_POINTER: mcError_t.mcErrorInvalidDevicePointer,
    Cause.MEMCPY_DIRECTION: mcError_t.mcErrorInvalidMemcpyDirection,
    Cause.DEVICE_FUNCTION: mcError_t.mcErrorInvalidDeviceFunction,
    Cause.DUPLICATE_VARIABLE_NAME: mcError_t.mcErrorDuplicateVariableName,
}


def _camel(curesult_name: str) -> str:
    words = curesult_name.removeprefix("CUDA_ERROR_").split("_")
    return "mcError" + "".join(w.capitalize() for w in words)


_BY_NAME: dict[str, mcError_t] = {m.name.lower(): m for m in mcError_t}


def from_status(status: CUresult | int, cause: Cause | None = None) -> mcError_t:
    """The mc* code of an engine result (see the module docstring)."""
    if cause is not None:
        return _BY_CAUSE[cause]
    try:
        return mcError_t(int(status))
    except ValueError:
        pass
    try:
        name = CUresult(int(status)).name
    except ValueError:
        return mcError_t.mcErrorUnknown
    return _BY_NAME.get(_camel(name).lower(), mcError_t.mcErrorUnknown)


def from_engine(error: EngineError) -> McError:
    """The McError an EngineError becomes at the mc* boundary."""
    return McError(from_status(error.status, error.cause), error.message)
