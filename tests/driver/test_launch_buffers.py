"""driver/launch_buffers.py: a retired launch's descriptor block is reused by
the next launch of its size, with every launch still reading its own
parameters, the memory accounting unchanged, and the blocks freed with the
context."""
import numpy as np

from gpudbg.driver import launch_buffers
from gpudbg.driver.engine import get_engine
from gpudbg.runtime import mc
from gpudbg.sim.memory.spaces import AllocationKind

S = mc.mcError_t.mcSuccess if hasattr(mc, "mcError_t") else 0

PUT = """.version 8.0
.target sm_80
.address_size 64
.visible .entry put(.param .u64 p, .param .u32 i, .param .u32 v)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [i];
    ld.param.u32 %r2, [v];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r2;
    ret;
}
.visible .entry put64(.param .u64 p, .param .u64 unused, .param .u64 v)
{
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [v];
    cvta.to.global.u64 %rd3, %rd1;
    st.global.u64 [%rd3], %rd2;
    ret;
}
"""


def _functions():
    err, mod = mc.mcModuleLoadData(PUT)
    assert err == S
    return mc.mcModuleGetFunction(mod, "put")[1], mc.mcModuleGetFunction(mod, "put64")[1]


def _launch_blocks(ctx):
    return [a for a in ctx.gpu.memory.allocations() if a.kind is AllocationKind.LAUNCH]


def test_blocks_are_reused_and_each_launch_reads_its_own_parameters(real):
    put, _ = _functions()
    err, out = mc.mcMalloc(4 * 200)
    assert err == S
    for i in range(100):                     # queued: many launches in flight at once
        assert mc.mcLaunchKernel(put, 1, 1, [out, i, 1000 + i]) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    ctx = get_engine().current_context()
    ctx.reap()
    kept = _launch_blocks(ctx)
    assert 1 <= len(kept) <= 100
    bases = {a.base for a in kept}
    for i in range(100, 200):                # the same kernel again: no new block while enough are kept
        assert mc.mcLaunchKernel(put, 1, 1, [out, i, 1000 + i]) == (S,)
        assert mc.mcStreamSynchronize(None) == (S,)
    ctx.reap()
    assert {a.base for a in _launch_blocks(ctx)} <= bases
    host = np.zeros(200, np.uint32)
    assert mc.mcMemcpy(host, out, 800, mc.mcMemcpyKind.mcMemcpyDeviceToHost) == (S,)
    assert host.tolist() == [1000 + i for i in range(200)]


def test_a_block_of_another_size_is_not_shared(real):
    put, put64 = _functions()
    err, out = mc.mcMalloc(8)
    assert err == S
    assert mc.mcLaunchKernel(put, 1, 1, [out, 0, 7]) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    assert mc.mcLaunchKernel(put64, 1, 1, [out, 0, 0x1122334455667788]) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    host = np.zeros(1, np.uint64)
    assert mc.mcMemcpy(host, out, 8, mc.mcMemcpyKind.mcMemcpyDeviceToHost) == (S,)
    assert int(host[0]) == 0x1122334455667788
    ctx = get_engine().current_context()
    ctx.reap()
    sizes = sorted(a.size for a in _launch_blocks(ctx))
    assert len(sizes) == 2 and sizes[0] != sizes[1]


def test_kept_blocks_count_as_free_memory(real):
    put, _ = _functions()
    err, out = mc.mcMalloc(4)
    assert err == S
    assert mc.mcDeviceSynchronize() == (S,)
    free_before = mc.mcMemGetInfo()[1]
    for _ in range(5):
        assert mc.mcLaunchKernel(put, 1, 1, [out, 0, 3]) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    get_engine().current_context().reap()
    assert mc.mcMemGetInfo()[1] == free_before
    assert mc.mcLaunchKernel(put, 1, 1, [out, 0, 3]) == (S,)   # taken again: counted while in flight
    assert mc.mcDeviceSynchronize() == (S,)


def test_the_context_frees_its_blocks_when_destroyed(real):
    put, _ = _functions()
    err, out = mc.mcMalloc(4)
    assert err == S
    assert mc.mcLaunchKernel(put, 1, 1, [out, 0, 3]) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    ctx = get_engine().current_context()
    gpu = ctx.gpu
    ctx.reap()
    assert _launch_blocks(ctx)
    buffers = launch_buffers.for_context(ctx)
    assert mc.mcDeviceReset() == (S,)
    assert not [a for a in gpu.memory.allocations() if a.kind is AllocationKind.LAUNCH]
    assert not buffers._free


def test_the_free_list_is_bounded(real):
    _functions()
    ctx = get_engine().current_context()
    buffers = launch_buffers.for_context(ctx)
    blocks = [buffers.take(64, "test") for _ in range(launch_buffers.KEEP + 3)]
    for b in blocks:
        buffers.give(b)
    assert len(buffers._free[64]) == launch_buffers.KEEP
    assert sum(b.freed for b in blocks) == 3


class _Fence:
    """A stand-in tracking semaphore whose retired value the test sets."""

    def __init__(self) -> None:
        self.completed = 0

    def reached(self, value: int) -> bool:
        return self.completed >= value


class _Stream:
    def __init__(self, fence: _Fence) -> None:
        self.capture = None
        self.channel = type("Channel", (), {"semaphore": fence})()


def test_an_in_flight_block_is_taken_again_only_after_its_fence_retired(real):
    _functions()
    ctx = get_engine().current_context()
    buffers = launch_buffers.for_context(ctx)
    fence = _Fence()
    stream = _Stream(fence)
    first = buffers.take(96, "test")
    buffers.release_after(stream, 1, first)
    second = buffers.take(96, "test")          # fence 1 not retired: a block of its own
    assert second is not first
    buffers.release_after(stream, 2, second)
    used = ctx.gpu.memory.used
    fence.completed = 1
    assert buffers.take(96, "test") is first    # retired: taken straight back, still counted as used
    assert ctx.gpu.memory.used == used
    assert buffers.take(96, "test") is not second   # fence 2 still pending
    used = ctx.gpu.memory.used
    fence.completed = 2
    ctx.reap()                                  # a reap moves the retired block nobody took to the free list
    assert ctx.gpu.memory.used == used - second.size
    assert buffers._free[96] == [second]


def test_queued_launches_behind_a_wait_each_read_their_own_parameters(real):
    """The device is held behind a stream wait while ten launches queue, so
    every one of their blocks is in flight at once: a block handed out
    again before its launch ran would give a kernel another's parameters."""
    put, _ = _functions()
    err, out = mc.mcMalloc(4 * 10)
    assert err == S
    err, word = mc.mcMalloc(4)
    assert err == S and mc.mcMemset(word, 0, 4) == (S,)
    err, other = mc.mcStreamCreateWithFlags(1)        # non-blocking: not ordered behind the wait
    assert err == S
    assert mc.mcDeviceSynchronize() == (S,)
    assert mc.mcStreamWaitValue32(None, word, 1, 0) == (S,)
    for i in range(10):
        assert mc.mcLaunchKernel(put, 1, 1, [out, i, 500 + i]) == (S,)
    assert mc.mcStreamWriteValue32(other, word, 1, 0) == (S,)
    assert mc.mcDeviceSynchronize() == (S,)
    host = np.zeros(10, np.uint32)
    assert mc.mcMemcpy(host, out, 40, mc.mcMemcpyKind.mcMemcpyDeviceToHost) == (S,)
    assert host.tolist() == [500 + i for i in range(10)]
    assert mc.mcStreamDestroy(other) == (S,)
