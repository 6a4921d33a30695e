"""Registration and launches as an nvcc 13 program makes them: <<<>>> via
push/pop configuration + __cudaGetKernel + __cudaLaunchKernel,
cudaLaunchKernel by host stub, symbols by host shadow address."""
import ctypes
import struct

import numpy as np

from gpudbg.cuda_runtime import exports as rt
from rt_helpers import Args, Program, addr, check, dim3, malloc, out_u64

H2D, D2H = 1, 2
N = 1000


def _vectors():
    a = np.arange(N, dtype=np.float32)
    b = (np.arange(N, dtype=np.float32) * 2.5).astype(np.float32)
    return a, b


def _upload(arr: np.ndarray) -> int:
    d = malloc(arr.nbytes)
    check(rt.cudaMemcpy(d, arr.ctypes.data, arr.nbytes, H2D))
    return d


def test_triple_chevron_vecadd(program):
    a, b = _vectors()
    da, db, dc = _upload(a), _upload(b), malloc(a.nbytes)
    # what `vecadd<<<grid, block>>>(da, db, dc, N)` compiles to in CUDA 13
    assert rt.__cudaPushCallConfiguration(dim3(4), dim3(256), 0, 0) == 0
    grid, block, shmem, stream = (ctypes.c_uint32 * 3)(), (ctypes.c_uint32 * 3)(), out_u64(), out_u64()
    check(rt.__cudaPopCallConfiguration(addr(grid), addr(block), addr(shmem), addr(stream)))
    assert list(grid) == [4, 1, 1] and list(block) == [256, 1, 1]
    kernel = out_u64()
    check(rt.__cudaGetKernel(addr(kernel), program.stub("vecadd")))
    args = Args(ctypes.c_uint64(da), ctypes.c_uint64(db), ctypes.c_uint64(dc), ctypes.c_int(N))
    check(rt.__cudaLaunchKernel(kernel.value, bytes(grid), bytes(block), args.address, shmem.value, stream.value))
    c = np.zeros(N, np.float32)
    check(rt.cudaMemcpy(c.ctypes.data, dc, c.nbytes, D2H))
    np.testing.assert_array_equal(c, a + b)
    check(rt.cudaGetLastError())


def test_cuda_launch_kernel_by_stub_ptsz_and_struct_param(program):
    out = malloc(8 * 32)
    pair = struct.pack("<dB7x", 1.5, 3)          # struct Pair { double x; char tag; } by value
    p = ctypes.create_string_buffer(pair, 16)
    args = Args(p, ctypes.c_uint64(out))
    check(rt.cudaLaunchKernel_ptsz(program.stub("_Z5pairs4PairPd"), dim3(1), dim3(32), args.address, 0, 0))
    check(rt.cudaStreamSynchronize_ptsz(0))
    got = np.zeros(32, np.float64)
    check(rt.cudaMemcpy(got.ctypes.data, out, got.nbytes, D2H))
    np.testing.assert_array_equal(got, 1.5 * np.arange(1, 33) + 3)


def test_symbols_by_host_shadow_address(program):
    scale, offset = ctypes.c_int(3), (ctypes.c_float * 4)(0.5, 1.5, 2.5, 3.5)
    check(rt.cudaMemcpyToSymbol(addr(program.scale), addr(scale), 4, 0, H2D))
    check(rt.cudaMemcpyToSymbol(addr(program.offset), addr(offset), 16, 0, H2D))
    size, where = out_u64(), out_u64()
    check(rt.cudaGetSymbolSize(addr(size), addr(program.offset)))
    check(rt.cudaGetSymbolAddress(addr(where), addr(program.offset)))
    assert size.value == 16 and where.value != 0
    back = (ctypes.c_float * 2)()
    check(rt.cudaMemcpyFromSymbol(addr(back), addr(program.offset), 8, 8, D2H))
    assert list(back) == [2.5, 3.5]
    ints = np.arange(8, dtype=np.int32)
    din, dout = _upload(ints), malloc(8 * 4)
    args = Args(ctypes.c_uint64(din), ctypes.c_uint64(dout), ctypes.c_int(8))
    check(rt.cudaLaunchKernel(program.stub("scaled"), dim3(1), dim3(8), args.address, 0, 0))
    got = np.zeros(8, np.float32)
    check(rt.cudaMemcpy(got.ctypes.data, dout, got.nbytes, D2H))
    np.testing.assert_array_equal(got, ints * 3 + np.tile([0.5, 1.5, 2.5, 3.5], 2))


def test_unknown_stub_symbol_and_missing_configuration(program):
    bogus = ctypes.c_int(0)
    assert rt.cudaLaunchKernel(addr(bogus), dim3(1), dim3(1), 0, 0, 0) == 98     # cudaErrorInvalidDeviceFunction
    assert rt.cudaGetLastError() == 98 and rt.cudaGetLastError() == 0
    size = out_u64()
    assert rt.cudaGetSymbolSize(addr(size), addr(bogus)) == 13                   # cudaErrorInvalidSymbol
    g, b, s, st = (ctypes.c_uint32 * 3)(), (ctypes.c_uint32 * 3)(), out_u64(), out_u64()
    assert rt.__cudaPopCallConfiguration(addr(g), addr(b), addr(s), addr(st)) == 52   # MissingConfiguration
    assert rt.cudaPeekAtLastError() == 52


def test_bad_configuration_is_a_launch_error(program):
    d = malloc(16)
    args = Args(ctypes.c_uint64(d), ctypes.c_uint64(d), ctypes.c_uint64(d), ctypes.c_int(0))
    assert rt.cudaLaunchKernel(program.stub("vecadd"), dim3(1), dim3(4096), args.address, 0, 0) == 9
    assert rt.cudaGetLastError() == 9


def test_each_device_loads_its_own_module(program):
    for device in (0, 1):
        check(rt.cudaSetDevice(device))
        a, b = _vectors()
        da, db, dc = _upload(a), _upload(b), malloc(a.nbytes)
        args = Args(ctypes.c_uint64(da), ctypes.c_uint64(db), ctypes.c_uint64(dc), ctypes.c_int(N))
        check(rt.cudaLaunchKernel(program.stub("vecadd"), dim3(4), dim3(256), args.address, 0, 0))
        c = np.zeros(N, np.float32)
        check(rt.cudaMemcpy(c.ctypes.data, dc, c.nbytes, D2H))
        np.testing.assert_array_equal(c, a + b)
    modules = {m.context.device.ordinal for m in
               __import__("gpudbg.cuda_runtime.registration", fromlist=["_"])._fatbins[program.handle].modules.values()}
    assert modules == {0, 1}


def test_reset_reloads_and_init_module(program):
    assert rt.__cudaInitModule(program.handle) == 1
    check(rt.cudaDeviceReset())
    test_symbols_by_host_shadow_address(program)


def test_func_attributes_occupancy_and_name(program):
    from gpudbg.cuda_runtime.launch import cudaFuncAttributes
    attrs = cudaFuncAttributes()
    check(rt.cudaFuncGetAttributes(addr(attrs), program.stub("vecadd")))
    assert attrs.maxThreadsPerBlock >= 256 and attrs.ptxVersion >= 70 and attrs.numRegs > 0
    blocks = ctypes.c_int(0)
    check(rt.cudaOccupancyMaxActiveBlocksPerMultiprocessor(addr(blocks), program.stub("vecadd"), 256, 0))
    assert blocks.value > 0
    name = out_u64()
    check(rt.cudaFuncGetName(addr(name), program.stub("_Z5pairs4PairPd")))
    assert ctypes.string_at(name.value) == b"_Z5pairs4PairPd"
    check(rt.cudaFuncSetAttribute(program.stub("vecadd"), 8, 1024))
    check(rt.cudaFuncGetAttributes(addr(attrs), program.stub("vecadd")))
    assert attrs.maxDynamicSharedSizeBytes == 1024
    assert rt.cudaFuncSetCacheConfig(program.stub("vecadd"), 7) == 1


def test_launch_kernel_ex_cooperative(program):
    from gpudbg.cuda_runtime.launch import ATTRIBUTE_BYTES, _LaunchConfig
    a, b = _vectors()
    da, db, dc = _upload(a), _upload(b), malloc(a.nbytes)
    attrs = ctypes.create_string_buffer(ATTRIBUTE_BYTES * 2)
    struct.pack_into("<Ii", attrs, 0, 2, 0)          # cudaLaunchAttributeCooperative
    struct.pack_into("<i", attrs, 8, 1)
    struct.pack_into("<I", attrs, ATTRIBUTE_BYTES, 8)   # cudaLaunchAttributePriority: a hint
    cfg = _LaunchConfig((ctypes.c_uint * 3)(4, 1, 1), (ctypes.c_uint * 3)(256, 1, 1), 0, None, addr(attrs), 2)
    args = Args(ctypes.c_uint64(da), ctypes.c_uint64(db), ctypes.c_uint64(dc), ctypes.c_int(N))
    check(rt.cudaLaunchKernelExC(addr(cfg), program.stub("vecadd"), args.address))
    c = np.zeros(N, np.float32)
    check(rt.cudaMemcpy(c.ctypes.data, dc, c.nbytes, D2H))
    np.testing.assert_array_equal(c, a + b)
    struct.pack_into("<I", attrs, 0, 4)              # a 2x1x1 cluster
    struct.pack_into("<3I", attrs, 8, 2, 1, 1)
    check(rt.cudaMemset(dc, 0, a.nbytes))
    check(rt.cudaLaunchKernelExC(addr(cfg), program.stub("vecadd"), args.address))
    check(rt.cudaMemcpy(c.ctypes.data, dc, c.nbytes, D2H))
    np.testing.assert_array_equal(c, a + b)
    struct.pack_into("<3I", attrs, 8, 3, 1, 1)       # 3 does not divide the 4 blocks
    assert rt.cudaLaunchKernelExC(addr(cfg), program.stub("vecadd"), args.address) == 912


def test_unregister_forgets_the_stubs(fresh):
    p = Program()
    check(rt.cudaFree(0))
    p.unregister()
    assert rt.cudaLaunchKernel(p.stub("vecadd"), dim3(1), dim3(1), 0, 0, 0) == 98
    p.unregister()     # twice at exit: quiet
