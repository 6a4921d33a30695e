"""The mc* layer's translation of engine results (CUresult + Cause) into
mcError_t, checked against cuda-bindings' own two enums by name."""
from __future__ import annotations

import pytest
from cuda.bindings import driver as cu_driver, runtime as cu_runtime

from gpudbg.driver.status import Cause, CUresult, EngineError
from gpudbg.runtime.errors import from_engine, from_status, mcError_t


def test_curesult_is_cuda_h_enum():
    theirs = {m.name: int(m) for m in cu_driver.CUresult}
    ours = {m.name: int(m) for m in CUresult}
    assert ours.items() <= theirs.items()
    assert len(ours) >= 100


@pytest.mark.parametrize("status", list(CUresult))
def test_every_engine_status_has_a_runtime_code(status):
    code = from_status(status)
    assert isinstance(code, mcError_t)
    if int(status) in {int(m) for m in cu_runtime.cudaError_t} and int(status) in {int(m) for m in mcError_t}:
        assert int(code) == int(status)


def test_causes_pick_the_runtime_finer_code():
    expect = {Cause.CONFIGURATION: "cudaErrorInvalidConfiguration", Cause.PITCH: "cudaErrorInvalidPitchValue",
              Cause.SYMBOL: "cudaErrorInvalidSymbol", Cause.DEVICE_POINTER: "cudaErrorInvalidDevicePointer",
              Cause.MEMCPY_DIRECTION: "cudaErrorInvalidMemcpyDirection",
              Cause.DEVICE_FUNCTION: "cudaErrorInvalidDeviceFunction",
              Cause.DUPLICATE_VARIABLE_NAME: "cudaErrorDuplicateVariableName"}
    assert set(expect) == set(Cause)
    for cause, name in expect.items():
        e = EngineError(cause, "why")
        assert e.status is cause.status and e.cause is cause
        assert int(from_engine(e).code) == int(getattr(cu_runtime.cudaError_t, name))
        assert from_engine(e).message == "why"


def test_unknown_numbers_are_unknown():
    assert from_status(123456) is mcError_t.mcErrorUnknown
