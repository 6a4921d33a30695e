"""driver/channel.py: a host blocked on a full ring waits on the channel's
own condition, and every path that frees ring space (or makes waiting
pointless) wakes it by name: retiring down to the half-ring threshold (and
not before: hysteresis), close, a fault's discard, a reset's discard, a
head that stalls, and the backstop for a stall the front end cannot see.

The backstop is switched off (ROOM_BACKSTOP_S = None) in every test but
its own, so a missing wake-up hangs the writer and the test's join with a
generous timeout fails. Launches run a fake executor that takes one token
per launch: the test decides exactly how many retire."""
import threading
import time

import numpy as np
import pytest

from gpudbg.driver import channel as channel_mod
from gpudbg.driver import commands as C
from gpudbg.driver.channel import Channel
from gpudbg.driver.fence import ChannelError
from gpudbg.driver.status import CUresult
from gpudbg.sim.faults import KernelFault
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.memory.spaces import AllocationKind
from gpudbg_fakes import launch_command, make_kernel, report

TIMEOUT = 60
GATE_TIMEOUT = 10 * TIMEOUT   # a launch's own wait outlasts the test's joins: a missed wake-up fails the join
RING = 256          # 63 usable words: seven 8-word launch pushes, 7 words left
LAUNCH_PUSH = 8     # LAUNCH (3 words) + the closing SEM_RELEASE (5)
THRESHOLD = 31      # (63) // 2: the free words at which the writer is woken


class Tokens:
    """A fake executor: each launch waits for one token; `fail` makes the
    next launch that gets a token raise a kernel fault."""

    def __init__(self) -> None:
        self.sem = threading.Semaphore(0)
        self.fail = False

    def __call__(self, gpu, function, *rest, **extra):
        assert self.sem.acquire(timeout=GATE_TIMEOUT), "the test never released this launch"
        if self.fail:
            raise KernelFault(report())


@pytest.fixture
def rig(monkeypatch):
    monkeypatch.setattr(channel_mod, "ROOM_BACKSTOP_S", None)
    tokens = Tokens()
    gpu = SimGPU(executor=tokens)
    ch = Channel(gpu, group=7, ring_bytes=RING)
    launch = launch_command(gpu, make_kernel("k"), grid_id=1)
    yield gpu, ch, launch, tokens
    tokens.sem.release(1000)
    gpu.shutdown()


def _until(gpu, predicate, what: str) -> None:
    """Poll `predicate` under the GPU's lock (the state it reads is written under it)."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        with gpu.cv:
            if predicate():
                return
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


def _fill(ch, launch, n: int = 7) -> None:
    for _ in range(n):
        ch.push([launch])


def _blocked_writer(gpu, ch, launch) -> tuple[threading.Thread, dict]:
    """A thread whose push finds the ring full and waits for room."""
    out: dict = {}
    t = threading.Thread(target=lambda: out.__setitem__("fence", ch.push([launch])), daemon=True)
    t.start()
    _until(gpu, lambda: ch.room_wanted == THRESHOLD, "the push to wait for room")
    return t, out


def _released(t: threading.Thread) -> bool:
    t.join(TIMEOUT)
    return not t.is_alive()


def test_a_full_ring_wakes_the_writer_at_half_free_not_at_every_retire(rig):
    gpu, ch, launch, tokens = rig
    _fill(ch, launch)
    put = ch.ring.put
    assert ch.ring.free() == 7
    writer, out = _blocked_writer(gpu, ch, launch)
    with gpu.cv:    # it found the ring full: it waits for half of it, though 3 words (its LAUNCH) would do
        assert ch.ring.put == put and ch.room_needed == 3
    tokens.sem.release(2)                     # two launches retire: 23 words free, room for it but below half
    _until(gpu, lambda: ch.completed >= 2, "two launches to retire")
    with gpu.cv:
        assert ch.ring.free() == 7 + 2 * LAUNCH_PUSH
        assert ch.room_wanted == THRESHOLD and ch.ring.put == put, "woken before half the ring was free"
    tokens.sem.release(1)                     # three retired: 31 words free, the threshold
    assert _released(writer), "retiring down to the threshold did not wake the writer"
    assert out["fence"] == 8
    tokens.sem.release(5)
    ch.wait(8)
    assert ch.completed == 8 and ch.error is None and ch.idle()


def test_close_releases_the_writer_and_the_pushes_waiting_for_their_turn(rig):
    gpu, ch, launch, tokens = rig
    _fill(ch, launch)
    writer, out = _blocked_writer(gpu, ch, launch)
    second: dict = {}
    behind = threading.Thread(target=lambda: second.__setitem__("fence", ch.push([launch])), daemon=True)
    behind.start()
    _until(gpu, lambda: ch._tickets == 9, "the second push's reservation")
    closer = threading.Thread(target=ch.close, daemon=True)    # waits for the running launch to end
    closer.start()
    assert _released(writer), "close did not wake the push waiting for room"
    assert _released(behind), "close did not release the push waiting for its turn"
    assert (out["fence"], second["fence"]) == (8, 9)
    tokens.sem.release(1000)
    assert _released(closer)


def test_a_fault_discards_the_ring_and_wakes_the_writer(rig):
    gpu, ch, launch, tokens = rig
    _fill(ch, launch)
    writer, out = _blocked_writer(gpu, ch, launch)
    tokens.fail = True
    tokens.sem.release(1)                     # the running launch faults: its group's work is discarded
    assert _released(writer), "the fault's discard did not wake the writer"
    ch.wait(out["fence"])
    assert ch.error is not None and ch.error.status == CUresult.CUDA_ERROR_ILLEGAL_ADDRESS


def test_a_reset_discards_the_ring_and_wakes_the_writer(rig):
    gpu, ch, launch, tokens = rig
    _fill(ch, launch)
    writer, out = _blocked_writer(gpu, ch, launch)
    error = ChannelError(CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED, "reset by the test")
    killer = threading.Thread(target=gpu.frontend.kill_group, args=(ch.group, error), daemon=True)
    killer.start()
    _until(gpu, lambda: ch.group in gpu.frontend._killing, "the reset to start")
    tokens.sem.release(1)                     # the running launch ends (15 words free, below half)
    assert _released(killer)
    assert _released(writer), "the reset's discard did not wake the writer"
    ch.wait(out["fence"])
    assert ch.error is error


def test_a_stalled_head_hands_the_writer_the_room_there_is(rig):
    gpu, ch, launch, tokens = rig
    word = gpu.memory.alloc(8, AllocationKind.DEVICE)
    word.data[:8] = 0
    ch.push([launch])                                                                   # 8 words
    ch.push([C.make(C.Opcode.WAIT_VALUE, address=word.base, value=1, flags=0, width=4)])  # 12 words
    _fill(ch, launch, 5)                                                                # 40: 3 free
    writer, out = _blocked_writer(gpu, ch, launch)
    tokens.sem.release(1)                     # 11 words free, then the head waits for the value
    assert _released(writer), "a stalled head did not hand the writer the room there was"
    word.data[:4] = np.frombuffer(np.uint32(1).tobytes(), np.uint8)   # what the host does next
    tokens.sem.release(6)
    ch.wait(out["fence"])
    assert ch.completed == out["fence"] == 8 and ch.error is None


def test_a_head_stalled_before_the_push_came_hands_over_the_room_there_is(rig):
    gpu, ch, launch, tokens = rig
    sem = gpu.memory.alloc(8, AllocationKind.DEVICE)
    sem.data[:8] = 0
    ch.push([C.make(C.Opcode.SEM_ACQUIRE, address=sem.base, value=1)])   # 10 words: the head waits ...
    _fill(ch, launch, 6)                                                # ... before 48 more: 5 free
    with gpu.cv:
        put = ch.ring.put
    writer, out = _blocked_writer(gpu, ch, launch)                      # 8 words do not fit
    # the scheduler, asleep behind the acquire (which it never polls), hands over the 5 free words:
    # the push's LAUNCH goes in, its closing release (5 words) waits for room
    _until(gpu, lambda: ch.ring.put == (put + 3) % ch.ring.size, "the room there was to be taken")
    with gpu.cv:
        sem.data[:8] = np.frombuffer(np.uint64(1).tobytes(), np.uint8)   # what the host does next
        gpu.cv.notify_all()
    tokens.sem.release(7)
    assert _released(writer)
    ch.wait(out["fence"])
    assert ch.completed == out["fence"] == 8 and ch.error is None


def test_the_backstop_takes_the_room_behind_a_command_that_runs_on(rig, monkeypatch):
    gpu, ch, launch, tokens = rig
    monkeypatch.setattr(channel_mod, "ROOM_BACKSTOP_S", 0.01)
    _fill(ch, launch)
    writer, out = _blocked_writer(gpu, ch, launch)
    tokens.sem.release(1)                     # 15 words free, then the next launch runs (and runs on)
    assert _released(writer), "the backstop did not take the room there was"
    with gpu.cv:
        assert ch.completed == 1              # the writer did not wait for the launch running now
    tokens.sem.release(7)
    ch.wait(out["fence"])
    assert ch.completed == 8
