"""The cudbg facade without a running kernel: cudbgGetAPI versions, the table-driven
class (every latest entry, inputs by C name, outputs counted), argument checks,
error codes and strings, device properties, events and ELF images of a module
loaded after initialize."""
from __future__ import annotations

import inspect
import threading
import time

import pytest

import gpudbg
from gpudbg.debug.cudbg import facade as F
from gpudbg.debug.cudbg.api_table import LATEST_ENTRIES
from gpudbg.debug.cudbg.enums import (
    CUDBGCapabilityFlags,
    CUDBGElfImageType,
    CUDBGEventKind,
    CUDBGEventQueueType,
    CUDBGResult,
)
from gpudbg.debug.cudbg.errors import cudbgGetErrorString
from gpudbg.dump.coredump.cubin import read_cubin

R = CUDBGResult
SYNC = CUDBGEventQueueType.CUDBG_EVENT_QUEUE_TYPE_SYNC
ASYNC = CUDBGEventQueueType.CUDBG_EVENT_QUEUE_TYPE_ASYNC

TWO_FUNCS_PTX = r"""
.version 7.8
.target sm_80
.address_size 64

.visible .func (.param .u32 r) twice(.param .u32 a)
{
    .reg .u32 %r<3>;
    ld.param.u32 %r1, [a];
    add.u32 %r2, %r1, %r1;
    st.param.u32 [r], %r2;
    ret;
}

.visible .entry loaded_late(.param .u64 out)
{
    .reg .u64 %rd<3>;
    .reg .u32 %r<3>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, 21;
    {
    .param .u32 a0;
    .param .u32 r0;
    st.param.u32 [a0], %r1;
    call.uni (r0), twice, (a0);
    ld.param.u32 %r2, [r0];
    }
    cvta.to.global.u64 %rd2, %rd1;
    st.global.u32 [%rd2], %r2;
    ret;
}
"""


@pytest.fixture
def api():
    gpudbg.synchronize()   # the driver's devices exist once the program has used the GPU
    res, api = F.cudbgGetAPI(F.CUDBG_API_VERSION_MAJOR, F.CUDBG_API_VERSION_MINOR, F.CUDBG_API_VERSION_REVISION)
    assert res is R.CUDBG_SUCCESS
    assert api.initialize() == (R.CUDBG_SUCCESS,)
    try:
        yield api
    finally:
        api.finalize()


def next_event(api, queue, kind, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        res, ev = api.getNextEvent(queue)
        if res is R.CUDBG_SUCCESS and ev.kind is kind:
            return ev
        if res is R.CUDBG_ERROR_NO_EVENT_AVAILABLE:
            time.sleep(0.005)
    raise AssertionError(f"no {kind.name} event within {timeout} s")


def test_version_numbers_are_the_seeds():
    assert (F.CUDBG_API_VERSION_MAJOR, F.CUDBG_API_VERSION_MINOR, F.CUDBG_API_VERSION_REVISION) == (13, 0, 163)
    assert F.cudbgGetAPIVersion() == (R.CUDBG_SUCCESS, 13, 0, 163)


@pytest.mark.parametrize("version,expected", [
    ((13, 0, 163), R.CUDBG_SUCCESS),
    ((13, 0, 100), R.CUDBG_SUCCESS),          # an older revision of the same API
    ((13, 0, 164), R.CUDBG_ERROR_INCOMPATIBLE_API),
    ((13, 1, 0), R.CUDBG_ERROR_INCOMPATIBLE_API),
    ((12, 9, 0), R.CUDBG_ERROR_INCOMPATIBLE_API),
    ((14, 0, 0), R.CUDBG_ERROR_INCOMPATIBLE_API),
    ((-1, 0, 0), R.CUDBG_ERROR_INVALID_ARGS),
    ((13, 0, "163"), R.CUDBG_ERROR_INVALID_ARGS),
])
def test_cudbgGetAPI_checks_the_version(version, expected):
    res, api = F.cudbgGetAPI(*version)
    assert res is expected
    assert (api is not None) == (expected is R.CUDBG_SUCCESS)


def test_every_latest_entry_is_a_method_with_the_tables_inputs():
    res, api = F.cudbgGetAPI(13, 0, 163)
    for entry in LATEST_ENTRIES:
        method = getattr(api, entry.name)
        assert list(inspect.signature(method).parameters) == [p.name for p in entry.inputs], entry.name
        assert entry.c_signature() in method.__doc__
    extra = {n for n, v in vars(type(api)).items() if getattr(v, "entry", None) is not None}
    assert extra == {e.name for e in LATEST_ENTRIES}


def test_calls_before_initialize_are_refused_with_all_outputs_none():
    res, api = F.cudbgGetAPI(13, 0, 163)
    for entry in LATEST_ENTRIES:
        if entry.name in F.NO_INIT_NEEDED or entry.name in F.UNSUPPORTED:
            continue
        args = [0] * len(entry.inputs)
        got = getattr(api, entry.name)(*args)
        assert len(got) == 1 + len(entry.outputs), entry.name
        # an input of the wrong type is INVALID_ARGS even before initialize; otherwise UNINITIALIZED
        assert got[0] in (R.CUDBG_ERROR_UNINITIALIZED, R.CUDBG_ERROR_INVALID_ARGS), entry.name
        assert all(o is None for o in got[1:]), entry.name
    assert api.readRegister(0, 0, 0, 0, 0) == (R.CUDBG_ERROR_UNINITIALIZED, None)
    res, caps = api.getSupportedDebuggerCapabilities()   # the header: callable without initialize
    assert res is R.CUDBG_SUCCESS
    assert caps & CUDBGCapabilityFlags.CUDBG_DEBUGGER_CAPABILITY_SUSPEND_EVENTS


def test_unsupported_entries_say_why(api):
    for name, (code, reason) in F.UNSUPPORTED.items():
        method = getattr(api, name)
        assert not method.implemented
        assert reason in method.__doc__
        entry = method.entry
        got = method(*[0] * len(entry.inputs)) if entry.inputs and all(
            p.type in ("uint32_t", "uint64_t", "uintptr_t") for p in entry.inputs) else None
        if got is not None:
            assert got == (code, *([None] * len(entry.outputs)))


def test_argument_count_and_types_are_checked_against_the_table(api):
    assert api.readRegister(0, 0, 0, 0) == (R.CUDBG_ERROR_INVALID_ARGS, None)       # regno missing
    assert api.readRegister(0, 0, 0, 0, 0, 0) == (R.CUDBG_ERROR_INVALID_ARGS, None)  # one too many
    assert api.readRegister(0, 0, 0, 0, regnum=1)[0] is R.CUDBG_ERROR_INVALID_ARGS
    assert api.getNumSMs(1 << 32) == (R.CUDBG_ERROR_INVALID_ARGS, None)              # not a uint32_t
    assert api.getNumSMs(-1) == (R.CUDBG_ERROR_INVALID_ARGS, None)
    assert api.getNextEvent(7) == (R.CUDBG_ERROR_INVALID_ARGS, None)                  # not a CUDBGEventQueueType
    assert api.getElfImage(0, 0, 0, 2)[0] is R.CUDBG_ERROR_INVALID_ARGS              # bool
    res, buf, size = api.getErrorStringEx(256)
    assert res is R.CUDBG_SUCCESS and b"CUDBG_ERROR_INVALID_ARGS" in buf and b"bool" in buf
    assert api.getNumSMs(dev=0) == (R.CUDBG_SUCCESS, api.session.device(0).num_sms)


def test_error_strings_and_last_error(api):
    assert cudbgGetErrorString(R.CUDBG_ERROR_INVALID_WARP) == "CUDBG_ERROR_INVALID_WARP"
    assert F.cudbgGetErrorString(0x2E) == "CUDBG_ERROR_NOT_SUPPORTED"
    assert cudbgGetErrorString(0x2F) == "*UNDEFINED*"
    ndev = api.getNumDevices()[1]
    assert api.readValidWarps(ndev, 0) == (R.CUDBG_ERROR_INVALID_DEVICE, None)
    res, _, size = api.getErrorStringEx(0)                 # size query first
    assert res is R.CUDBG_ERROR_BUFFER_TOO_SMALL and size > 1
    res, buf, size2 = api.getErrorStringEx(size)           # then the copy: reading did not clear it
    assert res is R.CUDBG_SUCCESS and size2 == size == len(buf)
    text = buf.rstrip(b"\0").decode()
    assert text.startswith("readValidWarps: CUDBG_ERROR_INVALID_DEVICE") and f"device {ndev}" in text
    assert api.getNumDevices() == (R.CUDBG_SUCCESS, ndev)  # a success clears the message
    assert api.getErrorStringEx(8) == (R.CUDBG_SUCCESS, b"\0", 1)


@pytest.mark.parametrize("code,result", [
    ("INVALID_LANE", R.CUDBG_ERROR_INVALID_LANE), ("INVALID_SM", R.CUDBG_ERROR_INVALID_SM),
    ("RUNNING", R.CUDBG_ERROR_RUNNING_DEVICE), ("MEMORY_MAPPING_FAILED", R.CUDBG_ERROR_MEMORY_MAPPING_FAILED),
    ("INVALID_REGISTER", R.CUDBG_ERROR_INVALID_ARGS), ("NOT_SUPPORTED", R.CUDBG_ERROR_NOT_SUPPORTED),
    ("INVALID_CONTEXT", R.CUDBG_ERROR_INVALID_CONTEXT), ("no such code", R.CUDBG_ERROR_UNKNOWN),
])
def test_session_codes_map_to_results(code, result):
    assert F.result_for_code(code) is result


def test_device_properties(api):
    props = api.session.device(0)
    assert api.getNumSMs(0) == (R.CUDBG_SUCCESS, props.num_sms)
    assert api.getNumWarps(0) == (R.CUDBG_SUCCESS, props.num_warps)
    assert api.getNumLanes(0) == (R.CUDBG_SUCCESS, props.num_lanes)
    assert api.getNumRegisters(0) == (R.CUDBG_SUCCESS, props.num_registers)
    assert api.getNumPredicates(0) == (R.CUDBG_SUCCESS, props.num_predicates)
    assert api.getNumUniformRegisters(0) == (R.CUDBG_SUCCESS, 0)
    assert api.getDeviceName(0, 64) == (R.CUDBG_SUCCESS, props.name.encode() + b"\0")
    assert api.getSmType(0, 16) == (R.CUDBG_SUCCESS, props.sm_type.encode() + b"\0")
    assert api.getDeviceType(0, 2) == (R.CUDBG_ERROR_BUFFER_TOO_SMALL, None)
    assert api.getDevicePCIBusInfo(0) == (R.CUDBG_SUCCESS, props.pci_bus_id, props.pci_dev_id)
    res, sizes = api.getDeviceInfoSizes(0)
    assert res is R.CUDBG_SUCCESS and sizes.requiredBufferSize > 0
    assert api.getDeviceInfo(0, 0, sizes.requiredBufferSize - 1) == (R.CUDBG_ERROR_BUFFER_TOO_SMALL, None, None)


def test_module_loaded_after_initialize(api):
    calls, recursive = [], []
    seen = threading.Event()

    def callback(data):
        calls.append(data)
        recursive.append(api.getNumDevices()[0])     # the API refuses calls from its callback
        seen.set()

    assert api.setNotifyNewEventCallback(callback, "cookie") == (R.CUDBG_SUCCESS,)
    module = gpudbg.Module.from_ptx(TWO_FUNCS_PTX, name="cudbg_loaded_late.ptx")
    while True:     # this module's image (a module an earlier test's thread loads may come first)
        ev = next_event(api, SYNC, CUDBGEventKind.CUDBG_EVENT_ELF_IMAGE_LOADED)
        assert seen.wait(5)
        assert calls[0].userData == "cookie" and calls[0].tid == 0
        assert recursive[0] is R.CUDBG_ERROR_RECURSIVE_API_CALL
        assert api.acknowledgeSyncEvents() == (R.CUDBG_SUCCESS,)
        loaded = ev.cases
        res, image = api.getElfImageByHandle(0, loaded.handle, CUDBGElfImageType.CUDBG_ELF_IMAGE_TYPE_RELOCATED,
                                             loaded.size)
        assert res is R.CUDBG_SUCCESS and len(image) == loaded.size and image[:4] == b"\x7fELF"
        names = {s.name: s.value for s in read_cubin(image).functions}
        if "loaded_late" in names:
            break
    res, found, entry = api.lookupDeviceCodeSymbol("loaded_late")
    assert res is R.CUDBG_SUCCESS and found and names["loaded_late"] == entry
    assert api.lookupDeviceCodeSymbol("no_such_kernel") == (R.CUDBG_SUCCESS, False, 0)
    assert api.isDeviceCodeAddress(entry) == (R.CUDBG_SUCCESS, True)
    assert api.getElfImageByHandle(0, loaded.handle, 0, loaded.size - 1)[0] is R.CUDBG_ERROR_INVALID_ARGS
    res, infos = api.getLoadedFunctionInfo(0, loaded.handle, 0, 2)
    assert res is R.CUDBG_SUCCESS and sorted(i.address for i in infos) == sorted(names.values())
    # code addresses: current/next/previous instruction, and disassembly of the entry
    assert api.getAdjustedCodeAddress(0, entry + 5, 1) == (R.CUDBG_SUCCESS, entry)
    assert api.getAdjustedCodeAddress(0, entry, 2) == (R.CUDBG_SUCCESS, entry + 16)
    res, size, text = api.disassemble(0, entry, 64)
    assert res is R.CUDBG_SUCCESS and size == 16 and text.startswith(b"ld.param.u64")
    assert api.setBreakpoint(0, entry + 3) == (R.CUDBG_ERROR_INVALID_ADDRESS,)
    assert api.setBreakpoint(0, entry) == (R.CUDBG_SUCCESS,)
    assert api.unsetBreakpoint(0, entry) == (R.CUDBG_SUCCESS,)
    assert api.unsetBreakpoint(0, entry) == (R.CUDBG_ERROR_INVALID_ADDRESS,)
    module.unload()
    ev = next_event(api, SYNC, CUDBGEventKind.CUDBG_EVENT_ELF_IMAGE_UNLOADED)
    assert ev.cases.handle == loaded.handle
    res, _ = api.getElfImageByHandle(0, loaded.handle, 1, loaded.size)
    assert res is R.CUDBG_ERROR_INVALID_ARGS


def test_attach_complete_is_an_async_event(api):
    ev = next_event(api, ASYNC, CUDBGEventKind.CUDBG_EVENT_ATTACH_COMPLETE)
    assert ev.cases is None and len(ev.pack()) == 92
    assert api.getNextEvent(ASYNC) == (R.CUDBG_ERROR_NO_EVENT_AVAILABLE, None)
