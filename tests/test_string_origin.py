"""A kernel written as a string in a .py file is reported, listed and
broken on as lines of that file, and every fault report names the Python
line that launched the kernel."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpudbg import string_origin

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

PROGRAM = '''\
import numpy as np
import gpudbg

# the kernel below starts on line 5 of this file
SRC = r\'\'\'
extern "C" __global__ void over(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[i + 1];
}
\'\'\'


def main():
    mod = gpudbg.compile(SRC)
    x = gpudbg.to_device(np.zeros(100, np.float32))
    y = gpudbg.to_device(np.zeros(100, np.float32))
    mod.over[1, 128](x, y, 100)
    gpudbg.synchronize()


main()
'''


def _gpudbg(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpudbg", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=180, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


@pytest.fixture
def prog(tmp_path: Path) -> Path:
    (tmp_path / "prog.py").write_text(PROGRAM)
    return tmp_path


def test_fault_report_names_the_py_line_and_the_launch(prog):
    r = _gpudbg(prog, "run", "prog.py")
    assert r.returncode == 1, r.stderr
    lines = r.stderr.splitlines()
    assert "========= Lane Illegal Address in kernel over at prog.py:8" in lines
    at = next(i for i, ln in enumerate(lines) if ln.startswith("=========     at pc "))
    assert lines[at + 1] == "=========         8 |     y[i] = x[i + 1];"
    assert lines[at + 2] == "=========     launched from prog.py:17 in main"


def test_check_and_the_debugger_use_the_py_lines(prog):
    r = _gpudbg(prog, "check", "prog.py")
    assert "in kernel over at prog.py:8" in r.stdout and "launched from prog.py:17 in main" in r.stdout
    r = _gpudbg(prog, "debug", "--batch", "-ex", "break prog.py:8", "-ex", "run", "-ex", "kill", "prog.py")
    assert "hit Breakpoint 1, over<<<(1,1,1),(128,1,1)>>>" in r.stdout, r.stdout + r.stderr
    assert "8\t    y[i] = x[i + 1];" in r.stdout


def test_find_takes_the_literal_before_the_call(tmp_path, monkeypatch):
    path = tmp_path / "two.py"
    path.write_text(textwrap.dedent('''\
        from gpudbg import string_origin
        A = """
        int k;
        """
        def first():
            return string_origin.find(A)
        B = """
        int k;
        """
        def second():
            return string_origin.find(B)
        def built():
            return string_origin.find("".join(["\\n", "int k;\\n", "x"]))
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    two = importlib.import_module("two")
    assert two.first() == string_origin.StringOrigin(str(path), 2)
    assert two.second() == string_origin.StringOrigin(str(path), 7)
    assert two.built() is None
    assert string_origin.find("\n" + "int k;\n") is None    # no literal of this file holds it


def test_line_directive_escapes_the_file_name():
    text = string_origin.with_line_directive("int a;\n", string_origin.StringOrigin('C:\\a "b".py', 3))
    assert text.splitlines()[0] == '#line 3 "C:\\\\a \\"b\\".py"'


def test_an_explicit_name_is_kept(tmp_path):
    (tmp_path / "named.py").write_text(PROGRAM.replace("gpudbg.compile(SRC)", 'gpudbg.compile(SRC, name="over.cu")'))
    r = _gpudbg(tmp_path, "run", "named.py")
    assert "in kernel over at over.cu:4" in r.stderr and "launched from named.py:17 in main" in r.stderr
