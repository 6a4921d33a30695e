import threading

import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.driver import commands as C
from gpudbg.driver.channel import Channel, ChannelClosedError
from gpudbg.driver.ring import Ring, RingFullError
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.memory.allocations import GlobalMemory
from gpudbg.sim.memory.spaces import AllocationKind


def test_ring_wraps_commands_across_the_end():
    mem = GlobalMemory(capacity=1 << 20)
    ring = Ring(mem.alloc(64, AllocationKind.RING), "r")   # 16 words, 15 usable
    seen = []
    for i in range(40):
        cmd = C.make(C.Opcode.COPY, src=i, dst=i + 1, size=i + 2)    # 7 words
        ring.write(C.encode(cmd))
        (off, got), = ring.pending()
        seen.append(off)
        assert got == cmd
        ring.get = (off + got.size_words) % ring.size
    assert any(off + 7 > 16 for off in seen)           # some straddled the end
    assert ring.empty() and ring.free() == 15
    with pytest.raises(RingFullError):
        ring.write([0] * 16)


_CMDS = st.one_of(
    st.builds(lambda a, v: C.make(C.Opcode.SEM_RELEASE, address=a, value=v), st.integers(0, C.U64_MASK),
              st.integers(0, C.U64_MASK)),
    st.builds(lambda s, d, w, h: C.make(C.Opcode.COPY_2D, src=s, dst=d, spitch=w, dpitch=w, width=w, height=h),
              st.integers(0, C.U64_MASK), st.integers(0, C.U64_MASK), st.integers(0, 1 << 40),
              st.integers(0, 1 << 40)),
    st.just(C.make(C.Opcode.NOP)))


@settings(max_examples=60, deadline=None)
@given(st.integers(4, 40), st.integers(0, 200), st.lists(_CMDS, min_size=1, max_size=6))
def test_ring_decodes_what_was_written_anywhere_in_rings_of_any_size(words, start, cmds):
    # decode_at reads one slice away from the end and word by word near it
    mem = GlobalMemory(capacity=1 << 20)
    ring = Ring(mem.alloc(4 * words, AllocationKind.RING), "r")
    ring.put = ring.get = start % ring.size
    for cmd in cmds:
        encoded = C.encode(cmd)
        if len(encoded) > ring.size - 1:
            continue
        ring.write(encoded)
        (off, got), = ring.pending()
        assert got == cmd and off == ring.get
        ring.get = ring.put


def test_ring_rejects_odd_sizes():
    mem = GlobalMemory(capacity=1 << 20)
    with pytest.raises(ValueError, match="multiple of 4"):
        Ring(mem.alloc(18, AllocationKind.RING), "r")


def test_channel_push_many_times_a_tiny_ring():
    gpu = SimGPU()
    try:
        target = gpu.memory.alloc(8, AllocationKind.DEVICE)
        ch = Channel(gpu, group=1, ring_bytes=64)
        fences = [ch.push([C.make(C.Opcode.MEMSET, dst=target.base, value=i, element_size=4, count=1)])
                  for i in range(200)]
        assert fences == list(range(1, 201))
        ch.wait(fences[-1])
        assert ch.completed == 200 and ch.idle()
        assert int(target.data[:4].view("<u4")[0]) == 199
        big = C.make(C.Opcode.COPY, src=0, dst=0, size=0)
        tiny = Channel(gpu, group=1, ring_bytes=16)
        with pytest.raises(RingFullError, match="can never fit"):
            tiny.push([big])
        tiny.close()
        with pytest.raises(ChannelClosedError):
            tiny.push([])
    finally:
        gpu.shutdown()


def test_fence_wait_from_other_threads():
    gate = threading.Event()

    def executor(gpu, function, *rest):
        gate.wait(10)

    from gpudbg_fakes import make_kernel
    from gpudbg.driver.module import Module  # noqa: F401
    gpu = SimGPU(executor=executor)
    try:
        k = make_kernel("k")
        gpu.register_function(k)
        desc = gpu.memory.alloc(C.DESCRIPTOR_BYTES, AllocationKind.LAUNCH)
        desc.data[:] = list(C.encode_descriptor(
            code_address=k.code_address, grid_x=1, grid_y=1, grid_z=1, block_x=1, block_y=1,
            block_z=1, shared_bytes=0, param_address=0, param_size=0, grid_id=1, host_tid=0))
        ch = Channel(gpu, group=1)
        fence = ch.push([C.make(C.Opcode.LAUNCH, descriptor=desc.base)])
        woke = []
        waiters = [threading.Thread(target=lambda: (ch.wait(fence), woke.append(1))) for _ in range(3)]
        for t in waiters:
            t.start()
        assert not ch.semaphore.wait(fence, timeout=0.05)
        assert woke == []
        gate.set()
        for t in waiters:
            t.join(5)
        assert woke == [1, 1, 1] and ch.completed == fence
    finally:
        gate.set()
        gpu.shutdown()
