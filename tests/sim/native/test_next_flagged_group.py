"""second_pass.next_flagged_group, the skip over groups of eight threads
whose flag bytes are all zero: compiled alone and compared with a
Python statement of its contract over hypothesis-chosen flag rows."""
from __future__ import annotations

import ctypes
import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from llvmlite import ir as L

from gpudbg.sim.native import jit
from gpudbg.sim.native.second_pass import WIDE, next_flagged_group

I8, I64 = L.IntType(8), L.IntType(64)
_names = itertools.count()


def _compiled():
    """A callable (flags, pos, n) -> q of the helper, through an external wrapper."""
    module = L.Module(name="next_group_test")
    name = f"test_next_flagged_group_{next(_names)}"
    fn = L.Function(module, L.FunctionType(I64, [I8.as_pointer(), I64, I64]), name=name)
    b = L.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.call(next_flagged_group(module), list(fn.args)))
    address = jit.load_object(jit.compile_object(str(module)), [name])[name]
    return ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(address)


NEXT = _compiled()


def expected(flags: np.ndarray, pos: int, n: int) -> int:
    q = pos
    while q + 8 <= n:
        if flags[q:q + 8].any():
            return q
        q += 8
    return q


@st.composite
def rows(draw):
    n = draw(st.integers(0, 4 * WIDE + 20))
    flags = np.zeros(n, dtype=np.uint8)
    for k in draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=4)) if n else ():
        flags[k] = draw(st.integers(1, 255))
    pos = 8 * draw(st.integers(0, n // 8))
    return flags, pos, n


@settings(max_examples=300, deadline=None)
@given(rows())
def test_it_finds_the_first_group_with_a_flag_or_the_first_partial_group(row):
    flags, pos, n = row
    buf = np.concatenate([flags, np.zeros(1, np.uint8)])      # (a valid pointer when n is 0)
    assert NEXT(buf.ctypes.data, pos, n) == expected(flags, pos, n)


def test_a_flag_just_past_a_wide_run_and_in_the_tail():
    n = 3 * WIDE + 13
    flags = np.zeros(n, dtype=np.uint8)
    flags[2 * WIDE + 9] = 1          # after two empty wide runs, in the second group of the third
    assert NEXT(flags.ctypes.data, 0, n) == 2 * WIDE + 8
    flags[:] = 0
    flags[n - 1] = 1                 # only in the partial group at the end: returned as that group
    assert NEXT(flags.ctypes.data, 8, n) == n - n % 8
