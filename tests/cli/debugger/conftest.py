"""Helpers for driving `gpudbg debug` in batch mode in-process: host
programs written to tmp_path, and a runner returning what was printed."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

import gpudbg
from gpudbg.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"

HOST = '''
import sys
import numpy as np
import gpudbg

SRC = r"""{source}"""

module = gpudbg.compile(SRC, name="{name}", options={options!r})
{body}
'''


@pytest.fixture
def host(tmp_path):
    """host(source, body, name=, options=) -> path of a host program that
    compiles `source` as `name` and runs `body` (which sees `module`)."""
    def make(source: str, body: str, name: str = "k.cu", options: tuple = ()) -> str:
        path = tmp_path / (name.replace(".cu", "") + "_host.py")
        path.write_text(HOST.format(source=textwrap.dedent(source), name=name, options=list(options),
                                    body=textwrap.dedent(body)))
        return str(path)
    return make


@pytest.fixture
def gdb(capsys):
    """gdb(program, *commands, args=()) -> (status, stdout, stderr) of
    `gpudbg debug --batch -ex C ... program args`."""
    def run(program: str, *commands: str, args: tuple = (), core: bool = False):
        argv = ["core" if core else "debug", "--batch"]
        for c in commands:
            argv += ["-ex", c]
        argv += [program, *args]
        status = main(argv)
        out, err = capsys.readouterr()
        return status, out, err
    yield run
    gpudbg.Device(0).reset()
