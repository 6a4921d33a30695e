"""GPUDBG_THREADS=2: native calls split across host threads at block
boundaries give the interpreter's results (race-free kernels), a failed
check in any part leaves memory untouched for the interpreter's report,
and bad values are refused naming the variable."""
from __future__ import annotations

import os

import numpy as np
import pytest

from engines_pair import Out, assert_same, engine_choice, run
from test_native_segments import LOOP, SAXPY

from gpudbg.sim.native import parallel


@pytest.fixture
def two_threads(monkeypatch):
    monkeypatch.setenv(parallel.ENV_THREADS, "2")
    monkeypatch.setattr(parallel, "PARALLEL_MIN", 64)


def _both(ptx, kernel, grid, block, args, **kw):
    with engine_choice("interp"):
        ref = run(ptx, kernel, grid, block, args, **kw)
    with engine_choice("native"):
        got = run(ptx, kernel, grid, block, args, **kw)
    assert_same(ref, got)
    return ref, got


def test_two_host_threads_give_the_interpreters_buffers(two_threads):
    n = 20000
    x = np.linspace(-1, 1, n, dtype=np.float32)
    y = np.sin(np.arange(n, dtype=np.float32))
    _, got = _both(SAXPY, "saxpy", (n // 128 + 1,), (128,), [n, 0.5, x, y])
    assert got.module.program.native_segments > 0


def test_a_region_split_across_threads_counts_the_same_work(two_threads):
    src = np.arange(3000, dtype=np.uint32)
    ref, got = _both(LOOP, "sums", (16,), (128,), [src, Out(2048, np.uint32), 12])
    assert got.stats.thread_instructions == ref.stats.thread_instructions


def test_a_fault_in_the_second_part_leaves_the_first_parts_stores_undone(two_threads):
    n = 4096
    x = np.ones(n - 100, dtype=np.float32)          # the last block's loads run past x
    _both(SAXPY, "saxpy", (n // 256,), (256,), [n, 2.0, x, Out(n)], expect_fault=True)


def test_the_selection_is_cut_at_block_boundaries():
    class L:
        slots_per_block = 96
        block_of = np.repeat(np.arange(10), 96)

    class X:
        n = 960
        layout = L
        all_slots = np.arange(960, dtype=np.int64)
    parts = parallel.split(X, None, 3)
    assert [len(p) for p in parts] == [288, 288, 384]
    idx = np.flatnonzero(np.arange(960) % 3 == 0).astype(np.int64)
    cut = parallel.split(X, idx, 2)
    assert sum(len(p) for p in cut) == len(idx)
    assert L.block_of[cut[0][-1]] != L.block_of[cut[1][0]]


@pytest.mark.parametrize("bad", ["0", "two", "-3", "100000"])
def test_bad_thread_counts_are_refused_naming_the_variable(bad, monkeypatch):
    monkeypatch.setenv(parallel.ENV_THREADS, bad)
    with pytest.raises(parallel.ThreadsError, match="GPUDBG_THREADS"):
        parallel.host_threads()


def test_one_thread_is_the_default(monkeypatch):
    monkeypatch.delenv(parallel.ENV_THREADS, raising=False)
    assert parallel.host_threads() == 1 and os.environ.get(parallel.ENV_THREADS) is None
