"""Several host threads launching into one stream, far ahead of the GPU:
pushes written at once without the GPU's lock, pushes waiting for their
turn and pushes waiting for half a free ring all interleave
(driver/channel.py), and every launch still runs exactly once, with no
hang. Real kernels through mc*, as a program does it."""
import threading

import numpy as np

from gpudbg.runtime import mc

S = mc.mcError_t.mcSuccess
COUNT = """.version 8.0
.target sm_80
.address_size 64
.visible .entry count(.param .u64 p, .param .u32 slot)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [slot];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd2, %rd3;
    atom.global.add.u32 %r2, [%rd4], 1;
    ret;
}
"""
THREADS, LAUNCHES = 4, 300     # 1,200 launches into one ring that holds about 120


def test_launches_of_many_threads_into_one_stream_each_run_once(real):
    err, mod = mc.mcModuleLoadData(COUNT)
    assert err == S
    f = mc.mcModuleGetFunction(mod, "count")[1]
    err, counters = mc.mcMalloc(4 * THREADS)
    assert err == S and mc.mcMemset(counters, 0, 4 * THREADS) == (S,)
    err, stream = mc.mcStreamCreate()
    assert err == S
    failures: list = []

    def host(slot: int) -> None:
        for _ in range(LAUNCHES):
            status = mc.mcLaunchKernel(f, 1, 1, [counters, slot], 0, stream)
            if status != (S,):
                failures.append((slot, status))
                return

    threads = [threading.Thread(target=host, args=(i,), daemon=True) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
        assert not t.is_alive(), "a launching thread hung"
    assert failures == []
    assert mc.mcStreamSynchronize(stream) == (S,)
    out = np.zeros(THREADS, np.uint32)
    assert mc.mcMemcpy(out, counters, 4 * THREADS, mc.mcMemcpyKind.mcMemcpyDeviceToHost) == (S,)
    assert out.tolist() == [LAUNCHES] * THREADS
    assert mc.mcStreamDestroy(stream) == (S,)
