"""The debugger over the native engine: with GPUDBG_ENGINE=native a
launch under an attached debugger runs the variant of compiled code that
stores every register, breakpoints inside what would be one compiled
segment still stop at their exact line with the same lanes, and the
program's results are the interpreter's."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import gpudbg
from gpudbg.debug.backend import StopReason
from gpudbg.sim.program import Program

from session_harness import Host, stop

STRAIGHT = r"""
extern "C" __global__ void straight(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int a = i * 3 + 1;
    int b = a ^ (i << 2);
    int c = b + a * 5;
    out[i] = c;
}
"""


def _run(session, engine, monkeypatch):
    monkeypatch.setenv("GPUDBG_ENGINE", engine)

    def host():
        m = gpudbg.compile(STRAIGHT, name="straight.cu", options=["-G"])
        d = gpudbg.zeros(64, np.int32)
        m.straight[2, 32](d, 64)
        return d.to_host()
    h = Host(host)
    bp = session.break_at_line("straight.cu", 6)
    ev = stop(session)
    assert ev.reason is StopReason.BREAKPOINT
    where = session.source_line(0, ev.address)
    lanes = sorted(ev.lanes)
    session.delete_breakpoint(bp)
    session.resume(0)
    return where, lanes, h.join()


@pytest.mark.parametrize("engine", ["native"])
def test_breakpoints_stop_at_the_same_line_and_lanes_as_the_interpreter(session, engine, monkeypatch):
    where_i, lanes_i, out_i = _run(session, "interp", monkeypatch)
    where_n, lanes_n, out_n = _run(session, engine, monkeypatch)
    assert where_n == where_i == ("straight.cu", 6)
    assert lanes_n == lanes_i
    i = np.arange(64)
    a = i * 3 + 1
    assert np.array_equal(out_n, (a ^ (i << 2)) + a * 5) and np.array_equal(out_n, out_i)
    full = [p for p in gc.get_objects() if isinstance(p, Program) and getattr(p, "native_full_ready", False)]
    assert any(getattr(p, "native_full_ready_count", 0) for p in full)
