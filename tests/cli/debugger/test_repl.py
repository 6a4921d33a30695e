"""The prompt fed from a pipe: commands read line by line, quit with the
program stopped at a breakpoint kills it and returns."""
from __future__ import annotations

import subprocess
import sys

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_piped_commands_and_quit_while_stopped():
    script = "break saxpy\nrun\ninfo cuda kernels\np blockDim.x\nquit\n"
    r = subprocess.run([sys.executable, "-m", "gpudbg", "debug", "examples/saxpy.py", "512"], cwd=ROOT,
                       input=script, capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("(cuda-gdb) Breakpoint 1 (saxpy) pending.")
    assert 'hit Breakpoint 1, saxpy<<<(2,1,1),(256,1,1)>>>' in r.stdout
    assert "$1 = 256" in r.stdout
    assert "saxpy: n=512" not in r.stdout       # killed at quit, never finished
