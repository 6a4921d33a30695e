"""Warp-level primitives on NVRTC-compiled kernels: shuffles (also with
width < 32), votes, activemask, match and redux under full and partial
masks, and the %lanemask special registers."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import DEBUG, OPTIMIZED, Out, kernel_ptx, run

BUILDS = pytest.mark.parametrize("opts", [OPTIMIZED, DEBUG], ids=["O", "G"])
N = 64


def ptx(opts):
    return kernel_ptx("warp", opts)


def _src(fn):
    """Per-thread source lane of a shuffle, per the CUDA definition."""
    return np.array([t // 32 * 32 + fn(t % 32) for t in range(N)])


def _up(d, w):
    return lambda lane: lane - d if lane % w >= d else lane


def _down(d, w):
    return lambda lane: lane + d if lane % w + d < w else lane


def _xor(m, w):
    return lambda lane: lane ^ m if (lane ^ m) // w == lane // w else lane


@BUILDS
def test_shuffles_all_modes_and_widths(opts):
    x = np.random.RandomState(0).randint(-1000, 1000, N).astype(np.int32)
    r = run(ptx(opts), "shuffles", (1,), (N,), [x, Out(8 * N, np.int32)])
    got = r[1].reshape(N, 8)
    lanes = [lambda l: (l * 7) & 31, _up(3, 32), _down(5, 32), _xor(6, 32),
             lambda l: l // 8 * 8 + 3, _up(2, 16), _down(3, 8), _xor(1, 4)]
    for col, fn in enumerate(lanes):
        assert np.array_equal(got[:, col], x[_src(fn)]), col


@BUILDS
def test_shuffle_under_partial_masks(opts):
    x = np.random.RandomState(1).randint(-1000, 1000, N).astype(np.int32)
    r = run(ptx(opts), "shfl_partial", (1,), (N,), [x, Out(N, np.int32)])
    exp = [x[t + 1] if t % 32 < 15 else x[t] if t % 32 == 15 else x[t ^ 2] for t in range(N)]
    assert r[1].tolist() == exp


@BUILDS
def test_votes_activemask_and_match(opts):
    rs = np.random.RandomState(2)
    p = (rs.rand(N) < 0.5).astype(np.int32)
    p[32:] = 1  # second warp: every lane votes yes
    r = run(ptx(opts), "votes", (1,), (N,), [p, Out(10 * N, np.uint32)])
    got = r[1].reshape(N, 10)
    ballots = [sum(int(p[w * 32 + l]) << l for l in range(32)) for w in range(2)]
    for t in range(N):
        w, lane = divmod(t, 32)
        b = ballots[w]
        exp = [b, int(b == 0xFFFFFFFF), int(b != 0), 0xFFFFFFFF]
        mask = 0xFFFF if lane < 16 else (0xAAAA0000 if lane & 1 else None)
        exp += [b & mask, int(b & mask == mask), int(b & mask != 0), mask] if mask else [0xDEAD] * 4
        key = [p[w * 32 + l] * 3 + (l & 3) for l in range(32)]
        exp.append(sum(1 << l for l in range(32) if key[l] == key[lane]))
        exp.append(0 if w == 0 else 0xFFFFFFFF)  # match_all: only warp 1 agrees (pred bit ORed in)
        assert got[t].tolist() == exp, t


@BUILDS
def test_redux_full_and_partial(opts):
    v = np.random.RandomState(3).randint(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    r = run(ptx(opts), "reductions", (1,), (N,), [v, Out(5 * N, np.uint32)])
    got = r[1].reshape(N, 5)
    for t in range(N):
        w = v[t // 32 * 32:t // 32 * 32 + 32]
        part = int(w[8:].astype(np.uint64).sum() & 0xFFFFFFFF) if t % 32 >= 8 else 0
        exp = [int(w.astype(np.uint64).sum() & 0xFFFFFFFF), w.min(), w.max(), np.bitwise_xor.reduce(w), part]
        assert got[t].tolist() == exp, t


@BUILDS
def test_shuffle_down_warp_reduction(opts):
    f = np.random.RandomState(4).rand(128).astype(np.float32)
    r = run(ptx(opts), "warp_sum", (2,), (64,), [f, Out(4)])
    s = f.reshape(4, 32).copy()
    off = 16
    while off:  # the butterfly order in float32; lanes past the end add their own value
        s = s + np.concatenate([s[:, off:], s[:, 32 - off:]], axis=1)
        off //= 2
    assert np.array_equal(r[1], s[:, 0])


def test_lanemask_registers_with_partial_last_warp():
    r = run(ptx(OPTIMIZED), "lanemasks", (1,), (40,), [Out(200, np.uint32)])
    got = r[0].reshape(40, 5)
    m = 0xFFFFFFFF
    for t in range(40):
        lane = t % 32
        assert got[t].tolist() == [1 << lane, (1 << lane) - 1, ((2 << lane) - 1) & m,
                                   ~((2 << lane) - 1) & m, ~((1 << lane) - 1) & m], t


@BUILDS
def test_shuffle_among_survivors_after_early_exit(opts):
    n = 50
    x = np.arange(100, dtype=np.int32) * 5 + 1
    r = run(ptx(opts), "tail_warp", (1,), (64,), [x, Out(128, np.int32, 7), n])
    got = r[1].reshape(64, 2)
    for i in range(64):
        if i >= n:
            assert got[i].tolist() == [7, 7]
            continue
        exp_up = x[i - 1] if i % 32 else -x[i]
        assert got[i].tolist() == [exp_up, 32 if i < 32 else n - 32], i
