"""The argument kinds of the mc* validation layer (see _args.py, which
annotates the functions with them and binds calls).

Each Kind checks one value the way the C type of a parameter constrains it
and returns it normalized (numpy integers as ints, dims as 3-tuples,
argument sequences as lists), or raises Bad with the mcError_t to return
and the phrase saying what the parameter takes. A kind never looks at
driver state (liveness, ownership, sizes of allocations): that is the
driver's check.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import os
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Callable

import numpy as np

from gpudbg.driver.linker import LinkedImage
from gpudbg.driver.module import Function, Module
from gpudbg.driver.stream import Stream
from gpudbg.runtime.errors import McError, mcError_t

E = mcError_t
MAX_PATH = 4096          # PATH_MAX
MAX_NAME = 1 << 16       # longest kernel/symbol name worth looking up
MAX_PARAMS = 1 << 13     # CUDA's 32764 bytes of kernel parameters: at most 8191 four-byte values


class Bad(Exception):
    """A kind's refusal: the code and what the parameter needed."""

    def __init__(self, code: mcError_t, need: str):
        super().__init__(need)
        self.code, self.need = code, need


def show(value: Any) -> str:
    """A short, always-computable description of a value for messages."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, enum.Enum)):
        v = int(value)
        return f"an int of {v.bit_length()} bits" if v.bit_length() > 128 else str(v)
    if isinstance(value, np.ndarray):
        return f"a numpy array (dtype={value.dtype}, shape={value.shape})"
    if isinstance(value, (list, tuple, dict, set, frozenset, bytes, bytearray, str)) and len(value) > 40:
        return f"a {type(value).__name__} of length {len(value)}"
    try:
        text = repr(value)
    except Exception:              # a repr that fails (or an int inside too long to print)
        return f"a {type(value).__name__}"
    return text if len(text) <= 80 else f"{text[:60]}... (a {type(value).__name__})"


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


class Kind:
    """What one parameter takes. `check` returns the (normalized) value or
    raises Bad; `need` is the phrase messages use."""

    need = "anything"

    def check(self, value: Any) -> Any:
        return value

    def inline(self, arg: str, check: str, namespace: dict) -> str:
        """A Python expression for check(arg) that the unrolled binder
        (_args.py) writes in place of the call: a kind whose common case is
        one test gives that test inline, falling back to the call."""
        return f"{check}({arg})"


class Opaque(Kind):
    """Passed through untouched (user data handed back to a callback)."""


@dataclasses.dataclass(frozen=True)
class IntKind(Kind):
    lo: int
    hi: int
    need: str
    code: mcError_t = E.mcErrorInvalidValue          # out of range
    type_code: mcError_t = E.mcErrorInvalidValue     # not an int at all
    optional: bool = False                           # None accepted (and kept)

    def check(self, value: Any) -> Any:
        if value.__class__ is int and self.lo <= value <= self.hi:
            return value       # a plain int in range: what nearly every call passes
        return self._check_other(value)

    def inline(self, arg: str, check: str, namespace: dict) -> str:
        return f"{arg} if {arg}.__class__ is int and {self.lo} <= {arg} <= {self.hi} else {check}({arg})"

    def _check_other(self, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if not _is_int(value):
            raise Bad(self.type_code, self.need)
        v = int(value)
        if v < self.lo:
            raise Bad(self.code, self.need if f">= {self.lo}" in self.need else
                      f"{self.need} of at least {_bound(self.lo)}")
        if v > self.hi:
            raise Bad(self.code, f"{self.need} of at most {_bound(self.hi)}")
        return value if isinstance(value, enum.Enum) else v


def _bound(n: int) -> str:
    """A limit as a reader knows it: 2**64-1 rather than 18446744073709551615."""
    for b in (31, 32, 63, 64):
        if n == 2**b - 1:
            return f"2**{b}-1"
        if n == -2**b:
            return f"-2**{b}"
    return str(n)


@dataclasses.dataclass(frozen=True)
class EnumKind(Kind):
    """An int that must be a member of `cls` (IntEnum members and numpy
    ints accepted; the member is passed on)."""

    cls: type
    code: mcError_t = E.mcErrorInvalidValue

    @property
    def need(self) -> str:  # type: ignore[override]
        return f"an {self.cls.__name__}"

    def check(self, value: Any) -> Any:
        if not _is_int(value):
            raise Bad(self.code, self.need)
        try:
            return self.cls(int(value))
        except ValueError:
            raise Bad(self.code, self.need) from None


def _memory_view(value: Any) -> memoryview | None:
    try:
        return memoryview(value)
    except TypeError:
        return None


def check_buffer(value: Any, writable: bool) -> memoryview:
    """A host buffer the copy engine may read (or write): buffer protocol,
    C-contiguous, plain data (never Python object pointers), writable when
    it is a destination. Raises Bad otherwise."""
    if isinstance(value, np.ndarray) and value.dtype.hasobject:
        raise Bad(E.mcErrorInvalidValue, "memory: an array of Python objects (dtype=object) holds "
                                         "object pointers, not data")
    mv = _memory_view(value)
    if mv is None:
        raise Bad(E.mcErrorInvalidValue, "a pointer (int) or a host buffer (numpy array, bytearray, "
                                         "any buffer-protocol object)")
    if "O" in mv.format:
        raise Bad(E.mcErrorInvalidValue, "memory: a buffer of Python objects (format 'O') holds "
                                         "object pointers, not data")
    if not mv.c_contiguous:
        raise Bad(E.mcErrorInvalidValue, "a C-contiguous buffer (this one is strided; pass a "
                                         "contiguous copy)")
    if writable and mv.readonly:
        raise Bad(E.mcErrorInvalidValue, "a writable buffer (this one is read-only)")
    return mv


@dataclasses.dataclass(frozen=True)
class MemoryKind(Kind):
    """Memory as C's `void *`: a pointer (int) to device, pinned, managed or
    registered memory, or (pointers=False: only) a host buffer object."""

    writable: bool
    pointers: bool = True
    buffers: bool = True
    optional: bool = False        # None accepted (an unused operand of a struct)

    @property
    def need(self) -> str:  # type: ignore[override]
        what = [w for w, ok in (("a pointer (int)", self.pointers), ("a host buffer object", self.buffers)) if ok]
        return " or ".join(what) + (" (written)" if self.writable and self.buffers else "")

    def check(self, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if _is_int(value):
            if not self.pointers:
                raise Bad(E.mcErrorInvalidValue, "the host buffer object itself (a Python program "
                                                 "has no raw host pointers to pass here)")
            v = int(value)
            if not 0 <= v < 1 << 64:
                raise Bad(E.mcErrorInvalidValue, "a pointer (an int from 0 to 2**64-1)")
            return v
        if not self.buffers:
            raise Bad(E.mcErrorInvalidValue, self.need)
        check_buffer(value, self.writable)
        return value


@dataclasses.dataclass(frozen=True)
class HandleKind(Kind):
    """An object handle of one of `classes` (its liveness is the driver's
    check); `ints` are the integer values that also name one (the default
    streams)."""

    classes: tuple
    need: str
    code: mcError_t = E.mcErrorInvalidResourceHandle
    ints: frozenset = frozenset()
    none: bool = False
    null_code: mcError_t | None = None    # the code for None (NULL), when it differs

    def check(self, value: Any) -> Any:
        if isinstance(value, self.classes):
            return value
        if value is None and self.none:
            return None
        return self._check_other(value)

    def inline(self, arg: str, check: str, namespace: dict) -> str:
        namespace[f"{arg}_classes"] = self.classes
        test = f"isinstance({arg}, {arg}_classes)"
        if self.none:
            test = f"{arg} is None or {test}"
        return f"{arg} if {test} else {check}({arg})"

    def _check_other(self, value: Any) -> Any:
        if value is None and self.null_code is not None:
            raise Bad(self.null_code, self.need)
        if _is_int(value) and int(value) in self.ints:
            return int(value)
        raise Bad(self.code, self.need)


class CallableKind(Kind):
    need = "a callable"

    def check(self, value: Any) -> Any:
        if not callable(value):
            raise Bad(E.mcErrorInvalidValue, self.need)
        return value


@dataclasses.dataclass(frozen=True)
class IntOrCallableKind(Kind):
    need: str = "bytes (an int >= 0) or a function of the block size"

    def check(self, value: Any) -> Any:
        if callable(value) and not _is_int(value):
            return _guarded(value)
        return IntKind(0, 2**64 - 1, self.need).check(value)


def _guarded(fn: Callable[[int], Any]) -> Callable[[int], int]:
    """The program's function of the block size, whose exception or bad
    answer is the call's mcErrorInvalidValue (not the simulator's bug)."""
    def call(block_size: int) -> int:
        try:
            out = fn(block_size)
        except Exception as e:
            raise McError(E.mcErrorInvalidValue, f"the dynamic shared memory function raised "
                                                 f"{type(e).__name__} for block size {block_size}") from None
        if not _is_int(out) or not 0 <= int(out) < 1 << 64:
            raise McError(E.mcErrorInvalidValue, f"the dynamic shared memory function returned {show(out)} "
                                                 f"for block size {block_size}, not a size")
        return int(out)
    return call


@dataclasses.dataclass(frozen=True)
class SequenceKind(Kind):
    """A sequence (list, tuple, 1-D numpy array of numbers; never a string
    or bytes), returned as a list; None when `optional` (kept as None)."""

    need: str = "a sequence (list or tuple)"
    optional: bool = False
    max_len: int = 1 << 20
    elements: Kind | None = None
    single: type | None = None      # one bare instance of this type stands for [it]
    keep: bool = False              # pass the caller's own object on (outputs are written into it)

    def check(self, value: Any) -> Any:
        cls = value.__class__
        if (cls is list or cls is tuple) and (self.single is None or not issubclass(cls, self.single)):
            # a plain list or tuple (every launch's arguments): a Sequence, without the ABC checks
            if len(value) > self.max_len:
                raise Bad(E.mcErrorInvalidValue, f"{self.need} of at most {self.max_len} items")
            return value if self.keep else self._items(value)
        if value is None and self.optional:
            return None
        if self.single is not None and isinstance(value, self.single):
            return [value]
        if isinstance(value, (str, bytes, bytearray, memoryview)) or not isinstance(value, (Sequence, np.ndarray)):
            raise Bad(E.mcErrorInvalidValue, self.need)
        if isinstance(value, np.ndarray) and (value.ndim != 1 or value.dtype.hasobject):
            raise Bad(E.mcErrorInvalidValue, f"{self.need} (a numpy array must be 1-D numbers)")
        if len(value) > self.max_len:
            raise Bad(E.mcErrorInvalidValue, f"{self.need} of at most {self.max_len} items")
        if self.keep:
            return value
        return self._items(value)

    def _items(self, value: Any) -> list:
        items = list(value)
        if self.elements is not None:
            for i, item in enumerate(items):
                try:
                    items[i] = self.elements.check(item)
                except Bad as bad:
                    raise Bad(bad.code, f"{self.need} whose items are each {bad.need} (item {i} is "
                                        f"{show(item)})") from None
        return items


_PARAM_SCALARS = (int, float, bytes, bytearray, memoryview, np.generic)
_PLAIN_PARAMS = {int, float}
_INTS = {int}


class KernelParamsKind(SequenceKind):
    """Kernel arguments: a sequence of ints, floats, numpy scalars or bytes
    (a struct's raw bytes); each is matched to its PTX parameter type by
    driver/params.py."""

    def __init__(self, optional: bool) -> None:
        super().__init__("a sequence of kernel arguments (ints, floats, numpy scalars, bytes)",
                         optional, MAX_PARAMS)

    def check(self, value: Any) -> Any:
        if (value.__class__ is list or value.__class__ is tuple) and len(value) <= MAX_PARAMS:
            items = list(value)     # SequenceKind.check's plain-sequence path, without the call
        else:
            items = super().check(value)
        if not items or set(map(type, items)) <= _PLAIN_PARAMS:
            return items            # none, or plain ints and floats (most launches): nothing to refuse
        for i, item in enumerate(items or ()):
            if isinstance(item, bool) or not isinstance(item, _PARAM_SCALARS) or \
                    (isinstance(item, memoryview) and "O" in item.format):
                raise Bad(E.mcErrorInvalidValue, f"{self.need}; argument {i} is {show(item)}")
            if isinstance(item, np.generic) and item.dtype.kind not in "iufb":
                raise Bad(E.mcErrorInvalidValue, f"{self.need}; argument {i} has dtype {item.dtype}")
        return items


@dataclasses.dataclass(frozen=True)
class Dim3Kind(Kind):
    """A dim3: an int or 1 to 3 ints; dimensions outside 0..2**32-1 cannot
    be a dim3 at all (mcErrorInvalidConfiguration, like any dimension
    outside the device's limits)."""

    need: str = "an int or a sequence of 1 to 3 ints"

    def inline(self, arg: str, check: str, namespace: dict) -> str:
        namespace["_INTS"] = _INTS
        return (f"({arg}, 1, 1) if {arg}.__class__ is int and 0 <= {arg} < {1 << 32} else "
                f"{arg} if {arg}.__class__ is tuple and len({arg}) == 3 and set(map(type, {arg})) == _INTS "
                f"and min({arg}) >= 0 and max({arg}) < {1 << 32} else {check}({arg})")

    def check(self, value: Any) -> tuple[int, int, int]:
        if value.__class__ is int and 0 <= value < 1 << 32:
            return (value, 1, 1)    # a plain int in range: the common launch
        if value.__class__ is tuple and len(value) == 3 and set(map(type, value)) == _INTS \
                and min(value) >= 0 and max(value) < 1 << 32:
            return value            # a plain (x, y, z) of ints in range: the Pythonic layer's launch
        if _is_int(value):
            dims = [value]
        elif isinstance(value, (str, bytes, bytearray)) or not isinstance(value, (Sequence, np.ndarray)) \
                or not 1 <= len(value) <= 3:
            raise Bad(E.mcErrorInvalidValue, self.need)
        else:
            dims = list(value)
        out = []
        for d in dims:
            if not _is_int(d):
                raise Bad(E.mcErrorInvalidValue, self.need)
            if not 0 <= int(d) < 1 << 32:
                raise Bad(E.mcErrorInvalidConfiguration, "dimensions from 1 to 2**32-1 (within the device's limits)")
            out.append(int(d))
        return tuple(out + [1] * (3 - len(out)))  # type: ignore[return-value]


class LaunchExtraKind(Kind):
    """`extra` of mcModuleLaunchKernel: None, the packed parameter buffer
    itself, or [MC_LAUNCH_PARAM_BUFFER_POINTER, buffer,
    MC_LAUNCH_PARAM_BUFFER_SIZE, n, MC_LAUNCH_PARAM_END] (keys in any order;
    END ends the list)."""

    need = ("None, a packed parameter buffer, or [MC_LAUNCH_PARAM_BUFFER_POINTER, buffer, "
            "MC_LAUNCH_PARAM_BUFFER_SIZE, n, MC_LAUNCH_PARAM_END]")

    def check(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, (list, tuple)):
            items = list(value[:256])
            i = 0
            while i < len(items):
                key = items[i]
                if not _is_int(key) or int(key) not in (0, 1, 2):
                    raise Bad(E.mcErrorInvalidValue, f"{self.need} (entry {i} is {show(key)}, not a key)")
                if int(key) == 0:
                    return items[:i + 1]
                if i + 1 < len(items):
                    v = items[i + 1]
                    if int(key) == 1:
                        check_buffer(v, False)
                    elif not _is_int(v) or not 0 <= int(v) < 1 << 32:
                        raise Bad(E.mcErrorInvalidValue, f"{self.need} (the buffer size is {show(v)})")
                    items[i + 1] = int(v) if int(key) == 2 else v
                i += 2
            return items
        check_buffer(value, False)
        return value


class LaunchListKind(Kind):
    """The mcLaunchParams list of a multi-device launch: each entry a
    LaunchParams, a mapping of its fields, or a record with them; returned
    as checked LaunchParams (func a function handle, dims dim3s, args a
    sequence of kernel arguments, sharedMem a size, stream a stream)."""

    need = "a sequence of mcLaunchParams (func, gridDim, blockDim, args, sharedMem, stream)"
    _FIELDS = ("func", "gridDim", "blockDim", "args", "sharedMem", "stream")

    def check(self, value: Any) -> Any:
        from gpudbg.driver.types import LaunchParams
        items = SequenceKind(self.need, max_len=1 << 10).check(value)
        kinds = dict(func=HandleKind((Function,), "a function handle"), gridDim=Dim3Kind(), blockDim=Dim3Kind(),
                     args=KernelParamsKind(optional=True), sharedMem=IntKind(0, 2**64 - 1, "a size"),
                     stream=STREAM)
        out = []
        for i, p in enumerate(items):
            if isinstance(p, Mapping):
                unknown = set(p) - set(self._FIELDS)
                if unknown or not {"func", "gridDim", "blockDim"} <= set(p):
                    raise Bad(E.mcErrorInvalidValue, f"{self.need}; entry {i} has fields {sorted(map(str, p))}")
                fields = dict(p)
            elif all(hasattr(p, f) for f in ("func", "gridDim", "blockDim")):
                fields = {f: getattr(p, f) for f in self._FIELDS if hasattr(p, f)}
            else:
                raise Bad(E.mcErrorInvalidValue, f"{self.need}; entry {i} is {show(p)}")
            for name, v in fields.items():
                try:
                    fields[name] = kinds[name].check(v)
                except Bad as bad:
                    raise Bad(bad.code, f"{self.need}; entry {i}'s {name} must be {bad.need}, got {show(v)}") from None
            if fields.get("args") is None:
                fields["args"] = []
            out.append(LaunchParams(**fields))
        return out


class PathKind(Kind):
    need = "a file path (str, bytes or os.PathLike) without NUL characters"

    def check(self, value: Any) -> Any:
        try:
            p = os.fspath(value)
        except TypeError:
            raise Bad(E.mcErrorInvalidValue, self.need) from None
        if isinstance(p, bytes):
            try:
                p = os.fsdecode(p)
            except UnicodeDecodeError:
                raise Bad(E.mcErrorInvalidValue, self.need) from None
        if not p or "\x00" in p or len(p) > MAX_PATH:
            raise Bad(E.mcErrorInvalidValue, f"a non-empty file path of at most {MAX_PATH} characters "
                                             f"without NUL characters")
        return p


@dataclasses.dataclass(frozen=True)
class NameKind(Kind):
    """A name (kernel, variable, file label): a str without NUL characters."""

    need: str = "a name (str) without NUL characters"
    empty: bool = True

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or "\x00" in value or len(value) > MAX_NAME or (not value and not self.empty):
            raise Bad(E.mcErrorInvalidValue, self.need)
        return value


class SymbolKind(Kind):
    """A device variable: its name, or a (module, name) pair."""

    need = "a variable name (str) or a (module, name) pair"

    def check(self, value: Any) -> Any:
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], Module):
            NameKind(self.need).check(value[1])
            return value
        if isinstance(value, str):
            return NameKind(self.need).check(value)
        raise Bad(E.mcErrorInvalidSymbol, self.need)


class KernelSymbolKind(Kind):
    """A kernel's symbol: its function handle, its name or its code address."""

    need = "a function handle, a kernel name (str) or a code address (int)"

    def check(self, value: Any) -> Any:
        if isinstance(value, Function):
            return value
        if isinstance(value, str):
            return NameKind(self.need).check(value)
        if _is_int(value):
            return IntKind(0, 2**64 - 1, self.need).check(value)
        raise Bad(E.mcErrorInvalidValue, self.need)


class ImageKind(Kind):
    """A module image: PTX text, image bytes (any plain buffer), a linked
    image, or a pointer (int) to one in memory."""

    need = "an image: PTX text (str), bytes or a buffer, a linked image, or a pointer (int)"

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, LinkedImage)):
            return value
        if _is_int(value):
            return MemoryKind(False).check(value)
        if _memory_view(value) is None:
            raise Bad(E.mcErrorInvalidValue, self.need)
        check_buffer(value, False)
        return value


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict:
    try:
        return typing.get_type_hints(cls)
    except Exception:           # a forward reference the module cannot resolve: fields unchecked
        return {}


def _field_kind(annotation: Any) -> Kind | None:
    if annotation in (int, "int"):
        return INT
    if annotation in (float, "float"):
        return _FLOAT
    return None


INT = IntKind(-2**63, 2**64 - 1, "an int")
STREAM = HandleKind((Stream,), "a stream handle (mcStream_t, or 0/None, mcStreamLegacy, mcStreamPerThread)",
                    ints=frozenset({0, 1, 2}), none=True)


class _FloatKind(Kind):
    need = "a number"

    def check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise Bad(E.mcErrorInvalidValue, self.need)
        return value


_FLOAT = _FloatKind()


@dataclasses.dataclass(frozen=True)
class StructKind(Kind):
    """An instance of a dataclass (one of `classes`), or a Mapping of its
    fields when `mappings`; each int/float field is checked as such, nested
    dataclasses recursively, and `fields` gives kinds for named (dotted)
    fields the annotations cannot say (the host buffers of a 3D copy)."""

    classes: tuple
    fields: tuple = ()            # (dotted name, Kind) pairs
    code: mcError_t = E.mcErrorInvalidValue
    optional: bool = False

    @property
    def need(self) -> str:  # type: ignore[override]
        return " or ".join(f"an {c.__name__}" for c in self.classes)

    def check(self, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if not isinstance(value, self.classes):
            raise Bad(self.code, self.need)
        overrides = dict(self.fields)
        self._fields(value, "", overrides)
        return value

    def _fields(self, obj: Any, prefix: str, overrides: dict) -> None:
        if not dataclasses.is_dataclass(obj):
            return
        hints = _hints(type(obj))
        for f in dataclasses.fields(obj):
            name = prefix + f.name
            value = getattr(obj, f.name, None)
            kind = overrides.get(name) or _field_kind(hints.get(f.name, f.type))
            if kind is not None:
                try:
                    kind.check(value)
                except Bad as bad:
                    raise Bad(bad.code, f"{self.need} whose field {name} is {bad.need} (it is {show(value)})") from None
            elif dataclasses.is_dataclass(hints.get(f.name)) and isinstance(hints.get(f.name), type):
                if not isinstance(value, hints[f.name]):
                    raise Bad(self.code, f"{self.need} whose field {name} is an {hints[f.name].__name__} "
                                         f"(it is {show(value)})")
                self._fields(value, name + ".", overrides)
