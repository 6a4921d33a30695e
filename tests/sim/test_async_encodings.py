"""Property tests of the encodings the async-copy machinery keeps in
memory: the mbarrier word (sim/mbarrier.py) and the tensor map
(sim/tensor_map.py), plus the box gathering against a numpy slice."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.sim import mbarrier, tensor_map

counts = st.integers(0, mbarrier.MAX_COUNT)


@given(st.integers(0, 1), counts, counts, st.integers(-mbarrier.TX_LIMIT, mbarrier.TX_LIMIT))
def test_mbarrier_word_round_trips(phase, pending, expected, tx):
    s = mbarrier.pack(phase, pending, expected, tx)
    assert 0 <= s < 1 << 64
    assert mbarrier.unpack(s) == (phase, pending, expected, tx, True)
    assert int(mbarrier.pending_count(np.array([s], dtype=np.uint64))[0]) == pending
    assert int(mbarrier.phase_of(np.array([s], dtype=np.uint64))[0]) == phase


class _FakeSmem:
    """A block's shared memory for mbarrier.Update (one 8-byte word per offset)."""

    def __init__(self):
        self.words: dict[tuple[int, int], int] = {}

    def load(self, blocks, offsets, dtype):
        return np.array([self.words.get((int(b), int(o)), 0) for b, o in zip(blocks, offsets)], dtype=np.uint64)

    def store(self, blocks, offsets, values, dtype):
        for b, o, v in zip(blocks, offsets, values):
            self.words[(int(b), int(o))] = int(v)


class _FakeWave:
    def __init__(self):
        self.smem = _FakeSmem()
        self.async_unit = None
        self.tap = None


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.lists(st.tuples(st.sampled_from(["arrive", "expect", "complete"]),
                                              st.integers(1, 5)), max_size=60))
def test_mbarrier_updates_follow_the_phase_rules(count, ops):
    """Against a direct model: a phase completes when its pending arrivals
    and its tx-count are both zero; then pending reloads and parity flips."""
    X = _FakeWave()
    b, o = np.array([0]), np.array([8])
    X.smem.store(b, o, np.array([mbarrier.pack(0, count, count, 0)], dtype=np.uint64), None)
    phase, pending, tx = 0, count, 0
    for op, n in ops:
        upd = mbarrier.Update(X, b, o)
        if op == "arrive":
            n = min(n, pending)
            if n == 0:
                continue
            upd.arrive(0, n)
            pending -= n
        elif op == "expect":
            upd.add_tx(0, n)
            tx += n
        else:
            upd.add_tx(0, -n)
            tx -= n
        upd.finish()
        if pending == 0 and tx == 0:
            phase, pending = phase ^ 1, count
        assert mbarrier.unpack(int(X.smem.words[(0, 8)]))[:4] == (phase, pending, count, tx)


dims = st.integers(1, 40)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 3), st.data())
def test_tensor_map_round_trips_and_boxes_match_numpy(rank, data):
    esize = 4
    shape = [data.draw(dims) for _ in range(rank)]          # globalDim, dimension 0 fastest
    pad = data.draw(st.integers(0, 3)) * 4                  # elements of row padding (keeps 16-byte strides)
    row = -(-shape[0] * esize // 16) * 16 + pad * esize
    strides, s = [], row
    for i in range(1, rank):
        strides.append(s)
        s *= shape[i]
    box = [data.draw(st.sampled_from([4, 8, 12]))] + [data.draw(st.integers(1, 6)) for _ in range(rank - 1)]
    es = [1] + [data.draw(st.integers(1, 3)) for _ in range(rank - 1)]
    raw = tensor_map.encode(7, rank, 0x1000, shape, strides, box, es, 0, 0, 0, 0)
    tm = tensor_map.decode(raw)
    assert (tm.dims, tm.strides, tm.box, tm.element_strides) == (tuple(shape), tuple(strides), tuple(box), tuple(es))
    assert tm.counts == tuple([box[0]] + [-(-box[i] // es[i]) for i in range(1, rank)])
    coords = [data.draw(st.integers(-5, d + 2)) for d in shape]
    addrs, inside = tensor_map.box_elements(tm, coords)
    # the same box from numpy: index arrays per dimension, out-of-range masked
    axes = [coords[i] + np.arange(tm.counts[i]) * (es[i] if i else 1) for i in range(rank)]
    grid = np.meshgrid(*axes[::-1], indexing="ij")[::-1]
    ok = np.ones(grid[0].shape, dtype=bool)
    offs = np.zeros(grid[0].shape, dtype=np.int64)
    for i in range(rank):
        ok &= (grid[i] >= 0) & (grid[i] < shape[i])
        offs += grid[i] * (esize if i == 0 else strides[i - 1])
    assert np.array_equal(inside, ok.ravel())
    assert np.array_equal(addrs[inside], 0x1000 + offs.ravel()[ok.ravel()])
    assert tm.box_bytes == int(np.prod(tm.counts)) * esize


@given(st.sampled_from([1, 2, 3]), st.integers(1, 16))
def test_swizzles_are_permutations_of_16_byte_chunks(bits, rows):
    raw = tensor_map.encode(0, 2, 0, [128, 64], [128], [16 << bits, 1], [1, 1], 0, bits, 0, 0)
    tm = tensor_map.decode(raw)
    order = tensor_map.swizzle_order(tm, rows * 128)
    assert sorted(order.tolist()) == list(range(rows * 8))
    assert np.array_equal(order[order], np.arange(rows * 8))     # an involution: the same map undoes it
