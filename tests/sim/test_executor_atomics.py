"""Colliding atomics on real kernels, checked against a numpy model:
integer atomics on global and shared memory, float atomicAdd, CAS loops,
and atomics whose result is unused taking the reduction path."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import DEBUG, OPTIMIZED, Out, kernel_ptx, run

BUILDS = pytest.mark.parametrize("opts", [OPTIMIZED, DEBUG], ids=["O", "G"])


def ptx(opts):
    return kernel_ptx("atomics", opts)


def _inc(x, bound, times):
    for _ in range(times):
        x = 0 if x >= bound else x + 1
    return x


def _dec(x, bound, times):
    for _ in range(times):
        x = bound if (x == 0 or x > bound) else x - 1
    return x


@BUILDS
def test_global_integer_atomics_on_few_addresses(opts):
    n = 256
    v = np.random.RandomState(0).randint(-10**6, 10**6, n).astype(np.int32)
    cell = np.zeros(32, np.int32)
    cell[4:8], cell[8:12], cell[12:16], cell[25] = 2**31 - 1, -2**31, -1, n
    ucell = np.zeros(12, np.uint32)
    ucell[4:8] = 3
    r = run(ptx(opts), "global_atomics", (2,), (128,), [v, cell, ucell, Out(3 * n, np.int32)])
    c, u, olds = r[1], r[2], r[3]
    k = np.arange(n) & 3
    for j in range(4):
        s = v[k == j]
        assert c[j] == np.int32(s.astype(np.int64).sum() & 0xFFFFFFFF)
        assert c[4 + j] == s.min() and c[8 + j] == s.max()
        assert c[12 + j] == np.bitwise_and.reduce(s | 0x0FF0)
        assert c[16 + j] == np.uint32(np.bitwise_or.reduce(1 << (np.arange(n)[k == j] & 31))).view(np.int32)
        assert c[20 + j] == np.bitwise_xor.reduce(s)
        assert u[j] == _inc(0, 9, int((k == j).sum()))
        assert u[4 + j] == _dec(3, 5, int((k == j).sum()))
    assert u[8] == n
    assert sorted(olds[:n]) == list(range(n))  # every fetch-and-add saw a distinct value
    # exchange: the old values plus the final one are a permutation of 0 and every i
    assert sorted(olds[n:2 * n].tolist() + [int(c[24])]) == [0] + list(range(n))
    # the descending CAS chain completed: thread i saw i + 1
    assert c[25] == 0 and np.array_equal(olds[2 * n:], np.arange(n) + 1)


@BUILDS
def test_shared_atomics(opts):
    v = np.random.RandomState(1).randint(-1000, 1000, 192).astype(np.int32)
    r = run(ptx(opts), "shared_atomics", (2,), (96,), [v, Out(32, np.int32)])
    got = r[1].reshape(2, 16)
    t = np.arange(96)
    for b in range(2):
        s = v[b * 96:(b + 1) * 96]
        exp = [int(s[(t & 3) == j].sum()) for j in range(4)]
        exp += [s.min(), np.bitwise_xor.reduce(s) ^ 0x7FFFFFFF, max(s.max(), -0x7FFFFFFF),
                np.bitwise_or.reduce(s & 0xFF) | -0x7FFFFFFF]
        exp += [_inc(0, 7, 48), _inc(0, 7, 48), 96, 0, 1234, 0, 0, 0]
        assert got[b].tolist() == exp, b


@BUILDS
def test_float_atomic_add(opts):
    f = np.random.RandomState(2).rand(128).astype(np.float32)
    r = run(ptx(opts), "float_add", (2,), (64,), [f, Out(2)])
    # serialized in thread order (one legal order), in float32
    exp = np.zeros(2, np.float32)
    for i, x in enumerate(f):
        exp[i & 1] += x
    assert np.array_equal(r[1], exp)


@BUILDS
def test_cas_loops_float_multiply_and_64bit_counter(opts):
    r = run(ptx(opts), "cas_loop", (2,), (48,), [np.array([1.0], np.float32), np.zeros(2, np.int32)])
    assert r[0][0] == np.float32(2.0 ** 96)
    assert r[1].view(np.uint64)[0] == 3 * 96


@BUILDS
def test_unused_atomic_result_takes_reduction_path(opts):
    from gpudbg.sim.gpu import SimGPU
    gpu = SimGPU()
    calls = {"atomic": 0, "reduce": 0}
    atomic, reduce = gpu.memory.atomic, gpu.memory.reduce

    def counting(name, fn):
        def wrapper(*a, **k):
            calls[name] += 1
            return fn(*a, **k)
        return wrapper
    gpu.memory.atomic = counting("atomic", atomic)
    gpu.memory.reduce = counting("reduce", reduce)
    r = run(ptx(opts), "atomic_unused", (1,), (100,), [np.zeros(3, np.int32), np.array([0, 5], np.uint64)],
            gpu=gpu)
    assert r[0].tolist() == [34, 33, 33]
    assert r[1][0] == 100 << 33 and r[1].view(np.int64)[1] == 5
    if opts == OPTIMIZED:  # -O: three atom.global whose results nobody reads
        assert calls == {"atomic": 0, "reduce": 3}
