"""driver/limits.py keeps what a channel last programmed on the channel
(Channel.launch_limits) and what launched kernels used on the context
(Context.limits_used): a limit changed between two launches of the same
shape still reaches the GPU before the second one, and a kernel's printf
use still freezes the printf FIFO size."""
from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc
from gpudbg.sim import launch_limits

S = mc.mcError_t.mcSuccess
L = mc.mcLimit_t

EMPTY = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry empty()\n{\n ret;\n}\n"
PRINTS = """.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 r) vprintf (.param .b64 f, .param .b64 a);
.global .align 1 .b8 fmt[4] = {104, 105, 10, 0};
.visible .entry prints()
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<3>;
    cvta.global.u64 %rd1, fmt;
    mov.u64 %rd2, 0;
    {
    .param .b64 p0;
    st.param.b64 [p0], %rd1;
    .param .b64 p1;
    st.param.b64 [p1], %rd2;
    .param .b32 r;
    call.uni (r), vprintf, (p0, p1);
    ld.param.b32 %r1, [r];
    }
    ret;
}
"""


def _fn(ptx, name):
    err, mod = mc.mcModuleLoadData(ptx)
    assert err == S
    return mc.mcModuleGetFunction(mod, name)[1]


def test_a_changed_stack_limit_reaches_the_next_launch_of_the_same_shape(real):
    f = _fn(EMPTY, "empty")
    ctx = get_engine().current_context()
    for _ in range(3):
        assert mc.mcLaunchKernel(f, 1, 32, [], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    before = ctx.legacy.channel.launch_limits
    assert mc.mcDeviceSetLimit(L.mcLimitStackSize, 4096) == (S,)
    assert mc.mcLaunchKernel(f, 1, 32, [], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert ctx.legacy.channel.launch_limits[0] == 4096 != before[0]
    assert launch_limits.programmed(ctx.legacy.channel).stack_size == 4096     # executed on the GPU
    assert ctx.gpu.stack_size == 4096


def test_a_printf_kernel_freezes_the_fifo_size_and_an_empty_one_does_not(real, capfd):
    empty, prints = _fn(EMPTY, "empty"), _fn(PRINTS, "prints")
    assert mc.mcLaunchKernel(empty, 1, 1, [], 0, None) == (S,)
    assert mc.mcDeviceSetLimit(L.mcLimitPrintfFifoSize, 1 << 16) == (S,)
    assert mc.mcLaunchKernel(prints, 1, 1, [], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert "hi" in capfd.readouterr().out
    assert get_engine().current_context().limits_used == {"printf"}
    assert mc.mcDeviceSetLimit(L.mcLimitPrintfFifoSize, 1 << 17) == (mc.mcError_t.mcErrorInvalidValue,)
