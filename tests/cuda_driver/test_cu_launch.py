import ctypes
import struct
import threading

import numpy as np

from cu_kernels import Params, dalloc, from_device, function, load_module, saxpy_data, saxpy_params
from cudrv_helpers import check, out_u64
from gpudbg.cuda_driver import context as CTX
from gpudbg.cuda_driver import launch as L
from gpudbg.cuda_driver import stream as S

SUCCESS, INVALID_VALUE, INVALID_HANDLE, INVALID_CONTEXT, ILLEGAL_ADDRESS = 0, 1, 400, 201, 700


def _launch(f, grid, block, params, stream=0, shared=0, extra=0):
    return L.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, stream, params.addr if params else 0, extra)


def test_saxpy_kernel_params(ctx):
    f = function(load_module(), "saxpy")
    x, y, dx, dy = saxpy_data(1000)
    p = saxpy_params(1000, 2.5, dx, dy)
    check(_launch(f, 8, 128, p))
    np.testing.assert_allclose(from_device(dy, y), 2.5 * x + y, rtol=1e-5, atol=1e-6)


def test_saxpy_extra_buffer(ctx):
    f = function(load_module(), "saxpy")
    x, y, dx, dy = saxpy_data(300)
    buf = ctypes.create_string_buffer(struct.pack("<IfQQ", 300, -1.0, dx, dy))
    size = ctypes.c_size_t(24)
    extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(buf), 2, ctypes.addressof(size), 0)
    check(L.cuLaunchKernel(f, 3, 1, 1, 128, 1, 1, 0, 0, 0, ctypes.addressof(extra)))
    np.testing.assert_allclose(from_device(dy, y), y - x, rtol=1e-5, atol=1e-6)
    # both kernelParams and extra, an unknown key, a short buffer
    p = saxpy_params(300, 1.0, dx, dy)
    assert L.cuLaunchKernel(f, 3, 1, 1, 128, 1, 1, 0, 0, p.addr, ctypes.addressof(extra)) == INVALID_VALUE
    bad = (ctypes.c_void_p * 3)(7, 0, 0)
    assert L.cuLaunchKernel(f, 3, 1, 1, 128, 1, 1, 0, 0, 0, ctypes.addressof(bad)) == INVALID_VALUE
    size.value = 8
    assert L.cuLaunchKernel(f, 3, 1, 1, 128, 1, 1, 0, 0, 0, ctypes.addressof(extra)) == INVALID_VALUE


def _config(grid, block, stream=0, attrs=()):
    cfg = L.CUlaunchConfig(grid, 1, 1, block, 1, 1, 0, stream or None, None, len(attrs))
    raw = ctypes.create_string_buffer(b"".join(attrs) or b"\0")
    cfg.attrs = ctypes.addressof(raw) if attrs else None
    return cfg, raw


def attr(ident, fmt="", *values):
    return struct.pack("<I4x", ident) + struct.pack("<" + fmt, *values).ljust(64, b"\0") if fmt else \
        struct.pack("<I4x", ident) + bytes(64)


def test_launch_kernel_ex_with_attributes(ctx):
    f = function(load_module(), "saxpy")
    x, y, dx, dy = saxpy_data(512)
    p = saxpy_params(512, 3.0, dx, dy)
    s = out_u64()
    check(S.cuStreamCreate(s.addr, 0))
    attrs = [attr(L.A_PRIORITY, "i", -3), attr(L.A_COOPERATIVE, "i", 1), attr(L.A_IGNORE),
             attr(L.A_CLUSTER_DIMENSION, "III", 1, 1, 1), attr(L.A_PROGRAMMATIC_STREAM_SERIALIZATION, "i", 1),
             attr(L.A_ACCESS_POLICY_WINDOW, "QQfii", dx, 2048, 0.5, 1, 2)]
    cfg, keep = _config(4, 128, s.value, attrs)
    check(L.cuLaunchKernelEx(ctypes.addressof(cfg), f, p.addr, 0))
    check(S.cuStreamSynchronize(s.value))
    np.testing.assert_allclose(from_device(dy, y), 3.0 * x + y, rtol=1e-5, atol=1e-6)


def test_launch_kernel_ex_attribute_errors(ctx):
    f = function(load_module(), "saxpy")
    _, _, dx, dy = saxpy_data(64)
    p = saxpy_params(64, 1.0, dx, dy)
    cases = [([attr(99, "i", 0)], INVALID_VALUE),
             ([attr(L.A_CLUSTER_DIMENSION, "III", 3, 1, 1)], INVALID_VALUE),      # 3 does not divide 4
             ([attr(L.A_CLUSTER_DIMENSION, "III", 4, 2, 1)], INVALID_VALUE),      # 2 does not divide 1
             ([attr(L.A_CLUSTER_DIMENSION, "III", 4, 1, 1)], SUCCESS),            # a cluster of the 4 blocks
             ([attr(L.A_ACCESS_POLICY_WINDOW, "QQfii", dx, 64, 1.5, 0, 0)], INVALID_VALUE),
             ([attr(L.A_DEVICE_UPDATABLE_KERNEL_NODE, "i", 1)], INVALID_VALUE)]
    for attrs, code in cases:
        cfg, keep = _config(4, 32, 0, attrs)
        assert L.cuLaunchKernelEx(ctypes.addressof(cfg), f, p.addr, 0) == code, attrs
    cfg, keep = _config(4, 32)
    cfg.numAttrs, cfg.attrs = 1, None
    assert L.cuLaunchKernelEx(ctypes.addressof(cfg), f, p.addr, 0) == INVALID_VALUE
    assert L.cuLaunchKernelEx(0, f, p.addr, 0) == INVALID_VALUE


def test_cooperative_too_large(ctx):
    f = function(load_module(), "saxpy")
    _, _, dx, dy = saxpy_data(64)
    p = saxpy_params(64, 1.0, dx, dy)
    check(L.cuLaunchCooperativeKernel(f, 2, 1, 1, 64, 1, 1, 0, 0, p.addr))
    assert L.cuLaunchCooperativeKernel(f, 1 << 20, 1, 1, 1024, 1, 1, 0, 0, p.addr) == 720


def test_configuration_errors_are_invalid_value(ctx):
    f = function(load_module(), "saxpy")
    _, _, dx, dy = saxpy_data(64)
    p = saxpy_params(64, 1.0, dx, dy)
    assert _launch(f, 1, 2048, p) == INVALID_VALUE
    assert _launch(f, 0, 32, p) == INVALID_VALUE
    assert L.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0) == INVALID_VALUE    # no arguments given
    short = (ctypes.c_void_p * 4)(ctypes.addressof(p.values[0]), ctypes.addressof(p.values[1]),
                                  ctypes.addressof(p.values[2]), None)
    assert L.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, ctypes.addressof(short), 0) == INVALID_VALUE


def test_bad_function_and_no_context(ctx):
    h = load_module()
    p = Params()
    assert _launch(0, 1, 1, p) == INVALID_HANDLE
    assert _launch(h, 1, 1, p) == INVALID_HANDLE            # a CUmodule is not a CUfunction
    assert _launch(0xDEAD0, 1, 1, p) == INVALID_HANDLE
    f = function(h, "saxpy")
    assert _launch(f, 1, 32, p, stream=0x5D00DEAD0000) == INVALID_HANDLE
    pctx = out_u64()
    check(CTX.cuCtxPopCurrent_v2(pctx.addr))
    assert _launch(f, 1, 32, p) == INVALID_CONTEXT


def test_fault_is_sticky_illegal_address(ctx):
    f = function(load_module(), "poke")
    good = dalloc(4)
    p = Params(ctypes.c_uint64(0x10), ctypes.c_uint32(5))
    check(L.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, p.addr, 0))
    assert CTX.cuCtxSynchronize() == ILLEGAL_ADDRESS
    assert CTX.cuCtxSynchronize() == ILLEGAL_ADDRESS                       # sticky
    assert S.cuStreamSynchronize(0) == ILLEGAL_ADDRESS
    p2 = Params(ctypes.c_uint64(good), ctypes.c_uint32(5))
    assert L.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, p2.addr, 0) == ILLEGAL_ADDRESS


def test_ptsz_and_host_func(ctx):
    f = function(load_module(), "saxpy")
    x, y, dx, dy = saxpy_data(256)
    p = saxpy_params(256, 2.0, dx, dy)
    check(L.cuLaunchKernel_ptsz(f, 2, 1, 1, 128, 1, 1, 0, 0, p.addr, 0))
    seen = []
    done = threading.Event()

    @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    def host_fn(data):
        seen.append((data, threading.current_thread() is threading.main_thread()))
        done.set()

    check(L.cuLaunchHostFunc_ptsz(0, ctypes.cast(host_fn, ctypes.c_void_p).value, 1234))
    check(S.cuStreamSynchronize_ptsz(0))
    assert done.is_set() and seen == [(1234, False)]
    np.testing.assert_allclose(from_device(dy, y), 2.0 * x + y, rtol=1e-5, atol=1e-6)
    assert L.cuLaunchHostFunc(0, 0, 0) == INVALID_VALUE
