"""The mc* API fuzzer (fuzz/api.py) in CI: short, derandomized runs that
must find no escaping exception and no broken invariant, plus property
tests of the calling convention for arbitrary values (hypothesis)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fuzz import api as fuzz_api  # noqa: E402
from gpudbg.driver.engine import reset_engine  # noqa: E402
from gpudbg.runtime import mc  # noqa: E402
from gpudbg.runtime.errors import mcError_t  # noqa: E402


def _clean(result: dict) -> None:
    assert result["escaped"] == [], result["escaped"]
    assert result["violations"] == [], result["violations"]
    assert result["calls"] > 0 and result["sequences"] > 0
    assert result["functions"] == len(fuzz_api.functions()) >= 180


def test_fuzz_one_thread():
    _clean(fuzz_api.run(5.0, seed=14))


def test_fuzz_three_threads():
    _clean(fuzz_api.run(3.0, seed=1414, threads=3))


# ---------------------------------------------------------------- properties of the convention
values = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-2**70, max_value=2**70),
    st.floats(allow_nan=True), st.text(max_size=20), st.binary(max_size=32),
    st.lists(st.integers(min_value=-3, max_value=2**33), max_size=4),
    st.tuples(st.integers(), st.text(max_size=3)),
    st.sampled_from([np.zeros(8, np.uint8), np.empty(3, dtype=object), np.zeros((2, 2)), np.int64(-1),
                     np.uint64(2**63), object(), b"\x00" * 9, "a\x00b", 10**400]),
)
FUNCTIONS = [f for f in fuzz_api.functions()
             if f[0] not in ("mcDeviceReset", "mcSetDevice", "mcSetValidDevices", "mcInit",
                             "mcThreadExchangeStreamCaptureMode", "mcStreamBeginCapture",
                             "mcStreamWaitValue32", "mcStreamWaitValue64")]


@pytest.fixture(scope="module")
def engine():
    reset_engine(num_devices=2)
    yield
    reset_engine()


@settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_values_give_an_error_code_never_an_exception(engine, data):
    name, fn, plan = data.draw(st.sampled_from(FUNCTIONS), label="function")
    n = len(plan.params) if plan is not None else 0
    args = data.draw(st.lists(values, min_size=max(n - 1, 0), max_size=n + 1), label="args")
    out = fn(*args)
    assert isinstance(out, tuple) and out and isinstance(out[0], (int, mcError_t))
    if out[0] == mcError_t.mcErrorUnknown and name not in ("mcGetErrorName", "mcGetErrorString",
                                                            "mcGetLastError", "mcPeekAtLastError"):
        assert "gpudbg bug" not in mc.last_error_message(), mc.last_error_message()
    # the last-error family returns an earlier call's error (and mcGetLastError clears
    # it): the message recorded is not theirs
    if out[0] not in (mcError_t.mcSuccess, mcError_t.mcErrorNotReady) and plan is not None \
            and name not in ("mcGetLastError", "mcPeekAtLastError"):
        assert name in mc.last_error_message() or mc.last_error_message()
    mc.mcDeviceSynchronize()


@settings(max_examples=40, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.integers(min_value=-2**66, max_value=2**66) | st.sampled_from([0, 1, 255, 4096]))
def test_malloc_of_any_size_charges_exactly_what_it_got(engine, size):
    free0 = mc.mcMemGetInfo()[1]
    err, p = mc.mcMalloc(size)
    if err == mcError_t.mcSuccess:
        assert mc.mcFree(p) == (mcError_t.mcSuccess,)
    else:
        assert p is None and err in (mcError_t.mcErrorInvalidValue, mcError_t.mcErrorMemoryAllocation)
    assert mc.mcMemGetInfo()[1] == free0
