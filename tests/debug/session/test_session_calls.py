import numpy as np
import pytest

import gpudbg
from gpudbg.debug.session import DebugError

from session_harness import Host, stop

CALLS = r"""
__device__ __noinline__ int scale(int x) {
    int y = x * 5;
    return y + 1;
}

extern "C" __global__ void calls(int *out) {
    int t = threadIdx.x;
    int r = scale(t);
    out[t] = r;
}
"""


def _calls():
    def host():
        m = gpudbg.compile(CALLS, name="calls.cu", options=["-G"])
        d = gpudbg.zeros(32, np.int32)
        m.calls[1, 32](d)
        return d.to_host()
    return Host(host)


def _clear(session):
    for bp in session.breakpoints():
        session.delete_breakpoint(bp)


def test_breakpoint_in_a_device_function_by_its_source_name(session):
    bp = session.break_at_kernel("scale")        # C++ name of _Z5scalei
    h = _calls()
    ev = stop(session)
    assert ev.breakpoints == (bp.id,)
    lv = session.lane(0, *ev.lanes[0])
    assert lv.function.startswith("_Z5scale") and lv.call_depth == 1
    (ret,) = lv.return_addresses
    caller, _off = session.function_at(0, ret)
    assert caller == "calls" and session.source_line(0, ret)[1] == 9
    assert session.source_line(0, ev.address) == ("calls.cu", 3)
    _clear(session)
    session.resume(0)
    np.testing.assert_array_equal(h.join(), np.arange(32) * 5 + 1)


def test_step_into_and_finish_out_of_a_call(session):
    session.break_at_line("calls.cu", 9)
    h = _calls()
    ev = stop(session)
    _clear(session)
    sm, wp = ev.warps[0]
    session.step_line(0, sm, wp, over_calls=False)      # step: into scale
    lane = session.warp(0, sm, wp).lanes[0]
    assert lane.call_depth == 1 and lane.function.startswith("_Z5scale")
    with pytest.raises(DebugError):
        session.finish(0, 0, 63)                         # no such warp
    session.finish(0, sm, wp)
    lane = session.warp(0, sm, wp).lanes[0]
    assert lane.call_depth == 0 and lane.function == "calls"
    with pytest.raises(DebugError, match="outermost frame"):
        session.finish(0, sm, wp)
    session.resume(0)
    h.join()


def test_next_steps_over_the_call(session):
    session.break_at_line("calls.cu", 9)
    h = _calls()
    ev = stop(session)
    _clear(session)
    sm, wp = ev.warps[0]
    session.step_line(0, sm, wp, over_calls=True)
    lane = session.warp(0, sm, wp).lanes[0]
    assert lane.call_depth == 0 and session.source_line(0, lane.pc)[1] == 10
    session.resume(0)
    h.join()


def test_resume_warps_until_pc(session):
    session.break_at_kernel("calls")
    h = _calls()
    ev = stop(session)
    _clear(session)
    sm, wp = ev.warps[0]
    prog = session.program_at(0, ev.address)
    target = next(prog.code_address(pc) for pc in range(len(prog.code))
                  if session.source_line(0, prog.code_address(pc)) == ("calls.cu", 10))
    session.resume_warps_until_pc(0, sm, 1 << wp, target)
    assert session.warp(0, sm, wp).pc == target
    with pytest.raises(DebugError) as e:
        session.resume_warps_until_pc(0, sm, 1 << wp, 0x10)
    assert e.value.code == "INVALID_ADDRESS"
    session.resume(0)
    h.join()
