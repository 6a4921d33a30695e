"""The debugger on a -G texture program (tests/clients/programs/
texture_blur.cu): its kernel's -G locals print at a breakpoint after a
tex2D, `info cuda textures` explains the handles the kernel holds (the
descriptor the device samples through and where the texels are), and `x`
reads the image from the array's address."""
from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).resolve().parents[2] / "clients" / "programs" / "texture_blur.cu"
NVCC = shutil.which("nvcc")


def _line(marker: str) -> int:
    return next(n for n, text in enumerate(PROGRAM.read_text().splitlines(), start=1) if marker in text)


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    if NVCC is None:
        pytest.skip("nvcc is not installed (CUDA toolkit)")
    exe = tmp_path_factory.mktemp("texdbg") / "texture_blur"
    subprocess.run([NVCC, "-G", "-cudart", "shared", "-gencode", "arch=compute_80,code=compute_80", "-o", str(exe),
                    str(PROGRAM)], check=True, capture_output=True, timeout=600)
    return exe


def gdb(exe: Path, *commands: str) -> str:
    argv = [sys.executable, "-m", "gpudbg", "debug", "--batch"]
    for c in commands:
        argv += ["-ex", c]
    p = subprocess.run(argv + [str(exe)], cwd=exe.parent, capture_output=True, text=True, timeout=300)
    return p.stdout + p.stderr


def test_locals_print_and_textures_are_described(program):
    line = _line("surf2Dwrite(value, dst")
    out = gdb(program, f"break texture_blur.cu:{line}", "run", "print u", "print src", "info cuda textures")
    assert f"texture_blur.cu:{line}" in out
    # thread (0,0,0): u = (0 + 0.5 + 3.3) / 24
    assert re.search(r"\$1 = 0\.15833", out), out
    handle = int(re.search(r"\$2 = (\d+)", out).group(1))
    table = out[out.index("Texture and surface objects on device 0:"):]
    tex_row = re.search(rf"{handle:#x}  texture  2d 24x16, 1 x float, array at (0x[0-9a-f]+) \(row pitch 96\)",
                        table)
    assert tex_row, table
    assert "filter linear, address wrap/wrap/wrap, read element type, normalized coords" in table
    assert re.search(r"0x[0-9a-f]+  surface  2d 24x16, 1 x float, array at 0x", table)
    # the texels themselves, at the address the table gives
    x = gdb(program, f"break texture_blur.cu:{line}", "run", f"x/3fw {tex_row.group(1)}")
    m = re.search(r":\s+(\S+)\s+(\S+)\s+(\S+)", x.splitlines()[-1])
    assert m, x
    assert [round(float(v), 4) for v in m.groups()] == [round(math.sin(i * 0.37) * 10, 4) for i in range(3)]
