"""The watchpoint overlap rule of the debugged step loop (sim/debug_watch.py)
against the definition: an access touches a watch when they share a byte,
for any addresses (a faulting lane's wild ones near 2**64 included)."""
import numpy as np
from hypothesis import given, strategies as st

from gpudbg.sim.debug_watch import touching

U64 = st.integers(0, (1 << 64) - 1)
NEAR = st.one_of(U64, st.integers(0, 64), st.integers((1 << 64) - 64, (1 << 64) - 1),
                 st.integers(0x7000_0000_0000, 0x7000_0000_0040))


@given(st.lists(NEAR, min_size=1, max_size=12), st.sampled_from([1, 2, 4, 8, 16, 32, 128]), NEAR,
       st.integers(1, 64))
def test_touching_is_sharing_a_byte(addrs, size, start, length):
    end = min(start + length, 1 << 64)
    got = touching(np.array(addrs, dtype=np.uint64), size, start, end)
    want = [max(a, start) < min(a + size, end) for a in addrs]
    assert got.tolist() == want


def test_edges():
    a = np.array([96, 97, 100, 104, 92, 93], dtype=np.uint64)
    assert touching(a, 4, 100, 104).tolist() == [False, True, True, False, False, False]
    assert touching(a, 8, 100, 101).tolist() == [True, True, True, False, False, True]
