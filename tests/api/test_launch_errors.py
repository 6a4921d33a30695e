"""api/module.py: a Pythonic launch calls mcLaunchKernel itself (not through
errors.call) on the common path: a refused launch still raises the GPUError
of its code naming mcLaunchKernel, a launch after a kernel fault raises the
KernelFaultError with its report, and a launch on another device's module
still runs there."""
import numpy as np
import pytest

import gpudbg
from gpudbg.driver.engine import reset_engine
from gpudbg.runtime.errors import mcError_t

PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry fill(.param .u64 p, .param .u32 v)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r2, [v];
    mov.u32 %r1, %tid.x;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r2;
    ret;
}
"""


@pytest.fixture
def fresh():
    reset_engine(num_devices=2)
    yield
    reset_engine()


def test_a_refused_configuration_names_mclaunchkernel(fresh):
    fill = gpudbg.Module.from_ptx(PTX, "fill.ptx").fill
    out = gpudbg.zeros(32, np.uint32)
    with pytest.raises(gpudbg.GPUError) as e:
        fill[1, 4096](out, 7)
    assert e.value.code is mcError_t.mcErrorInvalidConfiguration
    assert "mcLaunchKernel: block dimension x=4096 is outside 1..1024" in str(e.value)
    fill[1, 32](out, 7)
    assert (out.to_host() == 7).all()


def test_a_launch_after_a_fault_raises_the_fault(fresh):
    fill = gpudbg.Module.from_ptx(PTX, "fill.ptx").fill
    fill[1, 32](0, 7)                                   # stores to address 0
    with pytest.raises(gpudbg.KernelFaultError) as e:
        fill[1, 32](0, 7)
        gpudbg.synchronize()
    assert e.value.report is not None and e.value.report.kernel == "fill"


def test_a_module_of_another_device_launches_there(fresh):
    with gpudbg.Device(1):
        fill = gpudbg.Module.from_ptx(PTX, "fill.ptx").fill
        out = gpudbg.zeros(32, np.uint32)
    fill[1, 32](out, 9)                                 # from device 0
    with gpudbg.Device(1):
        assert (out.to_host() == 9).all()


def test_a_stream_and_a_numpy_shared_size_are_taken_and_bad_ones_refused(fresh):
    fill = gpudbg.Module.from_ptx(PTX, "fill.ptx").fill
    out = gpudbg.zeros(32, np.uint32)
    s = gpudbg.Stream()
    fill[1, 32, s, np.int64(0)](out, 5)
    s.synchronize()
    assert (out.to_host() == 5).all()
    with pytest.raises(TypeError, match="shared_mem must be an int"):
        fill[1, 32, None, True](out, 5)
    with pytest.raises(TypeError, match="stream must be"):
        fill[1, 32, "s"](out, 5)
    s.destroy()
    with pytest.raises(ValueError, match="the stream was destroyed"):
        fill[1, 32, s](out, 5)
