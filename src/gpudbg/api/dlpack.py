"""DLPack for DeviceArrays: real capsules of DLManagedTensor(Versioned) structs.

The structs are dlpack.h's (v1.x layout) in ctypes, and the capsules are
made and read through CPython's PyCapsule C API, so any DLPack consumer or
producer written in C (cuda.core's StridedMemoryView, numpy, CuPy, torch)
can be on the other side. The one idea for lifetime: an exported struct,
its shape/strides arrays and the DeviceArray it describes are held in a
table keyed by the struct's address until the consumer calls the struct's
deleter (or the capsule dies unconsumed, whose destructor calls it), so
device memory outlives every consumer. An imported struct is owned by a
DLPackOwner that calls the producer's deleter when the last gpudbg view of
it is gone.

Device memory is exported as kDLCUDA with the device ordinal, never as a
CPU tensor: a consumer that can only read host memory (numpy) refuses it,
which is the honest answer.
"""
from __future__ import annotations

import ctypes
import enum
import threading
from typing import Any

import numpy as np


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLCUDAManaged = 13


class DLDataTypeCode(enum.IntEnum):
    kDLInt = 0
    kDLUInt = 1
    kDLFloat = 2
    kDLBool = 6


DLPACK_MAJOR_VERSION = 1
DLPACK_MINOR_VERSION = 0           # the layout and flags used here are v1.0's
DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0
DLPACK_FLAG_BITMASK_IS_COPIED = 1 << 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", Deleter)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", Deleter),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_api = ctypes.pythonapi
_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

_NAMES = (b"dltensor", b"dltensor_versioned")
# PyCapsule_SetName keeps the pointer, not a copy: the names must live for ever
_USED_NAMES = (b"used_dltensor", b"used_dltensor_versioned")

# struct address -> (struct, shape array, strides array, the DeviceArray)
_exported: dict[int, tuple[Any, Any, Any, Any]] = {}
_exported_lock = threading.Lock()


def _release(address: int) -> None:
    with _exported_lock:
        _exported.pop(int(address or 0), None)


_deleter = Deleter(_release)


# PyCapsule's C layout (Include/cpython/pycapsule.c): PyObject_HEAD, then pointer, name
_CAPSULE_POINTER = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
_CAPSULE_NAME = _CAPSULE_POINTER + ctypes.sizeof(ctypes.c_void_p)


def _capsule_destructor(capsule: int) -> None:
    """The fallback destructor (no C compiler, see dlpack_capsule.py): an
    unconsumed capsule still owns its struct, so release it. The capsule
    arrives as a raw address (it is being deallocated: no new reference may
    be taken), so its fields are read in place."""
    name = ctypes.c_char_p.from_address(capsule + _CAPSULE_NAME).value
    if name in _NAMES:
        _release(ctypes.c_void_p.from_address(capsule + _CAPSULE_POINTER).value or 0)


_python_destructor = _CapsuleDestructor(_capsule_destructor)
_destructor_address: list[int] = []


def _destructor() -> int:
    if not _destructor_address:
        from gpudbg.api.dlpack_capsule import c_destructor
        address = c_destructor()
        _destructor_address.append(address if address is not None else
                                   ctypes.cast(_python_destructor, ctypes.c_void_p).value or 0)
    return _destructor_address[0]


def dl_dtype(dtype: np.dtype) -> DLDataType:
    kinds = {"i": DLDataTypeCode.kDLInt, "u": DLDataTypeCode.kDLUInt, "f": DLDataTypeCode.kDLFloat,
             "b": DLDataTypeCode.kDLBool}
    if dtype.kind not in kinds or dtype.byteorder == ">":
        raise BufferError(f"DLPack has no type for {dtype}")
    return DLDataType(int(kinds[dtype.kind]), dtype.itemsize * 8, 1)


def np_dtype(t: DLDataType) -> np.dtype:
    chars = {int(DLDataTypeCode.kDLInt): "i", int(DLDataTypeCode.kDLUInt): "u",
             int(DLDataTypeCode.kDLFloat): "f", int(DLDataTypeCode.kDLBool): "b"}
    if t.lanes != 1 or t.code not in chars or t.bits % 8:
        raise BufferError(f"unsupported DLPack dtype (code {t.code}, {t.bits} bits, {t.lanes} lanes)")
    if t.code == int(DLDataTypeCode.kDLBool):
        if t.bits != 8:
            raise BufferError(f"unsupported DLPack bool of {t.bits} bits")
        return np.dtype(np.bool_)
    return np.dtype(f"{chars[t.code]}{t.bits // 8}")


def export(arr: Any, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
           copy: Any = None) -> Any:
    """`arr.__dlpack__(...)` per the array API standard's protocol."""
    from gpudbg.api.device import on_device
    from gpudbg.api.errors import call
    from gpudbg.runtime import mc

    arr._check_live()
    if dl_device is not None and tuple(dl_device) != (int(DLDeviceType.kDLCUDA), arr.device):
        raise BufferError(f"a gpudbg DeviceArray lives on (kDLCUDA, {arr.device}); it cannot be "
                          f"exported to device {tuple(dl_device)} (copy it to the host with to_host())")
    if copy is True:
        arr = arr.copy()
    if isinstance(stream, int) and not isinstance(stream, bool) and stream == 0:
        raise ValueError("stream=0 is ambiguous for CUDA DLPack exchange; pass 1 (legacy default), "
                         "2 (per-thread default), a stream handle, or -1 (no synchronization)")
    if stream != -1 and not (arr._last_stream is None and stream in (None, 1)):
        # work queued on another stream than the consumer's must be complete before it reads
        from gpudbg.api.device import stream_handle
        with on_device(arr.device):
            call(mc.mcStreamSynchronize, stream_handle(arr._last_stream))
    itemsize = arr.itemsize
    if any(s % itemsize for s in arr.strides):
        raise BufferError(f"strides {arr.strides} are not whole elements of {arr.dtype}")
    ndim = arr.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*arr.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*(s // itemsize for s in arr.strides))
    versioned = max_version is not None and tuple(max_version)[0] >= DLPACK_MAJOR_VERSION
    managed: Any = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = managed.dl_tensor
    t.data = arr.ptr if arr.size else None
    t.device = DLDevice(int(DLDeviceType.kDLCUDA), arr.device)
    t.ndim = ndim
    t.dtype = dl_dtype(arr.dtype)
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    managed.deleter = _deleter
    if versioned:
        managed.version = DLPackVersion(DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION)
        managed.flags = (DLPACK_FLAG_BITMASK_READ_ONLY if getattr(arr, "readonly", False) else 0) | \
            (DLPACK_FLAG_BITMASK_IS_COPIED if copy is True else 0)
    address = ctypes.addressof(managed)
    managed.manager_ctx = address
    with _exported_lock:
        _exported[address] = (managed, shape, strides, arr)
    return _api.PyCapsule_New(address, _NAMES[versioned], _destructor())


def exported_count() -> int:
    """How many exported structs are still waiting for their deleter."""
    with _exported_lock:
        return len(_exported)


class DLPackOwner:
    """An imported DLManagedTensor(Versioned): calls the producer's deleter
    once, when collected (gpudbg views keep it alive)."""

    def __init__(self, address: int, versioned: bool, producer: Any):
        self.address = address
        self.managed = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(address)
        self.producer = producer

    def __del__(self) -> None:
        managed = getattr(self, "managed", None)
        if managed is not None and managed.deleter:
            managed.deleter(self.address)
            self.managed = None


def consume(obj: Any, stream: Any) -> tuple[int, tuple[int, ...], tuple[int, ...], np.dtype, tuple[int, int],
                                            bool, DLPackOwner]:
    """Take `obj.__dlpack__(stream=...)`'s capsule: (address of the first
    element, shape, byte strides, dtype, (device type, id), read-only, owner)."""
    try:
        capsule = obj.__dlpack__(stream=stream, max_version=(DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION))
    except TypeError:   # a producer older than the versioned protocol
        capsule = obj.__dlpack__(stream=stream)
    cap = ctypes.c_void_p(id(capsule))
    if _api.PyCapsule_IsValid(cap, b"dltensor_versioned"):
        versioned = True
    elif _api.PyCapsule_IsValid(cap, b"dltensor"):
        versioned = False
    else:
        raise BufferError(f"{type(obj).__name__}.__dlpack__() did not return an unconsumed DLPack capsule")
    address = _api.PyCapsule_GetPointer(cap, _NAMES[versioned])
    owner = DLPackOwner(address, versioned, obj)
    if _api.PyCapsule_SetName(capsule, _USED_NAMES[versioned]) != 0:
        raise BufferError("could not mark the DLPack capsule consumed")
    m = owner.managed
    if versioned and m.version.major > DLPACK_MAJOR_VERSION:
        raise BufferError(f"DLPack {m.version.major}.{m.version.minor} is newer than this consumer "
                          f"({DLPACK_MAJOR_VERSION}.{DLPACK_MINOR_VERSION})")
    t = m.dl_tensor
    dtype = np_dtype(t.dtype)
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    if t.strides:
        strides = tuple(int(t.strides[i]) * dtype.itemsize for i in range(t.ndim))
    else:
        from gpudbg.api.views import c_strides
        strides = c_strides(shape, dtype.itemsize)
    readonly = bool(versioned and m.flags & DLPACK_FLAG_BITMASK_READ_ONLY)
    data = (t.data or 0) + int(t.byte_offset)
    return data, shape, strides, dtype, (int(t.device.device_type), int(t.device.device_id)), readonly, owner
