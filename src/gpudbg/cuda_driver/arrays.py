"""CUDA arrays in the driver API: cuArrayCreate_v2, cuArray3DCreate_v2,
cuArrayGetDescriptor_v2, cuArray3DGetDescriptor_v2, cuArrayDestroy,
cuMipmappedArrayCreate, cuMipmappedArrayGetLevel, cuMipmappedArrayDestroy.

A CUarray / CUmipmappedArray is a cabi.handles number of the engine's
array object (driver/arrays.py: shapes, flags, storage); the runtime API's
cudaArray_t uses the same kind, so the handles mix as in CUDA. The
CUDA_ARRAY_DESCRIPTOR structs are cuda.h's _v2 layouts; the pre-3.2 _v1
exports (32-bit sizes) are not implemented. cuMemcpy2D/3D take arrays
through copies.py (`array_side`).
"""
from __future__ import annotations

import ctypes
from typing import Any

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import R, current_context, entry, fail, object_of
from gpudbg.cuda_driver.module import need
from gpudbg.driver import arrays as _arrays

ARRAY_KIND, MIPMAP_KIND = "CUarray", "CUmipmappedArray"

__all__ = ["cuArrayCreate_v2", "cuArray3DCreate_v2", "cuArrayGetDescriptor_v2", "cuArray3DGetDescriptor_v2",
           "cuArrayDestroy", "cuMipmappedArrayCreate", "cuMipmappedArrayGetLevel", "cuMipmappedArrayDestroy"]


class CUDA_ARRAY_DESCRIPTOR(ctypes.Structure):
    """cuda.h's CUDA_ARRAY_DESCRIPTOR_v2."""

    _fields_ = [("Width", ctypes.c_size_t), ("Height", ctypes.c_size_t), ("Format", ctypes.c_int),
                ("NumChannels", ctypes.c_uint)]


class CUDA_ARRAY3D_DESCRIPTOR(ctypes.Structure):
    """cuda.h's CUDA_ARRAY3D_DESCRIPTOR_v2."""

    _fields_ = [("Width", ctypes.c_size_t), ("Height", ctypes.c_size_t), ("Depth", ctypes.c_size_t),
                ("Format", ctypes.c_int), ("NumChannels", ctypes.c_uint), ("Flags", ctypes.c_uint)]


def array_of(number: int) -> Any:
    """The live engine array behind a CUarray."""
    return _arrays.live(object_of(ARRAY_KIND, int(number)), "CUarray")


def mipmap_of(number: int) -> Any:
    m = object_of(MIPMAP_KIND, int(number))
    if m.freed:
        raise fail(R.CUDA_ERROR_INVALID_HANDLE, f"CUmipmappedArray 0x{int(number):x} was destroyed")
    return m


@entry
def cuArrayCreate_v2(pHandle: int, pAllocateArray: int) -> None:
    """A 1D (Height 0) or 2D array."""
    need(pHandle, "pHandle")
    d = cabi.struct_at(pAllocateArray, CUDA_ARRAY_DESCRIPTOR, "pAllocateArray")
    a = _arrays.create(current_context(), d.Format, d.NumChannels, d.Width, d.Height, 0, 0)
    cabi.store(pHandle, "u64", handles.handle(ARRAY_KIND, a), "pHandle")


@entry
def cuArray3DCreate_v2(pHandle: int, pAllocateArray: int) -> None:
    """1D, 2D, 3D, layered and cubemap arrays (CUDA_ARRAY3D_* flags)."""
    need(pHandle, "pHandle")
    d = cabi.struct_at(pAllocateArray, CUDA_ARRAY3D_DESCRIPTOR, "pAllocateArray")
    a = _arrays.create(current_context(), d.Format, d.NumChannels, d.Width, d.Height, d.Depth, d.Flags)
    cabi.store(pHandle, "u64", handles.handle(ARRAY_KIND, a), "pHandle")


@entry
def cuArrayGetDescriptor_v2(pArrayDescriptor: int, hArray: int) -> None:
    need(pArrayDescriptor, "pArrayDescriptor")
    a = array_of(hArray)
    cabi.store_struct(pArrayDescriptor, CUDA_ARRAY_DESCRIPTOR(a.width, a.height, int(a.fmt), a.channels))


@entry
def cuArray3DGetDescriptor_v2(pArrayDescriptor: int, hArray: int) -> None:
    need(pArrayDescriptor, "pArrayDescriptor")
    a = array_of(hArray)
    cabi.store_struct(pArrayDescriptor, CUDA_ARRAY3D_DESCRIPTOR(a.width, a.height, a.depth, int(a.fmt),
                                                                a.channels, a.flags))


@entry
def cuArrayDestroy(hArray: int) -> None:
    """Waits for the context's work, frees the storage, retires the handle
    (a level of a mipmapped array is CUDA_ERROR_INVALID_HANDLE)."""
    a = object_of(ARRAY_KIND, int(hArray))
    _arrays.destroy(current_context(), a, "cuArrayDestroy")
    handles.forget(ARRAY_KIND, int(hArray))


@entry
def cuMipmappedArrayCreate(pHandle: int, pMipmappedArrayDesc: int, numMipmapLevels: int) -> None:
    need(pHandle, "pHandle")
    d = cabi.struct_at(pMipmappedArrayDesc, CUDA_ARRAY3D_DESCRIPTOR, "pMipmappedArrayDesc")
    if not int(numMipmapLevels):
        raise fail(R.CUDA_ERROR_INVALID_VALUE, "numMipmapLevels must be at least 1")
    m = _arrays.create(current_context(), d.Format, d.NumChannels, d.Width, d.Height, d.Depth, d.Flags,
                       int(numMipmapLevels))
    cabi.store(pHandle, "u64", handles.handle(MIPMAP_KIND, m), "pHandle")


@entry
def cuMipmappedArrayGetLevel(pLevelArray: int, hMipmappedArray: int, level: int) -> None:
    need(pLevelArray, "pLevelArray")
    a = _arrays.level_of(mipmap_of(hMipmappedArray), int(level), "cuMipmappedArrayGetLevel")
    cabi.store(pLevelArray, "u64", handles.handle(ARRAY_KIND, a), "pLevelArray")


@entry
def cuMipmappedArrayDestroy(hMipmappedArray: int) -> None:
    m = object_of(MIPMAP_KIND, int(hMipmappedArray))
    _arrays.destroy(current_context(), m, "cuMipmappedArrayDestroy")
    handles.forget(MIPMAP_KIND, int(hMipmappedArray))
