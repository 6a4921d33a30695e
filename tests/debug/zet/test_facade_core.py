"""The facade's shared machinery: sim_targets (the Session calls a wildcarded
ze_device_thread_t turns into name exactly the warp slots the mapping says it
covers, None standing for a whole level) and the Session-error translation."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudbg.debug.session import DebugError
from gpudbg.debug.zet.enums import ze_result_t as R
from gpudbg.debug.zet.facade_core import ZetError, session_error, sim_targets, zet_api
from gpudbg.debug.zet.mapping import ALL, ThreadMapping
from gpudbg.debug.zet.structs import ZE_DEVICE_THREAD_ALL, ze_device_thread_t

# 40 SMs in slices of 18: the last slice is partial (4 SMs), as on a 132-SM part.
M = ThreadMapping(sm_count=40, warp_slots_per_sm=16, lanes=32)


def field(n: int) -> st.SearchStrategy[int]:
    return st.one_of(st.just(ALL), st.integers(0, n - 1))


threads = st.builds(ze_device_thread_t, field(M.num_slices), field(M.sms_per_slice),
                    field(M.eus_per_subslice), field(M.threads_per_eu)).filter(
    lambda t: t.slice == ALL or t.subslice == ALL or t.subslice < M.subslices_in(t.slice))


def covered(targets) -> set[tuple[int, int]]:
    out = set()
    for sm, wp in targets:
        for s in range(M.sm_count) if sm is None else (sm,):
            for w in range(M.warp_slots_per_sm) if wp is None else (wp,):
                out.add((s, w))
    return out


@settings(max_examples=150, deadline=None)
@given(threads)
def test_targets_cover_exactly_the_threads_warps(thread):
    targets = sim_targets(M, thread)
    assert covered(targets) == {tuple(w) for w in M.hardware_warps(thread)}
    assert len(targets) == len(set(targets))


def test_wildcards_cost_one_call_per_named_level():
    assert sim_targets(M, ZE_DEVICE_THREAD_ALL) == [(None, None)]
    assert sim_targets(M, ze_device_thread_t(ALL, ALL, 1, ALL)) == [(None, w) for w in range(1, 16, 4)]
    assert sim_targets(M, ze_device_thread_t(2, ALL, ALL, ALL)) == [(36 + k, None) for k in range(4)]
    assert sim_targets(M, ze_device_thread_t(0, 5, 2, 3)) == [(5, 14)]


def test_session_errors_become_ze_results():
    assert session_error(DebugError("RUNNING", "device 0 is running")).code is R.ZE_RESULT_ERROR_NOT_AVAILABLE
    assert session_error(DebugError("INVALID_REGISTER", "no %r9")).code is R.ZE_RESULT_ERROR_INVALID_ARGUMENT
    unknown = session_error(DebugError("SOMETHING_NEW", "odd"))
    assert unknown.code is R.ZE_RESULT_ERROR_UNKNOWN and "SOMETHING_NEW" in unknown.message
    assert session_error(ValueError("no code")) is None


def test_zet_api_shapes_results_and_keeps_bugs_loud():
    from gpudbg.debug.zet import last_error_message

    @zet_api("zetDebugReadEvent")
    def read(kind):
        if kind == "zet":
            raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT, "bad timeout")
        if kind == "session":
            raise DebugError("RUNNING", "busy")
        if kind == "bug":
            raise KeyError("a facade bug")
        return ("event",)

    assert read("ok") == (R.ZE_RESULT_SUCCESS, "event") and last_error_message() == ""
    assert read("zet") == (R.ZE_RESULT_ERROR_INVALID_ARGUMENT, None) and last_error_message() == "bad timeout"
    assert read("session") == (R.ZE_RESULT_ERROR_NOT_AVAILABLE, None) and "busy" in last_error_message()
    with pytest.raises(KeyError):      # a facade bug propagates instead of becoming a result code
        read("bug")
