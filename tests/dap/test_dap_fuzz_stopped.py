"""Robustness of a stopped session: random state requests with random
(often wrong) arguments against `gpudbg dap` stopped at a breakpoint in
a -G kernel. Each must get exactly one answer, never an internal error,
and the session must still answer correctly afterwards."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

from dapclient import DapClient  # noqa: E402

ROTATE = str(Path(__file__).resolve().parents[2] / "examples" / "rotate.py")
STATE = ["threads", "stackTrace", "scopes", "variables", "evaluate", "setVariable", "readMemory", "writeMemory",
         "disassemble", "cuda/focus", "cuda/threads", "source", "exceptionInfo", "setBreakpoints",
         "setFunctionBreakpoints", "setExceptionBreakpoints", "dataBreakpointInfo", "setDataBreakpoints"]


@pytest.fixture(scope="module")
def stopped():
    c = DapClient()
    c.request("initialize", {"adapterID": "gpudbg"})
    c.request("launch", {"program": ROTATE})
    c.wait_event("initialized")
    c.request("setBreakpoints", {"source": {"path": "rotate.cu"}, "breakpoints": [{"line": 8}]})
    c.request("configurationDone")
    tid = c.wait_event("stopped")["body"]["threadId"]
    yield c, tid
    c.close()


ids = st.one_of(st.integers(-3, 40), st.integers(1 << 20, 1 << 40), st.text(max_size=5), st.none(), st.booleans())
exprs = st.one_of(st.sampled_from(["t", "v + 1", "tile[3]", "tile", "threadIdx", "out", "*out", "$r5", "$pc",
                                   "tile[9999999]", "*(int *)0", "v = ", "((", "blockIdx.x * 2", "-exec info cuda sms",
                                   "-exec run", "-exec nonsense", "sizeof(tile)", "1/0", "out[-1]"]),
                  st.text(max_size=12))
values = st.one_of(ids, exprs, st.lists(st.integers(-1, 300), max_size=4),
                   st.dictionaries(st.sampled_from(["hex", "path", "name", "line", "sourceReference"]), ids, max_size=2))
specs = st.lists(st.dictionaries(st.sampled_from(["line", "condition", "hitCondition", "logMessage", "name"]),
                                 st.one_of(ids, exprs, st.sampled_from(["%3", ">= 2", "{v}", "{", "8"])), max_size=3),
                 max_size=3)
keys = st.sampled_from(["threadId", "frameId", "variablesReference", "expression", "context", "name", "value",
                        "memoryReference", "offset", "count", "data", "instructionCount", "instructionOffset",
                        "block", "thread", "lane", "warp", "sm", "device", "kernel", "maxBlocks", "lanes", "start",
                        "levels", "format", "source", "breakpoints", "filters", "sourceReference", "lines",
                        "dataId", "accessType"])
refs = st.sampled_from(["0x700000001300", "shared:0x0", "local:0x0", "param:0x0", "0x0", "bogus:1", "0x10", "const:0x0"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(STATE), st.dictionaries(keys, st.one_of(values, refs, specs), max_size=4)),
                min_size=1, max_size=6))
def test_random_requests_never_break_a_stopped_session(stopped, requests):
    c, tid = stopped
    for command, args in requests:
        if command in ("setBreakpoints", "setFunctionBreakpoints") and isinstance(args.get("source"), dict):
            args = {**args, "source": {"path": "elsewhere.cu"}}       # the stop's own breakpoint stays
        r = c.request(command, args, ok=False)
        assert r["command"] == command
        assert "internal error" not in r.get("message", ""), (command, args, r)
    frame = c.request("stackTrace", {"threadId": tid})["body"]["stackFrames"][0]
    assert frame["line"] == 8
