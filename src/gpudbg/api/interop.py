"""Interchange with other GPU libraries: the CUDA Array Interface (v3) and DLPack.

gpudbg, numba-cuda, cuda-python and cuda.core programs that run on gpudbg
share one simulated device and its primary context (the runtime's mc* calls
and the driver API's libcuda are two faces of the same engine), so a device
pointer means the same bytes to all of them: exchange is zero-copy by
design. What must be honoured is stream order: an exported CAI carries the
CUstream of the array's last queued work (1 for the legacy default stream,
the cuda_driver handle number of a gpudbg.Stream), and an imported one with
a stream is synchronized on before gpudbg uses it, as the CAI spec asks of
consumers. An imported pointer is checked against the device's allocation
table: gpudbg wraps only memory that is on the simulated device, with the
whole strided extent inside one allocation.

It never copies device memory to fake a host view, and it does not import
masked arrays (CAI `mask`) or vector/complex dtypes.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from gpudbg.api import views
from gpudbg.api.device import on_device, stream_handle
from gpudbg.api.errors import call
from gpudbg.runtime import mc

CAI_VERSION = 3
_CUSTREAM = "CUstream"        # cuda_driver HandleKind.STREAM: the handle numbers the driver API uses


def _stream_number(stream: Any) -> int | None:
    """The CAI `stream` value for work queued on `stream` (None: default)."""
    from gpudbg import cabi
    from gpudbg.driver.engine import get_engine

    if stream is None or (isinstance(stream, int) and stream == 0):
        return 2 if get_engine().per_thread_default_stream else 1
    if isinstance(stream, int):
        return stream
    return cabi.handles.handle(_CUSTREAM, stream_handle(stream))


def cuda_array_interface(arr: Any) -> dict[str, Any]:
    """The v3 dictionary of a DeviceArray."""
    arr._check_live()
    return {
        "shape": arr.shape,
        "typestr": arr.dtype.str,
        "descr": arr.dtype.descr if arr.dtype.fields else [("", arr.dtype.str)],
        "data": (arr.ptr if arr.size else 0, bool(getattr(arr, "readonly", False))),
        "strides": None if arr.is_c_contiguous else arr.strides,
        "version": CAI_VERSION,
        "stream": _stream_number(arr._last_stream),
    }


def _sync_on(stream: Any) -> None:
    """Wait, as a CAI consumer must, for the producer's `stream`."""
    from gpudbg import cabi

    if stream is None:
        return
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise ValueError(f"__cuda_array_interface__ stream must be None or an int, not {stream!r}")
    if stream == 0:
        raise ValueError("__cuda_array_interface__ stream 0 is disallowed by the CAI spec (ambiguous)")
    if stream in (1, 2):
        call(mc.mcStreamSynchronize, stream)
        return
    try:
        handle = cabi.handles.lookup(_CUSTREAM, stream)
    except Exception:
        raise ValueError(f"__cuda_array_interface__ stream 0x{stream:x} is not a stream of this "
                         f"process's (simulated) CUDA driver") from None
    call(mc.mcStreamSynchronize, handle)


def _device_of(ptr: int, shape: tuple[int, ...], strides: tuple[int, ...], dtype: np.dtype,
               what: str) -> int:
    """The ordinal of the device whose allocation holds the whole view."""
    from gpudbg.driver.engine import get_engine

    info = get_engine().resolve_pointer(ptr)
    if info is None:
        raise ValueError(f"{what}: 0x{ptr:x} is not memory of gpudbg's simulated device "
                         f"(only device memory allocated in this process can be wrapped)")
    lo, hi = views.extent(shape, strides, dtype.itemsize)
    a = info.allocation
    if info.offset + lo < 0 or info.offset + hi > a.size:
        raise ValueError(f"{what}: the view at 0x{ptr:x} spans bytes {lo}..{hi} around it, outside its "
                         f"allocation 0x{a.base:x}..0x{a.base + a.size:x}")
    return int(info.context.device.ordinal)


def from_cuda_array_interface(obj: Any) -> Any:
    """A zero-copy DeviceArray over a CAI producer's memory (it keeps `obj` alive)."""
    from gpudbg.api.memory import DeviceArray

    desc = obj.__cuda_array_interface__
    name = f"{type(obj).__name__}.__cuda_array_interface__"
    if not isinstance(desc, dict):
        raise TypeError(f"{name} must be a dict, not {type(desc).__name__}")
    for key in ("shape", "typestr", "data", "version"):
        if key not in desc:
            raise ValueError(f"{name} has no {key!r}")
    if not 0 <= int(desc["version"]) <= CAI_VERSION:
        raise ValueError(f"{name} version {desc['version']} is not supported (0..{CAI_VERSION})")
    if desc.get("mask") is not None:
        raise ValueError(f"{name}: masked arrays are not supported")
    dtype = np.dtype(desc["descr"]) if desc.get("descr") and np.dtype(desc["typestr"]).kind == "V" \
        else np.dtype(desc["typestr"])
    shape = tuple(int(d) for d in desc["shape"])
    strides = desc.get("strides")
    strides = views.c_strides(shape, dtype.itemsize) if strides is None else tuple(int(s) for s in strides)
    ptr, readonly = desc["data"]
    ptr = int(ptr or 0)
    _sync_on(desc.get("stream"))
    if math.prod(shape) == 0:
        arr = DeviceArray(ptr, shape, dtype, owner=False, strides=strides, keepalive=obj)
    else:
        device = _device_of(ptr, shape, strides, dtype, name)
        with on_device(device):
            arr = DeviceArray(ptr, shape, dtype, owner=False, device=device, strides=strides, keepalive=obj)
    arr.readonly = bool(readonly)
    return arr


def from_dlpack(obj: Any, stream: Any = 1) -> Any:
    """A zero-copy DeviceArray over a CUDA DLPack producer's memory."""
    from gpudbg.api import dlpack
    from gpudbg.api.memory import DeviceArray

    dev_type, dev_id = (int(v) for v in obj.__dlpack_device__())
    if dev_type not in (dlpack.DLDeviceType.kDLCUDA, dlpack.DLDeviceType.kDLCUDAManaged):
        kind = dlpack.DLDeviceType(dev_type).name if dev_type in iter(dlpack.DLDeviceType) else str(dev_type)
        raise BufferError(f"{type(obj).__name__} is on DLPack device {kind}, not CUDA memory: "
                          f"copy it with gpudbg.to_device() instead of wrapping it")
    ptr, shape, strides, dtype, _dev, readonly, owner = dlpack.consume(obj, stream)
    what = f"{type(obj).__name__}.__dlpack__()"
    if math.prod(shape) == 0:
        arr = DeviceArray(ptr, shape, dtype, owner=False, strides=strides, keepalive=owner)
    else:
        device = _device_of(ptr, shape, strides, dtype, what)
        if device != dev_id:
            raise ValueError(f"{what} says device {dev_id}, but 0x{ptr:x} is memory of device {device}")
        with on_device(device):
            arr = DeviceArray(ptr, shape, dtype, owner=False, device=device, strides=strides, keepalive=owner)
    arr.readonly = readonly
    return arr


def asarray(obj: Any) -> Any:
    """`obj` as a DeviceArray without copying: a DeviceArray itself, a CUDA
    Array Interface producer or a CUDA DLPack producer. Host data is refused
    (use to_device: it copies)."""
    from gpudbg.api.memory import DeviceArray

    if isinstance(obj, DeviceArray):
        return obj
    if hasattr(obj, "__cuda_array_interface__"):
        return from_cuda_array_interface(obj)
    if is_device_producer(obj):
        return from_dlpack(obj)
    raise TypeError(f"{type(obj).__name__} is not device memory (no __cuda_array_interface__ or CUDA "
                    f"__dlpack__); gpudbg.to_device() copies host data")


def is_device_producer(obj: Any) -> bool:
    from gpudbg.api import dlpack
    from gpudbg.api.memory import DeviceArray

    if isinstance(obj, DeviceArray) or hasattr(obj, "__cuda_array_interface__"):
        return True
    if isinstance(obj, np.ndarray) or not hasattr(obj, "__dlpack_device__"):
        return False
    return int(obj.__dlpack_device__()[0]) in (dlpack.DLDeviceType.kDLCUDA, dlpack.DLDeviceType.kDLCUDAManaged)


def to_device(obj: Any, dtype: Any = None, stream: Any = None) -> Any:
    """A new device array holding `obj`'s data (see memory.to_device)."""
    from gpudbg.api.memory import DeviceArray

    if is_device_producer(obj):
        src = asarray(obj)
        with on_device(src.device):
            if dtype is not None and np.dtype(dtype) != src.dtype:
                return src.astype(dtype, stream)
            return src.copy(stream)
    if not isinstance(obj, np.ndarray) and hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        obj = np.from_dlpack(obj)     # a CPU DLPack producer: numpy reads its capsule
    host = np.asarray(obj, dtype=dtype)
    host = np.ascontiguousarray(host).reshape(host.shape)   # ascontiguousarray alone makes 0-d 1-d
    d = DeviceArray.empty(host.shape, host.dtype)
    d.copy_from_host(host, stream)   # pageable source: staged before the call returns
    return d
