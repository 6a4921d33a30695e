"""CUDBGEvent and its union members against the header, and round trips."""
import ctypes

import pytest
from cudbg_seed import ctype_of, event_union_members
from cudbg_strategies import for_layout
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.debug.cudbg import events as ev
from gpudbg.debug.cudbg.enums import CUDBGEventKind
from gpudbg.debug.cudbg.layouts import LayoutError

K = CUDBGEventKind


def test_union_members_match_the_header():
    seed = event_union_members()
    ours = {cls.CASE: layout for cls, layout in ev.CASE_LAYOUTS.items()}
    assert set(seed) == set(ours)
    for case, fields in seed.items():
        assert [f.name for f in fields] == [name for name, _ in ours[case].fields], case
        assert ours[case].size == ctypes.sizeof(ctype_of(case, fields)), case


def test_event_size_is_kind_plus_widest_member():
    widest = max(ctypes.sizeof(ctype_of(c, f)) for c, f in event_union_members().items())
    assert widest == 88  # kernelReady
    assert ev.EVENT_SIZE == 4 + widest == 92


def test_every_payload_member_has_a_kind():
    assert {cls for cls in ev.KIND_CASES.values()} == set(ev.CASE_LAYOUTS)
    for kind, cls in ev.KIND_CASES.items():
        assert kind.name.endswith(("_LOADED", "_UNLOADED", "_READY", "_FINISHED", "_PUSH", "_POP",
                                   "_CREATE", "_DESTROY", "_ERROR", "_SUSPENDED"))


def _events():
    with_payload = st.sampled_from(sorted(ev.KIND_CASES)).flatmap(
        lambda k: for_layout(ev.CASE_LAYOUTS[ev.KIND_CASES[k]]).map(lambda c: ev.CUDBGEvent(k, c)))
    bare = st.sampled_from([k for k in K if k not in ev.KIND_CASES]).map(ev.CUDBGEvent)
    return st.one_of(with_payload, bare)


@settings(max_examples=60, deadline=None)
@given(_events())
def test_event_round_trip(event):
    data = event.pack()
    assert len(data) == ev.EVENT_SIZE
    assert ev.CUDBGEvent.unpack(data) == event


def test_payload_sits_after_kind_and_tail_is_zero():
    e = ev.CUDBGEvent(K.CUDBG_EVENT_CTX_CREATE, ev.ContextCreate(dev=1, tid=2, context=0xABC))
    data = e.pack()
    assert data[:4] == (7).to_bytes(4, "little")
    assert data[4:20] == (1).to_bytes(4, "little") + (2).to_bytes(4, "little") + (0xABC).to_bytes(8, "little")
    assert data[20:] == bytes(ev.EVENT_SIZE - 20)


def test_kind_and_payload_must_agree():
    with pytest.raises(LayoutError, match="CUDBG_EVENT_KERNEL_READY carries cases.kernelReady"):
        ev.CUDBGEvent(K.CUDBG_EVENT_KERNEL_READY, ev.ContextPush(0, 0, 0))
    with pytest.raises(LayoutError, match="CUDBG_EVENT_TIMEOUT carries no payload"):
        ev.CUDBGEvent(K.CUDBG_EVENT_TIMEOUT, ev.ContextPush(0, 0, 0))
    with pytest.raises(LayoutError, match="must be a CUDBGEventKind"):
        ev.CUDBGEvent(3)


def test_unpack_rejects_unknown_kind_and_short_buffer():
    with pytest.raises(LayoutError, match="kind 4660 is not a CUDBGEventKind"):
        ev.CUDBGEvent.unpack((0x1234).to_bytes(4, "little") + bytes(88))
    with pytest.raises(LayoutError, match="needs 92 bytes"):
        ev.CUDBGEvent.unpack(bytes(91))
