"""mbarrier.* in hand-written PTX: phases, pending and tx counts, tokens
and parities, arrive_drop, noComplete, try_wait parking across warps, and
the errors and deadlock reports of misuse (sim/mbarrier.py)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import Out, run

HEAD = """.version 8.3
.target sm_90
.address_size 64
"""


def kernel(body: str, name: str = "k", regs: str = "") -> str:
    """A kernel `name(.u64 out)` with %rd1 = out, %r0 = %tid.x and an 8-byte
    shared mbarrier `bar` (plus `data`, 512 shared bytes)."""
    return HEAD + f""".visible .entry {name}(.param .u64 out)
{{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<32>;
    .shared .align 8 .b64 bar;
    .shared .align 16 .b8 data[512];
    {regs}
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd2, %r0, 8;
    add.s64 %rd3, %rd1, %rd2;
{body}
    ret;
}}
"""


def unpack(s: int) -> dict:
    tx = (s >> 40) & ((1 << 21) - 1)
    return dict(pending=s & 0xFFFFF, expected=(s >> 20) & 0xFFFFF,
                tx=tx - (1 << 21) if tx >> 20 else tx, valid=bool(s >> 62 & 1), phase=s >> 63)


def test_init_arrive_tokens_and_pending_count():
    # thread 0 inits for 3 arrivals; threads 0..2 arrive one at a time (in
    # slot order within the instruction), then the phase has flipped
    body = """
    setp.eq.u32 %p1, %r0, 0;
    @%p1 mbarrier.init.shared.b64 [bar], 3;
    bar.sync 0;
    setp.lt.u32 %p2, %r0, 3;
    @%p2 mbarrier.arrive.shared.b64 %rd4, [bar];
    mbarrier.pending_count.b64 %r5, %rd4;
    cvt.u64.u32 %rd5, %r5;
    st.global.u64 [%rd3], %rd5;
    bar.sync 0;
    @%p1 ld.shared.u64 %rd6, [bar];
    @%p1 st.global.u64 [%rd1+64], %rd6;
    """
    r = run(kernel(body), "k", (1,), (4,), [Out(9, np.uint64)])
    assert r[0][:3].tolist() == [3, 2, 1]          # each token: pending before its arrive
    s = unpack(int(r[0][8]))
    assert s == dict(pending=3, expected=3, tx=0, valid=True, phase=1)


def test_phase_flips_inside_one_instruction_and_parity_waits():
    # 64 threads arrive on a barrier expecting 32: two phases complete in one step
    body = """
    setp.eq.u32 %p1, %r0, 0;
    @%p1 mbarrier.init.shared::cta.b64 [bar], 32;
    bar.sync 0;
    mbarrier.arrive.release.cta.shared::cta.b64 %rd4, [bar];
    shr.u64 %rd5, %rd4, 63;
    st.global.u64 [%rd3], %rd5;
    bar.sync 0;
    mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 0;
    mbarrier.test_wait.parity.shared::cta.b64 %p3, [bar], 1;
    selp.u64 %rd6, 1, 0, %p2;
    selp.u64 %rd7, 2, 0, %p3;
    add.u64 %rd6, %rd6, %rd7;
    st.global.u64 [%rd3+512], %rd6;
    """
    r = run(kernel(body), "k", (1,), (64,), [Out(128, np.uint64)])
    assert r[0][:32].tolist() == [0] * 32 and r[0][32:64].tolist() == [1] * 32   # phase of each token
    # two completed phases: parity 0 is back to current (incomplete), parity 1 completed
    assert r[0][64:].tolist() == [2] * 64


def test_arrive_drop_and_tx_counts():
    body = """
    setp.eq.u32 %p1, %r0, 0;
    @%p1 mbarrier.init.shared.b64 [bar], 4;
    bar.sync 0;
    @%p1 mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 256;
    setp.lt.u32 %p2, %r0, 2;
    @%p2 mbarrier.arrive_drop.shared.b64 %rd4, [bar];
    setp.ge.u32 %p3, %r0, 2;
    @%p3 mbarrier.arrive.shared.b64 %rd4, [bar];
    bar.sync 0;
    @%p1 ld.shared.u64 %rd6, [bar];
    @%p1 st.global.u64 [%rd1], %rd6;
    @%p1 mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], 200;
    @%p1 ld.shared.u64 %rd6, [bar];
    @%p1 st.global.u64 [%rd1+8], %rd6;
    @%p1 mbarrier.complete_tx.shared::cta.b64 [bar], 56;
    @%p1 ld.shared.u64 %rd6, [bar];
    @%p1 st.global.u64 [%rd1+16], %rd6;
    """
    r = run(kernel(body), "k", (1,), (4,), [Out(3, np.uint64)])
    a, b, c = (unpack(int(v)) for v in r[0])
    assert a == dict(pending=0, expected=2, tx=256, valid=True, phase=0)   # arrivals done, bytes not
    assert b == dict(pending=0, expected=2, tx=56, valid=True, phase=0)
    assert c == dict(pending=2, expected=2, tx=0, valid=True, phase=1)     # the drops shrink the next phase


def test_arrive_expect_tx_and_negative_tx():
    # complete_tx may run ahead of expect_tx: the count goes negative and the
    # phase waits for it to come back to zero
    body = """
    setp.eq.u32 %p1, %r0, 0;
    @%p1 mbarrier.init.shared.b64 [bar], 1;
    @%p1 mbarrier.complete_tx.shared::cta.b64 [bar], 64;
    @%p1 ld.shared.u64 %rd6, [bar];
    @%p1 st.global.u64 [%rd1], %rd6;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [bar], 64;
    @%p1 ld.shared.u64 %rd6, [bar];
    @%p1 st.global.u64 [%rd1+8], %rd6;
    """
    r = run(kernel(body), "k", (1,), (1,), [Out(2, np.uint64)])
    assert unpack(int(r[0][0]))["tx"] == -64
    assert unpack(int(r[0][1])) == dict(pending=1, expected=1, tx=0, valid=True, phase=1)


def test_try_wait_parks_until_another_warp_arrives():
    # warp 0 waits for a phase only warp 1 completes, after writing data
    # that warp 0 then reads: the waiters must not pass early
    body = """
    setp.eq.u32 %p1, %r0, 0;
    @%p1 mbarrier.init.shared.b64 [bar], 32;
    bar.sync 0;
    setp.ge.u32 %p2, %r0, 32;
    @%p2 bra.uni PRODUCE;
WAIT:
    mbarrier.try_wait.parity.shared.b64 %p4, [bar], 0;
    @!%p4 bra WAIT;
    shl.b32 %r8, %r0, 2;
    mov.u32 %r9, data;
    add.u32 %r9, %r9, %r8;
    ld.shared.u32 %r10, [%r9];
    cvt.u64.u32 %rd7, %r10;
    st.global.u64 [%rd3], %rd7;
    bra.uni DONE;
PRODUCE:
    // warp 1 (at higher pcs, so it runs after warp 0 reached its wait): a
    // long loop, then the data, then the arrivals
    mov.u32 %r6, 0;
SPIN:
    add.u32 %r6, %r6, 1;
    setp.lt.u32 %p3, %r6, 300;
    @%p3 bra SPIN;
    sub.u32 %r7, %r0, 32;
    shl.b32 %r8, %r7, 2;
    mov.u32 %r9, data;
    add.u32 %r9, %r9, %r8;
    add.u32 %r10, %r0, 1000;
    st.shared.u32 [%r9], %r10;
    mbarrier.arrive.shared.b64 %rd4, [bar];
DONE:
    """
    r = run(kernel(body), "k", (1,), (64,), [Out(32, np.uint64)])
    assert r[0].tolist() == [1032 + t for t in range(32)]
    # warp 0 executed try_wait twice (parked, then released true), not in a spin
    assert r.stats.thread_instructions < 64 * 20 + 32 * 300 * 3


def test_try_wait_on_a_phase_nobody_completes_is_a_deadlock_report():
    body = """
    setp.eq.u32 %p1, %r0, 0;
    @%p1 mbarrier.init.shared.b64 [bar], 64;
    bar.sync 0;
    mbarrier.arrive.shared.b64 %rd4, [bar];
WAIT:
    mbarrier.try_wait.shared.b64 %p4, [bar], %rd4;
    @!%p4 bra WAIT;
    """
    r = run(kernel(body), "k", (1,), (32,), [Out(1, np.uint64)], expect_fault=True)
    f = r.fault
    assert f.hang is not None and f.hang.value == "barrier deadlock"
    assert "mbarrier deadlock: 32 thread(s) of block (0, 0, 0) wait in mbarrier.try_wait" in f.message
    assert "32 of 64 arrival(s) pending" in f.message
    assert "mbarrier.try_wait" in f.instruction


@pytest.mark.parametrize("body,needle", [
    ("mbarrier.arrive.shared.b64 %rd4, [bar];", "mbarrier used before mbarrier.init"),
    ("mbarrier.init.shared.b64 [bar], 1;\n mbarrier.inval.shared.b64 [bar];\n"
     " mbarrier.test_wait.parity.shared.b64 %p1, [bar], 0;", "mbarrier waited on before mbarrier.init"),
    ("mbarrier.init.shared.b64 [bar], 1;\n mbarrier.arrive.shared.b64 %rd4, [bar], 2;",
     "2 arrival(s) on an mbarrier phase with only 1 pending"),
    ("mbarrier.init.shared.b64 [bar], 2;\n mbarrier.arrive.noComplete.shared.b64 %rd4, [bar], 2;",
     "noComplete would complete the phase"),
    ("mbarrier.init.shared.b64 [bar], 0;", "mbarrier.init count 0 is outside 1..1048575"),
    ("mov.u64 %rd9, 4096;\n mbarrier.arrive.b64 %rd4, [%rd9];", "is not in shared memory"),
    ("mov.u32 %r9, 4;\n mbarrier.arrive.shared.b64 %rd4, [%r9];", "misaligned"),
])
def test_misuse_is_a_precise_fault(body, needle):
    r = run(kernel(body), "k", (1,), (1,), [Out(1, np.uint64)], expect_fault=True)
    assert needle in r.fault.message, r.fault.message
    assert r.fault.thread == (0, 0, 0)
    assert r.fault.instruction.startswith(body.split("\n")[-1].strip().rstrip(";").split(" ")[0])


@pytest.mark.parametrize("line", [
    "mbarrier.arrive.shared.b32 %rd4, [bar];",
    "mbarrier.init.parity.shared.b64 [bar], 1;",
    "mbarrier.test_wait.shared.b64 %p1, [bar], %rd4, 5;",
    "mbarrier.expect_tx.noComplete.shared.b64 [bar], 5;",
])
def test_malformed_forms_fail_at_load(line):
    from gpudbg.ptx import parse
    from gpudbg.sim.gpu import SimGPU
    from gpudbg.sim.loader import load_module
    from gpudbg.sim.program import LoadError
    with pytest.raises(LoadError) as e:
        load_module(SimGPU(), parse(kernel(line), "k.ptx"))
    assert "mbarrier" in str(e.value)


def test_a_kernel_timeout_names_the_threads_waiting_in_try_wait(monkeypatch):
    # warp 0 waits for arrivals warp 1 never makes: warp 1 spins forever
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "1")
    body = """
    setp.eq.u32 %p1, %r0, 0;
    @%p1 mbarrier.init.shared.b64 [bar], 64;
    bar.sync 0;
    setp.ge.u32 %p2, %r0, 32;
    @%p2 bra.uni SPIN;
    mbarrier.arrive.shared.b64 %rd4, [bar];
WAIT:
    mbarrier.try_wait.shared.b64 %p4, [bar], %rd4;
    @!%p4 bra WAIT;
    bra.uni DONE;
SPIN:
    bra.uni SPIN;
DONE:
    """
    r = run(kernel(body), "k", (1,), (64,), [Out(1, np.uint64)], expect_fault=True)
    assert r.fault.hang.value == "kernel timeout"
    assert any("32 thread(s)" in line and "waiting in mbarrier.try_wait" in line for line in r.fault.details["warps"])
