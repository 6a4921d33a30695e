"""DeviceArray: a typed, shaped, strided handle on device memory.

The array owns nothing but a pointer; contiguous bytes move only through
mcMemcpy(Async) and mcMemset, so every transfer sees the runtime's ordering
and sticky-error rules (a copy back to the host is where a kernel fault
surfaces). A view (slicing, transpose, reshape) is numpy's model: the
address of its first element plus byte strides into its base's memory;
moving a non-contiguous view's bytes is a strided-copy kernel
(elementwise.py) into or out of a contiguous temporary. Arithmetic,
comparisons and reductions are kernels too (elementwise.py, reduction.py);
interchange with other libraries is interop.py and dlpack.py. Arrays that
are garbage collected are not freed on the spot: the collector may run on
any thread, including the simulator's device thread, and mcFree waits for
the device. They are queued and freed by the next allocating or
synchronizing call of this layer instead.
"""
from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from gpudbg.api import views
from gpudbg.api.device import current_ordinal, generation, on_device, stream_handle
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


def _memcpy(dst: Any, src: Any, nbytes: int, kind: int, stream: Any) -> None:
    """mcMemcpy, or mcMemcpyAsync on `stream` when one is given (numba's
    convention: a stream makes the copy asynchronous with respect to the host)."""
    if stream is None:
        call(mc.mcMemcpy, dst, src, nbytes, kind)
    else:
        call(mc.mcMemcpyAsync, dst, src, nbytes, kind, stream_handle(stream))


class DeviceArray:
    """Device memory with a numpy shape, dtype and byte strides (C order
    unless it is a view)."""

    def __init__(self, ptr: int, shape: Any, dtype: Any, *, owner: bool = True,
                 device: int | None = None, base: "DeviceArray | None" = None,
                 strides: Any = None, keepalive: Any = None):
        self._ptr = int(ptr)
        self.shape = _shape(shape)
        self.dtype = np.dtype(dtype)
        self.strides: tuple[int, ...] = (views.c_strides(self.shape, self.dtype.itemsize) if strides is None
                                         else tuple(int(s) for s in strides))
        if len(self.strides) != len(self.shape):
            raise ValueError(f"strides {self.strides} do not match shape {self.shape}")
        self.owner = owner
        self.device = current_ordinal() if device is None else device
        self._token = generation(self.device)
        self.base = base
        self._keepalive = keepalive     # a foreign producer whose memory this wraps
        self._freed = False
        self._last_stream: Any = None   # where this array's last work was queued (CAI "stream")
        self.readonly = False           # a read-only foreign buffer (CAI data flag, DLPack flag)

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

    def _view(self, offset: int, shape: tuple[int, ...], strides: tuple[int, ...],
              dtype: Any = None) -> "DeviceArray":
        self._check_live()
        return DeviceArray(self._ptr + offset, shape, self.dtype if dtype is None else dtype, owner=False,
                           device=self.device, base=self if self.owner else self.base, strides=strides,
                           keepalive=self._keepalive)._inherit(self)

    def _inherit(self, parent: "DeviceArray") -> "DeviceArray":
        self.readonly, self._last_stream = parent.readonly, parent._last_stream
        return self

    # ------------------------------------------------------------ properties
    @property
    def ptr(self) -> int:
        """The device address of the first element (what a kernel's pointer parameter receives)."""
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
    def is_c_contiguous(self) -> bool:
        return views.is_c_contiguous(self.shape, self.strides, self.itemsize)

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

    def _check_writable(self) -> None:
        if self.readonly:
            raise ValueError("the DeviceArray wraps a read-only buffer (its producer said so)")

    def overlaps(self, other: "DeviceArray") -> bool:
        """Whether the two arrays share bytes in a way an elementwise kernel
        could observe (the very same view does not count)."""
        if self._ptr == other._ptr and self.shape == other.shape and self.strides == other.strides:
            return False
        a_lo, a_hi = views.extent(self.shape, self.strides, self.itemsize)
        b_lo, b_hi = views.extent(other.shape, other.strides, other.itemsize)
        return a_hi > a_lo and b_hi > b_lo and self._ptr + a_lo < other._ptr + b_hi and other._ptr + b_lo < self._ptr + a_hi

    # ------------------------------------------------------------ transfers
    def _host_buffer(self, arr: np.ndarray, what: str) -> np.ndarray:
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"{what} must be a numpy array, not {type(arr).__name__}")
        if arr.nbytes != self.nbytes:
            raise ValueError(f"{what} has {arr.nbytes} bytes ({arr.shape} {arr.dtype}), "
                             f"the device array has {self.nbytes} ({self.shape} {self.dtype})")
        return arr

    def _contiguous(self, stream: Any = None) -> "DeviceArray":
        """Self, or a C-contiguous device copy of a strided view."""
        if self.is_c_contiguous:
            return self
        with on_device(self.device):
            tmp = DeviceArray.empty(self.shape, self.dtype)
        from gpudbg.api.elementwise import launch
        launch("copy", [self.dtype], tmp, [self], self.shape, stream)
        return tmp

    def copy_to_host(self, out: np.ndarray | None = None, stream: Any = None) -> np.ndarray:
        """Copy into `out` (a C-contiguous, writable array of the same byte
        size) or a new array. Without a stream it waits for earlier work,
        raising its faults; with one it is queued on that stream and the
        host must synchronize the stream before reading `out`."""
        self._check_live()
        if out is None:
            out = np.empty(self.shape, self.dtype)
        self._host_buffer(out, "out")
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("out must be C-contiguous and writable")
        if self.nbytes:
            src = self._contiguous(stream)
            with on_device(self.device):
                _memcpy(out, src.ptr, self.nbytes, _D2H, stream)
        return out

    def to_host(self, stream: Any = None) -> np.ndarray:
        return self.copy_to_host(stream=stream)

    def copy_from_host(self, arr: Any, stream: Any = None) -> "DeviceArray":
        """Copy host data in (converted to this array's dtype; same size;
        broadcast into a view as numpy assignment would not: sizes must match)."""
        self._check_live()
        src = np.ascontiguousarray(arr, dtype=self.dtype)
        if src.size != self.size:
            raise ValueError(f"host data has {src.size} elements, the device array {self.size}")
        self._check_writable()
        if not self.nbytes:
            return self
        if self.is_c_contiguous:
            with on_device(self.device):
                _memcpy(self._ptr, src, self.nbytes, _H2D, stream)
            self._last_stream = stream
            return self
        with on_device(self.device):
            tmp = DeviceArray.empty(self.shape, self.dtype)
            _memcpy(tmp.ptr, src, self.nbytes, _H2D, stream)
        return self.copy_from_device(tmp, stream)

    def copy_from_device(self, other: "DeviceArray", stream: Any = None) -> "DeviceArray":
        """Copy another device array's elements in (same size; a view of
        either side is copied element by element by a kernel)."""
        self._check_live()
        if not isinstance(other, DeviceArray):
            raise TypeError(f"expected a DeviceArray, not {type(other).__name__}")
        if other.nbytes != self.nbytes:
            raise ValueError(f"source has {other.nbytes} bytes, destination {self.nbytes}")
        self._check_writable()
        if not self.nbytes:
            return self
        if self.is_c_contiguous and other.is_c_contiguous:
            with on_device(self.device):
                _memcpy(self._ptr, other.ptr, self.nbytes, _D2D, stream)
            self._last_stream = stream
            return self
        from gpudbg.api.elementwise import assign
        if other.dtype != self.dtype:
            raise ValueError(f"an element-by-element copy of a view needs the same dtype: "
                             f"{other.dtype} into {self.dtype} (use astype or assignment)")
        if other.shape != self.shape:
            other = other._contiguous(stream).reshape(self.shape)
        assign(self, other, stream)
        return self

    def copy_to_device(self, src: Any, stream: Any = None) -> "DeviceArray":
        """numba's name: copy a host array or another DeviceArray in."""
        if isinstance(src, DeviceArray):
            return self.copy_from_device(src, stream)
        return self.copy_from_host(src, stream)

    def copy(self, stream: Any = None) -> "DeviceArray":
        """A new C-contiguous device array with the same contents."""
        with on_device(self.device):
            return DeviceArray.empty(self.shape, self.dtype).copy_from_device(self, stream)

    def astype(self, dtype: Any, stream: Any = None) -> "DeviceArray":
        """A C-contiguous copy converted to `dtype` (C casts, numpy's 'unsafe')."""
        from gpudbg.api.elementwise import launch
        with on_device(self.device):
            out = DeviceArray.empty(self.shape, dtype)
        launch("copy", [self.dtype], out, [self], self.shape, stream)
        return out

    def fill_bytes(self, value: int, stream: Any = None) -> "DeviceArray":
        """Set every byte to `value` (mcMemset; contiguous arrays only)."""
        self._check_live()
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= 255:
            raise ValueError(f"byte value must be an int in 0..255, got {value!r}")
        if not self.is_c_contiguous:
            raise ValueError("fill_bytes needs a contiguous array; assign to the view instead (a[...] = v)")
        if self.nbytes:
            with on_device(self.device):
                if stream is None:
                    call(mc.mcMemset, self._ptr, int(value), self.nbytes)
                else:
                    call(mc.mcMemsetAsync, self._ptr, int(value), self.nbytes, stream_handle(stream))
        return self

    def view(self, dtype: Any) -> "DeviceArray":
        """The same bytes as another dtype (the last axis rescaled)."""
        self._check_live()
        dt = np.dtype(dtype)
        if not self.is_c_contiguous:
            raise ValueError("view(dtype) needs a C-contiguous array; call .copy() first")
        if self.nbytes % dt.itemsize:
            raise ValueError(f"{self.nbytes} bytes are not a whole number of {dt} items")
        if self.ndim <= 1:
            shape: tuple[int, ...] = (self.nbytes // dt.itemsize,)
        else:
            last = self.shape[-1] * self.itemsize
            if last % dt.itemsize:
                raise ValueError(f"the last axis ({last} bytes) is not a whole number of {dt} items")
            shape = self.shape[:-1] + (last // dt.itemsize,)
        return self._view(0, shape, views.c_strides(shape, dt.itemsize), dt)

    # ------------------------------------------------------------ views
    def __getitem__(self, key: Any) -> "DeviceArray":
        """A view, as numpy's basic indexing makes one (a 0-d array for a
        full integer index: `.item()` reads it)."""
        offset, shape, strides = views.index(self.shape, self.strides, key)
        return self._view(offset, shape, strides)

    def __setitem__(self, key: Any, value: Any) -> None:
        """Write through the view `self[key]`: a scalar, a DeviceArray or host
        data, broadcast to the view's shape as numpy assigns."""
        from gpudbg.api.elementwise import assign
        assign(self[key], value, None)

    def reshape(self, *shape: Any) -> "DeviceArray":
        new = shape[0] if len(shape) == 1 else shape
        target, strides = views.reshape(self.shape, self.strides, self.itemsize, new)
        return self._view(0, target, strides)

    def ravel(self) -> "DeviceArray":
        """A 1-D view when contiguous, otherwise a 1-D copy (as numpy)."""
        if self.is_c_contiguous:
            return self.reshape(-1)
        return self.copy().reshape(-1)

    def transpose(self, *axes: Any) -> "DeviceArray":
        order = None if not axes else (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes)
        shape, strides = views.transpose(self.shape, self.strides, order)
        return self._view(0, shape, strides)

    @property
    def T(self) -> "DeviceArray":
        return self.transpose()

    # ------------------------------------------------------------ reductions
    def sum(self, axis: Any = None, keepdims: bool = False, stream: Any = None) -> "DeviceArray":
        from gpudbg.api.reduction import reduce
        return reduce("sum", self, axis, keepdims, stream)

    def min(self, axis: Any = None, keepdims: bool = False, stream: Any = None) -> "DeviceArray":
        from gpudbg.api.reduction import reduce
        return reduce("min", self, axis, keepdims, stream)

    def max(self, axis: Any = None, keepdims: bool = False, stream: Any = None) -> "DeviceArray":
        from gpudbg.api.reduction import reduce
        return reduce("max", self, axis, keepdims, stream)

    def item(self) -> Any:
        """The one element of a size-1 array, as a Python scalar."""
        if self.size != 1:
            raise ValueError(f"can only convert an array of size 1 to a Python scalar (size {self.size})")
        return self.copy_to_host().item()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError("only integer arrays of size 1 can be used as an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous. "
                             "Use a.any() or a.all() on the host copy")
        return bool(self.item())

    # ------------------------------------------------------------ interchange
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        from gpudbg.api.interop import cuda_array_interface
        return cuda_array_interface(self)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        from gpudbg.api.dlpack import export
        return export(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        from gpudbg.api.dlpack import DLDeviceType
        return (int(DLDeviceType.kDLCUDA), self.device)

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
        if copy is False:
            raise ValueError("a DeviceArray cannot be seen by numpy without a copy to the host")
        host = self.copy_to_host()
        return host.astype(dtype, copy=False) if dtype is not None else host

    def __repr__(self) -> str:
        state = " freed" if self.freed else ""
        strides = "" if self.is_c_contiguous else f" strides={self.strides}"
        return (f"<gpudbg.DeviceArray shape={self.shape} dtype={self.dtype}{strides} "
                f"ptr=0x{self._ptr:x} device={self.device}{state}>")


def _install_operators() -> None:
    from gpudbg.api.elementwise import install
    install(DeviceArray)


_install_operators()


def to_device(arr: Any, dtype: Any = None, stream: Any = None) -> DeviceArray:
    """A device copy of `arr`: host data (anything numpy.asarray accepts, or
    a CPU DLPack producer), or a device array of gpudbg or another library
    (a CUDA Array Interface or CUDA DLPack producer), copied on the device."""
    from gpudbg.api.interop import to_device as convert
    return convert(arr, dtype, stream)


def device_array(shape: Any, dtype: Any = np.float32, stream: Any = None) -> DeviceArray:
    """Uninitialized device memory (mcMalloc is not stream-ordered; `stream`
    is accepted for numba's signature and checked)."""
    stream_handle(stream)
    return DeviceArray.empty(shape, dtype)


def zeros(shape: Any, dtype: Any = np.float32, stream: Any = None) -> DeviceArray:
    """Zero-filled device memory (the memset is queued on `stream`)."""
    return DeviceArray.empty(shape, dtype).fill_bytes(0, stream)
