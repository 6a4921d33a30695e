"""cudaError_t: names, descriptions, the per-thread last error, and the
cudaError_t <-> CUresult table.

cudaError_t's numbers are mcError_t's (gpudbg.runtime.errors), so an mc*
result is returned unchanged; the names and the descriptions are CUDA 13's
(error_table.py, generated from driver_types.h and NVIDIA's libcudart).
cudaGetErrorName/String return `const char*`: each answer is a ctypes
buffer made once and kept, so the same code always gives the same,
forever-valid address. The last error is the mc layer's: cudaGetLastError
is mcGetLastError.

The table between the two enums is derived by name (cudaErrorFooBar ~
CUDA_ERROR_FOO_BAR), then by number where both enums have it (the
synonyms: cudaErrorMemoryAllocation = CUDA_ERROR_OUT_OF_MEMORY = 2, ...),
then, for runtime-only codes, by what the runtime code means in driver
terms (RUNTIME_ONLY below); whatever is left is CUDA_ERROR_UNKNOWN /
cudaErrorUnknown.
"""
from __future__ import annotations

from gpudbg import cabi
from gpudbg.cuda_runtime.error_table import CODES
from gpudbg.driver.status import CUresult
from gpudbg.runtime import mc

__all__ = ["cudaGetErrorName", "cudaGetErrorString", "cudaGetLastError", "cudaPeekAtLastError"]

NAMES: dict[int, str] = {number: name for name, number, _ in CODES}
DESCRIPTIONS: dict[int, str] = {number: text for _, number, text in CODES}
BY_NAME: dict[str, int] = {name: number for name, number, _ in CODES}
UNRECOGNIZED = "unrecognized error code"
UNKNOWN = BY_NAME["cudaErrorUnknown"]

# Runtime-only codes (no CUresult of that name or number): the driver code
# that says the same thing. The launch-configuration, pitch, pointer and
# direction errors are argument errors to the driver; a symbol is a named
# global (NOT_FOUND); a device function is a function handle (INVALID_HANDLE).
RUNTIME_ONLY: dict[str, str] = {
    "cudaErrorInvalidConfiguration": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorInvalidPitchValue": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorInvalidSymbol": "CUDA_ERROR_NOT_FOUND",
    "cudaErrorInvalidHostPointer": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorInvalidDevicePointer": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorInvalidTexture": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorInvalidTextureBinding": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorInvalidChannelDescriptor": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorInvalidMemcpyDirection": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorInvalidFilterSetting": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorInvalidNormSetting": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorInvalidSurface": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorMissingConfiguration": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorMemoryValueTooLarge": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorInvalidDeviceFunction": "CUDA_ERROR_INVALID_HANDLE",
    "cudaErrorPriorLaunchFailure": "CUDA_ERROR_LAUNCH_FAILED",
    "cudaErrorNotYetImplemented": "CUDA_ERROR_NOT_SUPPORTED",
    "cudaErrorInsufficientDriver": "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
    "cudaErrorDuplicateVariableName": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorDuplicateTextureName": "CUDA_ERROR_INVALID_VALUE",
    "cudaErrorDuplicateSurfaceName": "CUDA_ERROR_INVALID_VALUE",
}


def _key_runtime(name: str) -> str:
    return name.removeprefix("cuda").lower()


def _key_driver(name: str) -> str:
    return name.removeprefix("CUDA_").replace("_", "").lower()


def _derive() -> tuple[dict[int, int], dict[int, int]]:
    drv_by_key = {_key_driver(m.name): m for m in CUresult}
    drv_numbers = {int(m) for m in CUresult}
    rt_by_key = {_key_runtime(name): number for name, number, _ in CODES}
    to_cu: dict[int, int] = {}
    for name, number, _ in CODES:
        m = drv_by_key.get(_key_runtime(name))
        if m is not None:
            to_cu[number] = int(m)
        elif number in drv_numbers:
            to_cu[number] = number
        elif name in RUNTIME_ONLY and RUNTIME_ONLY[name] in CUresult.__members__:
            to_cu[number] = int(CUresult[RUNTIME_ONLY[name]])
        else:
            to_cu[number] = int(CUresult.CUDA_ERROR_UNKNOWN)
    from_cu: dict[int, int] = {}
    for m in CUresult:
        number = rt_by_key.get(_key_driver(m.name))
        if number is None:
            number = int(m) if int(m) in NAMES else UNKNOWN
        from_cu.setdefault(int(m), number)
    return to_cu, from_cu


TO_CURESULT, FROM_CURESULT = _derive()


def to_curesult(error: int) -> int:
    """The CUresult that says what cudaError_t `error` says."""
    return TO_CURESULT.get(int(error), int(CUresult.CUDA_ERROR_UNKNOWN))


def from_curesult(status: int) -> int:
    """The cudaError_t the runtime returns for a driver result."""
    return FROM_CURESULT.get(int(status), UNKNOWN)


def to_cuda(code: int) -> int:
    """An mc* result as a cudaError_t (the same number where CUDA has it)."""
    return int(code) if int(code) in NAMES else UNKNOWN


# ------------------------------------------------------------------ const char* answers
def error_name(error: int) -> str:
    return NAMES.get(int(error), UNRECOGNIZED)


def error_string(error: int) -> str:
    return DESCRIPTIONS.get(int(error), UNRECOGNIZED)


def cudaGetErrorName(error: int) -> int:
    """`const char*` of the code's enum name ("unrecognized error code" if unknown)."""
    error = int(error) & 0xFFFFFFFF
    return cabi.lasting_c_string(error_name(error))


def cudaGetErrorString(error: int) -> int:
    """`const char*` of the code's description ("unrecognized error code" if unknown)."""
    error = int(error) & 0xFFFFFFFF
    return cabi.lasting_c_string(error_string(error))


def cudaGetLastError() -> int:
    """The thread's last error, then reset to cudaSuccess (mcGetLastError)."""
    return to_cuda(mc.mcGetLastError()[0])


def cudaPeekAtLastError() -> int:
    """The thread's last error, not reset (mcPeekAtLastError)."""
    return to_cuda(mc.mcPeekAtLastError()[0])
