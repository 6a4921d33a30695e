"""`gpudbg debug ./prog` on an nvcc-built (-G, -cudart shared) executable:
the debugger runs inside the program's own process (execve, startup hook).

The process story (pending breakpoints, run, the exit report and status,
no restart, --batch without run, Ctrl-C at the prompt) is tested against a
runtime with no exports (programs/no_runtime.py: every call 801), so it
does not depend on gpudbg's runtime layer; breaking on `.cu` lines and
printing -G locals needs gpudbg.cuda_runtime.exports and is skipped
without it. Everything here needs nvcc and runs `python -m gpudbg`."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpudbg.cli.debugger.native_inferior import SESSION_ENV, child_environment

PROGRAMS = Path(__file__).resolve().parent / "programs"
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed (CUDA toolkit)")


def _has_runtime() -> bool:
    try:
        return importlib.util.find_spec("gpudbg.cuda_runtime.exports") is not None
    except ImportError:
        return False


def line_of(path: Path, marker: str) -> int:
    for n, text in enumerate(path.read_text().splitlines(), start=1):
        if marker in text:
            return n
    raise AssertionError(marker)


@pytest.fixture(scope="module")
def scale(tmp_path_factory) -> Path:
    if NVCC is None:
        pytest.skip("nvcc is not installed (CUDA toolkit)")
    out = tmp_path_factory.mktemp("native") / "scale"
    subprocess.run([NVCC, "-G", "-cudart", "shared", "-gencode", "arch=compute_80,code=compute_80",
                    "-o", str(out), str(PROGRAMS / "scale.cu")], check=True, capture_output=True, timeout=300)
    return out


def no_runtime_env() -> dict[str, str]:
    env = dict(os.environ)
    env["GPUDBG_NATIVE_IMPL_CUDART"] = "no_runtime"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROGRAMS), env.get("PYTHONPATH", "")) if p)
    return env


def gdb(program: Path, *commands: str, batch: bool = True, env: dict | None = None, stdin: str | None = None):
    argv = [sys.executable, "-m", "gpudbg", "debug"] + (["--batch"] if batch else [])
    for c in commands:
        argv += ["-ex", c]
    p = subprocess.run(argv + [str(program)], cwd=program.parent, env=env, input=stdin or "",
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def test_child_environment_names_the_startup_hook_and_the_session():
    import json
    env = child_environment("./p", ["a b", "c"], True, ["break k", "run"], base={"LD_LIBRARY_PATH": "/x"})
    assert env["GPUDBG_NATIVE_STARTUP"] == "gpudbg.cli.debugger.native_inferior:child_start"
    libs, rest = env["LD_LIBRARY_PATH"].split(os.pathsep)
    assert (Path(libs) / "libcudart.so.13").exists() and rest == "/x"
    assert json.loads(env[SESSION_ENV]) == {"program": "./p", "args": ["a b", "c"], "batch": True,
                                            "commands": ["break k", "run"]}


@needs_nvcc
def test_batch_run_reports_the_exit_and_the_process_keeps_the_status(scale):
    status, out, err = gdb(scale, "break scale", "info breakpoints", "run", "info breakpoints",
                           env=no_runtime_env())
    assert "Breakpoint 1 (scale) pending." in out
    assert "Starting program: " in out
    m = re.search(r"\[Inferior 1 \(process (\d+)\) exited with code 03\]", out)
    assert m is not None, out
    assert out.count("<PENDING>") == 2        # before run and after: the module never loaded
    assert "cudaMalloc(&dev, n * sizeof(int)) failed" in err
    assert status == 3                        # the program's own exit status


@needs_nvcc
def test_batch_without_run_never_lets_the_program_past_its_first_cuda_call(scale):
    status, out, err = gdb(scale, "break scale", env=no_runtime_env())
    assert status == 0 and "Breakpoint 1 (scale) pending." in out
    assert "failed" not in err and "Inferior" not in out
    status, out, err = gdb(scale, "frobnicate", env=no_runtime_env())
    assert status == 1 and 'Undefined command: "frobnicate".' in err


@needs_nvcc
def test_a_native_program_runs_once(scale):
    status, out, err = gdb(scale, batch=False, env=no_runtime_env(), stdin="run\nrun\ninfo cuda kernels\nquit\n")
    assert "exited with code 03" in out and "No CUDA kernels." in out
    assert "cannot be restarted: a native program runs in the debugger's own process" in err
    assert status == 3


@needs_nvcc
def test_run_cannot_change_the_arguments(scale):
    status, out, err = gdb(scale, "run now", env=no_runtime_env())
    assert "The arguments of a native program are fixed when gpudbg debug starts it" in err
    assert status == 1 and "Inferior" not in out


@needs_nvcc
def test_ctrl_c_at_the_prompt_does_not_kill_the_program(scale):
    p = subprocess.Popen([sys.executable, "-m", "gpudbg", "debug", str(scale)], cwd=scale.parent,
                         env=no_runtime_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        seen, deadline = b"", time.monotonic() + 60
        while b"(cuda-gdb) " not in seen and time.monotonic() < deadline:
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
        assert b"(cuda-gdb) " in seen
        p.send_signal(signal.SIGINT)
        time.sleep(0.3)
        out, err = p.communicate(b"info breakpoints\nquit\n", timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    assert b"Quit" in seen + out and b"No breakpoints or watchpoints." in out


@needs_nvcc
@pytest.mark.skipif(not _has_runtime(), reason="gpudbg.cuda_runtime.exports (the libcudart layer) is not there yet")
def test_break_on_cu_lines_and_print_locals_of_a_G_program(scale):
    store = line_of(PROGRAMS / "scale.cu", "// STORE")
    status, out, err = gdb(scale, f"break scale.cu:{store}", "run", "info cuda kernels", "p i", "p scaled",
                           "info locals", "continue", "info breakpoints")
    assert f"Breakpoint 1 (scale.cu:{store}) pending." in out
    assert re.search(r'Thread 1 "scale" hit Breakpoint 1, scale<<<\(2,1,1\),\(32,1,1\)>>> \(out=.*factor=3, n=64\) at '
                     rf'\S*scale\.cu:{store}', out), out + err
    assert re.search(r"^\*\s+0\s+-\s+0\s+\d+\s+Active .*scale\(out=0x[0-9a-f]+, factor=3, n=64\)$", out, re.M)
    assert "$1 = 0" in out and "$2 = 1" in out and "i = 0\nscaled = 1" in out
    assert "PASSED" in out
    assert re.search(r"\[Inferior 1 \(process \d+\) exited normally\]", out)
    assert "breakpoint already hit 1 time" in out     # one stop: both warps arrived together
    assert status == 0


@needs_nvcc
@pytest.mark.skipif(not _has_runtime(), reason="gpudbg.cuda_runtime.exports (the libcudart layer) is not there yet")
def test_kill_at_a_breakpoint_ends_the_process(scale):
    status, out, err = gdb(scale, "break scale", "run", "kill", "info breakpoints")
    assert "hit Breakpoint 1, scale<<<" in out
    assert re.search(r"\[Inferior 1 \(process \d+\) killed\]", out)
    assert "PASSED" not in out and "Num     Type" not in out     # the process ended at kill
    assert status == 128 + signal.SIGKILL


@needs_nvcc
@pytest.mark.skipif(not _has_runtime(), reason="gpudbg.cuda_runtime.exports (the libcudart layer) is not there yet")
def test_ctrl_c_interrupts_a_running_kernel(tmp_path):
    spin = tmp_path / "spin"
    subprocess.run([NVCC, "-G", "-cudart", "shared", "-gencode", "arch=compute_80,code=compute_80",
                    "-o", str(spin), str(PROGRAMS / "spin.cu")], check=True, capture_output=True, timeout=300)
    p = subprocess.Popen([sys.executable, "-m", "gpudbg", "debug", str(spin)], cwd=tmp_path,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen, deadline = b"", time.monotonic() + 60
        while b"(cuda-gdb) " not in seen and time.monotonic() < deadline:
            seen += os.read(p.stdout.fileno(), 4096) or b"!"
        p.stdin.write(b"run\n")
        p.stdin.flush()
        while b"spinning" not in seen and time.monotonic() < deadline:   # the kernel runs
            seen += os.read(p.stdout.fileno(), 4096) or b"!"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(b"info cuda kernels\nkill\n", timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    text = (seen + out).decode()
    assert 'Thread 1 "spin" received signal SIGINT, Interrupt.' in text, text + err.decode()
    assert re.search(r"in spin<<<\(1,1,1\),\(32,1,1\)>>> \(flag=\(volatile int \*\) 0x[0-9a-f]+, "
                     r"started=\(volatile int \*\) 0x[0-9a-f]+\) at "
                     rf"\S*spin\.cu:{line_of(PROGRAMS / 'spin.cu', '// SPIN')}", text)
    assert re.search(r"^\*\s+0 .* Active .*spin\(flag=0x[0-9a-f]+, started=0x[0-9a-f]+\)$", text, re.M)
    assert re.search(r"\[Inferior 1 \(process \d+\) killed\]", text) and "synchronize" not in text
    assert p.returncode == 128 + signal.SIGKILL
