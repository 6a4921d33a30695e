"""Executor tests on real NVRTC-compiled kernels: divergence and
reconvergence, loops, early return, barriers in loops, odd block shapes,
2D/3D coordinates, dynamic shared and constant memory, and -G builds."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import DEBUG, OPTIMIZED, Out, kernel_ptx, run

BUILDS = pytest.mark.parametrize("opts", [OPTIMIZED, DEBUG], ids=["O", "G"])


def ptx(opts):
    return kernel_ptx("control", opts)


@BUILDS
def test_divergent_if_else_and_nested(opts):
    r = run(ptx(opts), "diverge", (1,), (64,), [Out(64, np.int32)])
    t = np.arange(64)
    v = np.where(t & 1, t * 3, -t)
    v = v + np.where(t % 3 == 0, np.where(t % 2 == 0, 1000, 2000), np.where(t % 3 == 1, 3000, 0))
    assert np.array_equal(r[0], v)


def _loops_model(lim):
    out = []
    for t, stop in enumerate(lim):
        acc = 0
        for i in range(100):
            if i == stop:
                break
            if (i + t) % 3 == 0:
                continue
            acc += i
        j = 0
        while True:
            j += 1
            if j * j > t:
                break
        out.append(acc * 100 + j)
    return out


@BUILDS
def test_loops_with_break_and_continue(opts):
    lim = np.random.RandomState(0).randint(0, 120, 64).astype(np.int32)
    r = run(ptx(opts), "loops", (1,), (64,), [lim, Out(64, np.int32)])
    assert r[1].tolist() == _loops_model(lim)


@BUILDS
def test_early_return_leaves_other_elements_alone(opts):
    r = run(ptx(opts), "early_return", (3,), (64,), [Out(200, np.int32, 7), 150])
    i = np.arange(200)
    assert np.array_equal(r[0], np.where(i >= 150, 7, np.where(i % 5 == 0, -1, i * 2)))


@BUILDS
def test_shared_tree_reduction_with_barriers_in_a_loop(opts):
    x = np.random.RandomState(1).rand(4 * 256).astype(np.float32)
    r = run(ptx(opts), "reduce_tree", (4,), (256,), [x, Out(4)])
    # the tree order, replayed in float32
    s = x.reshape(4, 256).copy()
    k = 128
    while k:
        s[:, :k] += s[:, k:2 * k]
        k //= 2
    assert np.array_equal(r[1], s[:, 0])


@pytest.mark.parametrize("grid,block", [((2, 3, 2), (4, 3, 5)), ((3, 1, 1), (100, 1, 1)), ((1, 2, 1), (7, 9, 1))])
def test_thread_and_block_coordinates(grid, block):
    nb, nt = int(np.prod(grid)), int(np.prod(block))
    r = run(ptx(OPTIMIZED), "coords", grid, block, [Out(10 * nb * nt, np.uint32)])
    got = r[0].reshape(nb, nt, 10)
    bz, by, bx = np.meshgrid(*(np.arange(g) for g in grid[::-1]), indexing="ij")
    tz, ty, tx = np.meshgrid(*(np.arange(b) for b in block[::-1]), indexing="ij")
    for col, (vals, per_block) in enumerate([(tx, False), (ty, False), (tz, False),
                                             (bx, True), (by, True), (bz, True)]):
        v = vals.reshape(-1)
        exp = np.repeat(v, nt).reshape(nb, nt) if per_block else np.tile(v, (nb, 1))
        assert np.array_equal(got[:, :, col], exp), col
    assert (got[:, :, 6] == block[0] * 10000 + block[1] * 100 + block[2]).all()
    assert (got[:, :, 7] == grid[0] * 10000 + grid[1] * 100 + grid[2]).all()
    assert np.array_equal(got[:, :, 9], np.tile(np.arange(nt), (nb, 1)))
    assert np.array_equal(got[:, :, 8], got[:, :, 9] % 32)  # lanes count from each warp's start


@BUILDS
def test_block_of_100_threads_reduces_with_partial_warp(opts):
    x = np.arange(300, dtype=np.int32) * 7 - 1000
    r = run(ptx(opts), "odd_block_sum", (3,), (100,), [x, Out(3, np.int32)])
    assert np.array_equal(r[1], x.reshape(3, 100).sum(1))


@BUILDS
def test_dynamic_shared_memory(opts):
    x = np.arange(192, dtype=np.int32) * 3
    r = run(ptx(opts), "dyn_shared", (2,), (96,), [x, Out(192, np.int32)], shared=96 * 4)
    assert np.array_equal(r[1], x.reshape(2, 96)[:, ::-1].reshape(-1))


def test_dynamic_shared_too_small_faults():
    x = np.arange(64, dtype=np.int32)
    r = run(ptx(OPTIMIZED), "dyn_shared", (1,), (64,), [x, Out(64, np.int32)], shared=32 * 4,
            expect_fault=True)
    assert r.fault.space == "shared" and r.fault.thread == (32, 0, 0)
    assert "128-byte shared memory" in r.fault.message


@BUILDS
def test_constant_memory_with_initializers(opts):
    r = run(ptx(opts), "const_mem", (1,), (16,), [Out(16)])
    assert np.array_equal(r[0], np.array([3, 1, 4, 1, 5, 9, 2, 6] * 2, np.float32) * np.float32(2.5))


@BUILDS
def test_saxpy(opts):
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    r = run(ptx(opts), "saxpy", (4,), (256,), [n, 2.0, x, y])
    assert np.array_equal(r[3], np.float32(2) * x + y)


@BUILDS
def test_tiled_matmul_2d_blocks(opts):
    n = 16
    rs = np.random.RandomState(2)
    a = rs.rand(n, n).astype(np.float32)
    b = rs.rand(n, n).astype(np.float32)
    r = run(ptx(opts), "matmul", (2, 2), (8, 8), [a, b, Out(n * n), n])
    assert np.allclose(r[2].reshape(n, n), a @ b, rtol=1e-5)


@BUILDS
@pytest.mark.parametrize("pattern", ["sparse", "all", "none"])
def test_syncthreads_count_and_or(opts, pattern):
    t = np.arange(64)
    p = {"sparse": t % 7 == 0, "all": t >= 0, "none": t < 0}[pattern].astype(np.int32)
    r = run(ptx(opts), "sync_count", (1,), (64,), [p, Out(64, np.int32)])
    expect = p.sum() * 100 + int(p.all()) * 10 + int(p.any())
    assert (r[1] == expect).all()


def test_multiple_waves_keep_results_separate():
    """More blocks than fit at once: later waves reuse the slots."""
    from gpudbg.sim.device_model import DeviceModel
    from gpudbg.sim.gpu import SimGPU
    gpu = SimGPU(DeviceModel(sm_count=2))
    x = np.random.RandomState(3).rand(64 * 256).astype(np.float32)
    r = run(ptx(OPTIMIZED), "reduce_tree", (64,), (256,), [x, Out(64)], gpu=gpu)
    assert r.stats.waves > 1
    assert np.allclose(r[1], x.reshape(64, 256).sum(1), rtol=1e-5)
