"""The numba-cuda path (driver linker fallback) and the library API."""
import ctypes

import numpy as np

from cu_kernels import SAXPY_PTX, cstr, from_device, saxpy_data, saxpy_params
from cudrv_helpers import check, out_i32, out_u32, out_u64
from gpudbg.cuda_driver import context as CTX
from gpudbg.cuda_driver import launch as L
from gpudbg.cuda_driver import library as LIB
from gpudbg.cuda_driver import linker as LNK
from gpudbg.cuda_driver import module as MOD
from gpudbg.driver.types import CUfunction_attribute as A, CUjit_option as O

PTX_INPUT, FATBIN_INPUT = 1, 3
EXTERN_PTX = """
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .u32 r) twice(.param .u32 a);
.visible .entry use_twice(.param .u64 out)
{
    .reg .b64 %rd<2>;
    .reg .b32 %r<3>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, 21;
    { .param .u32 a; .param .u32 r;
      st.param.b32 [a], %r1;
      call.uni (r), twice, (a);
      ld.param.b32 %r2, [r]; }
    st.global.u32 [%rd1], %r2;
    ret;
}
"""
TWICE_PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .func (.param .u32 r) twice(.param .u32 a)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [a];
    add.u32 %r2, %r1, %r1;
    st.param.u32 [r], %r2;
    ret;
}
"""


def link(*ptx_texts, options=None):
    """cuLinkCreate -> AddData(PTX) ... -> Complete; returns (state, bytes)."""
    state = out_u64()
    if options:
        codes, values = options
        check(LNK.cuLinkCreate_v2(len(codes), ctypes.addressof(codes), ctypes.addressof(values), state.addr))
    else:
        check(LNK.cuLinkCreate_v2(0, 0, 0, state.addr))
    for i, text in enumerate(ptx_texts):
        data = ctypes.create_string_buffer(text.encode())
        check(LNK.cuLinkAddData_v2(state.value, PTX_INPUT, ctypes.addressof(data), len(data), cstr(f"in{i}.ptx"),
                                   0, 0, 0))
    cubin, size = out_u64(), out_u64()
    check(LNK.cuLinkComplete(state.value, cubin.addr, size.addr))
    return state.value, ctypes.string_at(cubin.value, size.value)


def load_library(image: bytes) -> int:
    buf = ctypes.create_string_buffer(image, len(image))
    lib = out_u64()
    check(LIB.cuLibraryLoadData(lib.addr, ctypes.addressof(buf), 0, 0, 0, 0, 0, 0))
    return lib.value


def test_numba_flow(ctx):
    info = ctypes.create_string_buffer(512)
    codes = (ctypes.c_int * 3)(O.CU_JIT_INFO_LOG_BUFFER, O.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, O.CU_JIT_LOG_VERBOSE)
    values = (ctypes.c_uint64 * 3)(ctypes.addressof(info), 512, 1)
    state, image = link(SAXPY_PTX, options=(codes, values))
    assert b"linked 1 input" in info.value and values[1] == len(info.value) + 1
    copy = bytes(image)                        # numba copies the "cubin", then destroys the link state
    check(LNK.cuLinkDestroy(state))
    assert LNK.cuLinkDestroy(state) == 400
    lib = load_library(copy)
    kernel = out_u64()
    check(LIB.cuLibraryGetKernel(kernel.addr, lib, cstr("saxpy")))
    dev = ctypes.c_int(0)
    pi = out_i32()
    check(LIB.cuKernelGetAttribute(pi.addr, A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, kernel.value, dev.value))
    assert pi.value == 1024
    x, y, dx, dy = saxpy_data(700)
    p = saxpy_params(700, 0.5, dx, dy)
    cfg = L.CUlaunchConfig(6, 1, 1, 128, 1, 1, 0, None, None, 0)
    check(L.cuLaunchKernelEx(ctypes.addressof(cfg), kernel.value, p.addr, 0))   # the CUkernel as CUfunction
    check(CTX.cuCtxSynchronize())
    np.testing.assert_allclose(from_device(dy, y), 0.5 * x + y, rtol=1e-5, atol=1e-6)


def test_multi_input_link_image_survives_destroy(ctx):
    state, image = link(EXTERN_PTX, TWICE_PTX)
    assert image.startswith(LNK.CONTAINER_MAGIC)
    check(LNK.cuLinkDestroy(state))
    buf = ctypes.create_string_buffer(image, len(image))
    mod = out_u64()
    check(MOD.cuModuleLoadData(mod.addr, ctypes.addressof(buf)))
    f = out_u64()
    check(MOD.cuModuleGetFunction(f.addr, mod.value, cstr("use_twice")))
    out = np.zeros(1, np.uint32)
    from cu_kernels import Params, to_device
    d = to_device(out)
    p = Params(ctypes.c_uint64(d))
    check(L.cuLaunchKernel(f.value, 1, 1, 1, 1, 1, 1, 0, 0, p.addr, 0))
    assert from_device(d, out)[0] == 42


def test_link_errors(ctx):
    state = out_u64()
    check(LNK.cuLinkCreate_v2(0, 0, 0, state.addr))
    data = ctypes.create_string_buffer(EXTERN_PTX.encode())
    check(LNK.cuLinkAddData_v2(state.value, PTX_INPUT, ctypes.addressof(data), len(data), 0, 0, 0, 0))
    cubin = out_u64()
    assert LNK.cuLinkComplete(state.value, cubin.addr, out_u64().addr) == 500      # twice is unresolved
    assert LNK.cuLinkAddData_v2(state.value, 99, ctypes.addressof(data), len(data), 0, 0, 0, 0) == 1
    assert LNK.cuLinkAddData_v2(state.value, PTX_INPUT, 0, 10, 0, 0, 0, 0) == 1
    junk = ctypes.create_string_buffer(b"not ptx at all")
    assert LNK.cuLinkAddData_v2(state.value, FATBIN_INPUT, ctypes.addressof(junk), 14, 0, 0, 0, 0) == 200
    assert LNK.cuLinkComplete(0xBAD0, cubin.addr, 0) == 400
    check(LNK.cuLinkDestroy(state.value))
    empty = out_u64()
    check(LNK.cuLinkCreate_v2(0, 0, 0, empty.addr))
    assert LNK.cuLinkComplete(empty.value, cubin.addr, 0) == 1


def test_library_api(ctx):
    lib = load_library(SAXPY_PTX.encode() + b"\0")
    count = out_u32()
    check(LIB.cuLibraryGetKernelCount(count.addr, lib))
    assert count.value == 2
    kernels = (ctypes.c_uint64 * 2)()
    check(LIB.cuLibraryEnumerateKernels(ctypes.addressof(kernels), 2, lib))
    k = out_u64()
    check(LIB.cuLibraryGetKernel(k.addr, lib, cstr("saxpy")))
    assert k.value in list(kernels)
    assert LIB.cuLibraryGetKernel(out_u64().addr, lib, cstr("nope")) == 500
    name, plib, fn, mod = out_u64(), out_u64(), out_u64(), out_u64()
    check(LIB.cuKernelGetName(name.addr, k.value))
    assert ctypes.string_at(name.value) == b"saxpy"
    check(LIB.cuKernelGetLibrary(plib.addr, k.value))
    assert plib.value == lib
    check(LIB.cuKernelGetFunction(fn.addr, k.value))
    check(LIB.cuLibraryGetModule(mod.addr, lib))
    fmod = out_u64()
    check(MOD.cuFuncGetModule(fmod.addr, fn.value))
    assert fmod.value == mod.value
    off, size = out_u64(), out_u64()
    check(LIB.cuKernelGetParamInfo(k.value, 2, off.addr, size.addr))
    assert (off.value, size.value) == (8, 8)
    dptr, nbytes = out_u64(), out_u64()
    check(LIB.cuLibraryGetGlobal(dptr.addr, nbytes.addr, lib, cstr("counter")))
    assert nbytes.value == 4 and dptr.value
    assert LIB.cuLibraryGetManaged(dptr.addr, nbytes.addr, lib, cstr("counter")) == 500
    check(LIB.cuKernelSetAttribute(A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 70000, k.value, 0))
    pi = out_i32()
    check(MOD.cuFuncGetAttribute(pi.addr, A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fn.value))
    assert pi.value == 70000
    check(LIB.cuKernelSetCacheConfig(k.value, 2, 0))
    assert LIB.cuKernelGetAttribute(pi.addr, 0, k.value, 7) == 101                 # invalid device
    check(LIB.cuLibraryUnload(lib))
    assert LIB.cuLibraryGetKernel(out_u64().addr, lib, cstr("saxpy")) == 400
    assert LIB.cuKernelGetFunction(out_u64().addr, k.value) == 400
    assert MOD.cuFuncGetAttribute(pi.addr, 0, fn.value) == 400


def test_kernel_works_in_a_second_context(ctx):
    lib = load_library(SAXPY_PTX.encode() + b"\0")
    k = out_u64()
    check(LIB.cuLibraryGetKernel(k.addr, lib, cstr("saxpy")))
    f0 = out_u64()
    check(LIB.cuKernelGetFunction(f0.addr, k.value))
    other = out_u64()
    check(CTX.cuCtxCreate_v2(other.addr, 0, 1))
    f1 = out_u64()
    check(LIB.cuKernelGetFunction(f1.addr, k.value))
    assert f1.value != f0.value
    x, y, dx, dy = saxpy_data(100)
    p = saxpy_params(100, 2.0, dx, dy)
    check(L.cuLaunchKernel(k.value, 1, 1, 1, 128, 1, 1, 0, 0, p.addr, 0))
    check(CTX.cuCtxSynchronize())
    np.testing.assert_allclose(from_device(dy, y), 2.0 * x + y, rtol=1e-5, atol=1e-6)
    assert L.cuLaunchKernel(f0.value, 1, 1, 1, 128, 1, 1, 0, 0, p.addr, 0) == 400   # another context's function


def test_arch_specific_jit_target(ctx):
    """numba-cuda asks cuLinkCreate for CU_TARGET_COMPUTE_90A (0x10000 + 90)."""
    codes = (ctypes.c_int * 1)(O.CU_JIT_TARGET)
    for target, code in ((0x10000 + 90, 0), (0x20000 + 100, 209), (0x10000 + 91, 1)):
        values = (ctypes.c_uint64 * 1)(target)
        state = out_u64()
        result = LNK.cuLinkCreate_v2(1, ctypes.addressof(codes), ctypes.addressof(values), state.addr)
        if code == 1:
            assert result == 1
            continue
        check(result)
        data = ctypes.create_string_buffer(SAXPY_PTX.encode())
        check(LNK.cuLinkAddData_v2(state.value, PTX_INPUT, ctypes.addressof(data), len(data), 0, 0, 0, 0))
        assert LNK.cuLinkComplete(state.value, out_u64().addr, out_u64().addr) == code   # compute_100f > sm_90
