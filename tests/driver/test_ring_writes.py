"""driver/ring.py: words written (through the array fast path away from
the end, numpy across the wrap) read back in order, whatever the sizes."""
import types

import numpy as np
from hypothesis import given, settings, strategies as st

from gpudbg.driver.ring import Ring, RingFullError


def _ring(words: int) -> Ring:
    data = np.zeros(4 * words, np.uint8)
    return Ring(types.SimpleNamespace(size=4 * words, base=0x1000, data=data), "t")


@settings(max_examples=200, deadline=None)
@given(st.integers(4, 40), st.lists(st.lists(st.integers(0, 2**32 - 1), max_size=12), max_size=30))
def test_words_come_back_in_order(size, pushes):
    ring = _ring(size)
    for words in pushes:
        if len(words) > ring.free():
            try:
                ring.write(words)
            except RingFullError:
                pass
            else:
                raise AssertionError("a write larger than the free room was taken")
            ring.get = ring.put          # the GPU consumed everything
            continue
        start = ring.put
        ring.write(words)
        assert ring.put == (start + len(words)) % ring.size
        assert [ring.word_at(start + i) for i in range(len(words))] == words


def test_a_word_out_of_range_is_refused_before_the_ring_moves():
    ring = _ring(16)
    for bad in ([1 << 32], [-1]):
        try:
            ring.write(bad)
        except OverflowError:
            pass
        else:
            raise AssertionError("a word outside 32 bits was written")
        assert ring.put == 0
