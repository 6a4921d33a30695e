"""`gpudbg dap` on an nvcc-built (-G, -cudart shared) executable: the
adapter hands its connection to the program's own process
(gpudbg.dap.native) and the session goes on there. Needs nvcc."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dapclient import DapClient

PROGRAMS = Path(__file__).resolve().parents[1] / "cli" / "debugger" / "programs"
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)


@pytest.fixture(scope="module")
def scale(tmp_path_factory) -> Path:
    if NVCC is None:
        pytest.skip("nvcc is not installed (CUDA toolkit)")
    out = tmp_path_factory.mktemp("dap_native") / "scale"
    subprocess.run([NVCC, "-G", "-cudart", "shared", "-gencode", "arch=compute_80,code=compute_80",
                    "-o", str(out), str(PROGRAMS / "scale.cu")], check=True, capture_output=True, timeout=300)
    return out


def line_of(marker: str) -> int:
    return next(n for n, t in enumerate((PROGRAMS / "scale.cu").read_text().splitlines(), 1) if marker in t)


def start(program: Path, **launch) -> tuple[DapClient, dict]:
    c = DapClient()
    c.request("initialize", {"adapterID": "gpudbg"})
    c.request("launch", {"program": str(program), **launch})
    c.wait_event("initialized")
    r = c.request("setBreakpoints", {"source": {"path": str(PROGRAMS / "scale.cu")},
                                     "breakpoints": [{"line": line_of("STORE"), "condition": "i == 37"}]})
    assert r["body"]["breakpoints"][0]["verified"] is False        # the module loads after main starts
    c.request("configurationDone")
    return c, c.wait_event("stopped")["body"]


def test_a_native_program_is_debugged_in_its_own_process(scale):
    c, ev = start(scale)
    try:
        assert ev["reason"] == "breakpoint"
        frame = c.request("stackTrace", {"threadId": ev["threadId"]})["body"]["stackFrames"][0]
        assert frame["name"].startswith("scale<<<(2,1,1),(32,1,1)>>>(out=(int *) 0x")
        assert frame["name"].endswith(", factor=3, n=64)")
        assert frame["line"] == line_of("STORE") and frame["source"]["path"] == str(PROGRAMS / "scale.cu")
        scopes = c.request("scopes", {"frameId": frame["id"]})["body"]["scopes"]
        local = {v["name"]: v for v in c.request("variables", {"variablesReference": scopes[0]["variablesReference"]})
                 ["body"]["variables"]}
        assert (local["i"]["value"], local["scaled"]["value"], local["factor"]["value"]) == ("37", "112", "3")
        c.request("continue", {"threadId": ev["threadId"]})
        assert c.wait_event("exited")["body"]["exitCode"] == 0
        assert "PASSED\n" in c.text("stdout")            # the program's printf, through its fd 1
    finally:
        assert c.close() == 0


def test_terminate_ends_the_native_process(scale):
    c, ev = start(scale)
    try:
        c.request("terminate")
        assert c.wait_event("exited")["body"]["exitCode"] == 137
        c.wait_event("terminated")
    finally:
        c.close()
    assert c.proc.returncode is not None
