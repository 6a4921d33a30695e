"""A debugger stopping a launch that runs optimized native code: a launch
of a kernel with no breakpoint in it runs the same compiled code (the
PLAIN variant) as without a debugger, so a stop that comes anyway (a
suspend, a breakpoint set while it runs) shows the registers that are not
live at a lane's pc as optimized out, and `value_extrapolation` shows what
the register file holds; a breakpoint armed before the launch, or PTX
compiled for debugging, keeps every register exact (the FULL variant)."""
from __future__ import annotations

import numpy as np
import pytest

import gpudbg
from gpudbg.debug.backend import StopReason
from gpudbg.debug.events import EventKind
from gpudbg.debug.session import DebugError

from debug_kernels import SPIN_LOOP_PC, spin_ptx
from session_harness import Host, stop

THREADS = 64


def _host(ptx: str, name: str, n: int):
    def host():
        m = gpudbg.Module.from_ptx(ptx, name=f"{name}.ptx")
        d = gpudbg.zeros(THREADS, np.int32)
        m.get_function(name)[THREADS // 32, 32](d, n)
        return d.to_host()
    return host


def _expected():
    """Both blocks write out[%tid.x] = 3*tid + 7 (the second block's land on the first's)."""
    out = np.zeros(THREADS, np.int32)
    out[:32] = 3 * np.arange(32) + 7
    return out


def _lane5(session):
    w = min(session.warps(0), key=lambda w: (w.sm, w.wp))
    return w.sm, w.wp, 5


def _regs(session, where):
    return {r.name: r for r in session.registers(0, *where)}


def _finish(session, where):
    """End every thread's loop (%r5, its bound, to 0) and resume."""
    for w in session.warps(0):
        for lane in w.lanes:
            session.write_register(0, w.sm, w.wp, lane.ln, "%r5", np.uint32(0))
    session.resume(0)


def _assert_every_register_exact(session, h):
    """Lane 5 (tid 5), stopped in the loop, shows every register with
    the interpreter's value (%r2 = 3*tid, %r3 = 4*tid); then the run ends."""
    where = _lane5(session)
    regs = _regs(session, where)
    assert all(r.available for r in regs.values())
    assert int(regs["%r2"].value) == 15 and int(regs["%r3"].value) == 20
    _finish(session, where)
    np.testing.assert_array_equal(h.join(), _expected())


@pytest.fixture
def native(monkeypatch):
    monkeypatch.setenv("GPUDBG_ENGINE", "native")


def _suspended_in_loop(session, ptx, name):
    h = Host(_host(ptx, name, 1 << 30))
    assert session.wait_for({EventKind.KERNEL_READY}, timeout=30) is not None
    _suspend_in_loop(session)
    return h


def _suspend_in_loop(session):
    """Suspend the device, again until lane 5 has counted (is in the loop)."""
    for _ in range(1000):
        session.suspend(0)
        assert stop(session).reason is StopReason.SUSPENDED
        if int(_regs(session, _lane5(session))["%r4"].value) > 0:
            return
        session.resume(0)
    raise AssertionError("lane 5 never reached the loop")


def test_a_suspended_optimized_launch_shows_dead_registers_as_optimized_out(session, native):
    h = _suspended_in_loop(session, spin_ptx("opt_spin"), "opt_spin")
    where = _lane5(session)
    lane = session.warp(0, where[0], where[1]).lane(5)
    regs = _regs(session, where)
    # in the loop: the counter, its bound, %r6 (7) and the lane's tid and
    # shared address (read after the loop) are live; %r2 (3*tid, stored to
    # shared before the loop) and %r3 are dead there
    live = {"%r1", "%r4", "%r5", "%r6", "%r9"}
    assert all(regs[n].available for n in live), {n: regs[n] for n in live}
    assert not regs["%r2"].available and not regs["%r3"].available
    assert int(regs["%r6"].value) == 7 and int(regs["%r1"].value) == 5
    assert int(regs["%r5"].value) == 1 << 30
    with pytest.raises(DebugError) as e:
        session.read_register(0, *where, "%r2")
    assert e.value.code == "OPTIMIZED_OUT" and "%r2" in str(e.value)
    session.value_extrapolation = True       # what the register file holds, possibly older
    assert session.read_register(0, *where, "%r2") == regs["%r2"].value
    assert lane.pc == session.warp(0, where[0], where[1]).lane(5).pc
    _finish(session, where)
    np.testing.assert_array_equal(h.join(), _expected())


def _suspended_after_a_kernel_breakpoint(session, name):
    """A breakpoint on the kernel armed before its launch (the FULL
    variant), resumed, then suspended in the loop."""
    session.break_at_kernel(name)
    h = Host(_host(spin_ptx(name), name, 1 << 30))
    assert stop(session).reason is StopReason.BREAKPOINT
    session.resume(0)
    _suspend_in_loop(session)
    return h


def test_a_breakpoint_armed_before_the_launch_keeps_every_register(session, native):
    _assert_every_register_exact(session, _suspended_after_a_kernel_breakpoint(session, "opt_spin_bp"))


def test_ptx_compiled_for_debugging_keeps_every_register(session, native):
    ptx = spin_ptx("opt_spin_g").replace(".target sm_80", ".target sm_80, debug")
    _assert_every_register_exact(session, _suspended_in_loop(session, ptx, "opt_spin_g"))


def test_the_interpreter_keeps_every_register(session, monkeypatch):
    monkeypatch.setenv("GPUDBG_ENGINE", "interp")
    _assert_every_register_exact(session, _suspended_in_loop(session, spin_ptx("opt_spin_i"), "opt_spin_i"))


def _write_r6_and_finish(session, h):
    for w in session.warps(0):
        for lane in w.lanes:
            session.write_register(0, w.sm, w.wp, lane.ln, "%r6", np.uint32(100))
    _finish(session, _lane5(session))
    want = _expected()
    want[:32] += 100 - 7
    np.testing.assert_array_equal(h.join(), want)


def test_a_register_written_in_a_suspended_optimized_launch_is_the_value_used(session, native):
    # %r6 (7) has one definition, so compiled code recomputes it where it is
    # read (sim/native/remat.py) instead of loading it: a write must still win
    _write_r6_and_finish(session, _suspended_in_loop(session, spin_ptx("opt_spin_w"), "opt_spin_w"))


def test_a_register_written_under_the_every_register_variant_is_the_value_used(session, native):
    _write_r6_and_finish(session, _suspended_after_a_kernel_breakpoint(session, "opt_spin_wf"))
