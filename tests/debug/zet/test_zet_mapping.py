"""ze_device_thread_t <-> (sm, warp slot, lane): round trips and wildcard expansion."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.debug.zet.mapping import ALL, SimThread, ThreadMapping, WarpSlot, ZetCoordinateError
from gpudbg.debug.zet.structs import ZE_DEVICE_THREAD_ALL, ze_device_thread_t
from gpudbg.sim.device_model import DeviceModel

H100 = ThreadMapping.from_model(DeviceModel())


@st.composite
def mappings(draw):
    eus = draw(st.integers(1, 8))
    return ThreadMapping(sm_count=draw(st.integers(1, 40)), warp_slots_per_sm=eus * draw(st.integers(1, 8)),
                         lanes=draw(st.sampled_from([8, 16, 32])), sms_per_slice=draw(st.integers(1, 12)),
                         eus_per_subslice=eus)


@st.composite
def mapping_and_warp(draw):
    m = draw(mappings())
    return m, WarpSlot(draw(st.integers(0, m.sm_count - 1)), draw(st.integers(0, m.warp_slots_per_sm - 1)))


def all_warps(m):
    return [WarpSlot(sm, w) for sm in range(m.sm_count) for w in range(m.warp_slots_per_sm)]


@st.composite
def mapping_pattern_resident(draw):
    """A device, a thread pattern (each field a wildcard or in range) and a resident set."""
    m = draw(mappings())
    slice_ = draw(st.one_of(st.just(ALL), st.integers(0, m.num_slices - 1)))
    width = m.subslices_in(slice_) if slice_ != ALL else min(m.sms_per_slice, m.sm_count)
    pattern = ze_device_thread_t(slice_, draw(st.one_of(st.just(ALL), st.integers(0, width - 1))),
                                 draw(st.one_of(st.just(ALL), st.integers(0, m.eus_per_subslice - 1))),
                                 draw(st.one_of(st.just(ALL), st.integers(0, m.threads_per_eu - 1))))
    resident = draw(st.sets(st.sampled_from(all_warps(m)), max_size=60))
    return m, pattern, resident


@settings(max_examples=150, deadline=None)
@given(mapping_and_warp(), st.data())
def test_sim_to_zet_round_trip(mw, data):
    m, (sm, warp) = mw
    lane = data.draw(st.integers(0, m.lanes - 1))
    t = m.to_zet(sm, warp, lane)
    assert t.is_single
    m.validate(t)
    assert m.to_sim(t) == (sm, warp)
    assert m.to_zet(*m.to_sim(t)) == t
    assert SimThread(sm, warp, lane) in m.lanes_of(t) and len(m.lanes_of(t)) == m.lanes


@settings(max_examples=40, deadline=None)
@given(mappings())
def test_mapping_is_a_bijection_onto_valid_single_threads(m):
    threads = {m.to_zet(sm, w) for sm, w in all_warps(m)}
    assert len(threads) == m.sm_count * m.warp_slots_per_sm
    every_valid_single = {ze_device_thread_t(s, sub, e, t) for s in range(m.num_slices)
                          for sub in range(m.subslices_in(s)) for e in range(m.eus_per_subslice)
                          for t in range(m.threads_per_eu)}
    assert threads == every_valid_single
    assert sorted(m.hardware_warps(ZE_DEVICE_THREAD_ALL)) == all_warps(m)
    assert sum(m.subslices_in(s) for s in range(m.num_slices)) == m.sm_count


@settings(max_examples=80, deadline=None)
@given(mapping_pattern_resident())
def test_wildcard_expansion_covers_exactly_the_named_resident_warps(mpr):
    m, pattern, resident = mpr
    named = set(m.hardware_warps(pattern))
    got = m.expand(pattern, resident)
    assert got == named & resident
    # Field by field: a warp is named iff every non-wildcard field agrees with its own coordinates.
    for sm, w in all_warps(m):
        here = m.to_zet(sm, w)
        agrees = all(p in (ALL, h) for p, h in zip(
            (pattern.slice, pattern.subslice, pattern.eu, pattern.thread),
            (here.slice, here.subslice, here.eu, here.thread)))
        assert ((sm, w) in named) == agrees
    assert m.expand(ZE_DEVICE_THREAD_ALL, resident) == resident


@settings(max_examples=25, deadline=None)
@given(mapping_pattern_resident())
def test_single_threads_partition_the_resident_warps(mpr):
    m, _, resident = mpr
    parts = [m.expand(m.to_zet(sm, w), resident) for sm, w in all_warps(m)]
    assert all(len(p) <= 1 for p in parts)
    assert set().union(*parts) == resident and sum(map(len, parts)) == len(resident)


@settings(max_examples=60, deadline=None)
@given(mapping_pattern_resident(), st.data())
def test_expand_lanes_follows_the_lane_masks(mpr, data):
    m, pattern, resident = mpr
    masks = {w: data.draw(st.integers(0, m.all_lanes_mask)) for w in resident}
    lanes = m.expand_lanes(pattern, masks)
    assert {(t.sm, t.warp) for t in lanes} <= m.expand(pattern, resident)
    assert len(lanes) == sum(masks[w].bit_count() for w in m.expand(pattern, resident))
    assert all(masks[(t.sm, t.warp)] >> t.lane & 1 for t in lanes)


def test_h100_shape_and_a_worked_example():
    assert (H100.num_slices, H100.subslices_in(0), H100.subslices_in(7)) == (8, 18, 6)
    assert (H100.eus_per_subslice, H100.threads_per_eu) == (4, 16)
    assert H100.to_zet(20, 13) == ze_device_thread_t(1, 2, 1, 3)
    assert H100.to_sim(ze_device_thread_t(7, 5, 3, 15)) == (131, 63)
    # One SM, every thread: all 64 warp slots; one EU of it: every 4th slot.
    assert len(list(H100.hardware_warps(ze_device_thread_t(0, 0, ALL, ALL)))) == 64
    assert [w for _, w in H100.hardware_warps(ze_device_thread_t(0, 0, 2, ALL))] == list(range(2, 64, 4))
    # Subslice 10 of every slice: the partial last slice has no SM 10.
    assert {sm for sm, _ in H100.hardware_warps(ze_device_thread_t(ALL, 10, 0, 0))} == {10 + 18 * s for s in range(7)}


def test_bad_coordinates_are_specific_errors():
    with pytest.raises(ZetCoordinateError, match="uses the 'all' wildcard"):
        H100.to_sim(ze_device_thread_t(0, 0, ALL, 0))
    with pytest.raises(ZetCoordinateError, match="slice 8 out of range: the device has 8 slices"):
        H100.to_sim(ze_device_thread_t(8, 0, 0, 0))
    with pytest.raises(ZetCoordinateError, match="subslice 6 out of range: slice 7 has 6 subslices"):
        H100.to_sim(ze_device_thread_t(7, 6, 0, 0))
    with pytest.raises(ZetCoordinateError, match="subslice 18 out of range: slices have at most 18"):
        H100.expand(ze_device_thread_t(ALL, 18, 0, 0), [])
    with pytest.raises(ZetCoordinateError, match="eu 4 out of range"):
        H100.validate(ze_device_thread_t(0, 0, 4, 0))
    with pytest.raises(ZetCoordinateError, match="thread 16 out of range: EUs have 16 threads"):
        H100.validate(ze_device_thread_t(0, 0, 0, 16))
    with pytest.raises(ZetCoordinateError, match="SM 132 out of range"):
        H100.to_zet(132, 0)
    with pytest.raises(ZetCoordinateError, match="warp slot 64 out of range"):
        H100.expand(ZE_DEVICE_THREAD_ALL, [(0, 64)])
    with pytest.raises(ZetCoordinateError, match="lane 32 out of range"):
        H100.to_zet(0, 0, 32)
    with pytest.raises(ZetCoordinateError, match="lane mask .* does not fit 32 lanes"):
        H100.expand_lanes(ZE_DEVICE_THREAD_ALL, {(0, 0): 1 << 32})
    with pytest.raises(ZetCoordinateError, match="expected a ze_device_thread_t, got tuple"):
        H100.validate((0, 0, 0, 0))
    with pytest.raises(ZetCoordinateError, match="do not split evenly over 4 EUs"):
        ThreadMapping(132, 62, 32)
    with pytest.raises(ZetCoordinateError, match="sm_count must be a positive integer"):
        ThreadMapping(0, 64, 32)
