"""The texture and surface vocabulary of the mc* runtime, spelled as the
CUDA runtime's driver_types.h spells it with the mc prefix (seed 002 names
the handle types mcArray_t, mcMipmappedArray_t, mcTextureObject_t and
mcSurfaceObject_t and the mcMallocArray/mcMalloc3DArray/mcMemcpy2DToArray
family; the structs' fields are cudaChannelFormatDesc's, cudaResourceDesc's
and cudaTextureDesc's).

The structs are plain mutable dataclasses, built field by field as C
programs do (`desc.res.array.array = arr`); the driver checks them when
they are used (driver/texture_objects.py). A channel format desc maps to
the hardware's (CUarray_format, channel count) by `array_format`.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from gpudbg.sim.texture.formats import CUarray_format


class mcChannelFormatKind(enum.IntEnum):
    mcChannelFormatKindSigned = 0
    mcChannelFormatKindUnsigned = 1
    mcChannelFormatKindFloat = 2
    mcChannelFormatKindNone = 3


class mcResourceType(enum.IntEnum):
    mcResourceTypeArray = 0
    mcResourceTypeMipmappedArray = 1
    mcResourceTypeLinear = 2
    mcResourceTypePitch2D = 3


class mcTextureAddressMode(enum.IntEnum):
    mcAddressModeWrap = 0
    mcAddressModeClamp = 1
    mcAddressModeMirror = 2
    mcAddressModeBorder = 3


class mcTextureFilterMode(enum.IntEnum):
    mcFilterModePoint = 0
    mcFilterModeLinear = 1


class mcTextureReadMode(enum.IntEnum):
    mcReadModeElementType = 0
    mcReadModeNormalizedFloat = 1


class mcArrayFlags(enum.IntFlag):
    """cudaArray* allocation flags (the same bits as CUDA_ARRAY3D_*)."""

    mcArrayDefault = 0x00
    mcArrayLayered = 0x01
    mcArraySurfaceLoadStore = 0x02
    mcArrayCubemap = 0x04
    mcArrayTextureGather = 0x08


@dataclass
class mcChannelFormatDesc:
    """cudaChannelFormatDesc: bits per channel x, y, z, w and their kind."""

    x: int = 0
    y: int = 0
    z: int = 0
    w: int = 0
    f: int = int(mcChannelFormatKind.mcChannelFormatKindNone)


@dataclass
class mcResourceDescArray:
    array: Any = None


@dataclass
class mcResourceDescMipmap:
    mipmap: Any = None


@dataclass
class mcResourceDescLinear:
    devPtr: int = 0
    desc: mcChannelFormatDesc = field(default_factory=mcChannelFormatDesc)
    sizeInBytes: int = 0


@dataclass
class mcResourceDescPitch2D:
    devPtr: int = 0
    desc: mcChannelFormatDesc = field(default_factory=mcChannelFormatDesc)
    width: int = 0
    height: int = 0
    pitchInBytes: int = 0


@dataclass
class mcResourceDescRes:
    """The union `res` of cudaResourceDesc (only the member resType names is read)."""

    array: mcResourceDescArray = field(default_factory=mcResourceDescArray)
    mipmap: mcResourceDescMipmap = field(default_factory=mcResourceDescMipmap)
    linear: mcResourceDescLinear = field(default_factory=mcResourceDescLinear)
    pitch2D: mcResourceDescPitch2D = field(default_factory=mcResourceDescPitch2D)


@dataclass
class mcResourceDesc:
    resType: int = int(mcResourceType.mcResourceTypeArray)
    res: mcResourceDescRes = field(default_factory=mcResourceDescRes)
    flags: int = 0


@dataclass
class mcTextureDesc:
    addressMode: list = field(default_factory=lambda: [0, 0, 0])
    filterMode: int = 0
    readMode: int = 0
    sRGB: int = 0
    borderColor: list = field(default_factory=lambda: [0.0, 0.0, 0.0, 0.0])
    normalizedCoords: int = 0
    maxAnisotropy: int = 0
    mipmapFilterMode: int = 0
    mipmapLevelBias: float = 0.0
    minMipmapLevelClamp: float = 0.0
    maxMipmapLevelClamp: float = 0.0
    disableTrilinearOptimization: int = 0
    seamlessCubemap: int = 0


@dataclass
class mcResourceViewDesc:
    """cudaResourceViewDesc (accepted by type; views are not supported, so
    mcCreateTextureObject refuses any but None)."""

    format: int = 0
    width: int = 0
    height: int = 0
    depth: int = 0
    firstMipmapLevel: int = 0
    lastMipmapLevel: int = 0
    firstLayer: int = 0
    lastLayer: int = 0


_K = mcChannelFormatKind
_F = CUarray_format
_FORMATS = {
    (_K.mcChannelFormatKindUnsigned, 8): _F.CU_AD_FORMAT_UNSIGNED_INT8,
    (_K.mcChannelFormatKindUnsigned, 16): _F.CU_AD_FORMAT_UNSIGNED_INT16,
    (_K.mcChannelFormatKindUnsigned, 32): _F.CU_AD_FORMAT_UNSIGNED_INT32,
    (_K.mcChannelFormatKindSigned, 8): _F.CU_AD_FORMAT_SIGNED_INT8,
    (_K.mcChannelFormatKindSigned, 16): _F.CU_AD_FORMAT_SIGNED_INT16,
    (_K.mcChannelFormatKindSigned, 32): _F.CU_AD_FORMAT_SIGNED_INT32,
    (_K.mcChannelFormatKindFloat, 16): _F.CU_AD_FORMAT_HALF,
    (_K.mcChannelFormatKindFloat, 32): _F.CU_AD_FORMAT_FLOAT,
}
_KINDS = {v: k for k, v in _FORMATS.items()}


class FormatError(ValueError):
    pass


def array_format(desc: mcChannelFormatDesc) -> tuple[CUarray_format, int]:
    """(format, channels) of a channel desc: 1, 2 or 4 equal channels
    (x, then y, then z and w), a kind and a size the hardware has."""
    bits = [desc.x, desc.y, desc.z, desc.w]
    n = 4 - bits[::-1].index(next(b for b in bits[::-1] if b)) if any(bits) else 0
    if n == 0 or n == 3 or any(b != bits[0] for b in bits[:n]) or any(bits[n:]):
        raise FormatError(f"channel bits {tuple(bits)}: a texel has 1, 2 or 4 channels of one size")
    try:
        key = (mcChannelFormatKind(desc.f), bits[0])
    except ValueError:
        raise FormatError(f"f={desc.f!r} is not an mcChannelFormatKind") from None
    if key not in _FORMATS:
        raise FormatError(f"{key[0].name} channels of {bits[0]} bits are not a texel format")
    return _FORMATS[key], n


def channel_desc(fmt: CUarray_format, channels: int) -> mcChannelFormatDesc:
    kind, bits = _KINDS[CUarray_format(fmt)]
    b = [bits if i < channels else 0 for i in range(4)]
    return mcChannelFormatDesc(b[0], b[1], b[2], b[3], int(kind))


__all__ = ["mcChannelFormatKind", "mcResourceType", "mcTextureAddressMode", "mcTextureFilterMode",
           "mcTextureReadMode", "mcArrayFlags", "mcChannelFormatDesc", "mcResourceDesc", "mcResourceDescRes",
           "mcResourceDescArray", "mcResourceDescMipmap", "mcResourceDescLinear", "mcResourceDescPitch2D",
           "mcTextureDesc", "mcResourceViewDesc"]
