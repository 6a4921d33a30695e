import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "driver"))
from gpudbg_fakes import launch_command, make_kernel, report  # noqa: E402

from gpudbg.driver import commands as C  # noqa: E402
from gpudbg.driver.channel import Channel  # noqa: E402
from gpudbg.driver.status import CUresult  # noqa: E402
from gpudbg.sim.faults import CUDBGException, HangKind, KernelFault  # noqa: E402
from gpudbg.sim.command_execution import error_code_for  # noqa: E402
from gpudbg.sim.gpu import SimGPU  # noqa: E402
from gpudbg.sim.memory.spaces import AllocationKind  # noqa: E402


class Recorder:
    def __init__(self):
        self.order = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, gpu, function, grid, block, shared, params, grid_id):
        self.gate.wait(10)
        self.order.append((function.name, grid_id))
        if function.name == "boom":
            raise KernelFault(report())


@pytest.fixture
def gpu():
    rec = Recorder()
    g = SimGPU(executor=rec)
    g.rec = rec
    yield g
    rec.gate.set()
    g.shutdown()


def launch_cmd(gpu, kernel, grid_id):
    return launch_command(gpu, kernel, grid_id)


def test_kernels_of_two_channels_run_together_in_order_per_channel(gpu):
    # concurrent kernels: each channel's head kernel is in flight at once (the
    # front end no longer runs one command at a time); within a channel,
    # stream order holds
    gpu.rec.gate.clear()
    a, b = Channel(gpu, 1), Channel(gpu, 1)
    ka, kb = make_kernel("a"), make_kernel("b")
    for i in range(3):
        a.push([launch_cmd(gpu, ka, 10 + i)])
        b.push([launch_cmd(gpu, kb, 20 + i)])
    with gpu.cv:
        assert gpu.cv.wait_for(lambda: len(gpu.frontend.executing) == 2, 5)
        assert set(gpu.frontend.executing) == {a, b}
    gpu.rec.gate.set()
    a.wait(), b.wait()
    names = [n for n, _ in gpu.rec.order]
    assert sorted(names) == ["a"] * 3 + ["b"] * 3
    assert [g for n, g in gpu.rec.order if n == "a"] == [10, 11, 12]    # in order per channel
    assert [g for n, g in gpu.rec.order if n == "b"] == [20, 21, 22]


def test_acquire_blocks_only_its_channel(gpu):
    sem = gpu.memory.alloc(8, AllocationKind.SEMAPHORE)
    flag = gpu.memory.alloc(8, AllocationKind.DEVICE)
    waiting, free = Channel(gpu, 1), Channel(gpu, 1)
    f1 = waiting.push([C.make(C.Opcode.SEM_ACQUIRE, address=sem.base, value=5),
                       C.make(C.Opcode.MEMSET, dst=flag.base, value=1, element_size=1, count=1)])
    f2 = free.push([C.make(C.Opcode.MEMSET, dst=flag.base + 4, value=2, element_size=1, count=1)])
    free.wait(f2)
    assert flag.data[4] == 2 and flag.data[0] == 0
    assert not waiting.semaphore.wait(f1, timeout=0.05)
    free.push([C.make(C.Opcode.SEM_RELEASE, address=sem.base, value=5)])
    waiting.wait(f1)
    assert flag.data[0] == 1


def test_fault_discards_group_and_retires_fences(gpu):
    gpu.rec.gate.clear()
    seen = []
    gpu.fault_listeners.append(lambda group, err: seen.append((group, err.status)))
    a, b, other = Channel(gpu, 7), Channel(gpu, 7), Channel(gpu, 8)
    fa = a.push([launch_cmd(gpu, make_kernel("boom"), 1)])
    fa2 = a.push([launch_cmd(gpu, make_kernel("never"), 2)])
    flag = gpu.memory.alloc(8, AllocationKind.DEVICE)
    sem = gpu.memory.alloc(8, AllocationKind.SEMAPHORE)
    fb = b.push([C.make(C.Opcode.SEM_ACQUIRE, address=sem.base, value=1)])   # never satisfied
    gpu.rec.gate.set()
    a.wait(fa2), b.wait(fb)
    assert a.error.status is CUresult.CUDA_ERROR_ILLEGAL_ADDRESS and a.error.report.kernel == "boom"
    assert b.error is a.error
    assert a.completed >= fa2 and b.completed >= fb
    assert seen == [(7, CUresult.CUDA_ERROR_ILLEGAL_ADDRESS)]
    assert [n for n, _ in gpu.rec.order] == ["boom"]
    # late pushes to a dead channel retire at once; other groups are untouched
    late = a.push([C.make(C.Opcode.MEMSET, dst=flag.base, value=9, element_size=1, count=1)])
    a.wait(late)
    fo = other.push([C.make(C.Opcode.MEMSET, dst=flag.base + 1, value=3, element_size=1, count=1)])
    other.wait(fo)
    assert flag.data[0] == 0 and flag.data[1] == 3 and other.error is None
    assert fa < fa2


def test_decode_error_and_bad_address_become_channel_errors(gpu):
    ch = Channel(gpu, 3)
    with gpu.cv:
        ch.ring.write([0x7E000000])
        gpu.cv.notify_all()
    ch.semaphore.wait(1, timeout=5)
    with gpu.cv:
        gpu.cv.wait_for(lambda: ch.error is not None, 5)
    assert "unknown opcode 0x7e" in ch.error.message and ch.name in ch.error.message
    ch2 = Channel(gpu, 4)
    f = ch2.push([C.make(C.Opcode.COPY, src=0x10, dst=0x20, size=4)])
    ch2.wait(f)
    assert ch2.error.status is CUresult.CUDA_ERROR_ILLEGAL_ADDRESS
    assert "COPY" in ch2.error.message


def test_internal_error_does_not_kill_the_device_thread():
    def broken(*args):
        raise ZeroDivisionError("oops")
    g = SimGPU(executor=broken)
    try:
        ch = Channel(g, 1)
        f = ch.push([launch_cmd(g, make_kernel("k"), 1)])
        ch.wait(f)
        assert ch.error.status is CUresult.CUDA_ERROR_LAUNCH_FAILED and "ZeroDivisionError" in ch.error.message
        assert isinstance(g.internal_errors[0], ZeroDivisionError)
        ok = Channel(g, 2)
        ok.wait(ok.push([C.make(C.Opcode.HOST_NOTIFY, token=42)]))
        assert g.notifications == [(ok.id, 42)] and g.frontend.running
    finally:
        g.shutdown()


def test_kill_group_waits_for_in_flight_work(gpu):
    gpu.rec.gate.clear()
    ch = Channel(gpu, 5)
    f1 = ch.push([launch_cmd(gpu, make_kernel("slow"), 1)])
    f2 = ch.push([launch_cmd(gpu, make_kernel("queued"), 2)])
    with gpu.cv:
        gpu.cv.wait_for(lambda: gpu.frontend.busy is ch, 5)
    from gpudbg.driver.fence import ChannelError
    t = threading.Thread(target=gpu.frontend.kill_group,
                         args=(5, ChannelError(CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED, "reset")))
    t.start()
    t.join(0.05)
    assert t.is_alive()
    gpu.rec.gate.set()
    t.join(5)
    ch.wait(f2)
    assert [n for n, _ in gpu.rec.order] == ["slow"] and ch.completed >= f2 > f1


@pytest.mark.parametrize("kind,code", [
    (CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS, CUresult.CUDA_ERROR_ILLEGAL_ADDRESS),
    (CUDBGException.CUDBG_EXCEPTION_WARP_OUT_OF_RANGE_ADDRESS, CUresult.CUDA_ERROR_ILLEGAL_ADDRESS),
    (CUDBGException.CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS, CUresult.CUDA_ERROR_MISALIGNED_ADDRESS),
    (CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION, CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION),
    (CUDBGException.CUDBG_EXCEPTION_WARP_ASSERT, CUresult.CUDA_ERROR_ASSERT),
    (CUDBGException.CUDBG_EXCEPTION_LANE_SYSCALL_ERROR, CUresult.CUDA_ERROR_LAUNCH_FAILED),
])
def test_fault_kind_to_error_code(kind, code):
    assert error_code_for(report(kind)) is code


def test_hang_is_launch_timeout():
    assert error_code_for(report(CUDBGException.CUDBG_EXCEPTION_NONE, HangKind.INSTRUCTION_BUDGET)) \
        is CUresult.CUDA_ERROR_LAUNCH_TIMEOUT


def test_releases_after_a_kernel_run_on_its_thread_whoever_they_release(gpu):
    # the kernel's thread retires the quick commands after it (_follow_on):
    # the channel's own fence by its words, a release of another semaphore
    # (same header, another address) through the decoded command
    gpu.rec.gate.clear()
    other = gpu.memory.alloc(8, AllocationKind.SEMAPHORE)
    ch = Channel(gpu, 1)
    k = make_kernel("k")
    f1 = ch.push([launch_cmd(gpu, k, 1)])
    f2 = ch.push([C.make(C.Opcode.SEM_RELEASE, address=other.base, value=0x1234_5678_9abc),
                  launch_cmd(gpu, k, 2)])
    with gpu.cv:
        assert gpu.cv.wait_for(lambda: ch in gpu.frontend.executing, 5)
    gpu.rec.gate.set()
    ch.wait(f2)
    assert ch.semaphore.completed == f2 > f1
    assert int(other.data[:8].view("<u8")[0]) == 0x1234_5678_9abc
    assert [g for _, g in gpu.rec.order] == [1, 2]
