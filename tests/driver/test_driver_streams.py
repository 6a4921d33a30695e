import struct

import numpy as np

from gpudbg.runtime import mc
from gpudbg.runtime.errors import mcError_t as E
from gpudbg.runtime.types import mcMemcpyKind as K, mcStreamFlags
from gpudbg_fakes import Hold

S = E.mcSuccess


def store_args(ptr, value):
    return [ptr, value]


def read_u32(ptr, n=1, stream=None):
    out = np.zeros(n, np.uint32)
    if stream is None:
        assert mc.mcMemcpy(out, ptr, 4 * n, K.mcMemcpyDeviceToHost) == (S,)
    else:   # to pageable memory: returns when done, even though async
        assert mc.mcMemcpyAsync(out, ptr, 4 * n, K.mcMemcpyDeviceToHost, stream) == (S,)
    return out


def test_legacy_stream_waits_for_blocking_streams(fake, kernels):
    _, buf = mc.mcMalloc(16)
    _, a = mc.mcStreamCreate()
    _, nb = mc.mcStreamCreateWithFlags(mcStreamFlags.mcStreamNonBlocking)
    hold = Hold(a)
    assert mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, a, [buf, 1], None) == (S,)
    # legacy work must wait for the gated kernel on the blocking stream
    assert mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, None, [buf, 2], None) == (S,)
    # a non-blocking stream is not held back
    assert mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, nb, [buf + 4, 3], None) == (S,)
    assert mc.mcStreamSynchronize(nb) == (S,)
    assert mc.mcStreamQuery(a) == (E.mcErrorNotReady,)
    assert mc.mcStreamQuery(0) == (E.mcErrorNotReady,)
    assert mc.mcGetLastError() == (S,)          # "not ready" is not an error
    assert list(read_u32(buf, 2, stream=nb)) == [0, 3]
    hold.release()
    assert mc.mcDeviceSynchronize() == (S,)
    assert list(read_u32(buf, 2)) == [2, 3]     # legacy store ran after stream a's
    stores = [struct.unpack("<QI", c[4])[1] for c in fake.calls]
    assert stores == [3, 1, 2]


def test_blocking_stream_waits_for_legacy(fake, kernels):
    _, buf = mc.mcMalloc(8)
    _, a = mc.mcStreamCreate()
    _, nb = mc.mcStreamCreateWithFlags(1)
    hold = Hold(None)
    mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, None, [buf, 5], None)
    mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, a, [buf, 6], None)
    mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, nb, [buf + 4, 7], None)
    assert mc.mcStreamSynchronize(nb) == (S,)
    assert mc.mcStreamQuery(a) == (E.mcErrorNotReady,)
    hold.release()
    assert mc.mcStreamSynchronize(a) == (S,)
    assert list(read_u32(buf, 2)) == [6, 7]


def test_per_thread_default_stream_and_events(fake, kernels):
    _, buf = mc.mcMalloc(8)
    _, ev = mc.mcEventCreate()
    assert mc.mcEventQuery(ev) == (S,)          # never recorded: complete
    _, nb = mc.mcStreamCreateWithFlags(1)
    hold = Hold(nb)
    mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, nb, [buf, 1], None)
    assert mc.mcEventRecord(ev, nb) == (S,)
    _, other = mc.mcStreamCreateWithFlags(1)
    assert mc.mcStreamWaitEvent(other, ev, 0) == (S,)
    mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, other, [buf, 2], None)
    assert mc.mcEventQuery(ev) == (E.mcErrorNotReady,)
    assert mc.mcStreamQuery(other) == (E.mcErrorNotReady,)
    hold.release()
    assert mc.mcEventSynchronize(ev) == (S,)
    assert mc.mcStreamSynchronize(other) == (S,)
    assert read_u32(buf)[0] == 2
    assert mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, mc_per_thread(), [buf, 9],
                                   None) == (S,)
    assert mc.mcStreamSynchronize(mc_per_thread()) == (S,)
    assert read_u32(buf)[0] == 9
    assert mc.mcEventDestroy(ev) == (S,)
    assert mc.mcEventRecord(ev, 0) == (E.mcErrorInvalidResourceHandle,)


def mc_per_thread():
    from gpudbg.runtime.types import mcStreamPerThread
    return mcStreamPerThread


def test_destroyed_stream_finishes_its_work(fake, kernels):
    _, buf = mc.mcMalloc(8)
    _, s = mc.mcStreamCreate()
    hold = Hold(s)
    mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, s, [buf, 4], None)
    assert mc.mcStreamDestroy(s) == (S,)
    assert mc.mcStreamSynchronize(s) == (E.mcErrorInvalidResourceHandle,)
    assert not s.channel.closed
    hold.release()
    assert mc.mcDeviceSynchronize() == (S,)
    assert read_u32(buf)[0] == 4
    from gpudbg.driver.engine import get_engine
    ctx = get_engine().current_context()
    ctx.reap()
    assert ctx.zombies == [] and s.channel.closed


def test_launch_descriptor_carries_config_and_params(fake, kernels):
    _, buf = mc.mcMalloc(8)
    mc.mcModuleLaunchKernel(kernels["store"], 3, 2, 1, 64, 2, 1, 128, None, [buf, 0xABCD], None)
    mc.mcDeviceSynchronize()
    name, grid, block, shared, params, grid_id = fake.calls[-1]
    assert (name, grid, block, shared) == ("store", (3, 2, 1), (64, 2, 1), 128)
    assert struct.unpack("<QI", params) == (buf, 0xABCD) and grid_id >= 1
    packed = struct.pack("<QI", buf, 0x1234)
    assert mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, None, None,
                                   [1, packed, 2, len(packed), 0]) == (S,)
    assert mc.mcModuleLaunchKernel(kernels["store"], 1, 1, 1, 1, 1, 1, 0, None, None, packed) == (S,)
    assert mc.mcLaunchKernel(kernels["store"], 1, (1, 1), [buf, 0x77]) == (S,)
    mc.mcDeviceSynchronize()
    assert read_u32(buf)[0] == 0x77
    # launch blocks go back to the context's launch buffers once their fences
    # retire (driver/launch_buffers.py): none is held by a launch any more
    from gpudbg.driver import launch_buffers
    from gpudbg.driver.engine import get_engine
    from gpudbg.sim.memory.spaces import AllocationKind
    ctx = get_engine().current_context()
    ctx.reap()
    kept = {id(a) for blocks in launch_buffers.for_context(ctx)._free.values() for a in blocks}
    assert {id(a) for a in ctx.gpu.memory.allocations() if a.kind is AllocationKind.LAUNCH} == kept
