"""gpudbg run/check with programs that reach a CUDA driver themselves:
which programs are native, the driver preloaded for Python programs, and
the startup hook a native child runs."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys

from gpudbg.cli import native


def test_elf_executables_are_native(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("print('hi')\n")
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    subprocess.run(["cc", "-o", str(tmp_path / "prog"), str(tmp_path / "main.c")], check=True, timeout=60)
    assert native.is_native(str(tmp_path / "prog"))
    assert not native.is_native(str(script))
    assert not native.is_native(str(tmp_path / "missing"))


def test_preloaded_driver_is_what_a_program_dlopens():
    code = (
        "import ctypes\n"
        "from gpudbg.cli import native\n"
        "assert native.preload_driver() is None\n"
        "lib = ctypes.CDLL('libcuda.so.1')\n"          # what cuda-pathfinder does
        "v = ctypes.c_int()\n"
        "assert lib.cuDriverGetVersion(ctypes.byref(v)) == 0, 'call failed'\n"
        "print(v.value)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 13000


def test_startup_hook_runs_once_and_is_not_inherited(tmp_path, monkeypatch):
    from gpudbg.native import bridge

    marker = tmp_path / "ran"
    mod = tmp_path / "hookmod.py"
    mod.write_text(f"def go():\n    open({str(marker)!r}, 'a').write('x')\n")
    code = (
        "import os, sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from gpudbg.native import bridge\n"
        "bridge.implementation('cuda'); bridge.implementation('cudart')\n"
        f"assert {bridge.STARTUP_ENV!r} not in os.environ\n")
    env = dict(os.environ, **{bridge.STARTUP_ENV: "hookmod:go"})
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert marker.read_text() == "x"


def test_a_failing_startup_hook_is_reported_not_raised(tmp_path):
    from gpudbg.native import bridge

    code = "from gpudbg.native import bridge\nbridge.implementation('cuda')\nprint('went on')\n"
    env = dict(os.environ, **{bridge.STARTUP_ENV: "no_such_module_here:go"})
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0 and "went on" in out.stdout
    assert "startup hook 'no_such_module_here:go' failed" in out.stderr
