"""getDeviceInfo answers built from warp views: a FULL answer decodes back
to the views; an UPDATE carries exactly the warps that changed."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.debug.backend import LaneView, WarpView
from gpudbg.debug.cudbg import devinfo as D
from gpudbg.debug.cudbg.enums import CUDBGDeviceInfoAttribute_t as DA
from gpudbg.debug.cudbg.enums import CUDBGDeviceInfoQueryType_t as QT
from gpudbg.debug.device_info import DeviceInfoBuilder

NSMS, NWARPS = 4, 8
SIZES = D.device_info_sizes(NSMS, NWARPS, 32)


@st.composite
def warps(draw):
    keys = draw(st.sets(st.tuples(st.integers(0, NSMS - 1), st.integers(0, NWARPS - 1)), max_size=10))
    out = []
    for sm, wp in sorted(keys):
        lanes_n = draw(st.sets(st.integers(0, 31), min_size=1, max_size=32))
        pcs = {ln: 0x7000 + 16 * draw(st.integers(0, 3)) for ln in lanes_n}
        low = min(pcs.values())
        lanes = tuple(LaneView(ln, (wp * 32 + ln, 0, 0), pcs[ln], pcs[ln] == low, "k") for ln in sorted(lanes_n))
        out.append(WarpView(0, sm, wp, 1, (sm, 0, 0), sum(1 << ln for ln in lanes_n),
                            sum(1 << lv.ln for lv in lanes if lv.active), draw(st.booleans()), low, "k", lanes))
    return out


def _decode(data):
    return D.unpack_device_info(data, NSMS, SIZES)


@settings(max_examples=40, deadline=None)
@given(warps())
def test_full_answer_decodes_to_the_views(ws):
    r = _decode(DeviceInfoBuilder().build(0, NSMS, ws, QT.CUDBG_RESPONSE_TYPE_FULL, {1: (256, 1, 1)}))
    assert r.attributes[DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK] == sum({1 << w.sm for w in ws})
    got = {(sm.sm, w.warp): w for sm in r.sms for w in sm.warps}
    assert set(got) == {(w.sm, w.wp) for w in ws}
    for w in ws:
        rec = got[(w.sm, w.wp)]
        assert rec.info.validLanes == w.valid_mask and rec.info.activeLanes == w.active_mask
        assert [(ln.lane, ln.info.virtualPC) for ln in rec.lanes] == [(lv.ln, lv.pc) for lv in w.lanes]
    for sm in r.sms:
        assert sm.info.warpBrokenMask == sum(1 << w.wp for w in ws if w.sm == sm.sm and w.broken)


@settings(max_examples=40, deadline=None)
@given(warps(), st.data())
def test_update_carries_exactly_the_changed_warps(ws, data):
    b = DeviceInfoBuilder()
    b.build(0, NSMS, ws, QT.CUDBG_RESPONSE_TYPE_FULL, {})
    changed = set()
    after = []
    for w in ws:
        if data.draw(st.booleans()):
            lanes = tuple(lv._replace(pc=lv.pc + 16) for lv in w.lanes)
            w = WarpView(0, w.sm, w.wp, 1, w.block_idx, w.valid_mask, w.active_mask, w.broken, w.pc + 16,
                         "k", lanes)
            changed.add((w.sm, w.wp))
        after.append(w)
    r = _decode(b.build(0, NSMS, after, QT.CUDBG_RESPONSE_TYPE_UPDATE, {}))
    assert r.attributes[DA.CUDBG_DEVICE_ATTRIBUTE_SM_UPDATE_MASK] == sum({1 << sm for sm, _ in changed})
    assert {(sm.sm, w.warp) for sm in r.sms for w in sm.warps} == changed
    for sm in r.sms:
        for w in sm.warps:
            view = next(x for x in after if (x.sm, x.wp) == (sm.sm, w.warp))
            assert [ln.info.virtualPC for ln in w.lanes] == [lv.pc for lv in view.lanes]
