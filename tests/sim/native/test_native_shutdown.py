"""Process exit and native code: once the exit gate is closed no native
call starts and no program compiles (LLVM may already be torn down by the
C runtime's exit), the interpreter finishes the work; close() waits for a
call in flight."""
from __future__ import annotations

import threading

import numpy as np

from engines_pair import Out, engine_choice, native_segments, run
from test_native_segments import SAXPY

from gpudbg.sim.native import shutdown


def test_after_close_work_runs_interpreted(monkeypatch):
    monkeypatch.setattr(shutdown, "_closed", True)
    with engine_choice("native"):
        r = run(SAXPY, "saxpy", (1,), (64,), [64, 2.0, np.ones(64, np.float32), Out(64)])
    assert native_segments(r) == 0
    assert np.all(r[3] == 2.0)
    assert not shutdown.enter()


def test_close_waits_for_the_call_in_flight(monkeypatch):
    monkeypatch.setattr(shutdown, "_closed", False)
    assert shutdown.enter()
    closed = threading.Event()

    def closer():
        shutdown.close()
        closed.set()
    t = threading.Thread(target=closer)
    t.start()
    assert not closed.wait(0.2)          # still waiting for the call in flight
    shutdown.leave()
    t.join(10)
    assert closed.is_set()
