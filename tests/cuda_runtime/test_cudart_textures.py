"""Arrays and texture objects through the runtime's C ABI, as the drop-in
libcudart calls them: struct layouts of driver_types.h/texture_types.h
(cudaChannelFormatDesc by value from cudaCreateChannelDesc, cudaExtent by
value, cudaResourceDesc's union, cudaTextureDesc), cudaMemcpy3D with an
array side, and the descriptor getters writing those structs back."""
import ctypes
import struct

import numpy as np

from gpudbg.cuda_runtime import exports as rt
from gpudbg.cuda_runtime.textures import RESOURCE_SIZE, TEXTURE
from rt_helpers import addr, check, out_u64

H2D, D2H = 1, 2
FLOAT = 2


def test_channel_desc_is_returned_by_value():
    raw = rt.cudaCreateChannelDesc(8, 8, 8, 8, 1)
    assert struct.unpack("<4iI", raw) == (8, 8, 8, 8, 1)


def test_layered_array_3d_copies_and_texture_descriptors(fresh):
    desc = ctypes.create_string_buffer(rt.cudaCreateChannelDesc(32, 0, 0, 0, FLOAT), 20)
    arr = out_u64()
    check(rt.cudaMalloc3DArray(addr(arr), addr(desc), struct.pack("<3Q", 4, 3, 2), 0x1))   # layered
    info_desc, extent, flags = ctypes.create_string_buffer(20), ctypes.create_string_buffer(24), ctypes.c_uint(0)
    check(rt.cudaArrayGetInfo(addr(info_desc), addr(extent), addr(flags), arr.value))
    assert struct.unpack("<3Q", extent.raw) == (4, 3, 2) and flags.value == 1
    assert struct.unpack("<4iI", info_desc.raw) == (32, 0, 0, 0, FLOAT)

    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    back = np.zeros_like(data)
    for src_array, dst_array, host, kind in ((0, arr.value, data, H2D), (arr.value, 0, back, D2H)):
        parms = bytearray(160)       # struct cudaMemcpy3DParms
        struct.pack_into("<Q", parms, 0, src_array)
        struct.pack_into("<Q", parms, 64, dst_array)
        host_at = 32 if not src_array else 96           # srcPtr or dstPtr: ptr, pitch, xsize, ysize
        struct.pack_into("<4Q", parms, host_at, host.ctypes.data, 16, 4, 3)
        struct.pack_into("<3Qi", parms, 128, 4, 3, 2, kind)
        buf = ctypes.create_string_buffer(bytes(parms), 160)
        check(rt.cudaMemcpy3D(addr(buf)))
    np.testing.assert_array_equal(back, data)

    res = ctypes.create_string_buffer(RESOURCE_SIZE)
    struct.pack_into("<iiQ", res, 0, 0, 0, arr.value)                     # cudaResourceTypeArray
    td = ctypes.create_string_buffer(TEXTURE.pack(2, 2, 2, 1, 0, 0, 0.5, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0), 72)
    tex = out_u64()
    check(rt.cudaCreateTextureObject(addr(tex), addr(res), addr(td), 0))
    got = ctypes.create_string_buffer(72)
    check(rt.cudaGetTextureObjectTextureDesc(addr(got), tex.value))
    fields = TEXTURE.unpack(got.raw)
    assert fields[:4] == (2, 2, 2, 1) and fields[6] == 0.5 and fields[10] == 1     # mirror, linear, border, coords
    rback = ctypes.create_string_buffer(RESOURCE_SIZE)
    check(rt.cudaGetTextureObjectResourceDesc(addr(rback), tex.value))
    assert struct.unpack_from("<iiQ", rback.raw, 0) == (0, 0, arr.value)
    assert rt.cudaCreateTextureObject(addr(tex), addr(res), addr(td), addr(res)) == 1     # views: refused
    check(rt.cudaDestroyTextureObject(tex.value))
    check(rt.cudaFreeArray(arr.value))
    assert rt.cudaFreeArray(arr.value) == 400
    check(rt.cudaFreeArray(0))
