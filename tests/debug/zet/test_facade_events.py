"""zet facade: attach/detach, the event queue with its timeouts, NEED_ACK module
loads, THREAD_UNAVAILABLE, and argument errors."""
from __future__ import annotations

import os
import time

import pytest

import gpudbg
from gpudbg.debug import zet
from gpudbg.debug.zet.enums import (
    ze_result_t,
    zet_debug_event_flag_t,
    zet_debug_event_type_t,
    zet_debug_memory_space_type_t,
    zet_debug_regset_flag_t,
    zet_module_debug_info_format_t,
)
from gpudbg.debug.zet.structs import (
    UINT64_MAX,
    ZE_DEVICE_THREAD_ALL,
    ze_device_thread_t,
    zet_debug_config_t,
    zet_debug_event_t,
    zet_debug_memory_space_desc_t,
)

from zet_kernels import TINY_PTX, Background

R = ze_result_t
T = zet_debug_event_type_t


@pytest.fixture
def hdebug():
    res, h = zet.zetDebugAttach(0, zet_debug_config_t(pid=os.getpid()))
    assert res is R.ZE_RESULT_SUCCESS, zet.last_error_message()
    try:
        yield h
    finally:
        if h.attached:
            zet.zetDebugDetach(h)


def test_attach_detach_and_stale_handle():
    res, h = zet.zetDebugAttach(0, zet_debug_config_t(pid=os.getpid()))
    assert res is R.ZE_RESULT_SUCCESS and isinstance(h, zet.zet_debug_session_handle_t)
    try:
        again, none = zet.zetDebugAttach(0, zet_debug_config_t(pid=os.getpid()))
        assert (again, none) == (R.ZE_RESULT_ERROR_NOT_AVAILABLE, None)
        assert "already attached" in zet.last_error_message()
    finally:
        assert zet.zetDebugDetach(h) == (R.ZE_RESULT_SUCCESS,)
    assert zet.zetDebugDetach(h) == (R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE,)
    assert zet.zetDebugReadEvent(h, 0) == (R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE, None)
    # after a detach the device can be attached again
    res, h2 = zet.zetDebugAttach(0, zet_debug_config_t(pid=os.getpid()))
    assert res is R.ZE_RESULT_SUCCESS
    assert zet.zetDebugDetach(h2) == (R.ZE_RESULT_SUCCESS,)


def test_attach_to_another_pid_is_a_later_feature():
    res, h = zet.zetDebugAttach(0, zet_debug_config_t(pid=os.getpid() + 1))
    assert (res, h) == (R.ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, None)
    assert str(os.getpid() + 1) in zet.last_error_message()
    assert "later feature" in zet.zetDebugAttach.__doc__


def test_attach_argument_errors():
    pid = zet_debug_config_t(pid=os.getpid())
    assert zet.zetDebugAttach(None, pid) == (R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE, None)
    assert zet.zetDebugAttach(0, None) == (R.ZE_RESULT_ERROR_INVALID_NULL_POINTER, None)
    assert zet.zetDebugAttach(0, {"pid": os.getpid()}) == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT, None)
    assert zet.zetDebugAttach(999, pid) == (R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE, None)
    assert "999" in zet.last_error_message()
    assert zet.zetDebugDetach(None) == (R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE,)
    assert zet.zetDebugDetach("session") == (R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE,)


def test_read_event_timeouts_on_an_empty_queue(hdebug):
    t0 = time.monotonic()
    assert zet.zetDebugReadEvent(hdebug, 0) == (R.ZE_RESULT_NOT_READY, None)
    assert time.monotonic() - t0 < 0.5
    t0 = time.monotonic()
    assert zet.zetDebugReadEvent(hdebug, 100) == (R.ZE_RESULT_NOT_READY, None)
    assert time.monotonic() - t0 >= 0.09
    assert zet.zetDebugReadEvent(hdebug, -1) == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT, None)
    assert zet.zetDebugReadEvent(hdebug, UINT64_MAX + 1) == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT, None)


def test_module_load_needs_ack_and_holds_the_loader(hdebug):
    """UINT64_MAX waits for an event another thread causes later; the loading
    thread stays blocked until the tool acknowledges the MODULE_LOAD."""
    def load():
        time.sleep(0.2)
        return gpudbg.Module.from_ptx(TINY_PTX, name="zet_tiny.ptx")

    loader = Background(load)
    loader.start()
    try:
        while True:
            res, ev = zet.zetDebugReadEvent(hdebug, UINT64_MAX)
            assert res is R.ZE_RESULT_SUCCESS, zet.last_error_message()
            if ev.type is T.ZET_DEBUG_EVENT_TYPE_MODULE_LOAD:
                break
            assert not ev.needs_ack
        assert ev.flags & zet_debug_event_flag_t.ZET_DEBUG_EVENT_FLAG_NEED_ACK
        mod = ev.info.module
        assert mod.format is zet_module_debug_info_format_t.ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF
        assert mod.moduleEnd > mod.moduleBegin and mod.load != 0
        time.sleep(0.2)
        assert loader.is_alive(), "the module load returned before the acknowledgement"
        # the module image is readable in the ELF space while the loader waits
        desc = zet_debug_memory_space_desc_t(type=zet_debug_memory_space_type_t.ZET_DEBUG_MEMORY_SPACE_TYPE_ELF,
                                             address=mod.moduleBegin)
        res, head = zet.zetDebugReadMemory(hdebug, ZE_DEVICE_THREAD_ALL, desc, 4)
        assert (res, head) == (R.ZE_RESULT_SUCCESS, b"\x7fELF")
        res, _ = zet.zetDebugReadMemory(hdebug, ZE_DEVICE_THREAD_ALL, desc, mod.moduleEnd - mod.moduleBegin + 1)
        assert res is R.ZE_RESULT_ERROR_NOT_AVAILABLE
        assert zet.zetDebugAcknowledgeEvent(hdebug, ev) == (R.ZE_RESULT_SUCCESS,)
        loader.join(10)
        assert not loader.is_alive() and loader.error is None
        assert zet.zetDebugAcknowledgeEvent(hdebug, ev) == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT,)
        assert "already acknowledged" in zet.last_error_message()
        # unloading reports the same module, without holding the host
        loader.result.unload()
        res, gone = read_until(hdebug, T.ZET_DEBUG_EVENT_TYPE_MODULE_UNLOAD)
        assert res is R.ZE_RESULT_SUCCESS and gone.info.module == mod and not gone.needs_ack
    finally:
        zet.zetDebugDetach(hdebug)
        loader.join(10)


def read_until(h, type_, timeout_ms: int = 5000):
    """The next event of ``type_``, skipping others; (NOT_READY, None) on timeout."""
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        res, ev = zet.zetDebugReadEvent(h, 500)
        if res is R.ZE_RESULT_SUCCESS and ev.type is type_:
            return res, ev
        if res is R.ZE_RESULT_SUCCESS and ev.needs_ack:
            zet.zetDebugAcknowledgeEvent(h, ev)
    return R.ZE_RESULT_NOT_READY, None


def test_process_exit_and_entry_follow_the_contexts(hdebug):
    gpudbg.Device(0).reset()        # destroys the primary context: the last one
    res, ev = read_until(hdebug, T.ZET_DEBUG_EVENT_TYPE_PROCESS_EXIT)
    assert res is R.ZE_RESULT_SUCCESS and ev.payload is None
    gpudbg.zeros(4)                 # the next use creates a fresh primary context
    res, ev = read_until(hdebug, T.ZET_DEBUG_EVENT_TYPE_PROCESS_ENTRY)
    assert res is R.ZE_RESULT_SUCCESS


def test_acknowledge_errors(hdebug):
    plain = zet_debug_event_t(T.ZET_DEBUG_EVENT_TYPE_PROCESS_ENTRY)
    assert zet.zetDebugAcknowledgeEvent(hdebug, None) == (R.ZE_RESULT_ERROR_INVALID_NULL_POINTER,)
    assert zet.zetDebugAcknowledgeEvent(hdebug, plain) == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT,)
    assert "NEED_ACK" in zet.last_error_message()
    assert zet.zetDebugAcknowledgeEvent(hdebug, "event") == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT,)


def test_interrupt_with_nothing_running_reports_unavailable(hdebug):
    one = ze_device_thread_t(0, 3, 1, 2)
    assert zet.zetDebugInterrupt(hdebug, one) == (R.ZE_RESULT_SUCCESS,)
    res, ev = zet.zetDebugReadEvent(hdebug, 1000)
    assert res is R.ZE_RESULT_SUCCESS
    assert ev.type is T.ZET_DEBUG_EVENT_TYPE_THREAD_UNAVAILABLE and ev.info.thread.thread == one
    assert zet.zetDebugResume(hdebug, ZE_DEVICE_THREAD_ALL) == (R.ZE_RESULT_NOT_READY,)
    assert zet.zetDebugReadEvent(hdebug, 0) == (R.ZE_RESULT_NOT_READY, None)


def test_thread_argument_errors(hdebug):
    desc = zet_debug_memory_space_desc_t()
    outside = ze_device_thread_t(99, 0, 0, 0)
    assert zet.zetDebugInterrupt(hdebug, outside) == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT,)
    assert "slice 99" in zet.last_error_message()
    assert zet.zetDebugInterrupt(hdebug, (0, 0, 0, 0)) == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT,)
    assert zet.zetDebugResume(hdebug, ze_device_thread_t(0, 0, 4, 0)) == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT,)
    one = ze_device_thread_t(0, 0, 0, 0)
    # a thread nobody reported stopped: "running or unavailable"
    assert zet.zetDebugReadRegisters(hdebug, one, 1, 0, 1) == (R.ZE_RESULT_ERROR_NOT_AVAILABLE, None)
    assert zet.zetDebugReadMemory(hdebug, one, desc, 4) == (R.ZE_RESULT_ERROR_NOT_AVAILABLE, None)
    # register and SLM access name one thread
    slm = zet_debug_memory_space_desc_t(type=zet_debug_memory_space_type_t.ZET_DEBUG_MEMORY_SPACE_TYPE_SLM)
    assert zet.zetDebugReadMemory(hdebug, ZE_DEVICE_THREAD_ALL, slm, 4) == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT, None)
    assert "wildcard" in zet.last_error_message()
    assert zet.zetDebugReadRegisters(hdebug, ZE_DEVICE_THREAD_ALL, 1, 0, 1) == (
        R.ZE_RESULT_ERROR_INVALID_ARGUMENT, None)
    assert zet.zetDebugReadMemory(hdebug, one, None, 4) == (R.ZE_RESULT_ERROR_INVALID_NULL_POINTER, None)
    assert zet.zetDebugReadMemory(hdebug, one, desc, -1) == (R.ZE_RESULT_ERROR_INVALID_SIZE, None)
    elf = zet_debug_memory_space_desc_t(type=zet_debug_memory_space_type_t.ZET_DEBUG_MEMORY_SPACE_TYPE_ELF)
    assert zet.zetDebugWriteMemory(hdebug, ZE_DEVICE_THREAD_ALL, elf, 1, b"x") == (
        R.ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,)


def test_register_set_properties_without_a_debugger():
    res, n, sets = zet.zetDebugGetRegisterSetProperties(0, 4)
    assert (res, n) == (R.ZE_RESULT_SUCCESS, 4) and sets[0].byteSize == 128
    assert zet.zetDebugGetRegisterSetProperties(7, 0) == (R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE, None, None)


def test_register_set_properties_of_the_device(hdebug):
    RT = zet.zet_debug_regset_type_gpudbg_t
    res, n, sets = zet.zetDebugGetRegisterSetProperties(0, 0)
    assert (res, n, sets) == (R.ZE_RESULT_SUCCESS, 4, [])
    res, n, sets = zet.zetDebugGetRegisterSetProperties(0, 10)
    assert (res, n) == (R.ZE_RESULT_SUCCESS, 4)
    assert [s.type for s in sets] == [RT.ZET_DEBUG_REGSET_TYPE_GRF_GPUDBG, RT.ZET_DEBUG_REGSET_TYPE_FLAG_GPUDBG,
                                      RT.ZET_DEBUG_REGSET_TYPE_CE_GPUDBG, RT.ZET_DEBUG_REGSET_TYPE_PC_GPUDBG]
    props = hdebug.session.device(0)
    grf, flag = sets[0], sets[1]
    assert (grf.count, grf.bitSize, grf.byteSize) == (props.num_registers, 32 * props.num_lanes, 4 * props.num_lanes)
    assert flag.count == props.num_predicates and flag.bitSize == 32
    readable = zet_debug_regset_flag_t.ZET_DEBUG_REGSET_FLAG_READABLE
    writeable = zet_debug_regset_flag_t.ZET_DEBUG_REGSET_FLAG_WRITEABLE
    assert [s.generalFlags for s in sets] == [readable | writeable, readable | writeable, readable, readable]
    res, n, two = zet.zetDebugGetRegisterSetProperties(0, 2)
    assert (res, n, two) == (R.ZE_RESULT_SUCCESS, 2, sets[:2])
    assert zet.zetDebugGetRegisterSetProperties(None, 0) == (R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE, None, None)
    assert zet.zetDebugGetRegisterSetProperties(0, -1) == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT, None, None)
