"""Device function calls on real kernels: a __noinline__ function with
several arguments and a struct return, recursion through the callee-saved
area, indirect calls through a table of function pointers, device printf
(formats and ordering) and device malloc/free."""
from __future__ import annotations

import math

import numpy as np
import pytest

from kernels import DEBUG, OPTIMIZED, Out, kernel_ptx, run

BUILDS = pytest.mark.parametrize("opts", [OPTIMIZED, DEBUG], ids=["O", "G"])


def ptx(opts):
    return kernel_ptx("calls", opts)


@BUILDS
def test_noinline_call_with_struct_return(opts):
    n = 40
    x = np.random.RandomState(0).randint(-1000, 1000, n).astype(np.int32)
    r = run(ptx(opts), "struct_call", (1,), (n,), [x, Out(5 * n, np.int32)])
    got = r[1].reshape(n, 5)
    for t in range(1, n):  # out[0] doubles as the 64-bit scratch word of the kernel
        a, b = int(x[t]), t - 3
        prod = (a * b * 1000000007) & (2**64 - 1)
        ratio = np.float32(np.float32(1.5 * t) / np.float32(b if b else 1))
        exp = [a + b + (t & 7), a - b, np.uint32(prod & 0xFFFFFFFF).view(np.int32),
               np.uint32(prod >> 32).view(np.int32), ratio.view(np.int32)]
        assert got[t].tolist() == exp, t


def _fib(n):
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


@BUILDS
def test_recursive_factorial_and_fibonacci(opts):
    r = run(ptx(opts), "recursion", (1,), (48,), [Out(48, np.uint64), Out(48, np.int32)])
    assert r[0].tolist() == [math.factorial(t % 21) for t in range(48)]
    assert r[1].tolist() == [_fib(t % 12) for t in range(48)]


@BUILDS
def test_indirect_calls_through_function_pointer_table(opts):
    sel = np.random.RandomState(1).randint(0, 9, 64).astype(np.int32)
    r = run(ptx(opts), "fnptr", (1,), (64,), [sel, Out(64, np.int32)])
    assert r[1].tolist() == [[t + 7, t * 7, t - 7][sel[t] % 3] for t in range(64)]


@BUILDS
def test_printf_formats_in_thread_and_block_order(opts):
    r = run(ptx(opts), "printer", (2,), (40,), [35])
    exp = ["b%d t%d u=%u x=%x f=%.3f s=%s c=%c ll=%d\n"
           % (b, t, 4000000000, 255 + t, 0.5 * t, "odd" if t & 1 else "even", chr(97 + t), -(1 << 40) - t)
           for b in range(2) for t in range(35)]
    assert r.printf == exp


def test_printf_pointer_width_and_flags():
    r = run(ptx(OPTIMIZED), "print_ptr", (1,), (3,), [np.zeros(4, np.int32)])
    assert r.printf == ["0x%x|%5d|%-4d|%05.1f|%%\n" % (r.bases[0], t, 7, 2.25) for t in range(3)]


@BUILDS
def test_malloc_free_per_thread(opts):
    r = run(ptx(opts), "heap", (2,), (40,), [Out(80, np.int32)])
    assert r[0].tolist() == [(t % 40) * 1600 + 120 for t in range(80)]


@BUILDS
def test_malloc_shared_by_a_block(opts):
    r = run(ptx(opts), "heap_shared", (2,), (40,), [Out(40, np.int32)])
    assert r[0].tolist() == [2 * (39 - t) for t in range(40)]
