"""The host-side checks every tool keeps (double and invalid frees, failing
API calls in each layer's own words, --report-api-errors) and memcheck's
leak check (--leak-check full): each bug class with its clean twin."""
from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest
from sanitizer_harness import checked

import gpudbg
from gpudbg.runtime import mc
from gpudbg.runtime.api import _base as mc_base
from gpudbg.runtime.errors import mcError_t
from gpudbg.sanitizer.config import ApiErrors
from gpudbg.sanitizer.findings import FINDING_SCHEMA, ToolName

FILE = "test_host_checks.py"


def line_of(marker: str) -> int:
    with open(__file__) as f:
        hits = [i for i, text in enumerate(f, 1) if text.rstrip().endswith(marker)]
    assert len(hits) == 1, marker
    return hits[0]


def at(marker: str) -> str:
    return f"{FILE}:{line_of(marker)}"


def innermost(finding) -> str:
    frame = finding.host_site[-1]
    return frame.rsplit("/", 1)[-1].split(" in ")[0]


def kinds(rep) -> list[str]:
    return [f.kind for f in rep.findings]


# ---------------------------------------------------------------- frees

@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_double_free_is_one_finding_naming_both_sites(tool):
    with checked(tool) as rep:
        err, p = mc.mcMalloc(1024)                 # <- df alloc
        mc.mcFree(p)                               # <- df first free
        assert mc.mcFree(p) == (mcError_t.mcErrorInvalidValue,)   # <- df second free
    assert kinds(rep) == ["double_free"]
    f = rep.findings[0]
    assert f.tool is ToolName(tool)
    assert f.title == ('Program hit mcErrorInvalidValue (error 1) due to "invalid argument" '
                       'on API call to mcFree.')
    assert f.details == [f"Double free of 0x{p:x} (the 1024-byte allocation made at {at('# <- df alloc')} "
                         f"was freed at {at('# <- df first free')})"]
    assert innermost(f) == at("# <- df second free") and f.address == p and f.size == 1024


def test_double_free_after_reuse_pressure_is_still_a_double_free():
    with checked("memcheck") as rep:
        err, p = mc.mcMalloc(256)
        mc.mcFree(p)
        for _ in range(200):
            err, q = mc.mcMalloc(256)
            mc.mcFree(q)
        mc.mcFree(p)
    assert kinds(rep) == ["double_free"] and rep.findings[0].details[0].startswith(f"Double free of 0x{p:x}")


def test_invalid_frees_say_what_the_pointer_is():
    with checked("memcheck") as rep:
        err, p = mc.mcMalloc(512)                  # <- inv alloc
        mc.mcFree(p + 16)
        mc.mcFree(0x1234)
        mc.mcFreeHost(p)
        mc.mcFree(p)
    assert kinds(rep) == ["invalid_free"] * 3
    assert [f.details[0] for f in rep.findings] == [
        f"Invalid free of 0x{p + 16:x}: it points 16 bytes into the 512-byte allocation at 0x{p:x} "
        f"made at {at('# <- inv alloc')}, not at its start",
        "Invalid free of 0x1234: it was not returned by an allocation function",
        f"Invalid free of 0x{p:x}: the 512-byte device allocation made at {at('# <- inv alloc')} "
        f"is not freed by mcFreeHost",
    ]
    assert rep.findings[2].title.endswith("on API call to mcFreeHost.")


def test_correct_frees_are_silent():
    with checked("memcheck", leak_check=True, report_api_errors=ApiErrors.ALL) as rep:
        err, p = mc.mcMalloc(512)
        err, h = mc.mcMallocHost(4096)
        mc.mcFree(p)
        mc.mcFreeHost(h)
        mc.mcFree(0)                               # freeing NULL does nothing
    assert rep.findings == []


def test_cudaFree_of_a_bad_pointer_is_reported_once_as_cudaFree():
    from gpudbg.cuda_runtime import exports as rt
    with checked("memcheck") as rep:
        p = ctypes.c_uint64()
        assert rt.cudaMalloc(ctypes.addressof(p), 64) == 0       # <- rt alloc
        assert rt.cudaFree(p.value + 8) == 1
        assert rt.cudaFree(p.value) == 0
        assert rt.cudaFree(p.value) == 1
    assert kinds(rep) == ["invalid_free", "double_free"]
    for f in rep.findings:
        assert f.title == ('Program hit cudaErrorInvalidValue (error 1) due to "invalid argument" '
                           'on CUDA API call to cudaFree.')
        assert f.extra["function"] == "cudaFree"
    assert f"made at {at('# <- rt alloc')}" in rep.findings[0].details[0]


def test_cuMemFree_double_free_in_the_driver_api_words():
    from gpudbg.cuda_driver import context, device, memory as M
    with checked("memcheck") as rep:
        assert device.cuInit(0) == 0
        h = ctypes.c_uint64()
        assert context.cuDevicePrimaryCtxRetain(ctypes.addressof(h), 0) == 0
        assert context.cuCtxSetCurrent(h.value) == 0
        p = ctypes.c_uint64()
        assert M.cuMemAlloc_v2(ctypes.addressof(p), 128) == 0
        assert M.cuMemFree_v2(p.value) == 0
        assert M.cuMemFree_v2(p.value) == 1
        assert M.cuMemAlloc_v2(0, 16) == 1                     # NULL out-pointer
    assert kinds(rep) == ["double_free", "api_error"]
    assert rep.findings[0].title == ('Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to '
                                     '"invalid argument" on CUDA API call to cuMemFree_v2.')
    assert rep.findings[1].title.endswith("on CUDA API call to cuMemAlloc_v2.")


# ---------------------------------------------------------------- API errors

def test_failed_api_calls_are_findings():
    with checked("memcheck") as rep:
        assert mc.mcMalloc(-1)[0] is mcError_t.mcErrorInvalidValue          # <- bad malloc
        err, s = mc.mcStreamCreate()
        mc.mcStreamDestroy(s)
    assert kinds(rep) == ["api_error"]
    f = rep.findings[0]
    assert f.title == ('Program hit mcErrorInvalidValue (error 1) due to "invalid argument" '
                       'on API call to mcMalloc.')
    assert f.details == ["sizeBytes must be an int >= 0, got -1"]
    assert innermost(f) == at("# <- bad malloc")
    assert f.extra == {"function": "mcMalloc", "error": "mcErrorInvalidValue", "code": 1}


def test_cuda_runtime_errors_use_cudaError_names():
    from gpudbg.cuda_runtime import exports as rt
    with checked("memcheck") as rep:
        assert rt.cudaMalloc(0, 16) == 1                 # NULL out-pointer: the layer's own check
        p = ctypes.c_uint64()
        assert rt.cudaMalloc(ctypes.addressof(p), 1 << 60) == 2
    assert [f.title for f in rep.findings] == [
        'Program hit cudaErrorInvalidValue (error 1) due to "invalid argument" on CUDA API call to cudaMalloc.',
        'Program hit cudaErrorMemoryAllocation (error 2) due to "out of memory" on CUDA API call to cudaMalloc.',
    ]


@pytest.mark.parametrize("setting", [ApiErrors.NO])
def test_report_api_errors_no_silences_api_errors_but_not_double_frees(setting):
    with checked("memcheck", report_api_errors=setting) as rep:
        mc.mcMalloc(-1)
        err, p = mc.mcMalloc(64)
        mc.mcFree(p)
        mc.mcFree(p)
    assert kinds(rep) == ["double_free"]


def test_not_ready_is_not_a_failure():
    with checked("memcheck") as rep:
        mc_base.notify_failure("mcStreamQuery", mcError_t.mcErrorNotReady, "")
    assert rep.findings == []


def test_a_device_fault_is_not_reported_again_by_the_calls_it_makes_fail():
    src = r'extern "C" __global__ void oob(int *p) { p[threadIdx.x + (1 << 26)] = 1; }'
    with checked("memcheck") as rep:
        m = gpudbg.compile(src, name="oob_host.cu")
        d = gpudbg.zeros(4, np.int32)
        m.oob[1, 4](d)
        assert mc.mcDeviceSynchronize()[0] is mcError_t.mcErrorIllegalAddress
        assert mc.mcMalloc(64)[0] is mcError_t.mcErrorIllegalAddress
    assert rep.findings == []


def test_error_hooks_hear_the_programs_call_once():
    from gpudbg.cuda_runtime import exports as rt
    heard = []
    hook = lambda name, code, message: heard.append((name, code))      # noqa: E731
    mc_base.add_api_error_hook(hook)
    try:
        with checked("memcheck"):
            rt.cudaFree(0x10)
            mc.mcFree(0x10)
    finally:
        mc_base.remove_api_error_hook(hook)
    assert heard == [("cudaFree", mcError_t.mcErrorInvalidValue), ("mcFree", mcError_t.mcErrorInvalidValue)]


# ---------------------------------------------------------------- leak check

def test_leaks_are_reported_with_sizes_and_allocation_sites():
    with checked("memcheck", leak_check=True) as rep:
        err, a = mc.mcMalloc(1024)                 # <- leak device
        err, b = mc.mcMallocHost(2048)             # <- leak pinned
        err, c = mc.mcMallocManaged(512)           # <- leak managed
        err, d = mc.mcMalloc(4096)
        mc.mcFree(d)
    assert kinds(rep) == ["leak"] * 3
    assert [(f.title, f.size, innermost(f)) for f in rep.findings] == [
        (f"Leaked 1024 bytes at 0x{a:x}", 1024, at("# <- leak device")),
        (f"Leaked 2048 bytes at 0x{b:x}", 2048, at("# <- leak pinned")),
        (f"Leaked 512 bytes at 0x{c:x}", 512, at("# <- leak managed")),
    ]
    assert rep.findings[0].extra == {"allocation": "device", "api": "mcMalloc"}
    assert rep.texts[-1] == "=========\n========= LEAK SUMMARY: 3584 bytes leaked in 3 allocations"
    assert "Saved host backtrace up to driver entry point" in rep.texts[0]
    assert rep.errors == 3
    jsonschema = pytest.importorskip("jsonschema")
    for f in rep.findings:
        jsonschema.validate(f.as_dict(), FINDING_SCHEMA)


def test_nothing_leaks_when_everything_is_freed():
    with checked("memcheck", leak_check=True) as rep:
        err, a = mc.mcMalloc(1024)
        err, b = mc.mcMallocHost(2048)
        mc.mcFree(a)
        mc.mcFreeHost(b)
        arr = gpudbg.zeros(64, np.float32)         # dropped: the collector's free is not a leak
        del arr
        gc.collect()
    assert rep.findings == []
    assert rep.texts == ["========= LEAK SUMMARY: 0 bytes leaked in 0 allocations"]


def test_leaks_are_not_looked_for_unless_asked():
    with checked("memcheck") as rep:
        mc.mcMalloc(1024)
    assert rep.findings == [] and rep.texts == []


def test_a_context_reset_does_not_free_what_the_program_leaked():
    with checked("memcheck", leak_check=True) as rep:
        err, a = mc.mcMalloc(1024)
        mc.mcDeviceReset()
    assert kinds(rep) == ["leak"] and rep.findings[0].address == a


def test_leak_check_is_memchecks():
    with checked("racecheck", leak_check=True) as rep:
        mc.mcMalloc(1024)
    assert rep.findings == []
