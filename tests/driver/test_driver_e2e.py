"""End to end through the real loader and executor: PTX compiled by NVRTC
(fixtures/saxpy.cu, and the parser's tests/ptx/fixtures/constants.cu)."""
from pathlib import Path

import numpy as np

from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.runtime.types import mcMemcpyKind as K

S = E.mcSuccess
FIX = Path(__file__).parent / "fixtures"
PTX_FIX = Path(__file__).parent.parent / "ptx" / "fixtures"


def test_saxpy_and_reduce_with_printf(real, capsys):
    err, m = mc.mcModuleLoad(FIX / "saxpy.ptx")
    assert err == S, mc.last_error_message()
    _, saxpy = mc.mcModuleGetFunction(m, "saxpy")
    _, reduce = mc.mcModuleGetFunction(m, "reduce")
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    _, dx = mc.mcMalloc(4 * n)
    _, dy = mc.mcMalloc(4 * n)
    _, dout = mc.mcMalloc(4 * 4)
    assert mc.mcMemcpy(dx, x, 4 * n, K.mcMemcpyHostToDevice) == (S,)
    assert mc.mcMemcpy(dy, y, 4 * n, K.mcMemcpyHostToDevice) == (S,)
    assert mc.mcModuleLaunchKernel(saxpy, 4, 1, 1, 256, 1, 1, 0, None,
                                   [n, np.float32(2.0), dx, dy], None) == (S,)
    out = np.zeros(n, np.float32)
    assert mc.mcMemcpy(out, dy, 4 * n, K.mcMemcpyDeviceToHost) == (S,)
    np.testing.assert_allclose(out, 2 * x + 1)
    _, s = mc.mcStreamCreate()
    assert mc.mcModuleLaunchKernel(reduce, 4, 1, 1, 256, 1, 1, 0, s, [dx, dout, n], None) == (S,)
    assert mc.mcStreamSynchronize(s) == (S,)
    assert capsys.readouterr().out == "hello 1000 1.500000\n"
    sums = np.zeros(4, np.float32)
    mc.mcMemcpy(sums, dout, 16, K.mcMemcpyDeviceToHost)
    np.testing.assert_allclose(sums, [x[i * 256:(i + 1) * 256].sum() for i in range(4)])
    assert mc.mcModuleUnload(m) == (S,)


def test_fault_in_real_kernel_is_sticky_with_report(real):
    _, m = mc.mcModuleLoadData((FIX / "saxpy.ptx").read_bytes() + b"\x00")
    _, saxpy = mc.mcModuleGetFunction(m, "saxpy")
    _, dy = mc.mcMalloc(4 * 32)
    assert mc.mcModuleLaunchKernel(saxpy, 1, 1, 1, 32, 1, 1, 0, None,
                                   [32, 1.0, dy + (1 << 30), dy], None) == (S,)
    assert mc.mcDeviceSynchronize() == (E.mcErrorIllegalAddress,)
    rep = mc.fault_report()
    assert rep.kernel == "saxpy" and rep.address == dy + (1 << 30)
    assert mc.mcMalloc(4) == (E.mcErrorIllegalAddress, None)
    assert mc.mcDeviceReset() == (S,)
    assert mc.mcMalloc(4)[0] == S


def test_module_globals_and_constants(real):
    err, m = mc.mcModuleLoad(str(PTX_FIX / "constants.sm90.ptx"))
    assert err == S, mc.last_error_message()
    err, ptr, size = mc.mcModuleGetGlobal(m, "counter")
    assert (err, size) == (S, 4)
    val = np.zeros(1, np.int32)
    assert mc.mcMemcpy(val, ptr, 4, K.mcMemcpyDefault) == (S,)
    assert val[0] == 7
    err, cptr, csize = mc.mcModuleGetGlobal(m, "coeffs")
    assert (err, csize) == (S, 16)
    c = np.zeros(4, np.float32)
    mc.mcMemcpy(c, cptr, 16, K.mcMemcpyDeviceToHost)
    np.testing.assert_allclose(c, [1.0, 0.5, -2.25, 3.0e10])
    _, f = mc.mcModuleGetFunction(m, "use_constants")
    _, dout = mc.mcMalloc(4 * 32)
    _, iout = mc.mcMalloc(4 * 32)
    assert mc.mcLaunchKernel(f, 1, 32, [dout, iout]) == (S,)
    out = np.zeros(32, np.float32)
    assert mc.mcMemcpy(out, dout, 128, K.mcMemcpyDeviceToHost) == (S,)
    coeffs, dcoef, gtab = [1.0, 0.5, -2.25, 3.0e10], [3.141592653589793, -0.1], [0.0, 2.0, 0.0]
    want = [np.float32(coeffs[t & 3]) * np.float32(dcoef[t & 1]) + np.float32(gtab[t % 3])
            for t in range(32)]
    np.testing.assert_allclose(out, np.array(want, np.float32), rtol=1e-6)
