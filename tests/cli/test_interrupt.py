"""Kernels that never finish under `gpudbg run`: Ctrl-C stops the running
kernel, prints where its warps were and exits 130 without a traceback; a
second Ctrl-C exits at once; GPUDBG_HANG_TIMEOUT stops it by itself; the
timeout is announced at the start, and bad settings are refused with a
message before the program runs."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import gpudbg
from gpudbg.cli.run import run_program

SPIN_PROGRAM = textwrap.dedent('''
    import sys
    import numpy as np
    import gpudbg

    SRC = r"""
    extern "C" __global__ void spin(int *flag) {
        while (atomicAdd(flag, 0) == 0) { }
    }"""

    def main():
        m = gpudbg.compile(SRC, name="spin_cli.cu")
        flag = gpudbg.zeros(1, np.int32)
        m.spin[2, 64](flag)
        print("launched", flush=True)
        {wait}

    main()
''')
SYNC = "gpudbg.synchronize()"
# The program swallows the first Ctrl-C and then blocks: only the second one ends it.
STUBBORN = """try:
        gpudbg.synchronize()
    except (KeyboardInterrupt, gpudbg.KernelFaultError):
        print("ignoring it", flush=True)
        import threading
        threading.Event().wait()"""


def write_program(tmp_path, wait: str = SYNC):
    prog = tmp_path / "spinprog.py"
    prog.write_text(SPIN_PROGRAM.replace("{wait}", wait))
    return prog


def start(prog, *args, command="run", **env):
    full = dict(os.environ, PYTHONUNBUFFERED="1", **env)
    p = subprocess.Popen([sys.executable, "-m", "gpudbg", command, str(prog), *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=full, cwd=prog.parent)
    line = p.stdout.readline()
    if command == "check":
        assert line == "========= GPUDBG CHECK\n", line
        line = p.stdout.readline()
    assert line == "launched\n", (line, p.stderr.read() if p.poll() is not None else "")
    time.sleep(0.5)                     # the kernel is spinning on the device thread now
    return p


def finish(p, timeout=60):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"gpudbg run did not end: {err}")
    return out, err


def test_ctrl_c_stops_the_spinning_kernel_and_exits_130(tmp_path):
    p = start(write_program(tmp_path), GPUDBG_HANG_TIMEOUT="60")
    started = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = finish(p)
    assert time.monotonic() - started < 30
    assert p.returncode == 130, err
    assert "Traceback" not in err
    assert "gpudbg: kernels that run longer than 60 s are stopped (GPUDBG_HANG_TIMEOUT)" in err
    assert "gpudbg run: interrupted (Ctrl-C) at spinprog.py:16 in main; running kernels are stopped" in err
    assert "========= Kernel interrupted in kernel spin at spin_cli.cu:3" in err
    assert "kernel spin was interrupted (Ctrl-C) after " in err
    assert "=========     where the warps were:" in err
    assert "at spin_cli.cu:3: 4 warp(s), 128 thread(s) of blocks (0,0,0), (1,0,0), looped there " in err


def test_ctrl_c_under_check_reports_where_it_was_and_exits_130(tmp_path):
    p = start(write_program(tmp_path), command="check", GPUDBG_HANG_TIMEOUT="60")
    p.send_signal(signal.SIGINT)
    out, err = finish(p)
    assert p.returncode == 130, out + err
    assert "Traceback" not in err
    assert "========= Kernel interrupted in kernel spin at spin_cli.cu:3" in out
    assert "ERROR SUMMARY" in out


def test_ctrl_c_while_gpudbg_waits_for_kernels_left_running(tmp_path):
    p = start(write_program(tmp_path, "pass   # exits without waiting for the kernel"))
    p.send_signal(signal.SIGINT)
    out, err = finish(p)
    assert p.returncode == 130, err
    assert "gpudbg: interrupted (Ctrl-C) while waiting for the program's kernels" in err
    assert "========= Kernel interrupted in kernel spin at spin_cli.cu:3" in err
    assert "Traceback" not in err


def test_second_ctrl_c_exits_at_once(tmp_path):
    p = start(write_program(tmp_path, STUBBORN), GPUDBG_HANG_TIMEOUT="off")
    p.send_signal(signal.SIGINT)
    assert p.stdout.readline() == "ignoring it\n"      # the first one was handled, the kernel stopped
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = finish(p, timeout=20)
    assert p.returncode == 130, err
    assert "gpudbg: interrupted again; exiting now" in err
    assert "gpudbg: kernels may run for any time (GPUDBG_HANG_TIMEOUT is off)" in err
    assert "Traceback" not in err


@pytest.fixture
def reset_device():
    gpudbg.Device(0).reset()
    yield
    gpudbg.Device(0).reset()


def test_hang_timeout_stops_the_kernel_under_gpudbg_run(tmp_path, monkeypatch, capsys, reset_device):
    monkeypatch.setenv("GPUDBG_HANG_TIMEOUT", "1")
    start = time.monotonic()
    assert run_program(str(write_program(tmp_path)), []) == 1
    assert time.monotonic() - start < 10
    err = capsys.readouterr().err
    assert "gpudbg: kernels that run longer than 1 s are stopped (GPUDBG_HANG_TIMEOUT)" in err
    assert "========= Kernel timeout in kernel spin at spin_cli.cu:3" in err
    assert "longer than GPUDBG_HANG_TIMEOUT=1 s; 128 thread(s) in 4 warp(s) had not finished" in err
    assert "looped there " in err and "Traceback" not in err


@pytest.mark.parametrize("name,value,text", [
    ("GPUDBG_HANG_TIMEOUT", "-3", "GPUDBG_HANG_TIMEOUT='-3' must be a positive number of seconds"),
    ("GPUDBG_HANG_TIMEOUT", "nan", "GPUDBG_HANG_TIMEOUT='nan' must be a positive number of seconds"),
    ("GPUDBG_HANG_TIMEOUT", "later", "GPUDBG_HANG_TIMEOUT='later' is not a number of seconds"),
    ("GPUDBG_INSTRUCTION_BUDGET", "0", "GPUDBG_INSTRUCTION_BUDGET='0' must be a positive number"),
    ("GPUDBG_INSTRUCTION_BUDGET", "-1", "GPUDBG_INSTRUCTION_BUDGET='-1' must be a positive number"),
    ("GPUDBG_INSTRUCTION_BUDGET", "many", "GPUDBG_INSTRUCTION_BUDGET='many' is not a whole number"),
    ("GPUDBG_SCHEDULE", "fair", "GPUDBG_SCHEDULE='fair' is not a schedule (choose lowest-pc, random)"),
    ("GPUDBG_SEED", "-2", "GPUDBG_SEED='-2' must be a non-negative integer"),
])
def test_bad_settings_are_refused_before_the_program_runs(tmp_path, monkeypatch, capsys, name, value, text):
    monkeypatch.setenv(name, value)
    prog = tmp_path / "never.py"
    prog.write_text("print('ran')\n")
    assert run_program(str(prog), []) == 2
    out = capsys.readouterr()
    assert out.err.startswith(f"gpudbg run: {text}") and out.err.count("\n") == 1
    assert "Traceback" not in out.err and "ran" not in out.out


NATIVE_SPIN = r"""
#include <cstdio>
#include <cstring>
#include <unistd.h>
__global__ void spin(int *flag) {
    while (atomicAdd(flag, 0) == 0) { }
}
int main(int argc, char **argv) {
    int *flag;
    cudaMalloc(&flag, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    spin<<<2, 64>>>(flag);
    printf("launched\n");
    fflush(stdout);
    cudaError_t e = cudaDeviceSynchronize();
    printf("sync: %s\n", cudaGetErrorString(e));
    fflush(stdout);
    if (argc > 1 && !strcmp(argv[1], "stubborn"))
        for (;;) sleep(1);               // only a second Ctrl-C ends it
    return e == cudaSuccess ? 0 : 1;
}
"""
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)


@pytest.fixture(scope="module")
def native_spin(tmp_path_factory):
    if NVCC is None:
        pytest.skip("nvcc is not installed (CUDA toolkit)")
    d = tmp_path_factory.mktemp("native_spin")
    (d / "spin_native.cu").write_text(NATIVE_SPIN)
    subprocess.run([NVCC, "-lineinfo", "-cudart", "shared", "-gencode", "arch=compute_80,code=compute_80",
                    "-o", str(d / "spin_native"), str(d / "spin_native.cu")], check=True, capture_output=True,
                   timeout=300)
    return d / "spin_native"


def test_ctrl_c_reaches_a_native_programs_kernel(native_spin):
    p = start(native_spin, GPUDBG_HANG_TIMEOUT="60")
    p.send_signal(signal.SIGINT)
    out, err = finish(p)
    assert p.returncode == 130, err
    assert "sync: the launch timed out and was terminated" in out    # the program's wait returned
    assert "gpudbg: interrupted (Ctrl-C); running kernels are stopped" in err
    assert "========= Kernel interrupted in kernel _Z4spinPi" in err
    assert "inlined at " + str(native_spin.parent / "spin_native.cu") + ":6: 4 warp(s), 128 thread(s)" in err
    assert "Traceback" not in err


def test_second_ctrl_c_ends_a_native_program_at_once(native_spin):
    p = start(native_spin, "stubborn", GPUDBG_HANG_TIMEOUT="off")
    p.send_signal(signal.SIGINT)
    assert p.stdout.readline() == "sync: the launch timed out and was terminated\n"
    time.sleep(1.0)                      # more than DUPLICATE_S: a second Ctrl-C, not the same one
    p.send_signal(signal.SIGINT)
    out, err = finish(p, timeout=20)
    assert p.returncode == 130, err
    assert "gpudbg: interrupted again; exiting now" in err
