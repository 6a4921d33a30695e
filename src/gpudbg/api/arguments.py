"""Python values as kernel arguments: what the runtime cannot be handed as is.

The runtime matches ints, floats and numpy scalars to the PTX parameter
types itself (driver/params.py) and takes raw bytes for aggregates. This
module turns everything else into one of those: a DeviceArray, a CUDA Array
Interface or CUDA DLPack producer (numba, cuda.core, CuPy arrays) into its
device pointer, and a struct into its bytes: a numpy record scalar (np.void
with a structured dtype), a 0-d structured array or a ctypes.Structure. A
struct's size is checked against the kernel's parameter here, because only
here is it known which Python type the bytes came from; the error names the
kernel, the argument, its PTX name and both sizes.

It does not check field layouts (PTX knows only sizes and alignment), nor
convert host arrays: a host numpy array argument is refused with a hint.
"""
from __future__ import annotations

import ctypes
from typing import Any, Sequence

import numpy as np


def params_of(handle: Any) -> Sequence[Any]:
    """The kernel's PTX parameters (name, type, size, offset): what
    cuFuncGetParamInfo reports, read from the mcFunction_t."""
    kernel = getattr(handle, "kernel", None)
    return getattr(kernel, "params", ()) or ()


def _struct_bytes(kernel: str, index: int, param: Any, raw: bytes, what: str) -> bytes:
    if param is not None and len(raw) != param.size:
        raise TypeError(f"{kernel}: argument {index} ({param.name}) is a {what} of {len(raw)} bytes, "
                        f"but the kernel's parameter has {param.size} bytes")
    return raw


def convert(kernel: str, index: int, value: Any, param: Any = None) -> Any:
    """The value mcLaunchKernel receives for one Python argument."""
    from gpudbg.api.interop import asarray, is_device_producer
    from gpudbg.api.memory import DeviceArray

    if isinstance(value, DeviceArray):
        value._check_live()
        return value.ptr
    from gpudbg.api.textures import Surface, Texture
    if isinstance(value, (Texture, Surface)):
        return value.handle                  # cudaTextureObject_t / cudaSurfaceObject_t: a 64-bit value
    if isinstance(value, ctypes.Structure):
        return _struct_bytes(kernel, index, param, bytes(value),
                             f"ctypes.Structure {type(value).__name__}")
    if isinstance(value, np.void) or (isinstance(value, np.ndarray) and value.ndim == 0
                                      and value.dtype.fields is not None):
        data = np.asarray(value)
        return _struct_bytes(kernel, index, param, data.tobytes(), f"numpy record {data.dtype}")
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value[()]
        raise TypeError(f"{kernel}: argument {index} is a host numpy array {value.shape} "
                        f"{value.dtype}; copy it to the device with gpudbg.to_device()")
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if not isinstance(value, (int, float, np.generic, bytes, bytearray, memoryview)) and is_device_producer(value):
        return asarray(value).ptr
    return value


def convert_all(kernel: str, handle: Any, args: Sequence[Any]) -> list[Any]:
    params = list(params_of(handle))
    return [convert(kernel, i, a, params[i] if i < len(params) else None) for i, a in enumerate(args)]
