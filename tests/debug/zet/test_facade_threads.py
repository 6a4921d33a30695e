"""zet facade on a running kernel: interrupt all threads, THREAD_STOPPED per warp,
registers, SLM, BARRIER and DEFAULT memory of a stopped thread, a register write
that the kernel's result shows after resume; and a page fault."""
from __future__ import annotations

import os
import struct
import time

import numpy as np
import pytest

import gpudbg
from gpudbg.debug import zet
from gpudbg.debug.zet import facade_memory
from gpudbg.debug.zet.enums import (
    ze_result_t,
    zet_debug_event_type_t,
    zet_debug_memory_space_type_t,
    zet_debug_page_fault_reason_t,
)
from gpudbg.debug.zet.structs import UINT32_MAX as ALL
from gpudbg.debug.zet.structs import (
    ZE_DEVICE_THREAD_ALL,
    ze_device_thread_t,
    zet_debug_config_t,
    zet_debug_memory_space_desc_t,
)

from gpudbg.sim.memory import SHARED_WINDOW_BASE

from zet_kernels import BARRIER_PTX, FAULT_ADDRESS, FAULT_PTX, SPIN_PTX, TINY_PTX, Background

R = ze_result_t
T = zet_debug_event_type_t
S = zet_debug_memory_space_type_t
RT = zet.zet_debug_regset_type_gpudbg_t
GRF = RT.ZET_DEBUG_REGSET_TYPE_GRF_GPUDBG
SPIN_LIMIT = 100_000   # iterations: ~10 s of debugged simulation if nobody ends the loop


@pytest.fixture(scope="module")
def spin_module():
    return gpudbg.Module.from_ptx(SPIN_PTX, name="zet_spin.ptx")


def attach():
    res, h = zet.zetDebugAttach(0, zet_debug_config_t(pid=os.getpid()))
    assert res is R.ZE_RESULT_SUCCESS, zet.last_error_message()
    return h


def read_stopped(h, expect: int) -> list:
    """The next ``expect`` THREAD_STOPPED threads (other events are skipped)."""
    threads = []
    deadline = time.monotonic() + 10
    while len(threads) < expect and time.monotonic() < deadline:
        res, ev = zet.zetDebugReadEvent(h, 2000)
        if res is R.ZE_RESULT_SUCCESS and ev.type is T.ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED:
            threads.append(ev.info.thread.thread)
        elif res is R.ZE_RESULT_SUCCESS and ev.needs_ack:
            zet.zetDebugAcknowledgeEvent(h, ev)
    assert len(threads) == expect, f"got THREAD_STOPPED for {threads}, expected {expect}"
    return threads


def wait_resident(h, warps: int = 2) -> None:
    """Until the launch's warps are resident (an interrupt before that has no thread to stop)."""
    deadline = time.monotonic() + 10
    while len(h.session.warps(0)) < warps:
        assert time.monotonic() < deadline, "the kernel did not start"
        time.sleep(0.01)


def r_index(h, thread, ptx_name: str) -> int:
    sm, wp = h.mapping.to_sim(thread)
    for name, _, kind, first, _ in h.session.register_map(0, sm, wp, 0):
        if kind == "R" and name.lstrip("%") == ptx_name.lstrip("%"):
            return int(first)
    raise AssertionError(f"{ptx_name} not in the register map")


def grf(h, thread, n: int) -> np.ndarray:
    res, data = zet.zetDebugReadRegisters(h, thread, GRF, n, 1)
    assert res is R.ZE_RESULT_SUCCESS, zet.last_error_message()
    return np.frombuffer(data, dtype="<u4")


def test_interrupt_read_write_resume(spin_module):
    out = gpudbg.zeros(65, np.uint32)     # out[64] is the tool's: the kernel writes 0..63

    def run():
        spin_module.spin.launch(1, 64, (out, np.uint32(SPIN_LIMIT)))
        gpudbg.synchronize()

    h = attach()
    launch = Background(run)
    try:
        launch.start()
        wait_resident(h)
        for attempt in range(20):
            time.sleep(0.05)
            assert zet.zetDebugInterrupt(h, ZE_DEVICE_THREAD_ALL) == (R.ZE_RESULT_SUCCESS,), zet.last_error_message()
            threads = read_stopped(h, 2)
            loop = r_index(h, threads[0], "%r4")
            if all(grf(h, t, loop)[0] > 0 for t in threads):
                break      # both warps are inside the loop: their shared stores are done
            assert zet.zetDebugResume(h, ZE_DEVICE_THREAD_ALL) == (R.ZE_RESULT_SUCCESS,)
        else:
            pytest.fail("the kernel never reached its loop")
        assert len(set(threads)) == 2 and all(t.is_single for t in threads)
        assert zet.zetDebugInterrupt(h, threads[0]) == (R.ZE_RESULT_NOT_READY,)
        sess = h.session
        for t in threads:
            sm, wp = h.mapping.to_sim(t)
            view = sess.warp(0, sm, wp)
            tid = np.array([lane.thread_idx[0] for lane in view.lanes])
            # GRF: one 32-bit element per lane; %r1 = tid.x, %r2 = 3 * tid.x
            r1, r2 = r_index(h, t, "%r1"), r_index(h, t, "%r2")
            assert list(grf(h, t, r1)) == list(tid) and list(grf(h, t, r2)) == list(3 * tid)
            # CE and PC
            res, ce = zet.zetDebugReadRegisters(h, t, RT.ZET_DEBUG_REGSET_TYPE_CE_GPUDBG, 0, 1)
            assert struct.unpack("<I", ce)[0] == view.active_mask
            res, pc = zet.zetDebugReadRegisters(h, t, RT.ZET_DEBUG_REGSET_TYPE_PC_GPUDBG, 0, 1)
            assert struct.unpack("<Q", pc)[0] == view.pc
            # the thread's register sets come from the running function
            res, n, sets = zet.zetDebugGetThreadRegisterSetProperties(h, t, 4)
            assert res is R.ZE_RESULT_SUCCESS and n == 4
            assert sets[0].count == max(int(f) + int(w) for _, _, k, f, w in sess.register_map(0, sm, wp, 0)
                                        if k == "R")
            assert zet.zetDebugReadRegisters(h, t, GRF, sets[0].count, 1)[0] is R.ZE_RESULT_ERROR_INVALID_ARGUMENT
            assert zet.zetDebugReadRegisters(h, t, 2, 0, 1)[0] is R.ZE_RESULT_ERROR_INVALID_ARGUMENT
            # DEFAULT with 'all' at the thread's pc: the code image (its first word is the instruction index)
            desc = zet_debug_memory_space_desc_t(type=S.ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT, address=view.pc)
            res, code = zet.zetDebugReadMemory(h, ZE_DEVICE_THREAD_ALL, desc, 16)
            assert res is R.ZE_RESULT_SUCCESS and len(code) == 16
            # BARRIER: two warps, 64 threads, nobody waiting
            bar = zet_debug_memory_space_desc_t(type=S.ZET_DEBUG_MEMORY_SPACE_TYPE_BARRIER)
            res, state = zet.zetDebugReadMemory(h, t, bar, facade_memory.BARRIER_HEADER.size + 32)
            assert res is R.ZE_RESULT_SUCCESS, zet.last_error_message()
            decoded = zet.decode_barrier_state(state)
            assert (decoded["threads"], decoded["arrived"], len(decoded["warps"])) == (64, 0, 2)
            assert [w["flags"] & facade_memory.BARRIER_FLAG_THIS_THREAD for w in decoded["warps"]].count(2) == 1
        # SLM of the block: 3 * tid for all 64 threads
        slm = zet_debug_memory_space_desc_t(type=S.ZET_DEBUG_MEMORY_SPACE_TYPE_SLM, address=0)
        buf = bytearray(256)
        res, data = zet.zetDebugReadMemory(h, threads[0], slm, 256, buf)
        assert res is R.ZE_RESULT_SUCCESS and bytes(buf) == data
        assert list(np.frombuffer(data, "<u4")) == [3 * i for i in range(64)]
        # DEFAULT as a thread sees it: the shared window is its block's SLM, other addresses global
        t0 = threads[0]
        window = zet_debug_memory_space_desc_t(type=S.ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT,
                                               address=SHARED_WINDOW_BASE + 8)
        assert zet.zetDebugReadMemory(h, t0, window, 8) == (R.ZE_RESULT_SUCCESS, data[8:16])
        tail = zet_debug_memory_space_desc_t(type=S.ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT, address=out.ptr + 256)
        assert zet.zetDebugWriteMemory(h, ZE_DEVICE_THREAD_ALL, tail, 4, struct.pack("<I", 0xC0FFEE)) == (
            R.ZE_RESULT_SUCCESS,)
        assert zet.zetDebugReadMemory(h, t0, tail, 4) == (R.ZE_RESULT_SUCCESS, struct.pack("<I", 0xC0FFEE))
        # SLM write: thread 1's shared word, which the kernel adds to its result
        one = zet_debug_memory_space_desc_t(type=S.ZET_DEBUG_MEMORY_SPACE_TYPE_SLM, address=4)
        assert zet.zetDebugWriteMemory(h, t0, one, 4, struct.pack("<I", 1000)) == (R.ZE_RESULT_SUCCESS,)
        # FLAG: one bit per lane, written and read back (then restored)
        FLAG = RT.ZET_DEBUG_REGSET_TYPE_FLAG_GPUDBG
        res, p1 = zet.zetDebugReadRegisters(h, t0, FLAG, 1, 1)
        assert res is R.ZE_RESULT_SUCCESS
        assert zet.zetDebugWriteRegisters(h, t0, FLAG, 1, 1, struct.pack("<I", 0x0000FFFF)) == (R.ZE_RESULT_SUCCESS,)
        assert zet.zetDebugReadRegisters(h, t0, FLAG, 1, 1) == (R.ZE_RESULT_SUCCESS, struct.pack("<I", 0x0000FFFF))
        assert zet.zetDebugWriteRegisters(h, t0, FLAG, 1, 1, p1) == (R.ZE_RESULT_SUCCESS,)
        # a 64-bit PTX register is two GRF registers, low half first
        sm0, wp0 = h.mapping.to_sim(t0)
        rd0 = r_index(h, t0, "%rd0")
        halves = struct.pack("<32I", *range(32)) + struct.pack("<32I", *[0xAB000000 + ln for ln in range(32)])
        assert zet.zetDebugWriteRegisters(h, t0, GRF, rd0, 2, halves) == (R.ZE_RESULT_SUCCESS,)
        assert int(sess.read_register(0, sm0, wp0, 5, "%rd0")) == (0xAB000005 << 32) | 5
        into = bytearray(256)
        assert zet.zetDebugReadRegisters(h, t0, GRF, rd0, 2, into) == (R.ZE_RESULT_SUCCESS, halves)
        assert bytes(into) == halves
        # write: %r6 (the addend) := 100 + lane, %r5 (the loop bound) := 0 so the loop ends
        for t in threads:
            r5, r6 = r_index(h, t, "%r5"), r_index(h, t, "%r6")
            addend = struct.pack("<32I", *[100 + ln for ln in range(32)])
            assert zet.zetDebugWriteRegisters(h, t, GRF, r6, 1, addend) == (R.ZE_RESULT_SUCCESS,)
            assert zet.zetDebugWriteRegisters(h, t, GRF, r5, 1, bytes(128)) == (R.ZE_RESULT_SUCCESS,)
            assert list(grf(h, t, r6)) == [100 + ln for ln in range(32)]
            assert zet.zetDebugWriteRegisters(h, t, GRF, r6, 1, b"short") == (R.ZE_RESULT_ERROR_INVALID_SIZE,)
            assert zet.zetDebugWriteRegisters(h, t, RT.ZET_DEBUG_REGSET_TYPE_PC_GPUDBG, 0, 1, bytes(8)) == (
                R.ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,)
        assert zet.zetDebugResume(h, ZE_DEVICE_THREAD_ALL) == (R.ZE_RESULT_SUCCESS,)
        assert zet.zetDebugResume(h, threads[0]) == (R.ZE_RESULT_NOT_READY,)
        launch.join(20)
        assert not launch.is_alive() and launch.error is None, launch.error
        tid = np.arange(64)
        expect = 3 * tid + 100 + tid % 32
        expect[1] = 1000 + 100 + 1
        assert list(out.to_host()) == list(expect) + [0xC0FFEE]
    finally:
        if h.attached:
            zet.zetDebugDetach(h)
        launch.join(30)


def test_resume_one_thread_keeps_the_other_stopped(spin_module):
    out = gpudbg.zeros(64, np.uint32)

    def run():
        spin_module.spin.launch(1, 64, (out, np.uint32(SPIN_LIMIT)))
        gpudbg.synchronize()

    h = attach()
    launch = Background(run)
    try:
        launch.start()
        wait_resident(h)
        # eu = warp % 4: the block's two warps are told apart by the eu field alone
        eu1 = ze_device_thread_t(ALL, ALL, 1, ALL)
        assert zet.zetDebugInterrupt(h, eu1) == (R.ZE_RESULT_SUCCESS,)
        [second] = read_stopped(h, 1)
        assert second.eu == 1 and h.mapping.to_sim(second).warp % 4 == 1
        assert zet.zetDebugInterrupt(h, eu1) == (R.ZE_RESULT_NOT_READY,)
        assert zet.zetDebugReadEvent(h, 200) == (R.ZE_RESULT_NOT_READY, None)   # nothing else stopped
        assert zet.zetDebugInterrupt(h, ze_device_thread_t(ALL, ALL, 0, ALL)) == (R.ZE_RESULT_SUCCESS,)
        [first] = read_stopped(h, 1)
        assert first.eu == 0
        for t in (first, second):
            zet.zetDebugWriteRegisters(h, t, GRF, r_index(h, t, "%r5"), 1, bytes(128))
        assert zet.zetDebugResume(h, first) == (R.ZE_RESULT_SUCCESS,)
        assert zet.zetDebugReadRegisters(h, first, GRF, 0, 1)[0] is R.ZE_RESULT_ERROR_NOT_AVAILABLE
        time.sleep(0.3)
        # the second warp is still stopped: readable, and the launch has not finished
        assert zet.zetDebugReadRegisters(h, second, GRF, 0, 1)[0] is R.ZE_RESULT_SUCCESS
        assert launch.is_alive()
        assert zet.zetDebugResume(h, second) == (R.ZE_RESULT_SUCCESS,)
        launch.join(20)
        assert not launch.is_alive() and launch.error is None, launch.error
        assert list(out.to_host()) == [3 * i + 7 for i in range(64)]
    finally:
        if h.attached:
            zet.zetDebugDetach(h)
        launch.join(30)


def test_page_fault_event():
    module = gpudbg.Module.from_ptx(FAULT_PTX, name="zet_fault.ptx")

    def run():
        module.fault.launch(1, 32, (np.uint32(5),))
        gpudbg.synchronize()

    h = attach()
    launch = Background(run)
    try:
        launch.start()
        fault = stopped = None
        deadline = time.monotonic() + 10
        while (fault is None or stopped is None) and time.monotonic() < deadline:
            res, ev = zet.zetDebugReadEvent(h, 2000)
            if res is not R.ZE_RESULT_SUCCESS:
                continue
            if ev.type is T.ZET_DEBUG_EVENT_TYPE_PAGE_FAULT:
                fault = ev.info.page_fault
            elif ev.type is T.ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED:
                stopped = ev.info.thread.thread
        assert fault is not None and stopped is not None
        assert fault.address == FAULT_ADDRESS
        assert fault.address & fault.mask == FAULT_ADDRESS & ~0xFFF
        assert fault.reason is zet_debug_page_fault_reason_t.ZET_DEBUG_PAGE_FAULT_REASON_MAPPING_ERROR
        assert zet.zetDebugReadRegisters(h, stopped, GRF, 0, 1)[0] is R.ZE_RESULT_SUCCESS
        assert zet.zetDebugResume(h, ZE_DEVICE_THREAD_ALL) == (R.ZE_RESULT_SUCCESS,)
        launch.join(20)
        assert not launch.is_alive()
        assert launch.error is not None      # the launch fails with the fault
    finally:
        if h.attached:
            zet.zetDebugDetach(h)
        launch.join(30)
        gpudbg.Device(0).reset()


def test_barrier_space_shows_the_waiting_warp():
    module = gpudbg.Module.from_ptx(BARRIER_PTX, name="zet_meet.ptx")

    def run():
        module.meet.launch(1, 64, (np.uint32(SPIN_LIMIT),))
        gpudbg.synchronize()

    h = attach()
    launch = Background(run)
    try:
        launch.start()
        wait_resident(h)
        deadline = time.monotonic() + 10
        while not any(w.at_barrier for w in h.session.warps(0)):
            assert time.monotonic() < deadline, "warp 0 never reached the barrier"
            time.sleep(0.01)
        assert zet.zetDebugInterrupt(h, ZE_DEVICE_THREAD_ALL) == (R.ZE_RESULT_SUCCESS,)
        threads = sorted(read_stopped(h, 2), key=lambda t: h.mapping.to_sim(t))
        bar = zet_debug_memory_space_desc_t(type=S.ZET_DEBUG_MEMORY_SPACE_TYPE_BARRIER)
        size = facade_memory.BARRIER_HEADER.size + 2 * facade_memory.BARRIER_WARP.size
        res, state = zet.zetDebugReadMemory(h, threads[1], bar, size)
        assert res is R.ZE_RESULT_SUCCESS, zet.last_error_message()
        d = zet.decode_barrier_state(state)
        assert (d["version"], d["lanes"], d["threads"]) == (1, 32, 64)
        assert (d["arrived"], d["warps_arrived"]) == (32, 1)
        waiting, counting = d["warps"]
        assert waiting["arrived_mask"] == 0xFFFFFFFF and waiting["flags"] == facade_memory.BARRIER_FLAG_AT_BARRIER
        assert counting["arrived_mask"] == 0 and counting["flags"] == facade_memory.BARRIER_FLAG_THIS_THREAD
        assert zet.zetDebugReadMemory(h, threads[1], bar, size + 1)[0] is R.ZE_RESULT_ERROR_NOT_AVAILABLE
        assert zet.zetDebugWriteMemory(h, threads[1], bar, 4, bytes(4)) == (R.ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,)
        zet.zetDebugWriteRegisters(h, threads[1], GRF, r_index(h, threads[1], "%r5"), 1, bytes(128))
        assert zet.zetDebugResume(h, ZE_DEVICE_THREAD_ALL) == (R.ZE_RESULT_SUCCESS,)
        launch.join(20)
        assert not launch.is_alive() and launch.error is None, launch.error
    finally:
        if h.attached:
            zet.zetDebugDetach(h)
        launch.join(30)


def test_breakpoint_over_an_existing_session():
    """zet over a Session the tool already has: a Session breakpoint shows up as THREAD_STOPPED,
    and zetDebugDetach leaves that Session attached."""
    from gpudbg.debug.session import Session

    module = gpudbg.Module.from_ptx(TINY_PTX, name="zet_tiny_bp.ptx")
    out = gpudbg.zeros(1, np.uint32)
    session = Session.attach()
    try:
        res, h = zet.zetDebugAttach(0, zet_debug_config_t(pid=os.getpid()), session=session)
        assert res is R.ZE_RESULT_SUCCESS, zet.last_error_message()
        bp = session.break_at_kernel("tiny")
        assert bp.addresses
        launch = Background(lambda: (module.tiny.launch(1, 32, (out,)), gpudbg.synchronize()))
        launch.start()
        try:
            [t] = read_stopped(h, 1)
            res, pc = zet.zetDebugReadRegisters(h, t, RT.ZET_DEBUG_REGSET_TYPE_PC_GPUDBG, 0, 1)
            assert res is R.ZE_RESULT_SUCCESS and struct.unpack("<Q", pc)[0] in bp.addresses
            session.delete_breakpoint(bp)
            assert zet.zetDebugResume(h, t) == (R.ZE_RESULT_SUCCESS,)
            launch.join(20)
            assert not launch.is_alive() and launch.error is None, launch.error
            assert int(out.to_host()[0]) == 42
        finally:
            if h.attached:
                zet.zetDebugDetach(h)
            launch.join(30)
        assert session.attached
    finally:
        session.detach()
