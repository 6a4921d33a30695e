"""The doorbell (Frontend.rung): a push to the channel whose kernel runs
promotes no leader (that job's thread takes the push when it ends), while
a push to another channel still gets one, so the other channel's work runs
beside the kernel."""
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "driver"))
from gpudbg_fakes import launch_command, make_kernel  # noqa: E402

from gpudbg.driver.channel import Channel  # noqa: E402
from gpudbg.sim.gpu import SimGPU  # noqa: E402


def _launch(gpu, kernel, grid_id):
    return launch_command(gpu, kernel, grid_id)


def _until(predicate, what):
    deadline = time.monotonic() + 60
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


def test_a_push_behind_the_running_kernel_promotes_nobody_and_another_channel_runs():
    gate = threading.Event()
    ran = []

    def executor(gpu, function, *rest):
        ran.append(function.name)
        if function.name == "slow":
            assert gate.wait(60)

    gpu = SimGPU(executor=executor)
    try:
        a, b = Channel(gpu, 1), Channel(gpu, 1)
        slow, fast, other = make_kernel("slow"), make_kernel("fast"), make_kernel("other")
        a.push([_launch(gpu, slow, 1)])
        _until(lambda: ran == ["slow"], "the slow kernel")
        with gpu.cv:
            assert gpu.frontend.threads.vacant          # nothing else queued: nobody leads
        fence = a.push([_launch(gpu, fast, 2)])         # behind the running kernel, on its channel
        with gpu.cv:
            assert gpu.frontend.threads.vacant          # its job's thread will take it
        b_fence = b.push([_launch(gpu, other, 3)])      # another channel: a leader schedules it now
        b.wait(b_fence)
        assert ran == ["slow", "other"]
        gate.set()
        a.wait(fence)
        assert ran == ["slow", "other", "fast"]
    finally:
        gate.set()
        gpu.shutdown()
