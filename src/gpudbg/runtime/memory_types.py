"""The memory API's vocabulary beyond plain pointers: allocation and
registration flags, and the parameter structs of pitched, 2D and 3D copies
(seed 002 §2.9 to §2.11), spelled as CUDA's cudaExtent, cudaPos,
cudaPitchedPtr, cudaMemcpy3DParms and CUDA_MEMCPY2D.

The structs are plain mutable dataclasses because C programs build them
field by field (often starting from a zeroed struct); checking happens in
the driver when a struct is used, so a half-filled struct is fine until
then. A host operand (`ptr`, `srcHost`, `dstHost`) may be a buffer-protocol
object (pageable or registered host memory) where C would pass a host
pointer. srcArray/dstArray name CUDA arrays (mcArray_t, runtime/api/
arrays.py); with an array on either side the extent and that side's
position count elements, as in cudaMemcpy3D.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class mcHostRegisterFlags(enum.IntFlag):
    """mcHostRegister flags (cudaHostRegister* numbering)."""

    mcHostRegisterDefault = 0x0
    mcHostRegisterPortable = 0x1
    mcHostRegisterMapped = 0x2
    mcHostRegisterIoMemory = 0x4
    mcHostRegisterReadOnly = 0x8


class mcExtMallocFlags(enum.IntEnum):
    """mcExtMallocWithFlags allocation types (hipExtMallocWithFlags
    numbering: the seed names the parameter "type of allocation" only)."""

    mcDeviceMallocDefault = 0x0
    mcDeviceMallocFinegrained = 0x1
    mcMallocSignalMemory = 0x2
    mcDeviceMallocUncached = 0x3


class mcMemoryType(enum.IntEnum):
    """Memory types of mc_Memcpy2D (CU_MEMORYTYPE numbering)."""

    mcMemoryTypeHost = 1
    mcMemoryTypeDevice = 2
    mcMemoryTypeArray = 3
    mcMemoryTypeUnified = 4


@dataclass
class mcExtent:
    """cudaExtent: width in bytes (linear memory), height in rows, depth in slices."""

    width: int = 0
    height: int = 0
    depth: int = 0


@dataclass
class mcPos:
    """cudaPos: x in bytes (linear memory), y in rows, z in slices."""

    x: int = 0
    y: int = 0
    z: int = 0


@dataclass
class mcPitchedPtr:
    """cudaPitchedPtr: `ptr` is a device/pinned pointer or a host buffer;
    `xsize` is the logical row width, `ysize` the rows per slice."""

    ptr: Any = 0
    pitch: int = 0
    xsize: int = 0
    ysize: int = 0


@dataclass
class mcMemcpy3DParms:
    """cudaMemcpy3DParms (kind defaults to mcMemcpyDefault = 4)."""

    srcArray: Any = None
    srcPos: mcPos = field(default_factory=mcPos)
    srcPtr: mcPitchedPtr = field(default_factory=mcPitchedPtr)
    dstArray: Any = None
    dstPos: mcPos = field(default_factory=mcPos)
    dstPtr: mcPitchedPtr = field(default_factory=mcPitchedPtr)
    extent: mcExtent = field(default_factory=mcExtent)
    kind: int = 4


@dataclass
class mcMemcpy3DPeerParms:
    """cudaMemcpy3DPeerParms: a 3D copy that names both devices."""

    srcArray: Any = None
    srcPos: mcPos = field(default_factory=mcPos)
    srcPtr: mcPitchedPtr = field(default_factory=mcPitchedPtr)
    srcDevice: int = 0
    dstArray: Any = None
    dstPos: mcPos = field(default_factory=mcPos)
    dstPtr: mcPitchedPtr = field(default_factory=mcPitchedPtr)
    dstDevice: int = 0
    extent: mcExtent = field(default_factory=mcExtent)


@dataclass
class mc_Memcpy2D:
    """CUDA_MEMCPY2D: each side names its memory type and the matching
    operand (srcHost for host memory, srcDevice for device memory, either
    for unified)."""

    srcXInBytes: int = 0
    srcY: int = 0
    srcMemoryType: int = int(mcMemoryType.mcMemoryTypeUnified)
    srcHost: Any = None
    srcDevice: int = 0
    srcArray: Any = None
    srcPitch: int = 0
    dstXInBytes: int = 0
    dstY: int = 0
    dstMemoryType: int = int(mcMemoryType.mcMemoryTypeUnified)
    dstHost: Any = None
    dstDevice: int = 0
    dstArray: Any = None
    dstPitch: int = 0
    WidthInBytes: int = 0
    Height: int = 0


__all__ = ["mcHostRegisterFlags", "mcExtMallocFlags", "mcMemoryType", "mcExtent", "mcPos",
           "mcPitchedPtr", "mcMemcpy3DParms", "mcMemcpy3DPeerParms", "mc_Memcpy2D"]
