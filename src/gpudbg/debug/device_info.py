"""Batched device info (seed 000's getDeviceInfo) built from the Session's
warp views: FULL answers and UPDATE answers that carry only what changed.

The one idea: a warp's state is summarised by a hashable signature (grid,
block, masks, broken, lane pcs, exception, error pc); UPDATE compares the
signatures with those of the previous answer for the same device, so
"changed" means exactly "would look different in a FULL answer now". SMs
whose warps changed (or whose set of valid warps changed) are updated;
inside an updated warp only lanes whose pc or activity changed are sent.
"""
from __future__ import annotations

from typing import Any

from gpudbg.debug.backend import WarpView
from gpudbg.debug.cudbg.devinfo import (
    DeviceInfoResponse, LaneRecord, SMRecord, WarpRecord, pack_device_info,
)
from gpudbg.debug.cudbg.enums import (
    CUDBGDeviceInfoAttribute_t as DA,
    CUDBGDeviceInfoQueryType_t as Q,
    CUDBGException_t,
    CUDBGSMInfoAttribute_t as SA,
    CUDBGWarpInfoAttribute_t as WA,
)
from gpudbg.debug.cudbg.layouts import CUDBGDeviceInfo, CUDBGLaneInfo, CUDBGSMInfo, CUDBGWarpInfo, CuDim3


def _signature(w: WarpView) -> tuple:
    return (w.grid_id, w.block_idx, w.valid_mask, w.active_mask, w.broken, w.error_pc,
            tuple([lv.pc for lv in w.lanes]), tuple([int(lv.exception) for lv in w.lanes if lv.exception]))


def _flags(attrs: dict) -> int:
    f = 0
    for a in attrs:
        f |= 1 << int(a)
    return f


def _base_thread(w: WarpView, block_dim: tuple[int, int, int]) -> CuDim3:
    """threadIdx of the warp's lane 0 (which may be a padding lane)."""
    lv = w.lanes[0]
    bx, by = block_dim[0], block_dim[1]
    lin = lv.thread_idx[0] + bx * (lv.thread_idx[1] + by * lv.thread_idx[2]) - lv.ln
    return CuDim3(lin % bx, (lin // bx) % by, lin // (bx * by))


def _lane_numbers(mask: int) -> list[int]:
    return [ln for ln in range(32) if mask >> ln & 1]


class DeviceInfoBuilder:
    """Per-device memory of the last answer, for UPDATE."""

    def __init__(self) -> None:
        self._last: dict[int, dict[tuple[int, int], tuple]] = {}

    def build(self, dev: int, num_sms: int, warps: list[WarpView], query: Q,
              block_dims: dict[int, tuple[int, int, int]]) -> bytes:
        query = Q(query)
        if query not in (Q.CUDBG_RESPONSE_TYPE_FULL, Q.CUDBG_RESPONSE_TYPE_UPDATE):
            raise ValueError(f"unknown device info query type {int(query)}")
        now = {(w.sm, w.wp): _signature(w) for w in warps}
        prev = self._last.get(dev)
        self._last[dev] = now
        full = query is Q.CUDBG_RESPONSE_TYPE_FULL or prev is None
        by_sm: dict[int, list[WarpView]] = {}
        for w in warps:
            by_sm.setdefault(w.sm, []).append(w)
        active = sum(1 << sm for sm in by_sm)
        exc_sms = sum(1 << w.sm for w in warps if w.error_pc is not None)
        changed = set(now) if full else {k for k in now if prev.get(k) != now[k]} | (set(prev) - set(now))
        changed_sms = {sm for sm, _ in changed}
        attrs: dict[Any, Any] = {DA.CUDBG_DEVICE_ATTRIBUTE_SM_ACTIVE_MASK: active}
        if exc_sms:
            attrs[DA.CUDBG_DEVICE_ATTRIBUTE_SM_EXCEPTION_MASK] = exc_sms
        if not full:
            attrs[DA.CUDBG_DEVICE_ATTRIBUTE_SM_UPDATE_MASK] = sum(1 << sm for sm in changed_sms)
        sms = []
        for sm in sorted(by_sm):
            if not full and sm not in changed_sms:
                continue
            ws = sorted(by_sm[sm], key=lambda w: w.wp)
            valid = sum(1 << w.wp for w in ws)
            broken = sum(1 << w.wp for w in ws if w.broken)
            sm_attrs: dict[Any, Any] = {}
            if not full:
                sm_attrs[SA.CUDBG_SM_ATTRIBUTE_WARP_UPDATE_MASK] = sum(1 << wp for s2, wp in changed if s2 == sm)
            records = []
            for w in ws:
                if not full and (sm, w.wp) not in changed:
                    continue
                records.append(self._warp(w, None if full else prev.get((sm, w.wp)), block_dims))
            sms.append(SMRecord(sm, CUDBGSMInfo(valid, broken, _flags(sm_attrs)), sm_attrs, tuple(records)))
        # SMs that lost all warps are in the update mask but not active: nothing to send for them
        info = CUDBGDeviceInfo(query, _flags(attrs))
        return pack_device_info(DeviceInfoResponse(info, attrs, tuple(sms)), num_sms)

    @staticmethod
    def _warp(w: WarpView, before: tuple | None, block_dims) -> WarpRecord:
        attrs: dict[Any, Any] = {}
        exc = next((lv.exception for lv in w.lanes if int(lv.exception)), None)
        if exc is not None:
            attrs[WA.CUDBG_WARP_ATTRIBUTE_EXCEPTION] = CUDBGException_t(int(exc))
        if w.error_pc is not None:
            attrs[WA.CUDBG_WARP_ATTRIBUTE_ERRORPC] = w.error_pc
        lanes = list(w.lanes)
        if before is not None:
            # a lane is sent when its pc changed, or anything of the warp's
            # lane state (activity, exceptions) did: then every valid lane
            old_pcs = dict(zip(_lane_numbers(before[2]), before[6]))
            lane_state_same = before[3] == w.active_mask and before[7] == _signature(w)[7]
            keep = [lv for lv in lanes if not lane_state_same or old_pcs.get(lv.ln) != lv.pc]
            attrs[WA.CUDBG_WARP_ATTRIBUTE_LANE_UPDATE_MASK] = sum(1 << lv.ln for lv in keep)
            lanes = keep
        infos: dict[int, CUDBGLaneInfo] = {}     # lanes of a warp mostly share one pc
        recs = tuple([LaneRecord(lv.ln, infos.get(lv.pc) or infos.setdefault(lv.pc, CUDBGLaneInfo(lv.pc)))
                      for lv in lanes])
        bd = block_dims.get(w.grid_id, (32, 1, 1))
        info = CUDBGWarpInfo(w.grid_id, CuDim3(*w.block_idx), _base_thread(w, bd), w.valid_mask,
                             w.active_mask, _flags(attrs))
        return WarpRecord(w.wp, info, attrs, recs)
