"""driver/channel.py: a push that fits goes into the ring without the GPU's
lock when a command of its channel runs (the host queuing behind running
launches and the GPU thread retiring them must not take one lock per
launch each: on two cores that is a lock convoy); otherwise its doorbell
still takes the lock and wakes the scheduler. And whichever side the race
between a push and the job thread letting its channel go falls on, every
push runs: no doorbell is lost."""
import random
import threading
import time

from gpudbg.driver import commands as C
from gpudbg.driver.channel import Channel
from gpudbg.sim.gpu import SimGPU
from gpudbg.sim.memory.spaces import AllocationKind
from gpudbg_fakes import launch_command, make_kernel

TIMEOUT = 60


def _until(predicate, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


def test_a_push_behind_a_running_command_needs_no_gpu_lock_and_still_runs():
    gate = threading.Event()
    ran: list[str] = []

    def executor(gpu, function, *rest, **extra):
        ran.append(function.name)
        if function.name == "slow":
            assert gate.wait(10 * TIMEOUT)

    gpu = SimGPU(executor=executor)
    try:
        ch = Channel(gpu, group=1)
        ch.push([launch_command(gpu, make_kernel("slow"), 1)])
        _until(lambda: ran == ["slow"], "the slow launch to start")
        fast = launch_command(gpu, make_kernel("fast"), 2)
        held, release = threading.Event(), threading.Event()

        def hold_gpu_lock() -> None:
            with gpu.cv:
                held.set()
                release.wait(TIMEOUT)
        holder = threading.Thread(target=hold_gpu_lock, daemon=True)
        holder.start()
        assert held.wait(TIMEOUT)
        out: dict = {}
        pusher = threading.Thread(target=lambda: out.__setitem__("fence", ch.push([fast])), daemon=True)
        pusher.start()
        pusher.join(TIMEOUT)
        blocked = pusher.is_alive()
        release.set()
        holder.join(TIMEOUT)
        assert not blocked, "a push behind a running command waited for the GPU's lock"
        gate.set()
        ch.wait(out["fence"])
        assert ran == ["slow", "fast"] and ch.completed == 2
    finally:
        gate.set()
        gpu.shutdown()


def test_a_push_to_an_idle_channel_wakes_the_sleeping_scheduler():
    gpu = SimGPU(executor=lambda *a, **k: None)
    try:
        ch = Channel(gpu, group=1)
        target = gpu.memory.alloc(8, AllocationKind.DEVICE)
        for i in range(1, 6):
            fence = ch.push([C.make(C.Opcode.MEMSET, dst=target.base, value=i, element_size=4, count=1)])
            assert ch.semaphore.wait(fence, timeout=TIMEOUT), "a push to an idle channel was never run"
            _until(lambda: not gpu.frontend.executing, "the channel to be let go")
        assert int(target.data[:4].view("<u4")[0]) == 5
    finally:
        gpu.shutdown()


def test_pushes_racing_the_job_thread_letting_go_of_their_channel_all_run():
    """Bursts of launches on two channels, each followed by a wait, so the
    job threads keep draining their rings and letting their channels go
    while the next burst's first pushes arrive (seeded: reproducible)."""
    gpu = SimGPU(executor=lambda *a, **k: None)
    try:
        rng = random.Random(1234)
        kernel = make_kernel("k")
        channels = [Channel(gpu, group=1, ring_bytes=256), Channel(gpu, group=1, ring_bytes=256)]
        launches = [launch_command(gpu, kernel, i + 1) for i in range(2)]
        errors: list[str] = []

        def host(ch: Channel, launch: C.Command, seed: int) -> None:
            r = random.Random(seed)
            for _burst in range(150):
                fence = 0
                for _ in range(r.randint(1, 12)):
                    fence = ch.push([launch])
                if not ch.semaphore.wait(fence, timeout=TIMEOUT):
                    errors.append(f"{ch.name}: fence {fence} never retired (completed {ch.completed})")
                    return
        threads = [threading.Thread(target=host, args=(ch, launch, rng.random()), daemon=True)
                   for ch, launch in zip(channels, launches)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(4 * TIMEOUT)
            assert not t.is_alive(), "a host thread hung"
        assert errors == []
        for ch in channels:
            assert ch.idle() and ch.completed == ch.issued
    finally:
        gpu.shutdown()
