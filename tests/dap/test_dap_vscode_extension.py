"""editors/vscode: the manifest contributes the `gpudbg` debugger with
the launch attributes the adapter reads, and extension.js starts
`gpudbg dap` (run under Node with a stub `vscode` module)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "editors" / "vscode"


def manifest() -> dict:
    return json.loads((EXT / "package.json").read_text())


def test_the_manifest_contributes_the_debugger_and_its_snippets():
    m = manifest()
    assert m["main"] == "./extension.js" and (EXT / "README.md").is_file()
    (dbg,) = m["contributes"]["debuggers"]
    assert dbg["type"] == "gpudbg"
    launch = dbg["configurationAttributes"]["launch"]["properties"]
    assert set(launch) == {"program", "args", "cwd", "env", "stopOnEntry", "coreFile", "token"}
    assert dbg["configurationAttributes"]["attach"]["required"] == ["coreFile"]
    labels = [s["label"] for s in dbg["configurationSnippets"]]
    assert any("coredump" in s for s in labels) and any("Python host program" in s for s in labels)
    assert {"cuda-cpp", "python"} <= {b["language"] for b in m["contributes"]["breakpoints"]}


def test_every_launch_attribute_is_read_by_the_adapter():
    """The attributes VS Code validates are the ones the launch handler
    reads (server.py / engine.py), so none is silently ignored."""
    src = (ROOT / "src" / "gpudbg" / "dap" / "server.py").read_text()
    launch = manifest()["contributes"]["debuggers"][0]["configurationAttributes"]["launch"]["properties"]
    for name in launch:
        assert re.search(rf'args(\.get\(|\[)"{name}"', src), name


def test_extension_js_starts_gpudbg_dap():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    r = subprocess.run([node, str(Path(__file__).parent / "node" / "extension_check.js"), str(EXT)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok - extension" in r.stdout
