"""The C ABI as the API layers that native libraries call see it: raw
addresses into the host process, and integer handles for engine objects.

The drop-in libcuda/libcudart pass every pointer as a Python int (see
gpudbg.native.bridge). One idea makes that safe to work with: all host
memory access by address goes through this module, which turns an address
into a ctypes/numpy view of the process's own memory, and refuses NULL with
a NullPointer the API layers turn into their invalid-value code. Handles
(CUcontext, CUstream, cudaEvent_t, ...) are numbers from one process-wide
HandleTable, so a stream made through the runtime API is the same handle to
the driver API, as with NVIDIA's libraries. Numbers are never reused, so a
stale handle is reported as stale instead of naming a newer object.

It does not validate that an address is mapped: a bad host pointer faults
in the host program as it would with NVIDIA's driver.
"""
from __future__ import annotations

import ctypes
import itertools
import struct
import threading
from typing import Any, Iterator, TypeVar

import numpy as np

T = TypeVar("T")


class NullPointer(ValueError):
    """A required pointer argument was NULL."""

    def __init__(self, what: str):
        super().__init__(f"{what} is NULL")
        self.what = what


def _need(address: int, what: str) -> int:
    if not address:
        raise NullPointer(what)
    return int(address)


def read(address: int, size: int, what: str = "pointer") -> bytes:
    """`size` bytes of host memory at `address`."""
    if size == 0:
        return b""
    return ctypes.string_at(_need(address, what), size)


def write(address: int, data: bytes | bytearray | memoryview, what: str = "pointer") -> None:
    """Copy `data` into host memory at `address`."""
    data = bytes(data)
    if data:
        ctypes.memmove(_need(address, what), data, len(data))


_FORMATS = {"i8": "<b", "u8": "<B", "i16": "<h", "u16": "<H", "i32": "<i", "u32": "<I",
            "i64": "<q", "u64": "<Q", "f32": "<f", "f64": "<d"}


def store(address: int, kind: str, value: Any, what: str = "output pointer") -> None:
    """Write one scalar of `kind` (i32, u64, f32, ...) through an out-pointer."""
    fmt = _FORMATS[kind]
    if kind[0] in "iu":
        bits = struct.calcsize(fmt) * 8
        value = int(value) & ((1 << bits) - 1)
        if kind[0] == "i" and value >= 1 << (bits - 1):
            value -= 1 << bits
    write(address, struct.pack(fmt, value), what)


def load(address: int, kind: str, what: str = "pointer") -> Any:
    """Read one scalar of `kind` from host memory."""
    fmt = _FORMATS[kind]
    return struct.unpack(fmt, read(address, struct.calcsize(fmt), what))[0]


def load_array(address: int, kind: str, count: int, what: str = "pointer") -> list:
    fmt = _FORMATS[kind]
    size = struct.calcsize(fmt)
    raw = read(address, size * count, what)
    return [struct.unpack_from(fmt, raw, i * size)[0] for i in range(count)]


def c_string(address: int, what: str = "string", limit: int = 1 << 20) -> str:
    """A NUL-terminated string (UTF-8, undecodable bytes escaped)."""
    raw = ctypes.string_at(_need(address, what))
    if len(raw) > limit:
        raise ValueError(f"{what} is longer than {limit} bytes")
    return raw.decode("utf-8", "backslashreplace")


def c_string_or_none(address: int) -> str | None:
    return None if not address else c_string(address)


def store_c_string(address: int, capacity: int, text: str, what: str = "output buffer") -> None:
    """Write `text` NUL-terminated into a buffer of `capacity` bytes,
    truncated to fit (as cuDeviceGetName does)."""
    if capacity <= 0:
        raise ValueError(f"{what} length {capacity} must be positive")
    data = text.encode()[:capacity - 1] + b"\0"
    write(address, data, what)


_lasting: dict[str, ctypes.Array] = {}
_lasting_lock = threading.Lock()


def lasting_c_string(text: str) -> int:
    """The address of a NUL-terminated copy of `text` that stays valid for
    the life of the process (the `const char*` answers of cuGetErrorString,
    cuFuncGetName, ...); one copy per distinct text."""
    with _lasting_lock:
        buf = _lasting.get(text)
        if buf is None:
            buf = _lasting[text] = ctypes.create_string_buffer(text.encode())
        return ctypes.addressof(buf)


def host_view(address: int, size: int, what: str = "host pointer", writable: bool = True) -> np.ndarray:
    """A uint8 numpy array over `size` bytes of the process's memory at
    `address`: no copy, so device-to-host copies land in the program's
    buffer and host-to-device copies read it where it is."""
    if size == 0:
        return np.zeros(0, np.uint8)
    buf = (ctypes.c_uint8 * size).from_address(_need(address, what))
    arr = np.ctypeslib.as_array(buf)
    if not writable:
        arr.flags.writeable = False
    return arr


def struct_at(address: int, ctype: type[T], what: str = "struct pointer") -> T:
    """A ctypes struct copied from host memory (later writes to the C
    struct are not seen, as a C callee copying its argument)."""
    return ctype.from_buffer_copy(read(address, ctypes.sizeof(ctype), what))  # type: ignore[attr-defined]


def store_struct(address: int, value: Any, what: str = "output struct") -> None:
    write(address, bytes(value), what)


class StaleHandle(KeyError):
    """A handle number that names no live object of the expected kind."""


class HandleTable:
    """Process-wide integer handles for engine objects, one number space for
    every API layer. Numbers start high, are 16-byte aligned (they look like
    the pointers they are in NVIDIA's libraries) and are never reused."""

    BASE = 0x5D0000000000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: Iterator[int] = itertools.count(1)
        self._by_number: dict[int, tuple[str, Any]] = {}
        self._by_object: dict[tuple[str, int], int] = {}

    def handle(self, kind: str, obj: Any) -> int:
        """The handle of `obj` as a `kind` (made on first use)."""
        key = (kind, id(obj))
        with self._lock:
            number = self._by_object.get(key)
            if number is not None and self._by_number.get(number, (None, None))[1] is obj:
                return number
            number = self.BASE + 16 * next(self._next)
            self._by_number[number] = (kind, obj)
            self._by_object[key] = number
            return number

    def lookup(self, kind: str, number: int) -> Any:
        """The object behind a handle, or StaleHandle."""
        with self._lock:
            entry = self._by_number.get(int(number))
        if entry is None or entry[0] != kind:
            raise StaleHandle(f"0x{int(number):x} is not a {kind} handle")
        return entry[1]

    def kind_of(self, number: int) -> str | None:
        with self._lock:
            entry = self._by_number.get(int(number))
        return None if entry is None else entry[0]

    def forget(self, kind: str, number: int) -> None:
        """Retire a handle (its object was destroyed); lookups now fail."""
        with self._lock:
            entry = self._by_number.pop(int(number), None)
            if entry is not None:
                self._by_object.pop((entry[0], id(entry[1])), None)


handles = HandleTable()
