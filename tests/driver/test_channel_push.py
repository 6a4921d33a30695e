"""driver/channel.py push: the SEM_RELEASE closing a push is the command
make/encode would give (also for fence values past 32 bits), and a push
written at once by its reservation never overtakes an earlier push still
waiting for ring space."""
import threading
import time

import numpy as np

from gpudbg.driver import commands as C
from gpudbg.driver.channel import Channel
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.memory.spaces import AllocationKind


def test_the_closing_release_is_the_encoded_command_for_a_wide_fence():
    gpu = SimGPU()
    try:
        target = gpu.memory.alloc(8, AllocationKind.DEVICE)
        ch = Channel(gpu, group=1)
        ch.semaphore.issued = (1 << 32) + 5         # the next fence needs both words
        fence = ch.push([C.make(C.Opcode.MEMSET, dst=target.base, value=9, element_size=4, count=1)])
        assert fence == (1 << 32) + 6
        ch.wait(fence)
        memset = ch.ring.decode_at(0)
        release = ch.ring.decode_at(memset.size_words)
        assert release == C.make(C.Opcode.SEM_RELEASE, address=ch.semaphore.address, value=fence)
        assert ch.completed == fence
    finally:
        gpu.shutdown()


def _until(predicate, what: str) -> None:
    deadline = time.monotonic() + 60
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


def test_a_push_that_fits_waits_for_an_earlier_one_waiting_for_room():
    gpu = SimGPU()
    try:
        word = gpu.memory.alloc(8, AllocationKind.DEVICE)
        word.data[:8] = 0
        src = gpu.memory.alloc(8, AllocationKind.DEVICE)
        dst = gpu.memory.alloc(8, AllocationKind.DEVICE)
        ch = Channel(gpu, group=1, ring_bytes=128)              # 31 usable words
        ch.push([C.make(C.Opcode.WAIT_VALUE, address=word.base, value=1, flags=0, width=4)])   # 12 words
        ch.push([C.make(C.Opcode.NOP)] * 4)                     # 9 more: 10 words free
        copy = C.make(C.Opcode.COPY_2D, src=src.base, dst=dst.base, spitch=8, dpitch=8, width=8, height=1)
        fences: dict[str, int] = {}
        first = threading.Thread(target=lambda: fences.__setitem__("copy", ch.push([copy])))   # 13 words: waits
        first.start()
        _until(lambda: ch._tickets == 3, "the first push's reservation")
        second = threading.Thread(target=lambda: fences.__setitem__("nop", ch.push([C.make(C.Opcode.NOP)])))
        second.start()                                           # 6 words: would fit, but it is not its turn
        _until(lambda: ch._tickets == 4, "the second push's reservation")
        word.data[:4] = np.frombuffer(np.uint32(1).tobytes(), np.uint8)
        first.join(60)
        second.join(60)
        assert fences == {"copy": 3, "nop": 4}
        ch.wait(4)
        assert ch.completed == 4 and ch.idle()
    finally:
        gpu.shutdown()
