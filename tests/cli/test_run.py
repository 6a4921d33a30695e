"""`gpudbg run`: exit statuses and fault reports."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

import gpudbg
from gpudbg.cli.main import main
from gpudbg.cli.run import run_program

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

OOB_KERNEL = r'''
extern "C" __global__ void over(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[0] = in[i];
}
'''


def _gpudbg(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpudbg", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def reset_device():
    yield
    gpudbg.Device(0).reset()


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


# ------------------------------------------------------------------ end to end
def test_run_saxpy_exits_zero():
    r = _gpudbg("run", "examples/saxpy.py", "4096")
    assert r.returncode == 0, r.stderr
    assert "saxpy: n=4096" in r.stdout and "PASSED" in r.stdout
    assert "=========" not in r.stderr


def test_run_oob_prints_the_report_and_fails():
    r = _gpudbg("run", "examples/oob.py")
    assert r.returncode == 1
    err = r.stderr
    assert "Lane Illegal Address in kernel forward_difference at oob.cu:" in err
    assert "0 bytes past the end of the 4000-byte allocation" in err
    assert "by thread (103,0,0) in block (7,0,0)" in err
    assert "address 0x" in err
    assert "    5 |         out[i] = in[i + 1] - in[i];" in err
    assert "Traceback" not in err
    assert "PASSED" not in r.stdout


def test_no_subcommand_prints_usage():
    r = _gpudbg()
    assert r.returncode == 2 and "usage: gpudbg" in r.stderr


# ------------------------------------------------------------------ in process
def test_argv_name_and_exit_status_are_the_programs(tmp_path, capsys):
    prog = _script(tmp_path, """
        import sys
        assert __name__ == "__main__"
        print("argv", sys.argv[1:], sys.argv[0].endswith("prog.py"))
        sys.exit(int(sys.argv[1]))
    """)
    saved = list(sys.argv)
    assert run_program(prog, ["3", "x"]) == 3
    assert "argv ['3', 'x'] True" in capsys.readouterr().out
    assert sys.argv == saved
    assert main(["run", prog, "0"]) == 0


def test_program_directory_is_importable(tmp_path):
    (tmp_path / "helper_mod_for_run.py").write_text("VALUE = 41\n")
    prog = _script(tmp_path, """
        import sys, helper_mod_for_run
        sys.exit(helper_mod_for_run.VALUE + 1)
    """)
    assert run_program(prog, []) == 42


def test_python_errors_print_a_traceback_without_runpy(tmp_path, capsys):
    prog = _script(tmp_path, """
        def f():
            raise ValueError("plain python bug")
        f()
    """)
    assert run_program(prog, []) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "ValueError: plain python bug" in err
    assert "runpy" not in err and 'prog.py", line 3' in err


def test_exit_with_message_is_status_one(tmp_path, capsys):
    prog = _script(tmp_path, "raise SystemExit('giving up')\n")
    assert run_program(prog, []) == 1
    assert "giving up" in capsys.readouterr().err


def test_caught_fault_left_sticky_is_still_reported(tmp_path, capsys, reset_device):
    prog = _script(tmp_path, f"""
        import numpy as np, gpudbg
        m = gpudbg.compile({OOB_KERNEL!r}, name="caught.cu")
        src, dst = gpudbg.to_device(np.zeros(60, np.int32)), gpudbg.zeros(1, np.int32)
        m.over[1, 128](src, dst, 60)
        try:
            dst.to_host()
        except gpudbg.KernelFaultError:
            print("caught it")
    """)
    assert run_program(prog, []) == 1
    out = capsys.readouterr()
    assert "caught it" in out.out
    assert "in kernel over at caught.cu:4" in out.err
    assert "0 bytes past the end of the 240-byte allocation" in out.err


def test_fault_never_synchronized_is_found_at_exit(tmp_path, capsys, reset_device):
    prog = _script(tmp_path, f"""
        import numpy as np, gpudbg
        m = gpudbg.compile({OOB_KERNEL!r}, name="unsynced.cu")
        src, dst = gpudbg.to_device(np.zeros(60, np.int32)), gpudbg.zeros(1, np.int32)
        m.over[1, 128](src, dst, 60)
        print("launched")
    """)
    assert run_program(prog, []) == 1
    out = capsys.readouterr()
    assert "launched" in out.out
    assert "in kernel over at unsynced.cu:4" in out.err
    assert out.err.count("=========     by thread") == 1


def test_uncaught_fault_is_reported_once(tmp_path, capsys, reset_device):
    prog = _script(tmp_path, f"""
        import numpy as np, gpudbg
        m = gpudbg.compile({OOB_KERNEL!r}, name="uncaught.cu")
        src, dst = gpudbg.to_device(np.zeros(60, np.int32)), gpudbg.zeros(1, np.int32)
        m.over[1, 128](src, dst, 60)
        dst.to_host()
    """)
    assert run_program(prog, []) == 1
    err = capsys.readouterr().err
    assert err.count("Lane Illegal Address in kernel over") == 1
    assert "Traceback" not in err


def test_missing_program(capsys):
    assert run_program("/no/such/program.py", []) == 2
    assert "no such file" in capsys.readouterr().err
