import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.debug import registers as R
from gpudbg.debug.backend import RegisterValue


def _regs(a64: int, b32: int, p: bool, f: float):
    return [RegisterValue("%p1", "bool", np.bool_(p)), RegisterValue("%rd1", "uint64", np.uint64(a64)),
            RegisterValue("%r1", "uint32", np.uint32(b32)), RegisterValue("%f1", "float32", np.float32(f))]


def test_numbering_follows_declaration_order_and_width():
    assert R.register_map(_regs(0, 0, False, 0.0)) == [
        ("%p1", "bool", "P", 0, 1), ("%rd1", "uint64", "R", 0, 2),
        ("%r1", "uint32", "R", 2, 1), ("%f1", "float32", "R", 3, 1)]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1), st.booleans(),
       st.floats(width=32, allow_nan=False), st.integers(0, 3), st.integers(0, 2**32 - 1))
def test_write_then_read_an_r_register(a64, b32, p, f, regno, word):
    regs = _regs(a64, b32, p, f)
    assert R.read_r(regs, 0) == a64 & 0xFFFFFFFF and R.read_r(regs, 1) == a64 >> 32
    assert R.read_r(regs, 2) == b32
    assert R.read_r(regs, 3) == int(np.float32(f).view(np.uint32))
    assert R.read_p(regs, 0) == int(p)
    name, value = R.write_r(regs, regno, word)
    new = [RegisterValue(r.name, r.dtype, value if r.name == name else r.value) for r in regs]
    assert R.read_r(new, regno) == word
    assert all(R.read_r(new, k) == R.read_r(regs, k) for k in range(4) if k != regno)
    assert np.asarray(value).dtype == np.asarray(next(r.value for r in regs if r.name == name)).dtype


def test_numbers_no_register_holds():
    regs = _regs(1, 2, True, 1.0)
    assert R.read_r(regs, 200) == 0 and R.write_r(regs, 200, 5) is None and R.read_p(regs, 3) == 0
