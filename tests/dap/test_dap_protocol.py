"""The adapter's tables and the request loop, in process: capabilities,
exception filters, the request table, and the answers to requests that
need no program (errors included) through real framed streams."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from gpudbg.dap.framing import Reader, Writer, encode
from gpudbg.dap.protocol import CAPABILITIES, FILTER_KINDS, exception_filters
from gpudbg.dap.server import REQUESTS, Server
from gpudbg.sim.faults import CUDBGException

ROOT = Path(__file__).resolve().parents[2]


def run(*requests: dict, token: str | None = None) -> tuple[list[dict], int]:
    data = b"".join(encode({"seq": i + 1, "type": "request", **r}) for i, r in enumerate(requests))
    out = io.BytesIO()
    server = Server(Reader(io.BytesIO(data)), Writer(out), token=token)
    status = server.serve()
    r = Reader(io.BytesIO(out.getvalue()))
    msgs = []
    while (m := r.read()) is not None:
        msgs.append(m)
    return msgs, status


def responses(msgs: list[dict]) -> dict[str, dict]:
    return {m["command"]: m for m in msgs if m["type"] == "response"}


def test_one_exception_filter_per_cuda_exception_kind():
    kinds = {k.name for k in CUDBGException} - {"CUDBG_EXCEPTION_NONE", "CUDBG_EXCEPTION_UNKNOWN"}
    assert set(FILTER_KINDS) == kinds
    filters = exception_filters()
    assert len({f["filter"] for f in filters}) == len(filters)
    assert all(f["default"] is True and f["label"] for f in filters)
    assert {f["label"] for f in filters} >= {"Lane Illegal Address", "Warp Misaligned Address"}


# capability -> the request it promises
PROMISES = {"supportsConfigurationDoneRequest": "configurationDone", "supportsFunctionBreakpoints":
            "setFunctionBreakpoints", "supportsSetVariable": "setVariable", "supportsTerminateRequest": "terminate",
            "supportsReadMemoryRequest": "readMemory", "supportsWriteMemoryRequest": "writeMemory",
            "supportsDisassembleRequest": "disassemble", "supportsExceptionInfoRequest": "exceptionInfo"}


def test_every_promised_capability_has_its_request():
    for cap, command in PROMISES.items():
        assert CAPABILITIES[cap] is True
        assert command in REQUESTS


def test_capability_names_are_the_specifications():
    spec = ROOT / "tests" / "dap" / "node" / "node_modules" / "@vscode" / "debugprotocol" / "lib" / "debugProtocol.d.ts"
    if not spec.is_file():
        pytest.skip("the DAP type definitions are installed by the e2e test's npm ci")
    text = spec.read_text()
    for name in CAPABILITIES:
        assert re.search(rf"\b{name}\??:", text), name


def test_initialize_answers_the_capabilities():
    msgs, status = run({"command": "initialize", "arguments": {"adapterID": "gpudbg"}})
    r = responses(msgs)["initialize"]
    assert status == 0 and r["success"] and r["request_seq"] == 1
    assert r["body"]["supportsConditionalBreakpoints"] is True
    assert len(r["body"]["exceptionBreakpointFilters"]) == len(FILTER_KINDS)


def test_every_message_has_increasing_seq():
    msgs, _ = run({"command": "initialize"}, {"command": "threads"}, {"command": "nonsense"})
    seqs = [m["seq"] for m in msgs]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_unknown_and_malformed_requests_get_error_responses():
    msgs, _ = run({"command": "stepBack"}, {"command": "scopes", "arguments": []},
                  {"command": "stackTrace", "arguments": {"threadId": 2}})
    r = responses(msgs)
    assert r["stepBack"]["success"] is False and "does not support the 'stepBack'" in r["stepBack"]["message"]
    assert "'arguments' must be an object" in r["scopes"]["message"]
    assert r["stackTrace"]["success"] is False and "launch" in r["stackTrace"]["message"]
    assert r["stackTrace"]["body"]["error"]["format"] == r["stackTrace"]["message"]


def test_threads_before_launch_is_the_host_program():
    msgs, _ = run({"command": "threads"})
    assert responses(msgs)["threads"]["body"] == {"threads": [{"id": 1, "name": "host program"}]}


@pytest.mark.parametrize("args, words", [
    ({}, "'program'"),
    ({"program": "/no/such/prog.py"}, "No such file"),
    ({"program": "x.py", "cwd": "/no/such/dir"}, "is not a directory"),
    ({"program": "x.py", "args": "a b"}, "'args' must be a list"),
    ({"coreFile": "/no/such.nvcudmp"}, "No such file"),
])
def test_launch_errors_are_specific(args, words):
    msgs, _ = run({"command": "launch", "arguments": args})
    r = responses(msgs)["launch"]
    assert r["success"] is False and words in r["message"]
    assert r["body"]["error"]["showUser"] is True
    assert not any(m.get("event") == "initialized" for m in msgs)


def test_a_native_program_must_be_executable_and_needs_a_transport_to_hand_over(tmp_path):
    exe = tmp_path / "prog"
    exe.write_bytes(b"\x7fELF" + b"\0" * 60)
    msgs, _ = run({"command": "launch", "arguments": {"program": str(exe)}})
    assert responses(msgs)["launch"]["message"].endswith("is not executable.")
    exe.chmod(0o755)
    msgs, _ = run({"command": "launch", "arguments": {"program": str(exe)}})    # in-memory streams: no fds
    assert "cannot be handed to a native program" in responses(msgs)["launch"]["message"]


def test_attach_needs_a_core_file():
    msgs, _ = run({"command": "attach", "arguments": {}})
    assert "coreFile" in responses(msgs)["attach"]["message"]


def test_requests_that_need_a_stopped_program_say_so():
    msgs, _ = run({"command": "scopes", "arguments": {"frameId": 1}},
                  {"command": "readMemory", "arguments": {"memoryReference": "0x10", "count": 4}},
                  {"command": "evaluate", "arguments": {"expression": "6 * 7"}})
    r = responses(msgs)
    assert r["scopes"]["success"] is False
    assert r["readMemory"]["success"] is False
    assert r["evaluate"]["success"] is False and "launch" in r["evaluate"]["message"]


def test_a_framing_error_ends_the_session_with_status_2(capfd):
    out = io.BytesIO()
    status = Server(Reader(io.BytesIO(b"Content-Length: nope\r\n\r\n")), Writer(out)).serve()
    assert status == 2
    assert "Content-Length" in capfd.readouterr().err


def test_tcp_token_gates_every_request_but_initialize():
    msgs, _ = run({"command": "initialize"}, {"command": "threads"}, {"command": "threads"}, token="s3cret")
    r = [m for m in msgs if m["type"] == "response"]
    assert r[0]["success"] is True
    assert r[1]["success"] is False and "token" in r[1]["message"]
    assert len(r) == 2            # the unauthenticated connection was closed


def test_tcp_token_given_in_initialize_opens_the_session():
    msgs, _ = run({"command": "initialize", "arguments": {"token": "s3cret"}}, {"command": "threads"},
                  token="s3cret")
    assert all(m["success"] for m in msgs if m["type"] == "response")


def test_a_wrong_token_is_refused():
    msgs, _ = run({"command": "launch", "arguments": {"token": "guess", "program": "x.py"}}, {"command": "threads"},
                  token="s3cret")
    r = [m for m in msgs if m["type"] == "response"]
    assert len(r) == 1 and r[0]["message"].endswith("wrong token.")


def test_memory_references_parse_spaces_and_refuse_junk():
    from gpudbg.dap.memory import parse_reference
    from gpudbg.dap.protocol import DapError
    from gpudbg.debug.backend import MemorySpace
    assert parse_reference("0x7000") == (MemorySpace.GENERIC, 0x7000)
    assert parse_reference("shared:0x10") == (MemorySpace.SHARED, 16)
    for bad in ("", "sharde:0x10", "0xZZ", None, "-5"):
        with pytest.raises(DapError):
            parse_reference(bad)


def test_integer_arguments_are_checked_by_name():
    from gpudbg.dap.protocol import DapError, int_arg
    assert int_arg({"levels": 3}, "levels") == 3 and int_arg({}, "levels", 7) == 7
    for bad in ("3", 2.5, True, [1]):
        with pytest.raises(DapError, match=r"argument 'levels' must be an integer"):
            int_arg({"levels": bad}, "levels")
    with pytest.raises(DapError, match="at least 0"):
        int_arg({"count": -1}, "count", minimum=0)


arg_values = st.one_of(st.none(), st.booleans(), st.integers(-5, 1 << 40), st.text(max_size=12),
                       st.lists(st.one_of(st.integers(-2, 5), st.text(max_size=4)), max_size=4),
                       st.dictionaries(st.text(max_size=6), st.integers(), max_size=3))
# launch/attach/disconnect/terminate would start or end a session: the other requests, before any launch
SAFE = sorted(set(REQUESTS) - {"launch", "attach", "disconnect", "terminate", "configurationDone"})
KEYS = ["threadId", "frameId", "variablesReference", "source", "breakpoints", "expression", "memoryReference",
        "count", "offset", "filters", "filterOptions", "name", "value", "block", "thread", "lines", "context",
        "format", "start", "levels", "instructionCount", "sourceReference", "maxBlocks", "lanes"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SAFE + ["bogus"]),
                          st.one_of(st.dictionaries(st.sampled_from(KEYS), arg_values, max_size=4),
                                    arg_values)), max_size=6))
def test_any_request_gets_exactly_one_answer_and_no_internal_error(requests):
    msgs, status = run(*({"command": c, "arguments": a} for c, a in requests))
    answers = [m for m in msgs if m["type"] == "response"]
    assert status == 0
    assert [m["request_seq"] for m in answers] == list(range(1, len(requests) + 1))
    for m in answers:
        assert "internal error" not in m.get("message", ""), m


@pytest.mark.parametrize("args", [{"filters": 5}, {"filterOptions": 7}, {"filters": "all"}])
def test_exception_filters_must_be_lists(args):
    msgs, _ = run({"command": "setExceptionBreakpoints", "arguments": args})
    assert "must be lists" in responses(msgs)["setExceptionBreakpoints"]["message"]
