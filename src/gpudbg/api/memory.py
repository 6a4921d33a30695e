"""DeviceArray: a typed, shaped handle on device memory from mcMalloc.

The array owns nothing but a pointer; bytes move only through mcMemcpy and
mcMemset, so every transfer sees the runtime's ordering and sticky-error
rules (a copy back to the host is where a kernel fault surfaces). Arrays
that are garbage collected are not freed on the spot: the collector may run
on any thread, including the simulator's device thread, and mcFree waits for
the device. They are queued and freed by the next allocating or
synchronizing call of this layer instead. There are no device-side numpy
operations: compute happens in kernels.
"""
from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from gpudbg.api.device import current_ordinal, generation, on_device
from gpudbg.api.errors import GPUError, call
from gpudbg.runtime import mc
from gpudbg.runtime.types import mcMemcpyKind

_H2D = int(mcMemcpyKind.mcMemcpyHostToDevice)
_D2H = int(mcMemcpyKind.mcMemcpyDeviceToHost)
_D2D = int(mcMemcpyKind.mcMemcpyDeviceToDevice)

_pending: list[tuple[Any, int, int]] = []   # (generation, device, ptr)
_pending_lock = threading.Lock()


def drain_pending_frees() -> None:
    """Free the memory of collected arrays (errors are ignored: a sticky
    fault must surface at the user's call, not here)."""
    with _pending_lock:
        items = _pending[:]
        _pending.clear()
    for ep, device, ptr in items:
        if ep is not generation(device):
            continue   # its context was reset; the memory is gone already
        try:
            with on_device(device):
                mc.mcFree(ptr)
        except GPUError:
            pass


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a tuple of ints, not {shape!r}") from None
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or int(d) < 0:
            raise ValueError(f"shape dimensions must be non-negative ints, got {shape!r}")
        out.append(int(d))
    return tuple(out)


class DeviceArray:
    """Device memory with a numpy shape and dtype (C order)."""

    def __init__(self, ptr: int, shape: Any, dtype: Any, *, owner: bool = True,
                 device: int | None = None, base: "DeviceArray | None" = None):
        self._ptr = int(ptr)
        self.shape = _shape(shape)
        self.dtype = np.dtype(dtype)
        self.owner = owner
        self.device = current_ordinal() if device is None else device
        self._token = generation(self.device)
        self.base = base
        self._freed = False

    # ------------------------------------------------------------ creation
    @classmethod
    def empty(cls, shape: Any, dtype: Any = np.float32) -> "DeviceArray":
        shp, dt = _shape(shape), np.dtype(dtype)
        if dt.hasobject:
            raise TypeError(f"dtype {dt} holds Python objects; device memory needs plain data")
        drain_pending_frees()
        nbytes = math.prod(shp) * dt.itemsize
        ptr = call(mc.mcMalloc, nbytes)
        return cls(ptr, shp, dt)

    # ------------------------------------------------------------ properties
    @property
    def ptr(self) -> int:
        """The device address (what a kernel's pointer parameter receives)."""
        self._check_live()
        return self._ptr

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def freed(self) -> bool:
        return self._freed or self._token is not generation(self.device)

    def _check_live(self) -> None:
        if self._freed:
            raise ValueError("the DeviceArray was freed")
        if self._token is not generation(self.device):
            raise ValueError("the DeviceArray belongs to a device context that was reset")
        if self.base is not None:
            self.base._check_live()

    # ------------------------------------------------------------ transfers
    def _host_buffer(self, arr: np.ndarray, what: str) -> np.ndarray:
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"{what} must be a numpy array, not {type(arr).__name__}")
        if arr.nbytes != self.nbytes:
            raise ValueError(f"{what} has {arr.nbytes} bytes ({arr.shape} {arr.dtype}), "
                             f"the device array has {self.nbytes} ({self.shape} {self.dtype})")
        return arr

    def copy_to_host(self, out: np.ndarray | None = None) -> np.ndarray:
        """Copy into `out` (a C-contiguous, writable array of the same byte
        size) or a new array; waits for earlier work, raising its faults."""
        self._check_live()
        if out is None:
            out = np.empty(self.shape, self.dtype)
        self._host_buffer(out, "out")
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("out must be C-contiguous and writable")
        if self.nbytes:
            with on_device(self.device):
                call(mc.mcMemcpy, out, self._ptr, self.nbytes, _D2H)
        return out

    def to_host(self) -> np.ndarray:
        return self.copy_to_host()

    def copy_from_host(self, arr: Any) -> "DeviceArray":
        """Copy host data in (converted to this array's dtype; same size)."""
        self._check_live()
        src = np.ascontiguousarray(arr, dtype=self.dtype)
        if src.size != self.size:
            raise ValueError(f"host data has {src.size} elements, the device array {self.size}")
        if self.nbytes:
            with on_device(self.device):
                call(mc.mcMemcpy, self._ptr, src, self.nbytes, _H2D)
        return self

    def copy_from_device(self, other: "DeviceArray") -> "DeviceArray":
        self._check_live()
        if not isinstance(other, DeviceArray):
            raise TypeError(f"expected a DeviceArray, not {type(other).__name__}")
        if other.nbytes != self.nbytes:
            raise ValueError(f"source has {other.nbytes} bytes, destination {self.nbytes}")
        if self.nbytes:
            with on_device(self.device):
                call(mc.mcMemcpy, self._ptr, other.ptr, self.nbytes, _D2D)
        return self

    def copy(self) -> "DeviceArray":
        """A new device array with the same contents."""
        with on_device(self.device):
            return DeviceArray.empty(self.shape, self.dtype).copy_from_device(self)

    def fill_bytes(self, value: int) -> "DeviceArray":
        """Set every byte to `value` (mcMemset)."""
        self._check_live()
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= 255:
            raise ValueError(f"byte value must be an int in 0..255, got {value!r}")
        if self.nbytes:
            with on_device(self.device):
                call(mc.mcMemset, self._ptr, int(value), self.nbytes)
        return self

    def view(self, dtype: Any) -> "DeviceArray":
        """The same bytes as another dtype (the last axis rescaled)."""
        self._check_live()
        dt = np.dtype(dtype)
        if self.nbytes % dt.itemsize:
            raise ValueError(f"{self.nbytes} bytes are not a whole number of {dt} items")
        if self.ndim <= 1:
            shape: tuple[int, ...] = (self.nbytes // dt.itemsize,)
        else:
            last = self.shape[-1] * self.itemsize
            if last % dt.itemsize:
                raise ValueError(f"the last axis ({last} bytes) is not a whole number of {dt} items")
            shape = self.shape[:-1] + (last // dt.itemsize,)
        return DeviceArray(self._ptr, shape, dt, owner=False, device=self.device,
                           base=self if self.owner else self.base)

    # ------------------------------------------------------------ lifetime
    def free(self) -> None:
        """Release the memory now (waits for the device, as mcFree does).
        Freeing twice is a no-op; views cannot be freed."""
        if not self.owner:
            raise ValueError("this DeviceArray is a view; free the array that owns the memory")
        if self._freed:
            return
        self._freed = True
        if self._token is not generation(self.device) or not self._ptr:
            return
        with on_device(self.device):
            call(mc.mcFree, self._ptr)

    def __enter__(self) -> "DeviceArray":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if not self.owner:
            return
        try:
            self.free()
        except GPUError:
            if exc_type is None:
                raise

    def __del__(self) -> None:
        if getattr(self, "owner", False) and not getattr(self, "_freed", True) \
                and getattr(self, "_ptr", 0):
            with _pending_lock:
                _pending.append((self._token, self.device, self._ptr))

    # ------------------------------------------------------------ python protocol
    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        host = self.copy_to_host()
        return host.astype(dtype, copy=False) if dtype is not None else host

    def __repr__(self) -> str:
        state = " freed" if self.freed else ""
        return (f"<gpudbg.DeviceArray shape={self.shape} dtype={self.dtype} "
                f"ptr=0x{self._ptr:x} device={self.device}{state}>")


def to_device(arr: Any, dtype: Any = None) -> DeviceArray:
    """A device copy of host data (anything numpy.asarray accepts)."""
    host = np.ascontiguousarray(arr, dtype=dtype)
    d = DeviceArray.empty(host.shape, host.dtype)
    return d.copy_from_host(host)


def device_array(shape: Any, dtype: Any = np.float32) -> DeviceArray:
    """Uninitialized device memory."""
    return DeviceArray.empty(shape, dtype)


def zeros(shape: Any, dtype: Any = np.float32) -> DeviceArray:
    """Zero-filled device memory."""
    return DeviceArray.empty(shape, dtype).fill_bytes(0)
