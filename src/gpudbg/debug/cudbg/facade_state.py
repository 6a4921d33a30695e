"""Device, grid, warp and lane inspection entries of the cudbg facade.

Each method is one CUDBGAPI_st entry under its C name, taking the table's
inputs and returning the tuple of its outputs (facade.py wraps it into
``(CUDBGResult, *outputs)``). Failures raise CudbgError with the seed's
code, or let the Session's DebugError/BackendError through for facade.py
to translate.

The one idea: coordinates are checked against the device's shape first
(device count, SMs, warp slots, lanes), so a coordinate outside the
hardware gets the specific INVALID_DEVICE/SM/WARP/LANE code of the header
even when no kernel is resident; only then is the Session asked for the
warp, which knows whether that slot holds a live warp. Everything is read
from the Session's frozen views on every call; nothing is cached.
"""
from __future__ import annotations

from typing import Any

from gpudbg.debug.backend import DeviceProperties, GridView, LaneView, WarpView
from gpudbg.debug.cudbg.enums import (
    CUDBGAttribute,
    CUDBGException_t,
    CUDBGGridStatus,
    CUDBGKernelOrigin,
    CUDBGKernelType,
    CUDBGResult,
)
from gpudbg.debug.cudbg.layouts import (
    CUDBG_MAX_LANES,
    CUDBGAttributeValuePair,
    CUDBGGridInfo,
    CUDBGLaneState,
    CUDBGWarpResources,
    CUDBGWarpState,
    CuDim3,
)
from gpudbg.sim.faults import EXCEPTION_TITLES

R = CUDBGResult
NONE = CUDBGException_t.CUDBG_EXCEPTION_NONE


class CudbgError(Exception):
    """A call that fails with ``result``; ``outputs`` are still returned when
    the header says so (msgSz on CUDBG_ERROR_BUFFER_TOO_SMALL)."""

    def __init__(self, result: CUDBGResult, detail: str, outputs: tuple | None = None):
        super().__init__(f"{result.name}: {detail}")
        self.result = result
        self.detail = detail
        self.outputs = outputs


def c_string(text: str, sz: int, what: str) -> bytes:
    """``text`` NUL-terminated for a ``char *buf`` of ``sz`` bytes."""
    data = text.encode("ascii", errors="replace") + b"\0"
    if len(data) > sz:
        raise CudbgError(R.CUDBG_ERROR_BUFFER_TOO_SMALL, f"{what} needs {len(data)} bytes, the buffer has {sz}")
    return data


class Helpers:
    """Coordinate checks shared by every entry mixin."""

    session: Any

    def _props(self, dev: int) -> DeviceProperties:
        devices = self.session.devices()
        if not 0 <= dev < len(devices):
            raise CudbgError(R.CUDBG_ERROR_INVALID_DEVICE, f"device {dev} does not exist ({len(devices)} devices)")
        return devices[dev]

    def _check_sm(self, dev: int, sm: int) -> DeviceProperties:
        props = self._props(dev)
        if sm >= props.num_sms:
            raise CudbgError(R.CUDBG_ERROR_INVALID_SM, f"SM {sm} >= {props.num_sms} SMs of device {dev}")
        return props

    def _warp(self, dev: int, sm: int, wp: int) -> WarpView:
        props = self._check_sm(dev, sm)
        if wp >= props.num_warps:
            raise CudbgError(R.CUDBG_ERROR_INVALID_WARP, f"warp {wp} >= {props.num_warps} warp slots per SM")
        return self.session.warp(dev, sm, wp)

    def _lane(self, dev: int, sm: int, wp: int, ln: int) -> tuple[WarpView, LaneView]:
        props = self._check_sm(dev, sm)
        if ln >= props.num_lanes:
            raise CudbgError(R.CUDBG_ERROR_INVALID_LANE, f"lane {ln} >= {props.num_lanes} lanes per warp")
        warp = self._warp(dev, sm, wp)
        for lane in warp.lanes:
            if lane.ln == ln:
                return warp, lane
        raise CudbgError(R.CUDBG_ERROR_INVALID_LANE, f"lane {ln} of warp {wp} on SM {sm} is not valid")

    def _sm_warps(self, dev: int, sm: int) -> list[WarpView]:
        self._check_sm(dev, sm)
        return [w for w in self.session.warps(dev) if w.sm == sm]

    def _grid(self, dev: int, grid_id: int) -> GridView:
        self._props(dev)
        for grid in self.session.grids(dev):
            if grid.grid_id == grid_id:
                return grid
        raise CudbgError(R.CUDBG_ERROR_INVALID_GRID, f"no grid {grid_id} on device {dev}")

    def _warp_grid(self, dev: int, sm: int, wp: int) -> GridView:
        warp = self._warp(dev, sm, wp)
        return self._grid(dev, warp.grid_id)

    def _function_offset(self, dev: int, address: int) -> int:
        where = self.session.function_at(dev, address)
        if where is None:
            raise CudbgError(R.CUDBG_ERROR_UNKNOWN_FUNCTION, f"0x{address:x} is in no loaded function")
        return int(where[1])


class StateEntries(Helpers):
    # ------------------------------------------------------------- device properties
    def getNumDevices(self) -> tuple:
        return (len(self.session.devices()),)

    def getNumSMs(self, dev) -> tuple:
        return (self._props(dev).num_sms,)

    def getNumWarps(self, dev) -> tuple:
        return (self._props(dev).num_warps,)

    def getNumLanes(self, dev) -> tuple:
        return (self._props(dev).num_lanes,)

    def getNumRegisters(self, dev) -> tuple:
        """R registers per lane of the cuda-gdb register view."""
        return (self._props(dev).num_registers,)

    def getNumPredicates(self, dev) -> tuple:
        return (self._props(dev).num_predicates,)

    def getNumUniformRegisters(self, dev) -> tuple:
        """0: the PTX machine has no uniform (per-warp) register file."""
        self._props(dev)
        return (0,)

    def getNumUniformPredicates(self, dev) -> tuple:
        """0: the PTX machine has no uniform predicates."""
        self._props(dev)
        return (0,)

    def getDeviceType(self, dev, sz) -> tuple:
        return (c_string(self._props(dev).type_name, sz, "the device type"),)

    def getSmType(self, dev, sz) -> tuple:
        return (c_string(self._props(dev).sm_type, sz, "the SM type"),)

    def getDeviceName(self, dev, sz) -> tuple:
        return (c_string(self._props(dev).name, sz, "the device name"),)

    def getDevicePCIBusInfo(self, devId) -> tuple:
        props = self._props(devId)
        return (props.pci_bus_id, props.pci_dev_id)

    # ------------------------------------------------------------- SM and warp masks
    def readBrokenWarps(self, dev, sm) -> tuple:
        return (sum(1 << w.wp for w in self._sm_warps(dev, sm) if w.broken),)

    def readValidWarps(self, dev, sm) -> tuple:
        return (sum(1 << w.wp for w in self._sm_warps(dev, sm)),)

    def readValidLanes(self, dev, sm, wp) -> tuple:
        return (self._warp(dev, sm, wp).valid_mask,)

    def readActiveLanes(self, dev, sm, wp) -> tuple:
        return (self._warp(dev, sm, wp).active_mask,)

    # ------------------------------------------------------------- logical coordinates
    def readThreadIdx(self, dev, sm, wp, ln) -> tuple:
        return (CuDim3(*self._lane(dev, sm, wp, ln)[1].thread_idx),)

    def readBlockIdx(self, dev, sm, wp) -> tuple:
        return (CuDim3(*self._warp(dev, sm, wp).block_idx),)

    def readClusterIdx(self, dev, sm, wp) -> tuple:
        return (CuDim3(*self._warp(dev, sm, wp).cluster_idx),)

    def readGridId(self, dev, sm, wp) -> tuple:
        return (self._warp(dev, sm, wp).grid_id,)

    def getBlockDim(self, dev, sm, wp) -> tuple:
        return (CuDim3(*self._warp_grid(dev, sm, wp).block_dim),)

    def getGridDim(self, dev, sm, wp) -> tuple:
        return (CuDim3(*self._warp_grid(dev, sm, wp).grid_dim),)

    def getClusterDim(self, dev, sm, wp) -> tuple:
        return (CuDim3(*self._warp_grid(dev, sm, wp).cluster_dim),)

    def getClusterExceptionTargetBlock(self, dev, sm, wp) -> tuple:
        """Never valid: no simulated exception is a cluster exception."""
        self._warp(dev, sm, wp)
        return (CuDim3(0, 0, 0), False)

    # ------------------------------------------------------------- pcs and call stacks
    def readPC(self, dev, sm, wp, ln) -> tuple:
        """The pc as an offset from the start of the lane's function (the physical pc)."""
        lane = self._lane(dev, sm, wp, ln)[1]
        return (self._function_offset(dev, lane.pc),)

    def readVirtualPC(self, dev, sm, wp, ln) -> tuple:
        return (self._lane(dev, sm, wp, ln)[1].pc,)

    def readCallDepth(self, dev, sm, wp, ln) -> tuple:
        return (self._lane(dev, sm, wp, ln)[1].call_depth,)

    def readSyscallCallDepth(self, dev, sm, wp, ln) -> tuple:
        """0: device syscalls (printf, malloc, assert) complete within one instruction,
        so a stopped lane is never inside one."""
        self._lane(dev, sm, wp, ln)
        return (0,)

    def _return_address(self, dev: int, sm: int, wp: int, ln: int, level: int) -> int:
        lane = self._lane(dev, sm, wp, ln)[1]
        if lane.call_depth == 0 or not lane.return_addresses:
            raise CudbgError(R.CUDBG_ERROR_ZERO_CALL_DEPTH, f"lane {ln} is in its kernel's frame")
        if level >= len(lane.return_addresses):
            raise CudbgError(R.CUDBG_ERROR_INVALID_CALL_LEVEL,
                             f"level {level} >= call depth {len(lane.return_addresses)}")
        return lane.return_addresses[level]

    def readReturnAddress(self, dev, sm, wp, ln, level) -> tuple:
        """Level 0 is the innermost call; the address is relative to its function."""
        return (self._function_offset(dev, self._return_address(dev, sm, wp, ln, level)),)

    def readVirtualReturnAddress(self, dev, sm, wp, ln, level) -> tuple:
        return (self._return_address(dev, sm, wp, ln, level),)

    def readAllVirtualReturnAddresses(self, dev, sm, wp, ln, numAddrs) -> tuple:
        """The first min(numAddrs, depth) return addresses, innermost first, then the
        call depth and the syscall call depth (always 0, see readSyscallCallDepth)."""
        lane = self._lane(dev, sm, wp, ln)[1]
        return (tuple(lane.return_addresses[:numAddrs]), lane.call_depth, 0)

    # ------------------------------------------------------------- exceptions
    def readLaneException(self, dev, sm, wp, ln) -> tuple:
        return (CUDBGException_t(self._lane(dev, sm, wp, ln)[1].exception),)

    def readLaneStatus(self, dev, sm, wp, ln) -> tuple:
        return (self._lane(dev, sm, wp, ln)[1].exception != NONE,)

    def readErrorPC(self, devId, sm, wp) -> tuple:
        warp = self._warp(devId, sm, wp)
        return (warp.error_pc or 0, warp.error_pc is not None)

    def readSmException(self, dev, sm) -> tuple:
        """The first faulting warp's exception on that SM (lowest warp slot)."""
        for warp in sorted(self._sm_warps(dev, sm), key=lambda w: w.wp):
            for lane in warp.lanes:
                if lane.exception != NONE:
                    return (CUDBGException_t(lane.exception), warp.error_pc or 0, warp.error_pc is not None)
        return (NONE, 0, False)

    def readDeviceExceptionState(self, devId, numWords) -> tuple:
        props = self._props(devId)
        need = (props.num_sms + 63) // 64
        if numWords < need:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, f"{props.num_sms} SMs need {need} mask words, got {numWords}")
        mask = 0
        for warp in self.session.warps(devId):
            if any(lane.exception != NONE for lane in warp.lanes):
                mask |= 1 << warp.sm
        return (tuple(mask >> (64 * i) & (1 << 64) - 1 for i in range(numWords)),)

    def getCudaExceptionString(self, dev, sm, wp, ln, bufSz) -> tuple:
        """cuda-gdb's title of the lane's exception ("Warp Illegal Address"); empty for none."""
        kind = CUDBGException_t(self._lane(dev, sm, wp, ln)[1].exception)
        text = "" if kind == NONE else EXCEPTION_TITLES.get(kind, kind.name)
        data = text.encode("ascii") + b"\0"
        if len(data) > bufSz:
            raise CudbgError(R.CUDBG_ERROR_BUFFER_TOO_SMALL, f"the message needs {len(data)} bytes",
                             outputs=(None, len(data)))
        return (data, len(data))

    # ------------------------------------------------------------- whole-warp records
    def readWarpState(self, dev, sm, wp) -> tuple:
        warp = self._warp(dev, sm, wp)
        grid = self._grid(dev, warp.grid_id)
        lanes = {lane.ln: lane for lane in warp.lanes}
        states = []
        for ln in range(CUDBG_MAX_LANES):
            lane = lanes.get(ln)
            states.append(CUDBGLaneState(0, CuDim3(), NONE) if lane is None else
                          CUDBGLaneState(lane.pc, CuDim3(*lane.thread_idx), CUDBGException_t(lane.exception)))
        state = CUDBGWarpState(
            gridId=warp.grid_id, errorPC=warp.error_pc or 0, blockIdx=CuDim3(*warp.block_idx),
            validLanes=warp.valid_mask, activeLanes=warp.active_mask,
            errorPCValid=int(warp.error_pc is not None), lane=tuple(states),
            clusterIdx=CuDim3(*warp.cluster_idx), clusterDim=CuDim3(*grid.cluster_dim),
            clusterExceptionTargetBlockIdxValid=0, clusterExceptionTargetBlockIdx=CuDim3(),
            inSyscallLanes=0)
        return (state,)

    def readWarpResources(self, dev, sm, wp) -> tuple:
        """Shared memory of the warp's block and the R registers its function uses."""
        warp = self._warp(dev, sm, wp)
        grid = self._grid(dev, warp.grid_id)
        nregs = 0
        if warp.lanes:
            ln = warp.lanes[0].ln
            nregs = max((first + words for _, _, kind, first, words in
                         self.session.register_map(dev, sm, wp, ln) if kind == "R"), default=0)
        return (CUDBGWarpResources(sharedMemSize=grid.shared_bytes, numRegisters=nregs),)

    # ------------------------------------------------------------- grids
    def getGridStatus(self, dev, gridId64) -> tuple:
        return (CUDBGGridStatus(int(self._grid(dev, gridId64).status)),)

    def getGridInfo(self, dev, gridId64) -> tuple:
        """``function`` and ``functionEntry`` are both the kernel's entry address (there is
        no separate function handle); ``tid`` is the launching host thread's native id."""
        g = self._grid(dev, gridId64)
        return (CUDBGGridInfo(
            dev=dev, gridId64=g.grid_id, tid=g.host_tid, context=g.context_id, module=g.module_id,
            function=g.entry_address, functionEntry=g.entry_address, gridDim=CuDim3(*g.grid_dim),
            blockDim=CuDim3(*g.block_dim), type=CUDBGKernelType.CUDBG_KNL_TYPE_APPLICATION,
            parentGridId=g.parent_grid_id,
            origin=CUDBGKernelOrigin.CUDBG_KNL_ORIGIN_GPU if g.parent_grid_id else CUDBGKernelOrigin.CUDBG_KNL_ORIGIN_CPU,
            clusterDim=CuDim3(*g.cluster_dim), preferredClusterDim=CuDim3(*g.cluster_dim)),)

    def _attribute(self, dev: int, sm: int, wp: int, attr: CUDBGAttribute) -> int:
        g = self._warp_grid(dev, sm, wp)
        if attr is CUDBGAttribute.CUDBG_ATTR_GRID_LAUNCH_BLOCKING:
            return 0  # launches are always asynchronous to the host
        return g.host_tid

    def getTID(self, dev, sm, wp) -> tuple:
        """The native id of the host thread that launched the warp's grid."""
        return (self._warp_grid(dev, sm, wp).host_tid,)

    def getGridAttribute(self, dev, sm, wp, attr) -> tuple:
        """LAUNCH_BLOCKING is 0 (launches are asynchronous); TID is the launching host thread."""
        return (self._attribute(dev, sm, wp, attr),)

    def getGridAttributes(self, dev, sm, wp, pairs, numPairs) -> tuple:
        if numPairs != len(pairs):
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, f"numPairs={numPairs} but {len(pairs)} pairs given")
        return (tuple(CUDBGAttributeValuePair(a, self._attribute(dev, sm, wp, a)) for a in pairs),)
