"""The Session's frames: each frame's place, variables and registers, a
step into a call past the prologue, until/advance of one warp."""
import numpy as np
import pytest

import gpudbg
from gpudbg.debug import source_steps
from gpudbg.debug.session import DebugError

from session_harness import Host, stop

CALLS = r"""
__device__ __noinline__ int scale(int x) {
    int y = x * 5;
    return y + 1;
}

extern "C" __global__ void calls(int *out) {
    int t = threadIdx.x;
    int u = t + 7;
    int r = scale(u);
    for (int i = 0; i < 3; i++) {
        r += i;
    }
    out[t] = r;
}
"""


def _calls(size: int = 32):
    def host():
        m = gpudbg.compile(CALLS, name="frames.cu", options=["-G"])
        d = gpudbg.zeros(size, np.int32)
        m.calls[1, 32](d)
        return d.to_host()
    return Host(host)


def _clear(session):
    for bp in session.breakpoints():
        session.delete_breakpoint(bp)


def _int(vv) -> int:
    return int.from_bytes(vv.data[:4], "little", signed=True)


def test_frames_carry_place_and_variables_of_each_activation(session):
    session.break_at_kernel("scale")
    h = _calls()
    ev = stop(session)
    _clear(session)
    sm, wp, ln = ev.lanes[3]
    frames = session.frames(0, sm, wp, ln)
    assert [f.level for f in frames] == [0, 1]
    assert frames[0].function.startswith("_Z5scale") and frames[1].function == "calls"
    assert frames[1].pc == session.lane(0, sm, wp, ln).return_addresses[0]
    assert session.source_line(0, frames[1].pc - 16) == ("frames.cu", 10)
    assert {v.name for v in session.variables(0, sm, wp, ln, frame=1) if v.depth >= 0} >= {"t", "u", "r", "out"}
    assert _int(session.read_variable(0, sm, wp, ln, "u", frame=1)) == ln + 7
    assert _int(session.read_variable(0, sm, wp, ln, "x")) == ln + 7        # frame 0: the argument
    with pytest.raises(DebugError, match='No symbol "x"'):
        session.read_variable(0, sm, wp, ln, "x", frame=1)
    with pytest.raises(DebugError, match="No frame at level 2"):
        session.read_variable(0, sm, wp, ln, "u", frame=2)
    regs = {r.name: r for r in session.frame_registers(0, sm, wp, ln, 1)}
    assert {r.name for r in session.registers(0, sm, wp, ln)}.isdisjoint({"%rd1"}) and "%rd1" in regs
    session.resume(0)
    h.join()


def test_writing_a_callers_register_variable(session):
    session.break_at_kernel("scale")
    h = _calls(size=64)
    ev = stop(session)
    _clear(session)
    sm, wp, ln = ev.lanes[2]
    loc = next(v for v in session.variables(0, sm, wp, ln, frame=1) if v.name == "t").location
    session.write_frame_register(0, sm, wp, ln, 1, loc.name, np.int32(40))
    assert _int(session.read_variable(0, sm, wp, ln, "t", frame=1)) == 40
    session.resume(0)
    out = h.join()
    assert out[40] == (2 + 7) * 5 + 1 + 3 and out[2] == 0      # lane 2 stored its result at out[t = 40]


def test_step_into_a_call_stops_after_the_prologue(session):
    session.break_at_line("frames.cu", 10)
    h = _calls()
    ev = stop(session)
    _clear(session)
    sm, wp = ev.warps[0]
    session.step_line(0, sm, wp, over_calls=False)
    w = session.warp(0, sm, wp)
    assert session.source_line(0, w.pc) == ("frames.cu", 3)     # the body's first line, not the declaration
    assert [_int(session.read_variable(0, sm, wp, ln, "x")) for ln in (0, 5)] == [7, 12]
    session.resume(0)
    h.join()


@pytest.fixture(params=["in-wave", "stepped"])
def stepping(request, monkeypatch):
    """until/advance through the simulator's in-wave runner, and through the
    Session's own instruction steps (a backend without one)."""
    if request.param == "stepped":
        monkeypatch.setattr(source_steps, "_in_wave", lambda session: None)
    return request.param


def test_until_leaves_the_loop_and_run_to_a_location(session, stepping):
    session.break_at_line("frames.cu", 12)
    h = _calls()
    ev = stop(session)
    _clear(session)
    sm, wp = ev.warps[0]
    session.step_line(0, sm, wp, over_calls=True)                 # to the loop line
    assert session.source_line(0, session.warp(0, sm, wp).pc)[1] == 11
    session.until(0, sm, wp)                                      # past the loop, not back into it
    assert session.source_line(0, session.warp(0, sm, wp).pc)[1] == 14
    assert _int(session.read_variable(0, sm, wp, 0, "r")) == 7 * 5 + 1 + 3
    session.resume(0)
    h.join()


def test_advance_into_a_callee_and_resolve_location(session, stepping):
    session.break_at_line("frames.cu", 9)
    h = _calls()
    ev = stop(session)
    _clear(session)
    sm, wp = ev.warps[0]
    target = session.resolve_location("kernel", kernel="scale")
    assert len(target) == 1 and session.source_line(0, next(iter(target)))[1] == 3
    assert not session.resolve_location("line", file="frames.cu", line=999)
    session.until(0, sm, wp, target, any_frame=False)   # until: scale is a deeper frame, so the
    with pytest.raises(DebugError, match="not valid"):   # kernel's frame returns first: the warp ends
        session.warp(0, sm, wp)
    session.resume(0)
    h.join()
    session.break_at_line("frames.cu", 9)
    h = _calls()
    ev = stop(session)
    _clear(session)
    sm, wp = ev.warps[0]
    target = session.resolve_location("kernel", kernel="scale")   # the new module's code
    session.until(0, sm, wp, target, any_frame=True)             # advance: any frame
    lane = session.warp(0, sm, wp).lanes[0]
    assert lane.call_depth == 1 and session.source_line(0, lane.pc) == ("frames.cu", 3)
    session.resume(0)
    h.join()
