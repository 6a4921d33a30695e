"""The differential launch mode (GPUDBG_DIFFERENTIAL, sim/native/differential.py):
each launch runs interpreted and natively from the same state; the result
is the native run's, and any difference (memory, registers at exit, fault
report, printf) stops the launch naming the kernel and both values.

The mismatch tests make the native engine wrong on purpose (a wrapper
around a compiled segment that corrupts one byte or one register after it
ran) and check that the mode catches it; the others check the bookkeeping:
launches compared or skipped (with the reason), dead registers left out,
state put back between the runs."""
from __future__ import annotations

import numpy as np
import pytest

from engines_pair import Out, Ptr, run
from gpudbg.sim.debug_port import LaunchAborted
from gpudbg.sim.native import differential, engine
from gpudbg.sim.native.differential_state import DifferentialMismatch, unstored_registers

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"

# y[i] = x[i] * a + y[i], with a register %r9 written and never read (dead:
# the PLAIN variant does not store it) and %r6 live to the end
SAXPY = HEAD + """
.visible .entry saxpy(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)
{
    .reg .pred %p<2>; .reg .b32 %r<10>; .reg .f32 %f<5>; .reg .b64 %rd<8>;
    ld.param.u32 %r2, [n];
    ld.param.f32 %f1, [a];
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5;
    add.s32 %r9, %r1, 12345;
    mul.lo.s32 %r6, %r1, 7;
    setp.ge.s32 %p1, %r1, %r2;
    @%p1 bra DONE;
    cvt.s64.s32 %rd5, %r1;
    shl.b64 %rd5, %rd5, 2;
    add.s64 %rd6, %rd1, %rd5;
    ld.global.f32 %f2, [%rd6];
    add.s64 %rd7, %rd2, %rd5;
    ld.global.f32 %f3, [%rd7];
    fma.rn.f32 %f4, %f2, %f1, %f3;
    st.global.f32 [%rd7], %f4;
DONE:
    st.global.u32 [%rd2], %r6;
    ret;
}
"""

CLOCK = HEAD + """
.visible .entry stamp(.param .u64 out)
{
    .reg .b32 %r<3>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %clock;
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
"""


@pytest.fixture
def mode(monkeypatch):
    monkeypatch.setenv(differential.ENV_DIFFERENTIAL, "1")
    monkeypatch.delenv("GPUDBG_ENGINE", raising=False)
    before = dict(differential.stats)

    def counted():
        return {k: v - before.get(k, 0) for k, v in differential.stats.items() if v != before.get(k, 0)}
    return counted


def _saxpy_args(n=200):
    x = np.linspace(-3, 7, n, dtype=np.float32)
    y = np.cos(np.arange(n, dtype=np.float32))
    return [n, 1.5, x, y]


def test_a_launch_runs_under_both_engines_and_keeps_the_native_result(mode, monkeypatch):
    args = _saxpy_args()
    ref = run(SAXPY, "saxpy", (2,), (128,), args)         # compared, then native
    assert mode() == {"compared": 1}
    monkeypatch.delenv(differential.ENV_DIFFERENTIAL)
    with engine.force("interp"):
        plain = run(SAXPY, "saxpy", (2,), (128,), args)
    assert np.array_equal(ref[3], plain[3])
    assert ref.module.program.native_segments > 0      # compiled although the launch is tiny (no auto tier)


def test_dead_registers_are_left_out_of_the_comparison(mode):
    r = run(SAXPY, "saxpy", (1,), (64,), _saxpy_args(64))
    prog = r.module.program
    index = {name: k for k, (_, name) in enumerate(prog.reg_names)}
    dead = unstored_registers(prog)
    assert index["%r9"] in dead and index["%r6"] not in dead
    assert mode() == {"compared": 1}


def _corrupting(monkeypatch, corrupt):
    """Native segments that call `corrupt(X)` after each successful run."""
    real = engine.NativeSegment._run

    def wrong(self, X, idx):
        ok = real(self, X, idx)
        if ok:
            corrupt(X, self)
        return ok
    monkeypatch.setattr(engine.NativeSegment, "_run", wrong)


def test_a_native_write_to_memory_is_caught_with_the_allocation_offset_and_both_values(mode, monkeypatch):
    state = {}

    def corrupt(X, seg):
        if "done" not in state and seg.two_pass:      # the segment with the store
            y = state["y"]
            X.gmem.write(y + 8, np.array([0xAB], np.uint8))
            state["done"] = True
    args = _saxpy_args(64)
    # allocations repeat from run to run on a fresh GPU: find y's address first
    with engine.force("interp"):
        monkeypatch.delenv(differential.ENV_DIFFERENTIAL)
        state["y"] = run(SAXPY, "saxpy", (1,), (64,), args).bases[3]
    monkeypatch.setenv(differential.ENV_DIFFERENTIAL, "1")
    _corrupting(monkeypatch, corrupt)
    with pytest.raises(DifferentialMismatch) as e:
        run(SAXPY, "saxpy", (1,), (64,), args)
    msg = str(e.value)
    assert "kernel saxpy" in msg and "device memory differs" in msg and "at offset 8" in msg
    assert f"address 0x{state['y'] + 8:x}" in msg and "native [ab 14 8e c0" in msg
    assert mode() == {"mismatch": 1}


def test_a_wrong_register_is_caught_naming_register_thread_and_values(mode, monkeypatch):
    def corrupt(X, seg):
        prog = X.program
        k = next(i for i, (_, name) in enumerate(prog.reg_names) if name == "%r6")
        last = next(c.pc for c in prog.code if c.inst.text.startswith("st.global.u32"))
        if seg.start <= last < seg.end:
            X.regs[k][5] = 99       # thread 5's %r6 once the last store has used it
    _corrupting(monkeypatch, corrupt)
    with pytest.raises(DifferentialMismatch) as e:
        run(SAXPY, "saxpy", (1,), (64,), _saxpy_args(64))
    msg = str(e.value)
    assert "register %r6" in msg and "thread (5, 0, 0)" in msg and "block (0, 0, 0)" in msg
    assert "interpreter np.uint32(35), native np.uint32(99)" in msg


def test_fault_reports_are_compared_and_the_fault_is_raised_once(mode):
    r = run(SAXPY, "saxpy", (1,), (64,), [64, 2.0, Ptr(0x10), Out(64)], expect_fault=True)
    assert "Address" in str(r.fault) or "address" in str(r.fault)
    assert mode() == {"compared": 1}


def test_printf_output_appears_once(mode):
    from kernels import kernel_ptx
    r = run(kernel_ptx("calls"), "printer", (2,), (40,), [35])
    assert len(r.printf) == len(set(r.printf)) > 0
    assert mode() == {"compared": 1}


def test_a_kernel_reading_the_clock_runs_once_and_is_counted_as_skipped(mode):
    run(CLOCK, "stamp", (1,), (32,), [Out(32, np.uint32)])
    assert mode() == {"skipped: the kernel reads %clock or %globaltimer": 1}


def test_a_misspelt_mode_refuses_the_launch_naming_the_variable(monkeypatch):
    monkeypatch.setenv(differential.ENV_DIFFERENTIAL, "sometimes")
    with pytest.raises(LaunchAborted, match="GPUDBG_DIFFERENTIAL='sometimes'"):
        run(SAXPY, "saxpy", (1,), (64,), _saxpy_args(64))


def test_the_full_mode_also_compares_the_debugger_variant(mode, monkeypatch):
    monkeypatch.setenv(differential.ENV_DIFFERENTIAL, "full")
    r = run(SAXPY, "saxpy", (2,), (128,), _saxpy_args())
    assert mode() == {"compared": 1}
    assert r.module.program.native_full_ready_count > 0


def test_the_log_has_one_line_per_launch(mode, monkeypatch, tmp_path):
    import json
    log = tmp_path / "diff.jsonl"
    monkeypatch.setenv(differential.ENV_LOG, str(log))
    run(SAXPY, "saxpy", (1,), (64,), _saxpy_args(64))
    run(CLOCK, "stamp", (1,), (32,), [Out(32, np.uint32)])
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [(x["kernel"], x["status"]) for x in lines] == [
        ("saxpy", "compared"), ("stamp", "skipped: the kernel reads %clock or %globaltimer")]


# thread 5 loads through a bad pointer; the registers written after the
# load in the same segment must not hold values for the threads native code
# ran before it found the fault (the interpreter stops at the load)
RUN_AHEAD = HEAD + """
.visible .entry ahead(.param .u64 p, .param .u64 bad)
{
    .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd3, [bad];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 5;
    selp.b64 %rd2, %rd3, %rd1, %p1;
    ld.global.u32 %r2, [%rd2];
    add.s32 %r3, %r2, %r1;
    mov.u32 %r4, 77;
    st.global.u32 [%rd1], %r3;
    ret;
}
"""


def test_the_debugger_variant_leaves_no_register_written_past_a_fault(mode, monkeypatch):
    monkeypatch.setenv(differential.ENV_DIFFERENTIAL, "debugger")
    r = run(RUN_AHEAD, "ahead", (1,), (32,), [np.arange(4, dtype=np.int32), Ptr(0x10)], expect_fault=True)
    assert "ahead" in str(r.fault)
    assert mode() == {"compared": 1}
    assert r.module.program.native_full_ready_count > 0


def test_a_compared_launch_holds_the_front_end_and_lets_it_go():
    from gpudbg.sim.gpu import SimGPU
    gpu = SimGPU()
    try:
        assert differential._hold(gpu) is None and gpu.differential_hold
        with gpu.cv:
            assert gpu.frontend._pick() is None        # nothing starts while held
        differential._release(gpu)
        assert not gpu.differential_hold
        gpu.frontend.executing[object()] = object()    # a copy of another stream is running
        assert differential._hold(gpu) == "another command runs at the same time"
        assert not gpu.differential_hold
    finally:
        gpu.frontend.executing.clear()
        gpu.shutdown()


def test_a_held_run_gives_way_after_a_third_of_a_short_hang_timeout(monkeypatch):
    # the work it may wait for must get to run before the hang timeout
    # stops the kernel: patience is HOLD_PATIENCE_S or a third of the timeout
    import time
    from types import SimpleNamespace

    from gpudbg.sim.gpu import SimGPU
    gpu = SimGPU()
    try:
        X = SimpleNamespace(gpu=gpu)
        monkeypatch.setattr(gpu.frontend, "held_back", lambda: True)
        half_second_ago = time.monotonic() - 0.5
        differential.check_held(X, half_second_ago, None)            # 0.5 s < 2 s: goes on
        differential.check_held(X, half_second_ago, 10.0)            # 0.5 s < 2 s: goes on
        with pytest.raises(differential.HeldBack):
            differential.check_held(X, half_second_ago, 1.2)          # a third of 1.2 s is 0.4 s
        monkeypatch.setattr(gpu.frontend, "held_back", lambda: False)
        differential.check_held(X, half_second_ago, 1.2)             # nothing waits: goes on
    finally:
        gpu.shutdown()
