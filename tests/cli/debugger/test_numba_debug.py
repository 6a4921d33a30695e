"""`gpudbg debug` on Numba kernels: breakpoints on the kernel's Python
lines (`.loc` of lineinfo=True / debug=True PTX), `break NAME` on Numba's
mangled names, and with debug=True the DWARF's variables.

Two levels: Numba's real PTX (cuda.compile_ptx, no device needed) loaded
and launched by a gpudbg host program, which tests the line table and
DWARF reading on what Numba emits; and the unmodified Numba program under
`gpudbg debug`, which needs gpudbg.cuda_driver's module/launch exports
and is skipped without them."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

numba_cuda = pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")

PROGRAMS = Path(__file__).resolve().parent / "programs"
PROGRAM = PROGRAMS / "numba_scale.py"


def line_of(marker: str) -> int:
    for n, text in enumerate(PROGRAM.read_text().splitlines(), start=1):
        if marker in text:
            return n
    raise AssertionError(marker)


def numba_ptx(**options) -> str:
    from numba import int32
    spec = importlib.util.spec_from_file_location("numba_scale", PROGRAM)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        ptx, _ = numba_cuda.compile_ptx(module.scale, (int32[::1], int32), cc=(8, 0), **options)
    except Exception as e:   # NVVM missing or unusable
        pytest.skip(f"Numba cannot compile PTX here: {e}")
    return ptx


HOST = '''
import re, numpy as np, gpudbg
import gpudbg.api.module
ptx = {ptx!r}
m = gpudbg.api.module.Module.load(ptx)
kernel = m[re.search(r"\\.entry\\s+(\\S+)\\(", open(ptx).read()).group(1)]
n = 64
a = gpudbg.to_device(np.zeros(n, dtype=np.int32))
# Numba's array argument, flattened: meminfo, parent, nitems, itemsize, data, shape, strides
kernel[2, 32](np.uint64(0), np.uint64(0), np.int64(n), np.int64(4), a, np.int64(n), np.int64(4), np.int32(3))
print("PASSED" if (a.to_host() == np.arange(n) * 3 + 1).all() else "FAILED")
'''


def host_for(tmp_path: Path, **options) -> str:
    ptx = tmp_path / "scale.ptx"
    ptx.write_text(numba_ptx(**options))
    host = tmp_path / "numba_host.py"
    host.write_text(textwrap.dedent(HOST.format(ptx=str(ptx))))
    return str(host)


def test_lineinfo_kernel_breaks_on_its_python_line(gdb, tmp_path):
    store = line_of("# STORE")
    status, out, err = gdb(host_for(tmp_path, lineinfo=True), f"break numba_scale.py:{store}", "run",
                           "info cuda kernels", "p i", "continue")
    assert f"Breakpoint 1 (numba_scale.py:{store}) pending." in out
    assert re.search(rf"hit Breakpoint 1, numba_scale::scale<<<\(2,1,1\),\(32,1,1\)>>> \(param_0=0x0, "
                     rf"param_1=0x0, param_2=0x40, .*param_7=3\) at \S*numba_scale\.py:{store}", out), out
    assert re.search(rf"^{store}\t        a\[i\] = scaled  # STORE$", out, re.M)
    assert re.search(r"^\*\s+0 .*numba_scale::scale\(param_0=0x0, .*param_7=3\)$", out, re.M)
    assert 'No symbol "i" in current context.' in err          # lineinfo has no variables
    assert "PASSED" in out and re.search(r"\[Inferior 1 \(process \d+\) exited normally\]", out)


def test_debug_kernel_prints_its_python_variables(gdb, tmp_path):
    store = line_of("# STORE")
    status, out, err = gdb(host_for(tmp_path, debug=True, opt=False), "break scale", "run", "info breakpoints",
                           f"tbreak numba_scale.py:{store}", "continue", "p i", "p scaled", "p a.nitems",
                           "info locals", "continue")
    assert "Breakpoint 1 (scale) pending." in out
    # break NAME: the kernel, not Numba's ..._exc_helper__ function of the same prefix
    assert re.search(r"^1\s+breakpoint\s+keep y\s+0x[0-9a-f]+ in numba_scale::scale at \S*numba_scale\.py:"
                     rf"{line_of('i = cuda.grid(1)')}$", out, re.M), out
    assert re.search(r"hit Breakpoint 1, numba_scale::scale<<<\(2,1,1\),\(32,1,1\)>>> \(a=\{meminfo = 0x0, "
                     r"parent = 0x0, nitems = 64, itemsize = 4, data = 0x[0-9a-f]+, shape = \{64\}, "
                     r"strides = \{4\}\}, factor=", out)
    assert "$1 = 0\n$2 = 1\n$3 = 64" in out
    assert "i = 0\nscaled = 1" in out
    assert "PASSED" in out


def _has_launch() -> bool:
    try:
        return importlib.util.find_spec("gpudbg.cuda_driver.launch") is not None
    except ImportError:
        return False


@pytest.mark.skipif(not _has_launch(), reason="gpudbg.cuda_driver.launch (module loading and launches "
                                               "through the drop-in libcuda) is not there yet")
@pytest.mark.parametrize("mode", ["lineinfo", "debug"])
def test_numba_program_under_gpudbg_debug(mode):
    store = line_of("# STORE")
    argv = [sys.executable, "-m", "gpudbg", "debug", "--batch", "-ex", f"break numba_scale.py:{store}",
            "-ex", "run", "-ex", "info cuda kernels", "-ex", "p i", "-ex", "continue", str(PROGRAM), mode]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=dict(os.environ))
    out, err = p.stdout, p.stderr
    assert re.search(rf"hit Breakpoint 1, __main__::scale<<<\(2,1,1\),\(32,1,1\)>>> .* at \S*numba_scale\.py:"
                     rf"{store}", out), out + err
    assert re.search(r"^\*\s+0 .*__main__::scale\(", out, re.M)
    if mode == "debug":
        assert "$1 = 0" in out
    else:
        assert 'No symbol "i" in current context.' in err
    assert "PASSED" in out and re.search(r"\[Inferior 1 \(process \d+\) exited normally\]", out)
