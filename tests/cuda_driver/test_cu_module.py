import ctypes
import struct

import numpy as np

from cu_kernels import SAXPY_PTX, c_string, cstr, function, load_module
from cudrv_helpers import check, out_i32, out_u32, out_u64
from gpudbg.cuda_driver import module as MOD
from gpudbg.driver import fatbin as FB
from gpudbg.driver.types import CUfunction_attribute as A, CUjit_option as O

NOT_FOUND, INVALID_VALUE, INVALID_HANDLE, INVALID_IMAGE, NO_BINARY = 500, 1, 400, 200, 209


def test_load_from_pointer_get_function_and_global(ctx):
    h = load_module()
    f = function(h, "saxpy")
    assert function(h, "saxpy") == f                       # one CUfunction per kernel
    dptr, size = out_u64(), out_u64()
    check(MOD.cuModuleGetGlobal_v2(dptr.addr, size.addr, h, cstr("table")))
    assert size.value == 32
    from gpudbg.cuda_driver.copies import cuMemcpyDtoH_v2
    out = np.zeros(4, np.uint64)
    check(cuMemcpyDtoH_v2(out.ctypes.data, dptr.value, 32))
    assert out.tolist() == [1, 2, 3, 4]
    check(MOD.cuModuleGetGlobal_v2(0, size.addr, h, cstr("counter")))
    assert size.value == 4
    assert MOD.cuModuleGetGlobal_v2(dptr.addr, 0, h, cstr("nope")) == NOT_FOUND
    assert MOD.cuModuleGetFunction(out_u64().addr, h, cstr("nope")) == NOT_FOUND
    count = out_u32()
    check(MOD.cuModuleGetFunctionCount(count.addr, h))
    assert count.value == 2
    arr = (ctypes.c_uint64 * 2)()
    check(MOD.cuModuleEnumerateFunctions(ctypes.addressof(arr), 2, h))
    assert f in list(arr)
    assert MOD.cuModuleEnumerateFunctions(ctypes.addressof(arr), 3, h) == INVALID_VALUE


def test_function_queries(ctx):
    h = load_module()
    f = function(h, "saxpy")
    pi = out_i32()
    check(MOD.cuFuncGetAttribute(pi.addr, A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f))
    assert pi.value == 1024
    check(MOD.cuFuncGetAttribute(pi.addr, A.CU_FUNC_ATTRIBUTE_PTX_VERSION, f))
    assert pi.value == 80
    assert MOD.cuFuncGetAttribute(pi.addr, 999, f) == INVALID_VALUE
    check(MOD.cuFuncSetAttribute(f, A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536))
    check(MOD.cuFuncGetAttribute(pi.addr, A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f))
    assert pi.value == 65536
    assert MOD.cuFuncSetAttribute(f, A.CU_FUNC_ATTRIBUTE_NUM_REGS, 3) == INVALID_VALUE
    check(MOD.cuFuncSetCacheConfig(f, 1))
    assert MOD.cuFuncSetCacheConfig(f, 7) == INVALID_VALUE
    check(MOD.cuFuncSetSharedMemConfig(f, 2))
    mod = out_u64()
    check(MOD.cuFuncGetModule(mod.addr, f))
    assert mod.value == h
    name = out_u64()
    check(MOD.cuFuncGetName(name.addr, f))
    assert ctypes.string_at(name.value) == b"saxpy"
    offsets = []
    for i in range(4):
        off, size = out_u64(), out_u64()
        check(MOD.cuFuncGetParamInfo(f, i, off.addr, size.addr))
        offsets.append((off.value, size.value))
    assert offsets == [(0, 4), (4, 4), (8, 8), (16, 8)]
    assert MOD.cuFuncGetParamInfo(f, 4, out_u64().addr, 0) == INVALID_VALUE
    state, mode = out_i32(), out_i32()
    check(MOD.cuFuncIsLoaded(state.addr, f))
    check(MOD.cuFuncLoad(f))
    check(MOD.cuModuleGetLoadingMode(mode.addr))
    assert (state.value, mode.value) == (1, 1)


def test_bad_handles_and_null_pointers(ctx):
    h = load_module()
    f = function(h, "saxpy")
    assert MOD.cuModuleLoadData(0, cstr(SAXPY_PTX)) == INVALID_VALUE
    assert MOD.cuModuleLoadData(out_u64().addr, 0) == INVALID_VALUE
    assert MOD.cuModuleGetFunction(0, h, cstr("saxpy")) == INVALID_VALUE
    assert MOD.cuModuleGetFunction(out_u64().addr, 0, cstr("saxpy")) == INVALID_HANDLE
    assert MOD.cuModuleGetFunction(out_u64().addr, f, cstr("saxpy")) == INVALID_HANDLE
    assert MOD.cuFuncGetAttribute(out_i32().addr, 0, h) == INVALID_HANDLE      # a module is no function
    assert MOD.cuFuncGetAttribute(out_i32().addr, 0, 12345) == INVALID_HANDLE
    assert MOD.cuFuncGetAttribute(0, 0, f) == INVALID_VALUE
    check(MOD.cuModuleUnload(h))
    assert MOD.cuModuleUnload(h) == INVALID_HANDLE
    assert MOD.cuFuncGetAttribute(out_i32().addr, 0, f) == INVALID_HANDLE
    assert MOD.cuModuleGetFunction(out_u64().addr, h, cstr("saxpy")) == INVALID_HANDLE


def test_needs_init_and_context(fresh):
    buf = c_string(SAXPY_PTX)
    assert MOD.cuModuleLoadData(out_u64().addr, ctypes.addressof(buf)) == 3
    from gpudbg.cuda_driver.device import cuInit
    check(cuInit(0))
    assert MOD.cuModuleLoadData(out_u64().addr, ctypes.addressof(buf)) == 201


def test_bad_ptx_and_images(ctx):
    bad = c_string(SAXPY_PTX.replace("fma.rn.f32", "fma.zz.f32"))
    assert MOD.cuModuleLoadData(out_u64().addr, ctypes.addressof(bad)) == 218     # CUDA_ERROR_INVALID_PTX
    junk = c_string("hello, not an image")
    assert MOD.cuModuleLoadData(out_u64().addr, ctypes.addressof(junk)) == INVALID_IMAGE
    assert MOD.cuModuleLoadFatBinary(out_u64().addr, cstr(SAXPY_PTX)) == INVALID_IMAGE


def _cubin() -> bytes:
    """A minimal ELF64 with e_machine EM_CUDA (190) and one section past
    the first 64 bytes, so its size comes from the section table."""
    body = b"\x00" * 64 + b"code" * 8
    shoff = len(body)
    header = bytearray(64)
    header[0:4] = b"\x7fELF"
    header[4], header[5], header[6] = 2, 1, 1
    struct.pack_into("<HHI", header, 16, 2, 190, 1)
    struct.pack_into("<QQQ", header, 0x18, 0, 0, shoff)
    struct.pack_into("<IHHHHHH", header, 0x30, 0, 64, 56, 0, 64, 2, 0)
    null = bytes(64)
    text = bytearray(64)
    struct.pack_into("<IIQQQQ", text, 0, 0, 1, 6, 0, 64, 32)
    return bytes(header) + body[64:] + null + bytes(text)


def test_cubin_is_no_binary_for_gpu(ctx):
    image = ctypes.create_string_buffer(_cubin())
    assert MOD.cuModuleLoadData(out_u64().addr, ctypes.addressof(image)) == NO_BINARY
    assert MOD._elf_size(ctypes.addressof(image)) == len(_cubin())


def test_fatbin_and_wrapper_by_address(ctx):
    fat = ctypes.create_string_buffer(FB.build_fatbin([SAXPY_PTX]))
    h = out_u64()
    check(MOD.cuModuleLoadFatBinary(h.addr, ctypes.addressof(fat)))
    function(h.value, "poke")
    wrapper = ctypes.create_string_buffer(FB.build_wrapper(ctypes.addressof(fat)))
    check(MOD.cuModuleLoadData(h.addr, ctypes.addressof(wrapper)))
    function(h.value, "saxpy")


def test_load_data_ex_logs_and_wall_time(ctx):
    info = ctypes.create_string_buffer(1024)
    err = ctypes.create_string_buffer(1024)
    opts = (ctypes.c_int * 6)(O.CU_JIT_INFO_LOG_BUFFER, O.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                              O.CU_JIT_ERROR_LOG_BUFFER, O.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                              O.CU_JIT_WALL_TIME, O.CU_JIT_MAX_REGISTERS)
    vals = (ctypes.c_uint64 * 6)(ctypes.addressof(info), 1024, ctypes.addressof(err), 1024, 0, 32)
    image = c_string(SAXPY_PTX)
    h = out_u64()
    check(MOD.cuModuleLoadDataEx(h.addr, ctypes.addressof(image), 6, ctypes.addressof(opts), ctypes.addressof(vals)))
    assert info.value and vals[1] == len(info.value) + 1
    assert vals[3] in (0, 1) and err.value == b""
    wall = ctypes.c_float.from_address(ctypes.addressof(vals) + 32).value
    assert wall >= 0.0
    pi = out_i32()
    check(MOD.cuFuncGetAttribute(pi.addr, A.CU_FUNC_ATTRIBUTE_NUM_REGS, function(h.value, "saxpy")))
    assert pi.value <= 32
    # a failing load writes the error log
    bad = c_string(SAXPY_PTX.replace("fma.rn.f32", "fma.zz.f32"))
    vals = (ctypes.c_uint64 * 6)(ctypes.addressof(info), 1024, ctypes.addressof(err), 1024, 0, 32)
    assert MOD.cuModuleLoadDataEx(h.addr, ctypes.addressof(bad), 6, ctypes.addressof(opts),
                                  ctypes.addressof(vals)) == 218
    assert b"fma" in err.value and vals[3] == len(err.value) + 1
    bad_opt = (ctypes.c_int * 1)(9999)
    assert MOD.cuModuleLoadDataEx(h.addr, ctypes.addressof(image), 1, ctypes.addressof(bad_opt),
                                  ctypes.addressof(vals)) == INVALID_VALUE


def test_module_load_file(ctx, tmp_path):
    p = tmp_path / "k.ptx"
    p.write_text(SAXPY_PTX)
    h = out_u64()
    check(MOD.cuModuleLoad(h.addr, cstr(str(p))))
    function(h.value, "saxpy")
    assert MOD.cuModuleLoad(h.addr, cstr(str(tmp_path / "none.ptx"))) == 301
