"""cp.async and cp.async.bulk in hand-written PTX: sizes, zero fill,
commit/wait groups, the copies' real asynchrony (a read before the wait sees
the old bytes), deferred mbarrier arrivals, bulk copies completing tx bytes
or bulk groups, and precise faults at issue (sim/async_copy.py)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import Out, Ptr, run

HEAD = """.version 8.3
.target sm_90
.address_size 64
"""


def kernel(body: str) -> str:
    """k(.u64 in, .u64 out): %rd1 = in, %rd2 = out (global), %r0 = %tid.x,
    %r1 = the thread's 16-byte slot of shared `s` (filled with 0xEE..),
    %rd3/%rd4 = in/out + 16 * tid."""
    return HEAD + f""".visible .entry k(.param .u64 in, .param .u64 out)
{{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<32>;
    .shared .align 16 .b8 s[2048];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r0, %tid.x;
    shl.b32 %r2, %r0, 4;
    mov.u32 %r1, s;
    add.u32 %r1, %r1, %r2;
    mul.wide.u32 %rd5, %r0, 16;
    add.s64 %rd3, %rd1, %rd5;
    add.s64 %rd4, %rd2, %rd5;
    mov.u32 %r3, 0xEEEEEEEE;
    st.shared.v4.u32 [%r1], {{%r3, %r3, %r3, %r3}};
    bar.sync 0;
{body}
    ret;
}}
"""


def dump(offset: int = 0) -> str:
    """Store the thread's 16 shared bytes to out + 16*tid + offset."""
    return f"""
    ld.shared.v4.u32 {{%r4, %r5, %r6, %r7}}, [%r1];
    st.global.v4.u32 [%rd4+{offset}], {{%r4, %r5, %r6, %r7}};
    """


def source(n: int = 32) -> np.ndarray:
    return np.arange(n * 16, dtype=np.uint8)


def rows(a: np.ndarray, n: int, width: int = 16) -> np.ndarray:
    return a.view(np.uint8).reshape(n, -1)[:, :width]


@pytest.mark.parametrize("size", [4, 8, 16])
def test_sizes_land_at_the_wait_not_before(size):
    body = f"""
    cp.async.ca.shared.global [%r1], [%rd3], {size};
    cp.async.commit_group;
    {dump(0)}
    cp.async.wait_group 0;
    {dump(1024)}
    """
    src = source()
    r = run(kernel(body), "k", (1,), (32,), [src, Out(4096, np.uint8)])
    before, after = rows(r[1][:512], 32), rows(r[1][1024:1536], 32)
    assert (before == 0xEE).all()                           # read before the wait: old bytes
    exp = np.full((32, 16), 0xEE, np.uint8)
    exp[:, :size] = rows(src, 32)[:, :size]
    assert np.array_equal(after, exp)


def test_src_size_zero_fills_and_ignore_src():
    # thread t copies 16 bytes with src-size t % 17 (0..16); odd threads of
    # the second copy ignore the source entirely
    body = f"""
    rem.u32 %r8, %r0, 17;
    cp.async.cg.shared.global [%r1], [%rd3], 16, %r8;
    cp.async.wait_all;
    {dump(0)}
    and.b32 %r9, %r0, 1;
    setp.eq.u32 %p1, %r9, 1;
    cp.async.ca.shared.global [%r1], [%rd3], 16, %p1;
    cp.async.commit_group;
    cp.async.wait_group 0;
    {dump(1024)}
    """
    src = source() | 1     # no zero bytes in the source
    r = run(kernel(body), "k", (1,), (32,), [src, Out(4096, np.uint8)])
    got = rows(r[1][:512], 32)
    for t in range(32):
        k = t % 17
        assert got[t, :k].tolist() == rows(src, 32)[t, :k].tolist()
        assert (got[t, k:] == 0).all()
    second = rows(r[1][1024:1536], 32)
    assert (second[1::2] == 0).all() and np.array_equal(second[::2], rows(src, 32)[::2])


def test_wait_group_n_leaves_the_newest_groups_in_flight():
    # three groups to three shared slots; wait_group 1 lands the first two
    body = """
    mov.u32 %r10, s;
    add.u32 %r11, %r10, 1024;
    shl.b32 %r12, %r0, 2;
    add.u32 %r13, %r10, %r12;
    add.u32 %r14, %r13, 128;
    add.u32 %r15, %r13, 256;
    cp.async.ca.shared.global [%r13], [%rd3], 4;
    cp.async.commit_group;
    cp.async.ca.shared.global [%r14], [%rd3+4], 4;
    cp.async.commit_group;
    cp.async.ca.shared.global [%r15], [%rd3+8], 4;
    cp.async.commit_group;
    cp.async.wait_group 1;
    ld.shared.u32 %r4, [%r13];
    ld.shared.u32 %r5, [%r14];
    ld.shared.u32 %r6, [%r15];
    st.global.v4.u32 [%rd4], {%r4, %r5, %r6, %r6};
    """
    src = source()
    r = run(kernel(body), "k", (1,), (8,), [src, Out(512, np.uint8)])
    got = r[1][:128].view(np.uint32).reshape(8, 4)
    words = src.view(np.uint32).reshape(32, 4)
    assert got[:, 0].tolist() == words[:8, 0].tolist()
    assert got[:, 1].tolist() == words[:8, 1].tolist()
    # slots 256.. were filled with 0xEE by threads 16..; the third copy has not landed
    assert (got[:, 2] != words[:8, 2]).all()


def test_exit_lands_the_copies_of_a_thread_that_never_waits():
    # thread 0 copies into the slot of thread 1 and exits without a wait;
    # a second launch reads the shared memory the block left behind
    body = """
    setp.ne.u32 %p1, %r0, 0;
    @%p1 bra.uni END;
    add.u32 %r9, %r1, 16;
    cp.async.cg.shared.global [%r9], [%rd3], 16;
    cp.async.commit_group;
    ld.shared.u32 %r4, [%r9];
    st.global.u32 [%rd4], %r4;
END:
    """
    src = source()
    r = run(kernel(body), "k", (1,), (2,), [src, Out(64, np.uint8)])
    assert r[1][:4].tolist() == [0xEE] * 4
    X = r.gpu._launch_resources[1]
    assert bytes(X.smem.read(0, 16, 16)) == bytes(src[:16])


def test_cp_async_mbarrier_arrive_completes_the_phase_with_the_copies():
    # .noinc: the barrier counts the deferred arrivals themselves (32);
    # without it, each thread arrives twice (the deferred one is balanced)
    for noinc, count, extra in ((".noinc", 32, ""), ("", 32, "mbarrier.arrive.shared.b64 %rd9, [bar];")):
        body = f"""
        setp.eq.u32 %p1, %r0, 0;
        @%p1 mbarrier.init.shared.b64 [bar], {count};
        bar.sync 0;
        cp.async.cg.shared.global [%r1], [%rd3], 16;
        cp.async.mbarrier.arrive{noinc}.shared.b64 [bar];
        {extra}
        {dump(0)}
    WAIT:
        mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
        @!%p2 bra WAIT;
        {dump(1024)}
        """
        src = source()
        r = run(kernel(body), "k", (1,), (32,), [src, Out(2048, np.uint8)])
        assert (rows(r[1][:512], 32) == 0xEE).all(), noinc
        assert np.array_equal(rows(r[1][1024:1536], 32), rows(src, 32)), noinc


def test_bulk_copy_in_completes_tx_bytes_on_its_mbarrier():
    # one thread starts a 512-byte bulk copy; every thread waits on the phase
    body = f"""
    setp.eq.u32 %p1, %r0, 0;
    @%p1 mbarrier.init.shared.b64 [bar], 1;
    bar.sync 0;
    mov.u32 %r10, s;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rd9, [bar], 512;
    @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r10], [%rd1], 512, [bar];
    {dump(0)}
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    {dump(1024)}
    """
    src = source()
    r = run(kernel(body), "k", (1,), (32,), [src, Out(2048, np.uint8)])
    assert (rows(r[1][:512], 32) == 0xEE).all()
    assert np.array_equal(r[1][1024:1536], src)


def test_bulk_copy_out_lands_at_its_bulk_group_wait():
    body = f"""
    mov.u32 %r3, 0x11111111;
    st.shared.v4.u32 [%r1], {{%r3, %r3, %r3, %r3}};
    bar.sync 0;
    setp.eq.u32 %p1, %r0, 0;
    mov.u32 %r10, s;
    @%p1 fence.proxy.async.shared::cta;
    @%p1 cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r10], 512;
    @%p1 cp.async.bulk.commit_group;
    @%p1 cp.async.bulk.wait_group.read 0;
    @%p1 ld.global.u32 %r4, [%rd2];
    @%p1 st.global.u32 [%rd2+1024], %r4;
    @%p1 cp.async.bulk.wait_group 0;
    @%p1 ld.global.u32 %r4, [%rd2];
    @%p1 st.global.u32 [%rd2+1028], %r4;
    """
    r = run(kernel(body), "k", (1,), (32,), [source(), Out(2048, np.uint8)])
    assert r[1][1024:1028].tolist() == [0] * 4           # .read: sources read, nothing written yet
    assert r[1][1028:1032].tolist() == [0x11] * 4
    assert (r[1][:512] == 0x11).all()


def test_bad_source_faults_at_issue_naming_the_thread():
    body = """
    setp.eq.u32 %p1, %r0, 5;
    @%p1 mov.u64 %rd3, 0x10;
    cp.async.ca.shared.global [%r1], [%rd3], 16;
    cp.async.wait_all;
    """
    r = run(kernel(body), "k", (1,), (32,), [source(), Out(512, np.uint8)], expect_fault=True)
    f = r.fault
    assert f.thread == (5, 0, 0) and f.address == 0x10
    assert f.instruction.startswith("cp.async.ca.shared.global")


@pytest.mark.parametrize("body,needle", [
    ("mov.u32 %r9, 17;\n cp.async.ca.shared.global [%r1], [%rd3], 16, %r9;", "src-size 17 is larger than its cp-size 16"),
    ("add.u32 %r9, %r1, 4;\n cp.async.cg.shared.global [%r9], [%rd3], 16;", "misaligned"),
    ("mov.u32 %r9, s;\n cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r9], [%rd1], 24, [bar];",
     "size 24 is not a positive multiple of 16"),
])
def test_bad_copies_fault_precisely(body, needle):
    r = run(kernel(body), "k", (1,), (1,), [source(), Out(512, np.uint8)], expect_fault=True)
    assert needle in r.fault.message, r.fault.message


@pytest.mark.parametrize("line,needle", [
    ("cp.async.cg.shared.global [%r1], [%rd3], 8;", "cp.async.cg copies 16 bytes"),
    ("cp.async.ca.shared.global [%r1], [%rd3], 12;", "cp-size must be 4, 8 or 16"),
    ("cp.async.ca.global.shared [%rd3], [%r1], 16;", "copies .global to .shared"),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r0, %r0}], "
     "[bar];", "only the .tile mode"),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r0}], [bar];",
     "cp.async.bulk.tensor.2d takes [tensorMap, {2 coordinates}]"),
    ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1], 16, [bar];",
     "multicast::cluster is a form of"),
])
def test_unsupported_forms_fail_at_load_with_the_reason(line, needle):
    from gpudbg.ptx import parse
    from gpudbg.sim.gpu import SimGPU
    from gpudbg.sim.loader import load_module
    from gpudbg.sim.program import LoadError
    with pytest.raises(LoadError) as e:
        load_module(SimGPU(), parse(kernel(line).replace(".reg .b64 %rd<32>;", ".reg .b64 %rd<32>;\n .reg .b16 %rs<2>;"), "k.ptx"))
    assert needle in str(e.value)


def test_tensor_copy_from_bytes_that_are_not_a_tensor_map_faults():
    body = """
    setp.eq.u32 %p1, %r0, 3;
    @%p1 mbarrier.init.shared.b64 [bar], 1;
    mov.u32 %r10, s;
    @%p1 cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r10], [%rd1, {%r0}], [bar];
    """
    r = run(kernel(body), "k", (1,), (32,), [np.zeros(128, np.uint8), Out(512, np.uint8)], expect_fault=True)
    assert "not a tensor map made by cuTensorMapEncodeTiled" in r.fault.message
    assert r.fault.thread == (3, 0, 0)
