import struct

import numpy as np
import pytest

import gpudbg
from gpudbg.debug.backend import MemorySpace, StopReason
from gpudbg.debug.cudbg import devinfo as D
from gpudbg.debug.cudbg.enums import CUDBGDeviceInfoAttribute_t as DA
from gpudbg.debug.cudbg.enums import CUDBGDeviceInfoQueryType_t as QT
from gpudbg.debug.cudbg.enums import CUDBGWarpInfoAttribute_t as WA
from gpudbg.debug.session import DebugError
from gpudbg.sim.faults import CUDBGException

from session_harness import Host, stop

SHARED = r"""
extern "C" __global__ void rotate(int *out, int n) {
    __shared__ int sdata[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i * 3;
    sdata[threadIdx.x] = v + blockIdx.x * 1000;
    __syncthreads();
    int w = sdata[(threadIdx.x + 1) % blockDim.x];
    out[i] = w + v;
}
"""


def _rotate(session, options=(), blocks=2):
    def host():
        m = gpudbg.compile(SHARED, name="rot.cu", options=list(options))
        d = gpudbg.zeros(256 * blocks, np.int32)
        m.rotate[blocks, 256](d, 256 * blocks)
        return d.to_host()
    return Host(host)


def _expected(blocks=2):
    i = np.arange(256 * blocks)
    t, b = i % 256, i // 256
    nxt = b * 256 + (t + 1) % 256
    return (nxt * 3 + b * 1000) + i * 3


def test_stepping_over_syncthreads_lets_the_block_reach_the_barrier(session):
    session.break_at_line("rot.cu", 6)
    host = _rotate(session, blocks=1)
    ev = stop(session)
    for bp in session.breakpoints():
        session.delete_breakpoint(bp)
    sm, wp = ev.warps[0]
    others = [w for w in session.warps(0) if w.wp != wp]
    assert len(others) == 7
    start = {w.wp: w.pc for w in others}
    # step warp 0 instruction by instruction until it is past the barrier line
    for _ in range(200):
        session.single_step_warp(0, sm, wp, 1)
        line = session.source_line(0, session.warp(0, sm, wp).pc)
        if line[1] >= 8:
            break
    assert line == ("rot.cu", 8)
    after = {w.wp: w for w in session.warps(0) if w.wp != wp}
    # the other seven warps ran to the barrier and were released past it
    for w in after.values():
        assert w.pc != start[w.wp]
        assert session.source_line(0, w.pc)[1] >= 7
        assert not w.at_barrier
    session.resume(0)
    np.testing.assert_array_equal(host.join(), _expected(1))


def test_next_over_barrier_with_source_stepping(session):
    session.break_at_line("rot.cu", 6)
    host = _rotate(session, blocks=1)
    ev = stop(session)
    for bp in session.breakpoints():
        session.delete_breakpoint(bp)
    sm, wp = ev.warps[3]
    lines = []
    for _ in range(3):
        session.step_line(0, sm, wp, over_calls=True)
        lines.append(session.source_line(0, session.warp(0, sm, wp).pc)[1])
    assert lines[0] == 7 and lines[1] == 8
    session.resume(0)
    host.join()


def test_shared_memory_of_two_blocks(session):
    session.break_at_line("rot.cu", 8)
    host = _rotate(session)
    stop(session)
    seen = {}
    for w in session.warps(0):
        seen.setdefault(w.block_idx, w)
    assert set(seen) == {(0, 0, 0), (1, 0, 0)}
    for b, w in seen.items():
        got = np.frombuffer(session.read_memory(0, MemorySpace.SHARED, 0, 16, w.sm, w.wp), np.int32)
        np.testing.assert_array_equal(got, np.arange(4) * 3 + b[0] * (1000 + 768))
    with pytest.raises(DebugError, match="shared"):
        session.read_memory(0, MemorySpace.SHARED, 1020, 8, seen[(0, 0, 0)].sm, seen[(0, 0, 0)].wp)
    session.resume(0)
    host.join()


def test_print_local_variable_of_g_kernel_from_three_threads(session):
    session.break_at_line("rot.cu", 8)
    host = _rotate(session, options=["-G"])
    ev = stop(session)
    picks = [ev.lanes[0], ev.lanes[37], ev.lanes[300]]
    for sm, wp, ln in picks:
        lv = session.lane(0, sm, wp, ln)
        b = session.warp(0, sm, wp).block_idx[0]
        i = b * 256 + lv.thread_idx[0]
        val = session.read_variable(0, sm, wp, ln, "v")
        assert struct.unpack("<i", val.data)[0] == 3 * i
        assert str(val.variable.variable.type) == "int"
    assert {"i", "v", "w", "out", "n"} <= {v.name for v in session.variables(0, *picks[0])}
    with pytest.raises(DebugError, match='No symbol "nope" in current context.'):
        session.read_variable(0, *picks[0], "nope")
    session.resume(0)
    host.join()


def test_writing_a_register_changes_the_result(session):
    session.break_at_line("rot.cu", 9)
    host = _rotate(session, options=["-G"], blocks=1)
    ev = stop(session)
    for bp in session.breakpoints():
        session.delete_breakpoint(bp)
    sm, wp, ln = next(x for x in ev.lanes if session.lane(0, *x).thread_idx == (7, 0, 0))
    loc = session.read_variable(0, sm, wp, ln, "v").variable.location
    session.write_register(0, sm, wp, ln, loc.name, 1000000)
    assert int(session.read_register(0, sm, wp, ln, loc.name)) == 1000000
    session.resume(0)
    out = host.join()
    want = _expected(1)
    want[7] += 1000000 - 21
    np.testing.assert_array_equal(out, want)


def test_exception_stop_names_the_lane_and_address(session):
    import runpy
    import sys
    path = "examples/oob.py"

    def host():
        sys_argv = sys.argv
        sys.argv = [path]
        try:
            runpy.run_path(path, run_name="not_main")["main"]([path])
        finally:
            sys.argv = sys_argv
    h = Host(host)
    ev = stop(session)
    assert ev.reason is StopReason.EXCEPTION
    assert ev.exception is CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS
    sm, wp, ln = ev.lanes[0]
    w = session.warp(0, sm, wp)
    lv = session.lane(0, sm, wp, ln)
    assert w.block_idx == (7, 0, 0) and lv.thread_idx == (103, 0, 0)
    assert lv.exception is CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS
    assert w.error_pc == ev.address == lv.pc
    assert session.source_line(0, ev.address) == ("oob.cu", 5)
    assert ev.report.address == 0x7000000031a0 or "past the end" in ev.message
    assert "0 bytes past the end of the 4000-byte allocation" in ev.message
    with pytest.raises(DebugError, match="exception"):
        session.single_step_warp(0, sm, wp, 1)
    session.resume(0)
    h.join()
    assert isinstance(h.error, gpudbg.KernelFaultError)


def test_device_info_full_then_update_after_one_step(session):
    session.break_at_line("rot.cu", 5)
    host = _rotate(session, blocks=2)
    ev = stop(session)
    for bp in session.breakpoints():
        session.delete_breakpoint(bp)
    nsms = session.device(0).num_sms
    full = D.unpack_device_info(session.device_info(0, QT.CUDBG_RESPONSE_TYPE_FULL), nsms,
                                session.device_info_sizes(0))
    warps = session.warps(0)
    assert full.info.responseType is QT.CUDBG_RESPONSE_TYPE_FULL
    assert sum(len(sm.warps) for sm in full.sms) == len(warps) == 16
    sm0 = full.sms[0]
    assert sm0.info.warpValidMask == sum(1 << w.wp for w in warps if w.sm == sm0.sm)
    lane0 = sm0.warps[0].lanes[0]
    assert lane0.info.virtualPC == session.warp(0, sm0.sm, sm0.warps[0].warp).pc
    sm, wp = ev.warps[0]
    session.single_step_warp(0, sm, wp, 1)
    upd = D.unpack_device_info(session.device_info(0, QT.CUDBG_RESPONSE_TYPE_UPDATE), nsms,
                               session.device_info_sizes(0))
    assert upd.info.responseType is QT.CUDBG_RESPONSE_TYPE_UPDATE
    assert upd.attributes[DA.CUDBG_DEVICE_ATTRIBUTE_SM_UPDATE_MASK] == 1 << sm
    assert [s.sm for s in upd.sms] == [sm]
    assert [w.warp for w in upd.sms[0].warps] == [wp]
    changed = upd.sms[0].warps[0]
    assert changed.attributes[WA.CUDBG_WARP_ATTRIBUTE_LANE_UPDATE_MASK] == 0xFFFFFFFF
    assert changed.lanes[0].info.virtualPC == session.warp(0, sm, wp).pc
    again = D.unpack_device_info(session.device_info(0, QT.CUDBG_RESPONSE_TYPE_UPDATE), nsms,
                                 session.device_info_sizes(0))
    assert again.sms == () and again.attributes[DA.CUDBG_DEVICE_ATTRIBUTE_SM_UPDATE_MASK] == 0
    session.resume(0)
    host.join()


def test_bad_coordinates_are_specific_errors(session):
    session.break_at_line("rot.cu", 5)
    host = _rotate(session, blocks=1)
    stop(session)
    with pytest.raises(DebugError) as e:
        session.warp(0, 0, 40)
    assert e.value.code == "INVALID_WARP"
    with pytest.raises(DebugError) as e:
        session.warp(0, 500, 0)
    assert e.value.code == "INVALID_SM"
    with pytest.raises(DebugError) as e:
        session.registers(0, 0, 0, 40)
    assert e.value.code == "INVALID_LANE"
    with pytest.raises(DebugError) as e:
        session.read_memory(0, MemorySpace.GLOBAL, 0x10, 4)
    assert e.value.code == "MEMORY_MAPPING_FAILED"
    session.resume(0)
    host.join()


def test_demoted_shared_array_of_two_blocks_by_name(session):
    session.break_at_line("rot.cu", 8)
    host = _rotate(session, options=["-G"])
    stop(session)
    seen = {}
    for w in session.warps(0):
        seen.setdefault(w.block_idx, w)
    for b, w in seen.items():
        val = session.read_variable(0, w.sm, w.wp, w.lanes[0].ln, "sdata")
        assert val.space is MemorySpace.SHARED and str(val.variable.variable.type) == "int [256]"
        got = np.frombuffer(val.data, np.int32)
        np.testing.assert_array_equal(got, np.arange(256) * 3 + b[0] * (1000 + 768))
    session.resume(0)
    host.join()
