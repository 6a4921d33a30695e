import ctypes

import numpy as np
import pytest

from cudrv_helpers import check, out_u64
from gpudbg.cuda_driver import context as C
from gpudbg.cuda_driver import copies as X
from gpudbg.cuda_driver import memory as M
from gpudbg.cuda_driver.copies import ARRAY, DEVICE, HOST, UNIFIED, CUDA_MEMCPY2D, CUDA_MEMCPY3D


def alloc(n: int) -> int:
    p = out_u64()
    check(M.cuMemAlloc_v2(p.addr, n))
    return p.value


def test_round_trip_h2d_d2d_d2h(ctx):
    src = np.random.default_rng(1).integers(0, 2**32, 4096, dtype=np.uint32)
    a, b = alloc(src.nbytes), alloc(src.nbytes)
    check(X.cuMemcpyHtoD_v2(a, src.ctypes.data, src.nbytes))
    check(X.cuMemcpyDtoD_v2(b, a, src.nbytes))
    out = np.zeros_like(src)
    check(X.cuMemcpyDtoH_v2(out.ctypes.data, b, src.nbytes))   # complete on return
    assert (out == src).all()


def test_async_forms_and_variants(ctx):
    src = np.arange(256, dtype=np.uint8)
    a, b = alloc(256), alloc(256)
    check(X.cuMemcpyHtoDAsync_v2(a, src.ctypes.data, 256, 0))
    src[:] = 0                                   # pageable: the copy took a snapshot
    check(X.cuMemcpyDtoDAsync_v2_ptsz(b, a, 256, 0))
    check(X.cuMemcpyAsync(a, b, 256, 0x1))       # CU_STREAM_LEGACY
    out = np.zeros(256, np.uint8)
    check(X.cuMemcpyDtoHAsync_v2(out.ctypes.data, a, 256, 0))   # to pageable memory: waits
    assert (out == np.arange(256, dtype=np.uint8)).all()
    out[:] = 0
    check(X.cuMemcpy_ptds(out.ctypes.data, b, 256))
    assert (out == np.arange(256, dtype=np.uint8)).all()
    check(X.cuMemcpyHtoD_v2_ptds(a, src.ctypes.data, 256))
    check(X.cuMemcpyDtoH_v2_ptds(out.ctypes.data, a, 256))
    assert not out.any()
    assert X.cuMemcpyAsync(a, b, 256, 0x7777) == 400


def test_cumemcpy_infers_directions(ctx):
    host = np.arange(64, dtype=np.float64)
    dev = alloc(host.nbytes)
    pinned = out_u64()
    check(M.cuMemAllocHost_v2(pinned.addr, host.nbytes))
    check(X.cuMemcpy(dev, host.ctypes.data, host.nbytes))
    check(X.cuMemcpy(pinned.value, dev, host.nbytes))
    back = np.zeros_like(host)
    check(X.cuMemcpy(back.ctypes.data, pinned.value, host.nbytes))   # host to host by the CPU
    assert (back == host).all()


def test_bad_pointers_are_errors_not_host_reads(ctx):
    dev = alloc(64)
    host = np.zeros(64, np.uint8)
    check(M.cuMemFree_v2(dev))
    assert X.cuMemcpy(host.ctypes.data, dev, 64) == 1        # freed device memory is never read as host
    assert X.cuMemcpyDtoH_v2(host.ctypes.data, dev, 64) == 1
    assert X.cuMemcpyHtoD_v2(host.ctypes.data, host.ctypes.data, 64) == 1   # dst is not device memory
    live = alloc(64)
    assert X.cuMemcpyDtoH_v2(0, live, 64) == 1
    assert X.cuMemcpyDtoD_v2(live, live, 65) == 1           # past the end
    check(X.cuMemcpyDtoD_v2(live, live, 0))


def _2d(**fields) -> CUDA_MEMCPY2D:
    p = CUDA_MEMCPY2D()
    for k, v in fields.items():
        setattr(p, k, v)
    return p


def test_2d_against_numpy(ctx):
    host = np.arange(12 * 40, dtype=np.uint8).reshape(12, 40)
    dev, pitch = out_u64(), out_u64()
    check(M.cuMemAllocPitch_v2(dev.addr, pitch.addr, 40, 12, 4))
    up = _2d(srcMemoryType=HOST, srcHost=host.ctypes.data, srcPitch=40, dstMemoryType=DEVICE,
             dstDevice=dev.value, dstPitch=pitch.value, WidthInBytes=40, Height=12)
    check(X.cuMemcpy2D_v2(ctypes.addressof(up)))
    out = np.zeros((5, 16), np.uint8)
    down = _2d(srcMemoryType=UNIFIED, srcDevice=dev.value, srcPitch=pitch.value, srcXInBytes=3, srcY=2,
               dstMemoryType=HOST, dstHost=out.ctypes.data, dstPitch=16, WidthInBytes=10, Height=5)
    check(X.cuMemcpy2DUnaligned_v2(ctypes.addressof(down)))
    assert (out[:, :10] == host[2:7, 3:13]).all() and not out[:, 10:].any()
    out[:] = 0
    check(X.cuMemcpy2DAsync_v2_ptsz(ctypes.addressof(down), 0))   # to pageable memory: waits
    assert (out[:, :10] == host[2:7, 3:13]).all()
    bad = _2d(srcMemoryType=HOST, srcHost=host.ctypes.data, srcPitch=8, dstMemoryType=DEVICE,
              dstDevice=dev.value, dstPitch=pitch.value, WidthInBytes=40, Height=12)
    assert X.cuMemcpy2D_v2(ctypes.addressof(bad)) == 1
    array = _2d(srcMemoryType=ARRAY, srcArray=0x1234, dstMemoryType=DEVICE, dstDevice=dev.value,
                dstPitch=pitch.value, WidthInBytes=4, Height=1)
    assert X.cuMemcpy2D_v2(ctypes.addressof(array)) == 400    # not a live CUarray
    assert X.cuMemcpy2D_v2(0) == 1


def test_3d_against_numpy(ctx):
    host = np.arange(4 * 6 * 32, dtype=np.uint8).reshape(4, 6, 32)
    dev = alloc(host.nbytes)
    up = CUDA_MEMCPY3D(srcMemoryType=HOST, srcHost=host.ctypes.data, srcPitch=32, srcHeight=6,
                       dstMemoryType=DEVICE, dstDevice=dev, dstPitch=32, dstHeight=6,
                       WidthInBytes=32, Height=6, Depth=4)
    check(X.cuMemcpy3D_v2(ctypes.addressof(up)))
    out = np.zeros((2, 3, 8), np.uint8)
    down = CUDA_MEMCPY3D(srcMemoryType=DEVICE, srcDevice=dev, srcPitch=32, srcHeight=6, srcXInBytes=5,
                         srcY=1, srcZ=2, dstMemoryType=HOST, dstHost=out.ctypes.data, dstPitch=8,
                         dstHeight=3, WidthInBytes=8, Height=3, Depth=2)
    check(X.cuMemcpy3D_v2_ptds(ctypes.addressof(down)))
    assert (out == host[2:4, 1:4, 5:13]).all()
    out[:] = 0
    check(X.cuMemcpy3DAsync_v2(ctypes.addressof(down), 0))
    assert (out == host[2:4, 1:4, 5:13]).all()
    down.reserved0 = 8
    assert X.cuMemcpy3D_v2(ctypes.addressof(down)) == 1
    down.reserved0 = 0
    down.srcHeight = 2                              # rows do not fit in a slice
    assert X.cuMemcpy3D_v2(ctypes.addressof(down)) == 1


@pytest.mark.parametrize("bits,dtype,value", [(8, np.uint8, 0xA5), (16, np.uint16, 0xBEEF),
                                              (32, np.uint32, 0xDEADBEEF)])
def test_memsets(ctx, bits, dtype, value):
    n = 64
    size = np.dtype(dtype).itemsize
    dev = alloc(n * size * 4)
    out = np.zeros(n * 4, dtype)
    fns = {name: getattr(X, name.format(bits)) for name in
           ("cuMemsetD{}_v2", "cuMemsetD{}_v2_ptds", "cuMemsetD{}Async", "cuMemsetD{}Async_ptsz",
            "cuMemsetD2D{}_v2", "cuMemsetD2D{}_v2_ptds", "cuMemsetD2D{}Async", "cuMemsetD2D{}Async_ptsz")}
    for name, fn in fns.items():
        check(X.cuMemsetD8_v2(dev, 0, n * size * 4))
        if "2D" in name:
            args = (dev, 16 * size, value, 4, 8) + ((0,) if "Async" in name else ())
            expect = np.zeros((16, 16), dtype)
            expect[:8, :4] = value
            expect = expect.ravel()
        else:
            args = (dev, value, n) + ((0,) if "Async" in name else ())
            expect = np.zeros(n * 4, dtype)
            expect[:n] = value
        check(fn(*args))
        check(X.cuMemcpyDtoH_v2(out.ctypes.data, dev, out.nbytes))
        assert (out == expect).all(), name
    if size > 1:
        assert fns["cuMemsetD{}_v2"](dev + 1, value, 4) == 1          # misaligned
    assert fns["cuMemsetD{}_v2"](0, value, 4) == 1
    assert fns["cuMemsetD{}_v2"](dev, 1 << bits, 4) == 1              # does not fit


def test_peer_copy_between_contexts(ctx):
    src = np.arange(128, dtype=np.uint8)
    a = alloc(128)
    check(X.cuMemcpyHtoD_v2(a, src.ctypes.data, 128))
    other = out_u64()
    check(C.cuCtxCreate_v2(other.addr, 0, 1))
    b = alloc(128)
    check(X.cuMemcpyPeer(b, other.value, a, ctx, 128))
    out = np.zeros(128, np.uint8)
    check(X.cuMemcpyDtoH_v2(out.ctypes.data, b, 128))
    assert (out == src).all()
    check(X.cuMemsetD8_v2(b, 9, 128))
    check(X.cuMemcpyPeerAsync_ptsz(a, ctx, b, other.value, 128, 0))
    check(C.cuCtxSynchronize())
    check(C.cuCtxPopCurrent_v2(0))
    check(X.cuMemcpyDtoH_v2(out.ctypes.data, a, 128))
    assert (out == 9).all()
    assert X.cuMemcpyPeer(b, ctx, a, ctx, 128) == 1      # b is not memory of ctx's device
    assert X.cuMemcpyPeer(b, 0x4242, a, ctx, 128) == 201


def test_sync_memops(ctx):
    from gpudbg.cuda_driver.pointer import cuPointerSetAttribute
    dev = alloc(64)
    one = ctypes.c_uint(1)
    check(cuPointerSetAttribute(ctypes.addressof(one), 6, dev))
    check(X.cuMemsetD8_v2(dev, 1, 64))
    assert all(s.channel.idle() for s in C.current_context().all_streams())


def test_3d_peer(ctx):
    from gpudbg.cuda_driver.copies import CUDA_MEMCPY3D_PEER
    host = np.arange(2 * 3 * 16, dtype=np.uint8).reshape(2, 3, 16)
    a = alloc(host.nbytes)
    check(X.cuMemcpyHtoD_v2(a, host.ctypes.data, host.nbytes))
    other = out_u64()
    check(C.cuCtxCreate_v2(other.addr, 0, 1))
    b = alloc(host.nbytes)
    p = CUDA_MEMCPY3D_PEER(srcMemoryType=DEVICE, srcDevice=a, srcContext=ctx, srcPitch=16, srcHeight=3,
                           dstMemoryType=DEVICE, dstDevice=b, dstContext=other.value, dstPitch=16, dstHeight=3,
                           WidthInBytes=16, Height=3, Depth=2)
    check(X.cuMemcpy3DPeer(ctypes.addressof(p)))
    out = np.zeros_like(host)
    check(X.cuMemcpyDtoH_v2(out.ctypes.data, b, host.nbytes))
    assert (out == host).all()
    check(X.cuMemsetD8_v2(b, 0, host.nbytes))
    check(X.cuMemcpy3DPeerAsync_ptsz(ctypes.addressof(p), 0))
    check(C.cuCtxSynchronize())
    check(X.cuMemcpyDtoH_v2(out.ctypes.data, b, host.nbytes))
    assert (out == host).all()
    p.srcContext = 0x777
    assert X.cuMemcpy3DPeer(ctypes.addressof(p)) == 201
