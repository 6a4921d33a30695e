"""Input checking of the cudbg facade, driven by the C parameter types of api_table.

A C caller cannot pass a uint32_t that does not fit, an enum value outside
its typedef or a NULL where a buffer is required without the API noticing
(CUDBG_ERROR_INVALID_ARGS); a Python caller can pass anything. The one idea:
the parameter's C type string in the table picks its converter, so every
entry is checked the same way and a new entry needs no new code unless it
introduces a new C type. A converter returns the value the implementation
works with (an enum member, bytes, a tuple of ints) or raises ArgumentError
naming the parameter.

It deliberately does not check semantic ranges (a device index below the
device count, a register number below getNumRegisters): those depend on the
device and are the Session's business.
"""
from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from gpudbg.debug.cudbg.api_table import ApiEntry, Param
from gpudbg.debug.cudbg.enums import ENUMS, CUDBGAttribute
from gpudbg.debug.cudbg.layouts import CUDBGAttributeValuePair


class ArgumentError(ValueError):
    """An input does not fit its C parameter type (CUDBG_ERROR_INVALID_ARGS)."""


def _unsigned(bits: int) -> Callable[[Param, Any], int]:
    limit = 1 << bits

    def convert(p: Param, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
            raise ArgumentError(f"{p.name} must be an integer ({p.type}), got {type(value).__name__}")
        v = int(value.__index__()) if not isinstance(value, int) else int(value)
        if not 0 <= v < limit:
            raise ArgumentError(f"{p.name}={v} does not fit {p.type}")
        return v
    return convert


def _bool(p: Param, value: Any) -> bool:
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise ArgumentError(f"{p.name} must be a bool, got {value!r}")


def _enum(cls: type[enum.IntEnum] | type[enum.IntFlag]) -> Callable[[Param, Any], Any]:
    def convert(p: Param, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentError(f"{p.name} must be a {cls.__name__}, got {type(value).__name__}")
        if issubclass(cls, enum.IntFlag):
            known = 0
            for member in cls:
                known |= int(member)
            if int(value) < 0 or int(value) & ~known:
                raise ArgumentError(f"{p.name}=0x{int(value):x} has bits that are not {cls.__name__} flags")
            return cls(int(value))
        try:
            return cls(int(value))
        except ValueError:
            raise ArgumentError(f"{p.name}={int(value)} is not a {cls.__name__}") from None
    return convert


def _bytes_in(p: Param, value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise ArgumentError(f"{p.name} must be a bytes-like buffer ({p.type}), got {type(value).__name__}")


def _cstring(p: Param, value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).split(b"\0", 1)[0].decode("utf-8", errors="replace")
    if not isinstance(value, str):
        raise ArgumentError(f"{p.name} must be a string ({p.type}), got {type(value).__name__}")
    return value


def _u32_array(p: Param, value: Any) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ArgumentError(f"{p.name} must be a sequence of uint32_t, got {type(value).__name__}")
    elem = _unsigned(32)
    return tuple(elem(Param("uint32_t", f"{p.name}[{i}]", p.direction), v) for i, v in enumerate(value))


def _attribute_pairs(p: Param, value: Any) -> tuple[CUDBGAttribute, ...]:
    """INOUT pairs: the attributes asked for; a pair's value field is ignored on input."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ArgumentError(f"{p.name} must be a sequence of CUDBGAttribute or CUDBGAttributeValuePair")
    attr = _enum(CUDBGAttribute)
    out = []
    for i, v in enumerate(value):
        v = v.attribute if isinstance(v, CUDBGAttributeValuePair) else v
        out.append(attr(Param("CUDBGAttribute", f"{p.name}[{i}].attribute", p.direction), v))
    return tuple(out)


def _callback(p: Param, value: Any) -> Callable[..., Any] | None:
    if value is None or callable(value):
        return value
    raise ArgumentError(f"{p.name} must be callable or None, got {type(value).__name__}")


def _anything(p: Param, value: Any) -> Any:
    return value


CONVERTERS: dict[str, Callable[[Param, Any], Any]] = {
    "uint32_t": _unsigned(32),
    "uint64_t": _unsigned(64),
    "uintptr_t": _unsigned(64),
    "bool": _bool,
    "const void *": _bytes_in,
    "const char *": _cstring,
    "char *": _cstring,                 # lookupDeviceCodeSymbol.symName (an input)
    "const uint32_t *": _u32_array,
    "uint32_t *": _u32_array,           # the texture coords (inputs)
    "CUDBGAttributeValuePair *": _attribute_pairs,
    "CUDBGNotifyNewEventCallback": _callback,
    "void *": _anything,                # setNotifyNewEventCallback.userData, handed back untouched
}
for _cname, _cls in ENUMS.items():
    CONVERTERS.setdefault(_cname, _enum(_cls))


def converter(p: Param) -> Callable[[Param, Any], Any]:
    try:
        return CONVERTERS[p.type]
    except KeyError:
        raise TypeError(f"no input converter for C type {p.type!r} (parameter {p.name})") from None


def bind(entry: ApiEntry, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The converted inputs of one call, in table order, from positional and keyword arguments."""
    inputs = entry.inputs
    names = [p.name for p in inputs]
    if len(args) > len(inputs):
        raise ArgumentError(f"{entry.name} takes {len(inputs)} input(s) ({', '.join(names) or 'none'}), "
                            f"got {len(args)}")
    values: dict[str, Any] = dict(zip(names, args))
    for key, v in kwargs.items():
        if key not in names:
            raise ArgumentError(f"{entry.name} has no input named {key!r} (inputs: {', '.join(names) or 'none'})")
        if key in values:
            raise ArgumentError(f"{entry.name}: input {key!r} given twice")
        values[key] = v
    missing = [n for n in names if n not in values]
    if missing:
        raise ArgumentError(f"{entry.name} is missing input(s) {', '.join(missing)}")
    return [converter(p)(p, values[p.name]) for p in inputs]
