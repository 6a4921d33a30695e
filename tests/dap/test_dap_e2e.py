"""The DAP end-to-end test: VS Code's DebugClient (@vscode/debugadapter-
testsupport, installed with `npm ci` from the committed lock file) drives
`gpudbg dap` under Node through a live session on a -G kernel and a
post-mortem session on a coredump, then a session with `gpudbg dap
--port` and its token (tests/dap/node/e2e.js says what each step checks). Skips only when node or npm is not installed."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE / "node"
PROGRAMS = HERE / "programs"
EXAMPLES = HERE.parents[1] / "examples"


def _tools() -> tuple[str, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to run VS Code's DebugClient")
    return node, npm


def _install(npm: str) -> None:
    if (NODE_DIR / "node_modules" / "@vscode" / "debugadapter-testsupport").is_dir():
        return
    r = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, f"npm ci failed:\n{r.stdout}\n{r.stderr}"


def _adapter_command(tmp_path: Path) -> str:
    """An executable that runs this interpreter's gpudbg (DebugClient
    spawns `RUNTIME dap`)."""
    script = tmp_path / "gpudbg"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -m gpudbg \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def _coredump(tmp_path: Path) -> Path:
    core = tmp_path / "oob.nvcudmp"
    r = subprocess.run([sys.executable, "-m", "gpudbg", "check", "--coredump-file", str(core),
                        str(EXAMPLES / "oob.py")], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert core.is_file(), f"no coredump written:\n{r.stdout}\n{r.stderr}"
    return core


def test_vscode_debug_client_drives_a_session_and_a_post_mortem(tmp_path):
    node, npm = _tools()
    _install(npm)
    env = {**os.environ, "GPUDBG_BIN": _adapter_command(tmp_path),
           "DAP_PROGRAM": str(PROGRAMS / "dapscale_host.py"), "DAP_KERNEL": str(PROGRAMS / "dapscale.cu"),
           "DAP_CORE": str(_coredump(tmp_path))}
    r = subprocess.run([node, str(NODE_DIR / "e2e.js")], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, f"e2e.js failed:\n{r.stdout}\n{r.stderr}"
    assert "ok - live session" in r.stdout and "ok - post-mortem" in r.stdout and "ok - over TCP" in r.stdout, r.stdout
