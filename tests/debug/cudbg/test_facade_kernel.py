"""The cudbg facade on running kernels: the test thread is the debugger, the
host side of each launch runs on a background thread. A breakpoint hit and
the warp/lane/register/shared-memory reads at it, singleStepWarp with the
FULL and UPDATE device info, a writeRegister that changes the kernel's
result, and an exception (CUDA C++ via gpudbg.compile) with its lane
exception and error pc."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import gpudbg
from gpudbg.debug.cudbg import facade as F
from gpudbg.debug.cudbg.devinfo import unpack_device_info
from gpudbg.debug.cudbg.enums import (
    CUDBGDeviceInfoAttribute_t,
    CUDBGEventKind,
    CUDBGEventQueueType,
    CUDBGException_t,
    CUDBGGridStatus,
    CUDBGResult,
    CUDBGDeviceInfoQueryType_t,
)

from debug_kernels import SPIN_LOOP_PC, spin_ptx  # noqa: E402

R = CUDBGResult
SYNC = CUDBGEventQueueType.CUDBG_EVENT_QUEUE_TYPE_SYNC
FULL = CUDBGDeviceInfoQueryType_t.CUDBG_RESPONSE_TYPE_FULL
UPDATE = CUDBGDeviceInfoQueryType_t.CUDBG_RESPONSE_TYPE_UPDATE

# Each thread stores 3*tid to shared memory, loops n times, then writes shared + %r6 (7) to out[tid].
SPIN_PTX = spin_ptx("cudbg_spin")
LOOP_PC = SPIN_LOOP_PC
THREADS = 64         # two warps

FAULT_CU = r"""
extern "C" __global__ void cudbg_fault(int v) {
    if (threadIdx.x == 5) *(volatile int *)0x18 = v;
}
"""


class Background(threading.Thread):
    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.error = fn, None

    def run(self) -> None:
        try:
            self.fn()
        except BaseException as e:  # reported by the test that joins
            self.error = e


@pytest.fixture(scope="module")
def spin_module():
    return gpudbg.Module.from_ptx(SPIN_PTX, name="cudbg_spin.ptx")


@pytest.fixture
def api():
    gpudbg.synchronize()
    res, api = F.cudbgGetAPI(13, 0, 163)
    assert res is R.CUDBG_SUCCESS and api.initialize() == (R.CUDBG_SUCCESS,)
    try:
        yield api
    finally:
        api.finalize()


def ok(result):
    """The outputs of a successful call (one output unwrapped)."""
    assert result[0] is R.CUDBG_SUCCESS, result
    return result[1] if len(result) == 2 else result[1:]


def wait_suspended(api, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        res, ev = api.getNextEvent(SYNC)
        if res is R.CUDBG_SUCCESS:
            api.acknowledgeSyncEvents()
            if ev.kind is CUDBGEventKind.CUDBG_EVENT_ALL_DEVICES_SUSPENDED:
                return ev.cases
        else:
            time.sleep(0.005)
    raise AssertionError("the device did not stop")


def stopped_warps(api):
    """(sm, wp) of every valid warp, on the SMs that hold any."""
    out = []
    for sm in range(ok(api.getNumSMs(0))):
        mask = ok(api.readValidWarps(0, sm))
        out += [(sm, wp) for wp in range(64) if mask >> wp & 1]
    return out


class Stopped:
    """A spin launch stopped at LOOP: ``with Stopped(api, module, out) as entry:``."""

    def __init__(self, api, module, out, n=5):
        self.api, self.module, self.out, self.n = api, module, out, n

    def __enter__(self):
        found, self.entry = ok(self.api.lookupDeviceCodeSymbol("cudbg_spin"))
        assert found
        self.bp = self.entry + 16 * LOOP_PC
        assert ok(self.api.setBreakpoint(0, self.bp)) == ()
        self.launch = Background(lambda: (self.module.cudbg_spin.launch(1, THREADS, (self.out, np.uint32(self.n))),
                                          gpudbg.synchronize()))
        self.launch.start()
        self.suspended = wait_suspended(self.api)
        return self

    def finish(self):
        self.api.unsetBreakpoint(0, self.bp)
        self.api.resumeDevice(0)
        self.launch.join(20)
        assert not self.launch.is_alive() and self.launch.error is None, self.launch.error

    def __exit__(self, *exc):
        if self.launch.is_alive():
            self.api.unsetBreakpoint(0, self.bp)
            self.api.resumeDevice(0)
            self.launch.join(20)


def test_breakpoint_hit_state(api, spin_module):
    out = gpudbg.zeros(THREADS, np.uint32)
    with Stopped(api, spin_module, out) as st:
        assert st.suspended.brokenDevicesMask == 1 and st.suspended.faultedDevicesMask == 0
        warps = stopped_warps(api)
        assert len(warps) == 2
        sm = warps[0][0]
        assert ok(api.readBrokenWarps(0, sm)) == sum(1 << wp for _, wp in warps)
        for i, (sm, wp) in enumerate(sorted(warps, key=lambda w: ok(api.readThreadIdx(0, *w, 0)).x)):
            assert ok(api.readValidLanes(0, sm, wp)) == 0xFFFFFFFF
            assert ok(api.readActiveLanes(0, sm, wp)) == 0xFFFFFFFF
            tid = 32 * i + 3
            assert ok(api.readThreadIdx(0, sm, wp, 3)) == (tid, 0, 0)
            assert ok(api.readPC(0, sm, wp, 3)) == 16 * LOOP_PC          # function-relative
            assert ok(api.readVirtualPC(0, sm, wp, 3)) == st.bp
            assert ok(api.readRegister(0, sm, wp, 3, 1)) == tid           # %r1 = tid.x
            assert ok(api.readRegister(0, sm, wp, 3, 2)) == 3 * tid       # %r2
            assert ok(api.readRegisterRange(0, sm, wp, 3, 5, 2)) == (5, 7)   # %r5 = n, %r6 = 7
            assert ok(api.readSharedMemory(0, sm, wp, 4 * tid, 4)) == \
                (3 * tid).to_bytes(4, "little")
            assert ok(api.readLaneException(0, sm, wp, 3)) is CUDBGException_t.CUDBG_EXCEPTION_NONE
            assert ok(api.readCallDepth(0, sm, wp, 3)) == 0
            assert api.readVirtualReturnAddress(0, sm, wp, 3, 0) == (R.CUDBG_ERROR_ZERO_CALL_DEPTH, None)
        sm, wp = warps[0]
        grid = ok(api.readGridId(0, sm, wp))
        assert ok(api.getGridStatus(0, grid)) is CUDBGGridStatus.CUDBG_GRID_STATUS_ACTIVE
        info = ok(api.getGridInfo(0, grid))
        assert info.functionEntry == st.entry and info.blockDim == (THREADS, 1, 1)
        assert info.tid == st.launch.native_id == ok(api.getTID(0, sm, wp)) != 0
        assert ok(api.getBlockDim(0, sm, wp)) == (THREADS, 1, 1)
        assert ok(api.readParamMemory(0, sm, wp, 8, 4)) == (5).to_bytes(4, "little")
        assert ok(api.readGlobalMemory(out.ptr, 4)) == bytes(4)
        image, size = ok(api.getElfImage(0, sm, wp, True))
        assert len(image) == size and image[:4] == b"\x7fELF"
        # coordinates outside the hardware, or of no warp, get their specific codes
        nsms = ok(api.getNumSMs(0))
        assert api.readRegister(0, sm, wp, 40, 0) == (R.CUDBG_ERROR_INVALID_LANE, None)
        assert api.readRegister(0, nsms, wp, 0, 0) == (R.CUDBG_ERROR_INVALID_SM, None)
        assert api.readValidLanes(0, sm, 64) == (R.CUDBG_ERROR_INVALID_WARP, None)
        assert api.readRegister(9, sm, wp, 0, 0) == (R.CUDBG_ERROR_INVALID_DEVICE, None)
        assert api.readRegister(0, sm, wp, 0, 4096)[0] is R.CUDBG_ERROR_INVALID_ARGS
        st.finish()
    assert list(out.to_host()) == [3 * t + 7 for t in range(THREADS)]


def test_single_step_and_device_info_update(api, spin_module):
    out = gpudbg.zeros(THREADS, np.uint32)
    with Stopped(api, spin_module, out) as st:
        sizes = ok(api.getDeviceInfoSizes(0))
        nsms = ok(api.getNumSMs(0))
        data, length = ok(api.getDeviceInfo(0, FULL, sizes.requiredBufferSize))
        full = unpack_device_info(data, nsms, sizes)
        assert len(data) == length and full.info.responseType is FULL
        listed = [(s.sm, w.warp) for s in full.sms for w in s.warps]
        assert sorted(listed) == sorted(stopped_warps(api))
        sm, wp = listed[0]
        warp_rec = full.sms[0].warps[0]
        assert [ln.info.virtualPC for ln in warp_rec.lanes] == [st.bp] * 32
        # nothing changed: an UPDATE lists no SM
        data, _ = ok(api.getDeviceInfo(0, UPDATE, sizes.requiredBufferSize))
        assert unpack_device_info(data, nsms, sizes).sms == ()
        mask = ok(api.singleStepWarp(0, sm, wp, 0, 1, 0))
        assert mask >> wp & 1
        assert ok(api.readVirtualPC(0, sm, wp, 0)) == st.bp + 16
        data, _ = ok(api.getDeviceInfo(0, UPDATE, sizes.requiredBufferSize))
        upd = unpack_device_info(data, nsms, sizes)
        assert upd.info.responseType is UPDATE
        assert upd.attributes[CUDBGDeviceInfoAttribute_t.CUDBG_DEVICE_ATTRIBUTE_SM_UPDATE_MASK] == 1 << sm
        assert [(s.sm, [w.warp for w in s.warps]) for s in upd.sms] == [(sm, [wp])]
        assert {ln.info.virtualPC for ln in upd.sms[0].warps[0].lanes} == {st.bp + 16}
        assert api.singleStepWarp(0, sm, wp, 0, 0, 0)[0] is R.CUDBG_ERROR_INVALID_ARGS
        st.finish()


def test_write_register_changes_the_result(api, spin_module):
    out = gpudbg.zeros(THREADS, np.uint32)
    with Stopped(api, spin_module, out) as st:
        sm, wp = min(stopped_warps(api), key=lambda w: ok(api.readThreadIdx(0, *w, 0)).x)
        assert ok(api.writeRegister(0, sm, wp, 0, 6, 100)) == ()      # %r6 of thread 0: 7 -> 100
        assert ok(api.readRegister(0, sm, wp, 0, 6)) == 100
        assert ok(api.writeSharedMemory(0, sm, wp, 4, (1000).to_bytes(4, "little"), 4)) == ()  # thread 1's word
        st.finish()
    got = out.to_host()
    assert got[0] == 100 and got[1] == 1000 + 7 and got[2] == 3 * 2 + 7


def test_exception_lane_and_error_pc(api):
    module = gpudbg.compile(FAULT_CU, name="cudbg_fault.cu")
    launch = Background(lambda: (module.cudbg_fault.launch(1, 32, (np.int32(9),)), gpudbg.synchronize()))
    try:
        launch.start()
        suspended = wait_suspended(api)
        assert suspended.faultedDevicesMask == 1
        (sm, wp), = stopped_warps(api)
        exc = ok(api.readLaneException(0, sm, wp, 5))
        assert exc is not CUDBGException_t.CUDBG_EXCEPTION_NONE
        assert ok(api.readLaneException(0, sm, wp, 4)) is CUDBGException_t.CUDBG_EXCEPTION_NONE
        assert ok(api.readLaneStatus(0, sm, wp, 5)) is True
        error_pc, valid = ok(api.readErrorPC(0, sm, wp))
        assert valid and error_pc == ok(api.readVirtualPC(0, sm, wp, 5))
        _, text = ok(api.disassemble(0, error_pc, 128))
        assert text.startswith(b"st.")
        assert ok(api.readSmException(0, sm)) == (exc, error_pc, True)
        assert ok(api.readDeviceExceptionState(0, 4))[sm // 64] >> (sm % 64) & 1
        message, size = ok(api.getCudaExceptionString(0, sm, wp, 5, 128))
        assert size == len(message) > 1
        assert ok(api.resumeDevice(0)) == ()
        launch.join(20)
        assert not launch.is_alive() and launch.error is not None   # the launch fails with the fault
    finally:
        if launch.is_alive():
            api.resumeDevice(0)
        launch.join(30)
        gpudbg.Device(0).reset()
