"""cudaError_t names and strings, the per-thread last error, and the
cudaError_t <-> CUresult table against cuda-bindings' two enums."""
import ctypes
import threading

import pytest

from gpudbg.cuda_runtime import errors
from gpudbg.cuda_runtime import exports as rt
from gpudbg.runtime import mc
from rt_helpers import addr, out_u64

rtb = pytest.importorskip("cuda.bindings.runtime")
drb = pytest.importorskip("cuda.bindings.driver")


def _s(address: int) -> str:
    return ctypes.string_at(address).decode()


def test_names_and_numbers_agree_with_cuda_bindings():
    bindings = {int(e): e.name for e in rtb.cudaError_t}
    for number, name in errors.NAMES.items():
        if number in bindings:
            assert bindings[number] == name
    assert errors.BY_NAME["cudaErrorInvalidConfiguration"] == 9
    assert len(errors.NAMES) >= 130


def test_name_and_string_are_stable_c_strings():
    assert _s(rt.cudaGetErrorName(0)) == "cudaSuccess"
    assert _s(rt.cudaGetErrorString(2)) == "out of memory"
    assert _s(rt.cudaGetErrorName(209)) == "cudaErrorNoKernelImageForDevice"
    assert rt.cudaGetErrorString(700) == rt.cudaGetErrorString(700)
    assert _s(rt.cudaGetErrorName(123456)) == "unrecognized error code"
    assert _s(rt.cudaGetErrorString(0xFFFFFFFF)) == "unrecognized error code"


def test_every_mc_code_is_a_cuda_code_with_the_same_number():
    from gpudbg.runtime.errors import mcError_t
    for code in mcError_t:
        if int(code) < 1000:
            assert int(code) in errors.NAMES, code


def _key_rt(name):
    return name.removeprefix("cuda").lower()


def _key_cu(name):
    return name.removeprefix("CUDA_").replace("_", "").lower()


def test_table_by_name_from_cuda_bindings():
    cu_by_key = {_key_cu(m.name): int(m) for m in drb.CUresult}
    rt_by_key = {_key_rt(m.name): int(m) for m in rtb.cudaError_t}
    for key, number in rt_by_key.items():
        if key in cu_by_key and number in errors.NAMES:
            assert errors.to_curesult(number) == cu_by_key[key], key
    for key, status in cu_by_key.items():
        if key in rt_by_key and status in errors.FROM_CURESULT:
            assert errors.from_curesult(status) == rt_by_key[key], key


def test_runtime_only_codes_and_synonyms():
    CU = drb.CUresult
    assert errors.to_curesult(9) == int(CU.CUDA_ERROR_INVALID_VALUE)        # invalid configuration
    for code in (12, 17, 21, 52):
        assert errors.to_curesult(code) == int(CU.CUDA_ERROR_INVALID_VALUE)
    assert errors.to_curesult(13) == int(CU.CUDA_ERROR_NOT_FOUND)           # invalid symbol
    assert errors.to_curesult(98) == int(CU.CUDA_ERROR_INVALID_HANDLE)      # invalid device function
    assert errors.to_curesult(2) == int(CU.CUDA_ERROR_OUT_OF_MEMORY)        # synonyms by number
    assert errors.from_curesult(int(CU.CUDA_ERROR_INVALID_CONTEXT)) == 201
    assert errors.from_curesult(int(CU.CUDA_ERROR_LAUNCH_FAILED)) == 719
    assert errors.from_curesult(int(CU.CUDA_ERROR_NOT_FOUND)) == 500
    assert errors.from_curesult(int(CU.CUDA_ERROR_CONTEXT_ALREADY_CURRENT)) == 999
    for number in errors.NAMES:
        assert errors.to_curesult(number) in {int(m) for m in CU}


def test_last_error_is_the_mc_layers_and_per_thread(fresh):
    p = out_u64()
    assert rt.cudaMalloc(addr(p), 1 << 60) == 2
    assert rt.cudaPeekAtLastError() == 2 and rt.cudaPeekAtLastError() == 2
    assert mc.mcPeekAtLastError()[0] == 2
    seen = []
    t = threading.Thread(target=lambda: seen.append(rt.cudaGetLastError()))
    t.start()
    t.join()
    assert seen == [0]
    assert rt.cudaGetLastError() == 2 and rt.cudaGetLastError() == 0
    assert rt.cudaMalloc(0, 16) == 1                      # NULL out-pointer: this layer's own check
    assert mc.mcGetLastError()[0] == 1 and rt.cudaGetLastError() == 0


def test_not_ready_is_not_a_last_error(fresh):
    gate = threading.Event()
    HF = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    blocker = HF(lambda data: gate.wait(10))
    s, ev = out_u64(), out_u64()
    assert rt.cudaStreamCreate(addr(s)) == 0 and rt.cudaEventCreate(addr(ev)) == 0
    assert rt.cudaLaunchHostFunc(s.value, ctypes.cast(blocker, ctypes.c_void_p).value, 0) == 0
    assert rt.cudaEventRecord(ev.value, s.value) == 0
    assert rt.cudaEventQuery(ev.value) == 600 and rt.cudaStreamQuery(s.value) == 600
    assert rt.cudaGetLastError() == 0
    gate.set()
    assert rt.cudaEventSynchronize(ev.value) == 0 and rt.cudaEventQuery(ev.value) == 0
