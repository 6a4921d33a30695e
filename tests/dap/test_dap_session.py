"""Whole sessions through `gpudbg dap` on stdio (a subprocess, as an
editor runs it), one request handler after another: breakpoint options,
the CUDA thread views, variables and memory, stepping per warp,
exceptions and their filters, pause, and the TCP transport."""
from __future__ import annotations

import base64
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

from dapclient import TIMEOUT, DapClient  # noqa: E402

from gpudbg.dap.framing import Reader, Writer  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ROTATE = str(ROOT / "examples" / "rotate.py")
OOB = str(ROOT / "examples" / "oob.py")


@pytest.fixture
def dap():
    clients = []

    def start(program: str, configure=lambda c: None, init: dict | None = None, **launch) -> DapClient:
        c = DapClient()
        clients.append(c)
        c.request("initialize", {"adapterID": "gpudbg", **(init or {})})
        c.request("launch", {"program": program, **launch})
        c.wait_event("initialized")
        configure(c)
        c.request("configurationDone")
        return c
    yield start
    for c in clients:
        c.close()


def top(c: DapClient, tid: int) -> dict:
    return c.request("stackTrace", {"threadId": tid})["body"]["stackFrames"][0]


def scope_vars(c: DapClient, frame_id: int, name: str) -> tuple[dict, dict]:
    scopes = c.request("scopes", {"frameId": frame_id})["body"]["scopes"]
    scope = next(s for s in scopes if s["name"] == name)
    vs = c.request("variables", {"variablesReference": scope["variablesReference"]})["body"]["variables"]
    return scope, {v["name"]: v for v in vs}


def test_breakpoint_options_views_variables_and_memory(dap):
    def configure(c):
        r = c.request("setFunctionBreakpoints", {"breakpoints": [
            {"name": "rotate", "condition": "threadIdx.x == 200 && blockIdx.x == 1"}]})["body"]["breakpoints"]
        assert r[0]["verified"] is False and "Pending" in r[0]["message"]
        r = c.request("setBreakpoints", {"source": {"path": "rotate.cu"}, "breakpoints": [
            {"line": 8, "logMessage": "t={t} v={v}", "condition": "t % 100 == 1"},
            {"line": 9, "hitCondition": "300"},
            {"line": 9, "condition": "t +"},
            {"line": 9, "hitCondition": "often"}]})["body"]["breakpoints"]
        assert [b["verified"] for b in r] == [False, False, False, False]
        assert "condition" in r[2]["message"] and "hit condition" in r[3]["message"]
        assert "id" not in r[2] and "id" not in r[3]
    c = dap(ROTATE, configure)
    changed = c.wait_event("breakpoint")["body"]
    assert changed["reason"] == "changed" and changed["breakpoint"]["verified"] is True

    # the conditional function breakpoint stops exactly the lane it names
    ev = c.wait_event("stopped")["body"]
    assert ev["reason"] == "function breakpoint" and ev["hitBreakpointIds"] == [1]
    frame = top(c, ev["threadId"])
    assert frame["name"].startswith("rotate<<<(2,1,1),(256,1,1)>>>(out=(int *) 0x")
    assert frame["source"]["name"] == "rotate.cu" and "sourceReference" in frame["source"]
    src = c.request("source", {"sourceReference": frame["source"]["sourceReference"]})["body"]["content"]
    assert "__syncthreads();" in src
    _, builtins = scope_vars(c, frame["id"], "Built-ins")
    assert builtins["threadIdx"]["value"] == "{x = 200, y = 0, z = 0}"
    assert builtins["blockIdx"]["value"] == "{x = 1, y = 0, z = 0}"
    members = c.request("variables", {"variablesReference": builtins["threadIdx"]["variablesReference"]})["body"]
    assert [(m["name"], m["value"]) for m in members["variables"]] == [("x", "200"), ("y", "0"), ("z", "0")]
    threads = c.request("threads")["body"]["threads"]
    assert any(t["id"] == ev["threadId"] and "thread (200,0,0)" in t["name"] for t in threads)

    # locals: a pointer child, a paged shared array, hover, hex format
    _, local = scope_vars(c, frame["id"], "Locals")
    assert set(local) >= {"out", "t", "v", "w", "tile"}
    assert local["tile"]["indexedVariables"] == 256 and local["tile"]["memoryReference"] == "shared:0x0"
    page = c.request("variables", {"variablesReference": local["tile"]["variablesReference"], "filter": "indexed",
                                   "start": 250, "count": 3})["body"]["variables"]
    assert [v["name"] for v in page] == ["[250]", "[251]", "[252]"]
    assert page[0]["evaluateName"] == "(tile)[250]"
    shared_id = c.request("dataBreakpointInfo", {"variablesReference": local["tile"]["variablesReference"],
                                                 "name": "[250]"})["body"]
    assert shared_id["dataId"].startswith("shared:0x3e8:4@") and shared_id["description"].startswith("(tile)[250]")
    star = c.request("variables", {"variablesReference": local["out"]["variablesReference"]})["body"]["variables"]
    assert star[0]["name"] == "*out" and star[0]["type"] == "int"
    hover = c.request("evaluate", {"expression": "blockDim.x * 2", "frameId": frame["id"], "context": "hover",
                                   "format": {"hex": True}})["body"]
    assert hover["result"] == "0x200"
    bad = c.request("evaluate", {"expression": "nosuch + 1", "frameId": frame["id"]}, ok=False)
    assert bad["success"] is False and "nosuch" in bad["message"]
    cli = c.request("evaluate", {"expression": "-exec info cuda kernels", "context": "repl"})["body"]["result"]
    assert "rotate" in cli
    refused = c.request("evaluate", {"expression": "-exec continue", "context": "repl"}, ok=False)
    assert "buttons" in refused["message"]

    # shared memory: the block's __shared__ variables and its raw window, writable word by word
    _, shared = scope_vars(c, frame["id"], "Shared memory")
    assert shared["tile"]["type"] == "int [256]"
    window = shared["[block window: 1024 bytes]"]
    assert window["indexedVariables"] == 256
    word = c.request("variables", {"variablesReference": window["variablesReference"], "start": 2, "count": 1})
    assert [v["name"] for v in word["body"]["variables"]] == ["[2]"]
    c.request("setVariable", {"variablesReference": window["variablesReference"], "name": "[2]", "value": "9"})
    assert c.request("evaluate", {"expression": "tile[2]", "frameId": frame["id"]})["body"]["result"] == "9"

    # registers: read, write through setVariable, read back
    regs_scope, regs = scope_vars(c, frame["id"], "Registers")
    name = next(n for n in regs if n.startswith("%r") and regs[n]["type"] == "uint32")
    set_r = c.request("setVariable", {"variablesReference": regs_scope["variablesReference"], "name": name,
                                      "value": "77"})["body"]
    assert set_r["value"] == "77"
    assert c.request("evaluate", {"expression": "$" + name[1:], "frameId": frame["id"]})["body"]["result"] == "77"
    ro = c.request("setVariable", {"variablesReference": scope_vars(c, frame["id"], "Built-ins")[0]["variablesReference"],
                                   "name": "threadIdx", "value": "1"}, ok=False)
    assert "read-only" in ro["message"]

    # memory: the out buffer through its pointer's memoryReference
    ref = local["out"]["memoryReference"]
    c.request("writeMemory", {"memoryReference": ref, "offset": 4, "data": base64.b64encode(b"\x2a\0\0\0").decode()})
    got = c.request("readMemory", {"memoryReference": ref, "offset": 4, "count": 4})["body"]
    assert base64.b64decode(got["data"]) == b"\x2a\0\0\0"
    hole = c.request("readMemory", {"memoryReference": "0x10", "count": 8})["body"]
    assert hole["unreadableBytes"] == 8
    dis = c.request("disassemble", {"memoryReference": frame["instructionPointerReference"], "instructionOffset": -1,
                                    "instructionCount": 3})["body"]["instructions"]
    assert len(dis) == 3 and dis[1]["address"] == frame["instructionPointerReference"]
    assert dis[1]["symbol"].startswith("rotate+") and dis[1]["line"] == frame["line"]

    # the CUDA tree
    tree = c.request("cuda/threads", {"maxBlocks": 1})["body"]
    k = tree["kernels"][0]
    assert k["name"] == "rotate" and k["blockDim"] == [256, 1, 1] and tree["truncated"] is True
    assert len(k["blocks"]) == 1 and len(k["blocks"][0]["warps"][0]["lanes"]) == 32
    bad_focus = c.request("cuda/focus", {"block": [9]}, ok=False)
    assert "Invalid coordinates" in bad_focus["message"]

    # the hit condition: the 300th thread to reach line 9 (global index 299)
    c.request("continue", {"threadId": ev["threadId"]})
    ev = c.wait_event("stopped")["body"]
    assert ev["reason"] == "breakpoint" and ev["hitBreakpointIds"] == [3]
    assert top(c, ev["threadId"])["line"] == 9
    assert c.request("evaluate", {"expression": "threadIdx.x + blockIdx.x * blockDim.x"})["body"]["result"] == "299"
    c.request("continue", {"threadId": ev["threadId"]})
    assert c.wait_event("exited")["body"]["exitCode"] == 0     # out[1] = 42 is rewritten by the kernel
    c.wait_event("terminated")
    console = c.text("console")
    for t, v in ((1, 3), (101, 303), (201, 603), (1, 1003), (101, 1303), (201, 1603)):
        assert f"t={t} v={v}\n" in console
    assert len(re.findall(r"^t=\d+ v=\d+$", console, re.M)) == 6
    assert "rotate: 2 blocks, neighbour differences PASSED" in c.text("stdout")
    assert "hit Breakpoint 1" in console and "rotate: 2 blocks" not in console


def test_a_client_counting_lines_from_zero(dap):
    def configure(c):
        r = c.request("setBreakpoints", {"source": {"path": "rotate.cu"}, "breakpoints": [{"line": 6}]})
        assert r["body"]["breakpoints"][0]["line"] == 6
    c = dap(ROTATE, configure, init={"linesStartAt1": False, "columnsStartAt1": False})
    assert c.wait_event("breakpoint")["body"]["breakpoint"]["line"] == 6
    ev = c.wait_event("stopped")["body"]
    frame = top(c, ev["threadId"])
    assert (frame["line"], frame["column"]) == (6, 0)             # rotate.cu:7, __syncthreads()
    dis = c.request("disassemble", {"memoryReference": frame["instructionPointerReference"],
                                    "instructionCount": 1})["body"]["instructions"]
    assert dis[0]["line"] == 6
    c.request("continue", {"threadId": ev["threadId"]})
    assert c.wait_event("exited")["body"]["exitCode"] == 0


def test_data_breakpoints_watch_device_memory(dap):
    prog = HERE / "programs" / "dapscale_host.py"
    kernel = HERE / "programs" / "dapscale.cu"
    marker = next(n for n, t in enumerate(kernel.read_text().splitlines(), 1) if "BREAK" in t)
    c = dap(str(prog), lambda c: c.request("setBreakpoints", {"source": {"path": str(kernel)},
                                                              "breakpoints": [{"line": marker}]}))
    ev = c.wait_event("stopped")["body"]
    frame = top(c, ev["threadId"])
    local_scope, _ = scope_vars(c, frame["id"], "Locals")
    reg = c.request("dataBreakpointInfo", {"variablesReference": local_scope["variablesReference"], "name": "t"})
    assert reg["body"]["dataId"] is None and "held in a register" in reg["body"]["description"]
    info = c.request("dataBreakpointInfo", {"name": "out[67]", "frameId": frame["id"]})["body"]
    assert info["dataId"].split(":")[0] in ("global", "generic") and info["accessTypes"] == ["write", "read", "readWrite"]
    r = c.request("setDataBreakpoints", {"breakpoints": [{"dataId": info["dataId"], "accessType": "write"},
                                                         {"dataId": "nope"}]})["body"]["breakpoints"]
    assert r[0]["verified"] is True and r[1]["verified"] is False and "unknown dataId" in r[1]["message"]
    c.request("setBreakpoints", {"source": {"path": str(kernel)}, "breakpoints": []})
    c.request("continue", {"threadId": ev["threadId"]})
    hit = c.wait_event("stopped")["body"]
    assert hit["reason"] == "data breakpoint" and hit["hitBreakpointIds"] == [r[0]["id"]]
    assert hit["description"] == "out[67]: Old value = 0, New value = 202"
    assert c.request("evaluate", {"expression": "t"})["body"]["result"] == "67"    # the writer has the focus
    c.request("setDataBreakpoints", {"breakpoints": []})
    c.request("continue", {"threadId": hit["threadId"]})
    assert c.wait_event("exited")["body"]["exitCode"] == 0


def test_stepping_a_warp_in_and_out_of_a_device_function(dap):
    c = dap(str(HERE / "programs" / "calls_host.py"), stopOnEntry=True)
    ev = c.wait_event("stopped")["body"]
    assert ev["reason"] == "entry"
    tid = ev["threadId"]

    def step(kind: str, **extra) -> dict:
        c.request(kind, {"threadId": tid, **extra})
        body = c.wait_event("stopped")["body"]
        assert body["reason"] == "step" and body["threadId"] == tid
        return c.request("stackTrace", {"threadId": tid})["body"]
    src = (HERE / "programs" / "calls_host.py").read_text().split('SRC = r"""', 1)[1].splitlines()
    line = {m: next(i for i, t in enumerate(src, 1) if m in t) for m in ("HELPER", "CALL", "STORE")}
    while step("next")["stackFrames"][0]["line"] != line["CALL"]:
        pass
    st = step("stepIn")
    assert [(f["name"].split("(")[0], f["line"]) for f in st["stackFrames"]] == [
        ("helper", line["HELPER"]), ("caller<<<", line["CALL"])]
    assert st["stackFrames"][0]["name"] == "helper(a=0)"
    helper_frame, caller_frame = st["stackFrames"]
    assert scope_vars(c, helper_frame["id"], "Locals")[1]["a"]["value"] == "0"
    caller_scope, caller_locals = scope_vars(c, caller_frame["id"], "Locals")      # the caller's own variables
    assert caller_locals["t"]["value"] == "0" and "a" not in caller_locals
    c.request("setVariable", {"variablesReference": caller_scope["variablesReference"], "name": "t", "value": "5"})
    assert c.request("evaluate", {"expression": "t", "frameId": caller_frame["id"]})["body"]["result"] == "5"
    c.request("setVariable", {"variablesReference": caller_scope["variablesReference"], "name": "t", "value": "0"})
    regs = scope_vars(c, caller_frame["id"], "Registers")[1]
    assert int(regs["pc"]["value"], 16) == int(caller_frame["instructionPointerReference"], 16)
    st = step("stepOut")
    assert len(st["stackFrames"]) == 1 and st["stackFrames"][0]["line"] == line["CALL"]
    assert "outermost frame" in c.request("stepOut", {"threadId": tid}, ok=False)["message"]
    before = st["stackFrames"][0]["instructionPointerReference"]
    st = step("next", granularity="instruction")
    assert int(st["stackFrames"][0]["instructionPointerReference"], 16) == int(before, 16) + 16
    for _ in range(20):     # step the warp off the end of its kernel: the program runs on to its exit
        c.request("next", {"threadId": tid})
        ev = c.wait_event(("stopped", "continued"))
        if ev["event"] == "continued":
            break
        assert ev["body"]["reason"] == "step"
    else:
        raise AssertionError("the warp never left its kernel")
    assert ev["body"]["allThreadsContinued"] is True
    assert c.wait_event("exited")["body"]["exitCode"] == 0
    assert "out [1, 3, 5, 7]" in c.text("stdout")
    assert "caller done: 1\n" in c.text("stdout")        # device printf


def test_an_exception_stops_with_its_kind_and_a_filter_turns_it_off(dap):
    c = dap(OOB)
    ev = c.wait_event("stopped")["body"]
    assert ev["reason"] == "exception" and ev["text"] == "Lane Illegal Address"
    info = c.request("exceptionInfo", {"threadId": ev["threadId"]})["body"]
    assert info["exceptionId"] == "CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS"
    assert "0 bytes past the end of the 4000-byte allocation" in info["details"]["message"]
    frame = top(c, ev["threadId"])
    assert frame["line"] == 5 and frame["name"].startswith("forward_difference<<<(8,1,1),(128,1,1)>>>")
    _, builtins = scope_vars(c, frame["id"], "Built-ins")
    assert builtins["threadIdx"]["value"] == "{x = 103, y = 0, z = 0}"

    quiet = dap(OOB, lambda c: c.request("setExceptionBreakpoints", {"filters": []}))
    assert quiet.wait_event("exited")["body"]["exitCode"] == 1
    assert not any(m.get("event") == "stopped" for m in quiet.seen)
    assert "its exception filter is off" in quiet.text("console")


def test_pause_stops_a_spinning_kernel_and_terminate_ends_it(dap):
    c = dap(str(HERE / "programs" / "spin_host.py"))
    deadline = time.monotonic() + TIMEOUT
    while "spinning" not in c.text("stdout"):
        assert time.monotonic() < deadline, "the program never started its kernel"
        c.wait_event("output")
    assert c.request("threads")["body"]["threads"] == [{"id": 1, "name": "host program"}]
    # a pause that lands before the launch reaches the device stops no
    # lane, one that lands at the kernel's first instruction stops it on
    # its entry line (2) before the loop: go on until it stops in the loop
    while True:
        c.request("pause", {"threadId": 1})
        ev = c.wait_event("stopped")["body"]
        assert ev["reason"] == "pause"
        if ev["threadId"] != 1:
            frame = top(c, ev["threadId"])
            assert frame["name"].startswith("spin<<<") and frame["line"] in (2, 3)
            if frame["line"] == 3:
                break
        else:
            assert c.request("stackTrace", {"threadId": 1})["body"]["stackFrames"] == []
        assert time.monotonic() < deadline, "pause never caught the kernel in its loop"
        c.request("continue", {"threadId": 1})
    c.request("terminate")
    c.wait_event("terminated")


@pytest.mark.parametrize("how", ["terminate", "disconnect"])
def test_ending_a_running_program(dap, how):
    c = dap(str(HERE / "programs" / "spin_host.py"))
    while "spinning" not in c.text("stdout"):
        c.wait_event("output")
    c.request(how, {"terminateDebuggee": True})
    c.wait_event("terminated")
    assert not any(m.get("event") == "stopped" for m in c.seen)
    if how == "disconnect":
        assert c.proc.wait(timeout=TIMEOUT) == 0


def test_the_adapter_ends_when_its_client_goes_away(dap):
    c = dap(ROTATE, lambda c: c.request("setBreakpoints", {"source": {"path": "rotate.cu"},
                                                           "breakpoints": [{"line": 7}]}))
    c.wait_event("stopped")
    c.proc.stdin.close()                   # no disconnect: the editor crashed
    assert c.proc.wait(timeout=TIMEOUT) == 0


def test_tcp_needs_the_token():
    p = subprocess.Popen([sys.executable, "-m", "gpudbg", "dap", "--port", "0", "--token", "s3cret"],
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+) \(token s3cret\)", line)
        assert m, line
        with socket.create_connection(("127.0.0.1", int(m.group(1))), timeout=TIMEOUT) as s:
            r, w = Reader(s.makefile("rb")), Writer(s.makefile("wb"))
            w.write({"seq": 1, "type": "request", "command": "initialize", "arguments": {"adapterID": "x"}})
            assert r.read()["success"] is True
            w.write({"seq": 2, "type": "request", "command": "launch", "arguments": {"program": "x.py"}})
            refused = r.read()
            assert refused["success"] is False and "token" in refused["message"]
            assert r.read() is None                  # closed
        assert p.wait(timeout=TIMEOUT) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stderr.close()


def test_stdio_usage_errors():
    r = subprocess.run([sys.executable, "-m", "gpudbg", "dap", "--token", "x"], capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert r.returncode == 2 and "--token is for --port" in r.stderr
    r = subprocess.run([sys.executable, "-m", "gpudbg", "dap", "--port", "70000"], capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert r.returncode == 2 and "not a TCP port" in r.stderr


def test_registers_dead_in_optimized_code_read_optimized_out(dap, monkeypatch):
    # the kernel runs compiled (no breakpoint in it, built without -G): at
    # its fault, registers not live at the pc are shown as cuda-gdb does
    monkeypatch.setenv("GPUDBG_ENGINE", "native")
    c = dap(OOB)
    ev = c.wait_event("stopped")["body"]
    assert ev["reason"] == "exception"
    _, regs = scope_vars(c, top(c, ev["threadId"])["id"], "Registers")
    values = {name: v["value"] for name, v in regs.items() if name != "pc"}
    gone = [name for name, v in values.items() if v == "<optimized out>"]
    assert gone and len(gone) < len(values), values
