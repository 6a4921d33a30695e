"""CUDA C++ through NVRTC with CUDA's own headers (kernels/async_copy.cu):
a double-buffered cuda::pipeline, a cuda::barrier producer/consumer,
cuda::memcpy_async on a barrier (cp.async + cp.async.mbarrier.arrive on
sm_80, the bulk copy + elect.sync + try_wait on sm_90), the forgotten-wait
bug, and cooperative_groups' 64-thread tiles in reserved shared memory;
each against numpy, for sm_80, sm_90 and (where noted) the -G build."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from kernels import ARCH, ASYNC_90, ASYNC_O, Out, kernel_ptx, run

DEBUG17 = (ARCH, "-std=c++17", "-G")
BUILDS = pytest.mark.parametrize("opts", [ASYNC_O, ASYNC_90, DEBUG17], ids=["sm80", "sm90", "G"])


def ptx(opts) -> str:
    if opts is DEBUG17:
        pytest.importorskip("cuda.bindings.nvrtc", reason="the -G build is compiled by NVRTC")
    return kernel_ptx("async_copy", opts)


@BUILDS
def test_pipeline_double_buffer(opts):
    tiles, blocks = 4, 2
    x = np.random.RandomState(0).standard_normal(64 * tiles * blocks).astype(np.float32)
    r = run(ptx(opts), "pipeline_double_buffer", (blocks,), (64,), [x, Out(x.size, np.float32), tiles])
    exp = (x.reshape(-1, 64)[:, ::-1] * np.float32(2) + np.float32(1)).ravel()
    assert np.array_equal(r[1], exp)


@BUILDS
def test_barrier_producer_consumer(opts):
    tiles = 6
    x = np.random.RandomState(1).randint(-10**6, 10**6, 96 * tiles).astype(np.int32)
    r = run(ptx(opts), "barrier_producer_consumer", (1,), (128,), [x, Out(x.size, np.int32), tiles])
    assert np.array_equal(r[1], ((x.reshape(tiles, 96)[:, ::-1] + 1) * 3).ravel())


@BUILDS
def test_memcpy_async_on_a_barrier(opts):
    x = np.random.RandomState(2).randint(0, 2**31, 2 * 128 * 4).astype(np.int32)
    r = run(ptx(opts), "memcpy_async_barrier", (2,), (128,), [x, Out(x.size, np.int32)])
    assert np.array_equal(r[1].reshape(2, 128, 4), x.reshape(2, 128, 4)[:, ::-1, ::-1])


def test_sm90_build_uses_the_bulk_copy_and_try_wait():
    text = ptx(ASYNC_90)
    for form in ("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes", "mbarrier.try_wait",
                 "elect.sync", "mbarrier.expect_tx"):
        assert form in text, form


@BUILDS
def test_forgotten_wait_reads_stale_data(opts):
    x = np.arange(128, dtype=np.int32) + 100
    bug = run(ptx(opts), "forgotten_wait", (1,), (128,), [x, Out(128, np.int32), 0])
    assert (bug[1] == -1).all()                  # the copies had not landed: old contents
    fixed = run(ptx(opts), "forgotten_wait", (1,), (128,), [x, Out(128, np.int32), 1])
    assert np.array_equal(fixed[1], np.roll(x, -1))


@pytest.mark.parametrize("opts", [ASYNC_O, ASYNC_90], ids=["sm80", "sm90"])
def test_tiles_in_reserved_shared_memory_and_smem_specials(opts):
    x = np.random.RandomState(3).randint(-1000, 1000, 256).astype(np.int32)
    r = run(ptx(opts), "tiles_and_specials", (1,), (256,), [x, Out(256, np.int32), Out(4, np.uint32)],
            shared=1024)
    assert np.array_equal(r[1], np.repeat(x.reshape(4, 64).sum(axis=1), 64))
    fn = r.module.functions["tiles_and_specials"]
    assert r[2][:3].tolist() == [32, 1024, fn.static_shared + 1024]
    assert r[2][3] == 0     # dyn[0] holds thread 0's value, stat[31] thread 31's


def test_debug_build_of_every_kernel_loads():
    if shutil.which("nvcc") is None:
        pytest.importorskip("cuda.bindings.nvrtc")
    from gpudbg.ptx import parse
    from gpudbg.sim.gpu import SimGPU
    from gpudbg.sim.loader import load_module
    lm = load_module(SimGPU(), parse(ptx(DEBUG17), "async_copy.G.ptx"))
    assert {"pipeline_double_buffer", "barrier_producer_consumer", "memcpy_async_barrier",
            "forgotten_wait", "tiles_and_specials"} <= set(lm.functions)
