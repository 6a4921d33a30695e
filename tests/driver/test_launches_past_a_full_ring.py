"""A host far ahead of the GPU fills its stream's ring and then waits for
room on every push (driver/channel.py _write): every launch still runs,
once, in order, and the launch blocks cycle (driver/launch_buffers.py)."""
import numpy as np

from gpudbg.runtime import mc

S = mc.mcError_t.mcSuccess
BUMP = """.version 8.0
.target sm_80
.address_size 64
.visible .entry bump(.param .u64 p, .param .u32 i)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [i];
    cvta.to.global.u64 %rd2, %rd1;
    ld.global.u32 %r2, [%rd2];
    setp.ne.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    add.u32 %r2, %r2, 1;
    st.global.u32 [%rd2], %r2;
DONE:
    ret;
}
""".replace(".reg .b64 %rd<3>;", ".reg .b64 %rd<3>;\n    .reg .pred %p<2>;")


def test_a_thousand_queued_launches_each_run_once_in_order(real):
    err, mod = mc.mcModuleLoadData(BUMP)
    assert err == S
    f = mc.mcModuleGetFunction(mod, "bump")[1]
    err, counter = mc.mcMalloc(4)
    assert mc.mcMemset(counter, 0, 4) == (S,)
    n = 1000        # a ring holds about 170 launches: most of these wait for room
    for i in range(n):
        assert mc.mcLaunchKernel(f, 1, 1, [counter, i], 0, None) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    out = np.zeros(1, np.uint32)
    assert mc.mcMemcpy(out, counter, 4, mc.mcMemcpyKind.mcMemcpyDeviceToHost) == (S,)
    assert out[0] == n          # each launch bumps only when every earlier one has run
