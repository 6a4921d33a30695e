import threading
import time

import numpy as np
import pytest

import gpudbg
from gpudbg.debug.backend import StopReason
from gpudbg.debug.events import EventKind, LaunchNotify
from gpudbg.debug.session import DebugError

from session_harness import Host, stop

SPIN = r"""
extern "C" __global__ void spin(int *out, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int acc = 0;
    for (int k = 0; k < iters; ++k)
        acc += k ^ i;
    out[i] = acc;
}
"""


def _spin(iters, n=64):
    def host():
        m = gpudbg.compile(SPIN, name="spin.cu")
        d = gpudbg.zeros(n, np.int32)
        m.spin[n // 32, 32](d, iters)
        return d.to_host()
    return host


def _ref(iters, n=64):
    k = np.arange(iters, dtype=np.int64)
    return np.array([int(np.sum(k ^ i) & 0xFFFFFFFF) for i in range(n)], dtype=np.uint32).view(np.int32)


def test_suspend_and_resume_a_running_kernel(session):
    h = Host(_spin(20000))
    assert session.wait_for({EventKind.KERNEL_READY}, timeout=30) is not None
    session.suspend(0)
    assert session.is_stopped(0)
    ev = stop(session)
    assert ev.reason is StopReason.SUSPENDED
    warps = session.warps(0)
    assert len(warps) == 2 and not any(w.broken for w in warps)
    session.resume(0)
    np.testing.assert_array_equal(h.join(), _ref(20000))


def test_interrupt_and_resume_threads(session):
    h = Host(_spin(20000))
    session.wait_for({EventKind.KERNEL_READY}, timeout=30)
    n = session.interrupt_threads(0, sm=1)      # block 1 lives on SM 1
    assert n == 32
    ev = stop(session)
    assert ev.reason is StopReason.THREADS_HELD and {x[0] for x in ev.lanes} == {1}
    # the other block runs on to the end and then everything left is held
    deadline = time.monotonic() + 30
    while not session.is_stopped(0) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert session.is_stopped(0)
    assert [w.sm for w in session.warps(0)] == [1]
    assert session.resume_threads(0) == 32
    np.testing.assert_array_equal(h.join(), _ref(20000))


def test_kill_fails_the_launch(session):
    session.break_at_kernel("spin")
    h = Host(_spin(10))
    stop(session)
    session.kill()
    h.join()
    assert isinstance(h.error, gpudbg.GPUError)
    assert "killed by the debugger" in str(h.error)
    assert "internal simulator error" not in str(h.error)


def test_module_load_needs_ack_before_the_program_goes_on(session):
    session.set_ack_required({EventKind.ELF_IMAGE_LOADED})
    h = Host(_spin(10))
    ev = session.wait_for({EventKind.ELF_IMAGE_LOADED}, timeout=30)
    assert ev.needs_ack
    time.sleep(0.2)
    assert h.thread.is_alive(), "the loading thread must wait for the acknowledgement"
    session.break_at_kernel("spin")       # set while the load is held: it must hit
    session.acknowledge(ev)
    stop(session)
    session.resume(0)
    h.join()


def test_deferred_launch_notification_and_break_on_launch(session):
    session.set_launch_notify(LaunchNotify.DEFER)
    session.break_on_launch = True
    h = Host(_spin(10))
    ev = stop(session)
    assert session.function_at(0, ev.address) == ("spin", 0)
    assert [g.kernel for g in session.deferred_launches()] == ["spin"]
    assert session.deferred_launches() == []
    session.break_on_launch = False
    session.resume(0)
    h.join()
    kinds = [e.kind for e in session.events.drain()]
    assert EventKind.KERNEL_READY not in kinds and EventKind.KERNEL_FINISHED in kinds


def test_read_event_timeouts(session):
    session.events.drain()
    t0 = time.monotonic()
    assert session.next_event(0) is None
    assert time.monotonic() - t0 < 0.05
    t0 = time.monotonic()
    assert session.next_event(0.1) is None
    assert time.monotonic() - t0 >= 0.09
    threading.Timer(0.05, lambda: session.events.emit(EventKind.TIMEOUT)).start()
    assert session.next_event(None).kind is EventKind.TIMEOUT


def test_coredump_of_a_stopped_kernel(session, tmp_path):
    from gpudbg.dump.coredump import read_coredump
    session.break_at_kernel("spin")
    h = Host(_spin(10))
    stop(session)
    path = session.generate_coredump(str(tmp_path / "stopped.nvcudmp"))
    core = read_coredump(path)
    assert core is not None
    session.resume(0)
    h.join()


def test_control_needs_a_stopped_device(session):
    with pytest.raises(DebugError) as e:
        session.single_step_warp(0, 0, 0, 0)
    assert e.value.code == "INVALID_ARGS"
    h = Host(_spin(20000))
    session.wait_for({EventKind.KERNEL_READY}, timeout=30)
    with pytest.raises(DebugError) as e:
        session.single_step_warp(0, 0, 0, 1)
    assert e.value.code == "RUNNING"
    h.join()


def test_attach_reports_modules_loaded_before_it():
    from gpudbg.debug.session import Session
    from gpudbg.driver.engine import reset_engine
    reset_engine()
    gpudbg.compile(SPIN, name="early.cu")
    s = Session.attach()
    try:
        kinds = []
        while (ev := s.next_event()) is not None:
            kinds.append((ev.kind, ev.module_name))
        assert (EventKind.ELF_IMAGE_LOADED, "early.ptx") in kinds or \
            any(k is EventKind.ELF_IMAGE_LOADED and "early" in (n or "") for k, n in kinds)
        assert kinds[-1][0] is EventKind.ATTACH_COMPLETE
        assert s.ack_required == frozenset()
    finally:
        s.detach()
        reset_engine()


def test_a_hang_is_a_timeout_event(session, monkeypatch):
    import runpy
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "0.5")
    ns = runpy.run_path("examples/hang.py", run_name="not_main")
    h = Host(lambda: ns["main"](["hang.py", "256"]))
    ev = session.wait_for({EventKind.TIMEOUT}, timeout=30)
    assert ev is not None and "GPU hang" in ev.message and "WAIT_VALUE" in ev.message
    h.join()
