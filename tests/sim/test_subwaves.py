"""GPUDBG_THREADS=N runs a wave's blocks as sub-waves on N host threads
(sim/subwaves.py): the same results as one thread for race-free kernels
(shared memory and barriers per part, atomics atomic across parts), a
block spinning on another part's flag does not starve it, and a fault in
a later part is the launch's fault."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import OPTIMIZED, Out, kernel_ptx, run

from gpudbg.sim import subwaves
from gpudbg.sim.native import engine, parallel

HEAD = ".version 7.0\n.target sm_70\n.address_size 64\n"


@pytest.fixture
def parts(monkeypatch):
    """Sub-waves for small test grids, counting the waves that used them."""
    monkeypatch.setenv(parallel.ENV_THREADS, "2")
    monkeypatch.setenv(engine.ENV_ENGINE, "native")
    monkeypatch.setattr(subwaves, "MIN_THREADS_PER_PART", 64)
    used = []
    real = subwaves.run

    def counted(X, *a, **k):
        used.append(len(X.wave_blocks))
        return real(X, *a, **k)
    monkeypatch.setattr(subwaves, "run", counted)
    return used


def _one_thread(monkeypatch, ptx, kernel, grid, block, args, **kw):
    monkeypatch.setenv(parallel.ENV_THREADS, "1")
    try:
        return run(ptx, kernel, grid, block, args, **kw)
    finally:
        monkeypatch.setenv(parallel.ENV_THREADS, "2")


def test_a_barrier_tree_reduction_matches_one_thread(parts, monkeypatch):
    ptx = kernel_ptx("control", OPTIMIZED)
    x = np.random.default_rng(5).random(64 * 256, dtype=np.float32)
    got = run(ptx, "reduce_tree", (64,), (256,), [x, Out(64)])
    assert parts, "the wave did not run as sub-waves"
    ref = _one_thread(monkeypatch, ptx, "reduce_tree", (64,), (256,), [x, Out(64)])
    assert np.array_equal(got[1], ref[1])
    assert got.stats.thread_instructions == ref.stats.thread_instructions


ATOMIC_BINS = HEAD + """
.visible .entry bins(.param .u64 out)
{
    .reg .b32 %r<6>; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 3;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    atom.global.add.u32 %r3, [%rd3], 1;
    ret;
}
"""


def test_atomics_stay_atomic_across_parts(parts):
    got = run(ATOMIC_BINS, "bins", (64,), (256,), [Out(4, np.uint32)])
    assert parts
    assert got[0].tolist() == [64 * 64] * 4


# block 0 waits for a flag that only the grid's last block sets
SPIN = HEAD + """
.visible .entry spin(.param .u64 flag)
{
    .reg .pred %p<4>; .reg .b32 %r<6>; .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [flag];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %nctaid.x;
    sub.u32 %r2, %r2, 1;
    setp.ne.u32 %p2, %r1, 0;
    @%p2 bra SET;
WAIT:
    ld.volatile.global.u32 %r3, [%rd1];
    setp.eq.u32 %p3, %r3, 0;
    @%p3 bra WAIT;
    ret;
SET:
    setp.ne.u32 %p1, %r1, %r2;
    @%p1 bra DONE;
    st.volatile.global.u32 [%rd1], 1;
DONE:
    ret;
}
"""


def test_a_block_spinning_on_another_parts_flag_finishes(parts, monkeypatch):
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "120")     # a starved part would be a hang report, not a hung test
    got = run(SPIN, "spin", (16,), (64,), [Out(1, np.uint32)])
    assert parts
    assert got[0].tolist() == [1]


OOB = HEAD + """
.visible .entry oob(.param .u64 src, .param .u64 dst, .param .u32 n)
{
    .reg .b32 %r<6>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.u32 %r4, %r1, %r2, %r3;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r5, [%rd4];
    add.s64 %rd5, %rd2, %rd3;
    st.global.u32 [%rd5], %r5;
    ret;
}
"""


def test_a_fault_in_a_later_part_is_the_launchs_fault(parts, monkeypatch):
    n = 16 * 64
    src = np.arange(n - 10, dtype=np.uint32)        # the last block's last lanes read past src
    got = run(OOB, "oob", (16,), (64,), [src, Out(n, np.uint32), n], expect_fault=True)
    assert parts
    ref = _one_thread(monkeypatch, OOB, "oob", (16,), (64,), [src, Out(n, np.uint32), n], expect_fault=True)
    assert str(got.fault) == str(ref.fault)
