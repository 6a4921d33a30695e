"""Packing kernel arguments into the kernel's parameter buffer.

The layout is the kernel's (`KernelParam.offset/size/align` from the PTX
.param declarations); each Python value is converted by the PTX type of its
parameter: ints (device pointers included) for integer and bit types, floats
for float types, numpy scalars of a matching kind, and bytes-like objects of
exactly the parameter's size for `.b8` arrays and structs (or any type, as
raw bytes). Anything else is an mcErrorInvalidValue naming the parameter.
"""
from __future__ import annotations

import struct
from typing import Any, Sequence

import numpy as np

from gpudbg.ptx.types import PTX_TYPES
from gpudbg.driver.status import CUresult, EngineError

INVALID = CUresult.CUDA_ERROR_INVALID_VALUE

_FLOAT_FORMATS = {2: "<e", 4: "<f", 8: "<d"}


def _fail(kernel: str, index: int, param: Any, why: str) -> EngineError:
    return EngineError(INVALID, f"{kernel}: argument {index} ({param.name}, .{param.type.lstrip('.')}"
                                f"{'' if param.size == _scalar_size(param) else f'[{param.size}]'}): {why}")


def _scalar_size(param: Any) -> int:
    t = PTX_TYPES.get(param.type.lstrip("."))
    return t.size if t is not None else param.size


def pack_value(kernel: str, index: int, param: Any, value: Any) -> bytes:
    tname = param.type.lstrip(".")
    ptype = PTX_TYPES.get(tname)
    size = param.size
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) != size:
            raise _fail(kernel, index, param, f"{len(raw)} bytes given, the parameter has {size}")
        return raw
    if ptype is None or size != ptype.size:
        raise _fail(kernel, index, param, f"an aggregate parameter needs bytes of length {size}, "
                                          f"got {type(value).__name__}")
    if isinstance(value, np.generic):
        if value.dtype.kind == "f":
            if ptype.kind != "f":
                raise _fail(kernel, index, param, f"a {value.dtype} value for an integer parameter")
            value = float(value)
        elif value.dtype.kind in "iub":
            value = int(value)
        else:
            raise _fail(kernel, index, param, f"unsupported numpy type {value.dtype}")
    if ptype.kind == "f" and ptype.dtype.kind == "f":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(kernel, index, param, f"needs a float, got {type(value).__name__}")
        return struct.pack(_FLOAT_FORMATS[size], float(value))
    if ptype.kind == "f":   # bf16 / packed types travel as raw bits
        if not isinstance(value, int) or isinstance(value, bool):
            raise _fail(kernel, index, param, "needs its raw bits as an int or bytes")
    if isinstance(value, float):
        raise _fail(kernel, index, param, "needs an int, got a float")
    if not isinstance(value, int):
        raise _fail(kernel, index, param, f"needs an int, got {type(value).__name__}")
    bits = 8 * size
    if not -(1 << (bits - 1)) <= value < (1 << bits):
        raise _fail(kernel, index, param, f"{value} does not fit in {bits} bits")
    return (value & ((1 << bits) - 1)).to_bytes(size, "little")


def pack_params(function: Any, args: Sequence[Any]) -> bytes:
    """The parameter buffer for `function` called with `args`."""
    params = function.params
    if not params and (args is None or args.__class__ in (list, tuple) and not args):
        return b""      # a kernel without parameters, called without arguments
    if args is None:
        args = ()
    if isinstance(args, (str, bytes, bytearray)) or not hasattr(args, "__len__"):
        raise EngineError(INVALID, f"{function.name}: kernelParams must be a sequence of values")
    if len(args) != len(params):
        raise EngineError(INVALID, f"{function.name} takes {len(params)} parameters, "
                                   f"{len(args)} given")
    buf = bytearray(function.param_size)
    for i, (p, v) in enumerate(zip(params, args)):
        raw = pack_value(function.name, i, p, v)
        buf[p.offset:p.offset + p.size] = raw
    return bytes(buf)


def unpack_extra(function: Any, extra: Any, keys: dict[str, int]) -> bytes:
    """The packed buffer of an `extra` argument: either the buffer itself or
    [BUFFER_POINTER, buf, BUFFER_SIZE, n, END] as in CU_LAUNCH_PARAM_*."""
    if isinstance(extra, (bytes, bytearray, memoryview, np.ndarray)):
        raw = bytes(memoryview(extra).cast("B")) if not isinstance(extra, bytes) else extra
    else:
        try:
            items = list(extra)
        except TypeError:
            raise EngineError(INVALID, f"extra must be a parameter buffer or a list of "
                                       f"CU_LAUNCH_PARAM_* entries, not {type(extra).__name__}") from None
        buf = size = None
        i = 0
        while i < len(items):
            key = items[i]
            if key == keys["END"]:
                break
            if i + 1 >= len(items):
                raise EngineError(INVALID, f"extra: key {key!r} has no value")
            if key == keys["BUFFER_POINTER"]:
                buf = bytes(memoryview(items[i + 1]).cast("B"))
            elif key == keys["BUFFER_SIZE"]:
                size = int(items[i + 1])
            else:
                raise EngineError(INVALID, f"extra: unknown key {key!r}")
            i += 2
        if buf is None:
            raise EngineError(INVALID, "extra has no MC_LAUNCH_PARAM_BUFFER_POINTER entry")
        if size is not None:
            if size > len(buf):
                raise EngineError(INVALID, f"extra: BUFFER_SIZE {size} exceeds the {len(buf)}-byte buffer")
            buf = buf[:size]
        raw = buf
    if len(raw) < function.param_size:
        raise EngineError(INVALID, f"{function.name}: packed parameter buffer has {len(raw)} bytes, "
                                   f"the kernel needs {function.param_size}")
    return raw[:function.param_size]
