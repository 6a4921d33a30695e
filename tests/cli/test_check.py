"""`gpudbg check`: sanitizer reports, the error summary, exit statuses, JSON and coredumps."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC (cuda-bindings) is not installed")

import gpudbg
from gpudbg.cli.check import COREDUMP_ENV, finding_dict, summary_line
from gpudbg.cli.main import main
from gpudbg.cli.run import DeviceFault, FaultOrigin
from gpudbg.sim.faults import CUDBGException, FaultReport, HangKind

ROOT = Path(__file__).resolve().parents[2]

OOB_KERNEL = r'''
extern "C" __global__ void over(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[0] = in[i];
}
'''


def _gpudbg(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpudbg", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


@pytest.fixture
def reset_device():
    yield
    gpudbg.Device(0).reset()


@pytest.fixture(scope="module")
def oob_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, list[dict]]:
    out = tmp_path_factory.mktemp("oob") / "findings.json"
    r = _gpudbg("check", "--json", str(out), "examples/oob.py")
    return r, json.loads(out.read_text())


# ------------------------------------------------------------------ end to end
def test_oob_report_lines_are_exact(oob_run):
    r, findings = oob_run
    assert r.returncode == 1, r.stderr
    f = findings[0]
    base = int(f["message"].split("allocation at ")[1].split()[0], 16)
    assert f["address"] == base + 4000
    assert r.stdout.splitlines() == [
        "========= GPUDBG CHECK",
        "========= Lane Illegal Address in kernel forward_difference at oob.cu:5",
        "=========     Invalid __global__ read of size 4 bytes: address "
        f"0x{base + 4000:x} is 0 bytes past the end of the 4000-byte allocation at 0x{base:x} (device)",
        f"=========     by thread (103,0,0) in block (7,0,0) [sm {f['sm']}, warp 3, lane 7]",
        f"=========     address 0x{base + 4000:x} (4 bytes, global)",
        f"=========     at pc 0x{f['pc']:x} in forward_difference: ld.global.f32 %f2, [%rd6+4]",
        "=========         5 |         out[i] = in[i + 1] - in[i];",
        "=========     launched from examples/oob.py:39 in main",
        "========= ERROR SUMMARY: 1 error",
    ]
    assert "Traceback" not in r.stderr and "PASSED" not in r.stdout


def test_oob_json_findings(oob_run):
    _, findings = oob_run
    assert len(findings) == 1
    f = findings[0]
    assert f["program"] == "examples/oob.py"
    assert (f["finding"], f["origin"], f["device"]) == ("kernel_fault", "raised", 0)
    assert f["kind"] == "CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS"
    assert f["kind_code"] == int(CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS)
    assert f["title"] == "Lane Illegal Address"
    assert (f["kernel"], f["function"]) == ("forward_difference", "forward_difference")
    assert (f["source_file"], f["source_line"]) == ("oob.cu", 5)
    assert isinstance(f["ptx_line"], int) and f["ptx_line"] > 0
    assert (f["block"], f["thread"], f["warp"], f["lane"]) == ([7, 0, 0], [103, 0, 0], 3, 7)
    assert (f["access_size"], f["space"], f["hang"]) == (4, "global", None)
    assert f["instruction"] == "ld.global.f32 %f2, [%rd6+4]"
    assert "0 bytes past the end of the 4000-byte allocation" in f["message"]


def test_clean_program_has_zero_errors(tmp_path):
    out = tmp_path / "clean.json"
    r = _gpudbg("check", "--json", str(out), "examples/saxpy.py", "4096")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "========= GPUDBG CHECK"
    assert lines[-1] == "========= ERROR SUMMARY: 0 errors"
    assert "PASSED" in r.stdout
    assert [ln for ln in lines if ln.startswith("=========")] == [lines[0], lines[-1]]
    assert json.loads(out.read_text()) == []
    assert not list(tmp_path.glob(".clean.json.*"))   # no temp file left behind


def test_coredump_is_written_and_readable(tmp_path):
    from gpudbg.dump.coredump.reader import read_coredump

    pattern = str(tmp_path / "core_%p.nvcudmp")
    r = _gpudbg("check", "--coredump", "--coredump-file", pattern, "examples/oob.py")
    assert r.returncode == 1, r.stderr
    written = [ln for ln in r.stdout.splitlines() if "coredump written to" in ln]
    assert len(written) == 1
    path = Path(written[0].split("coredump written to ")[1])
    assert path.parent == tmp_path and path.name.startswith("core_") and path.is_file()
    core = read_coredump(path)
    faulting = [(cta.block_idx, ln.thread_idx) for sm in core.devices[0].sms for cta in sm.ctas
                for w in cta.warps for ln in w.lanes if ln.exception]
    assert faulting == [((7, 0, 0), (103, 0, 0))]
    assert r.stdout.splitlines()[-1] == "========= ERROR SUMMARY: 1 error"


def test_without_coredump_flag_no_core_is_written(tmp_path):
    r = _gpudbg("check", "examples/oob.py", env={"GPUDBG_COREDUMP_FILE": str(tmp_path / "c.nvcudmp"),
                                                 COREDUMP_ENV: "0"})
    assert r.returncode == 1
    assert "coredump" not in r.stdout and not list(tmp_path.iterdir())


def test_python_exception_is_not_a_device_fault(tmp_path):
    prog = _script(tmp_path, """
        def f():
            raise ValueError("plain python bug")
        f()
    """)
    r = _gpudbg("check", prog)
    assert r.returncode == 1
    assert "Traceback" in r.stderr and "ValueError: plain python bug" in r.stderr
    assert 'prog.py", line 3' in r.stderr and "runpy" not in r.stderr
    assert r.stdout.splitlines()[-2:] == [
        "========= Target application raised ValueError: plain python bug: "
        "a host (Python) error, not a device fault",
        "========= ERROR SUMMARY: 0 errors",
    ]


def test_faults_on_two_devices_are_both_reported(tmp_path):
    prog = _script(tmp_path, f"""
        import numpy as np, gpudbg
        for dev in (0, 1):
            with gpudbg.Device(dev):
                m = gpudbg.compile({OOB_KERNEL!r}, name=f"dev{{dev}}.cu")
                src, dst = gpudbg.to_device(np.zeros(60, np.int32)), gpudbg.zeros(1, np.int32)
                m.over[1, 128](src, dst, 60)
                if dev == 0:
                    try:
                        dst.to_host()
                    except gpudbg.KernelFaultError:
                        print("caught it")
        print("done")
    """)
    out = tmp_path / "two.json"
    r = _gpudbg("check", "--json", str(out), prog, env={"GPUDBG_DEVICES": "2"})
    assert r.returncode == 1, r.stderr
    assert "caught it" in r.stdout and "done" in r.stdout
    assert "in kernel over at dev0.cu:4" in r.stdout and "in kernel over at dev1.cu:4" in r.stdout
    assert r.stdout.count("0 bytes past the end of the 240-byte allocation") == 2
    assert r.stdout.splitlines()[-1] == "========= ERROR SUMMARY: 2 errors"
    findings = json.loads(out.read_text())
    assert sorted((f["device"], f["origin"], f["source_file"]) for f in findings) == [
        (0, "sticky", "dev0.cu"), (1, "sticky", "dev1.cu")]


# ------------------------------------------------------------------ in process
def test_caught_fault_counts_and_env_is_restored(tmp_path, capsys, reset_device, monkeypatch):
    monkeypatch.delenv(COREDUMP_ENV, raising=False)
    prog = _script(tmp_path, f"""
        import os, numpy as np, gpudbg
        print("env", os.environ.get({COREDUMP_ENV!r}))
        m = gpudbg.compile({OOB_KERNEL!r}, name="caught.cu")
        src, dst = gpudbg.to_device(np.zeros(60, np.int32)), gpudbg.zeros(1, np.int32)
        m.over[1, 128](src, dst, 60)
        try:
            dst.to_host()
        except gpudbg.KernelFaultError:
            print("caught it")
    """)
    assert main(["check", "--coredump-file", str(tmp_path / "k.nvcudmp"), prog]) == 1
    out = capsys.readouterr().out
    assert "env 1" in out and "caught it" in out
    assert "in kernel over at caught.cu:4" in out
    assert f"coredump written to {tmp_path / 'k.nvcudmp'}" in out
    assert out.splitlines()[-1] == "========= ERROR SUMMARY: 1 error"
    assert COREDUMP_ENV not in os.environ and "GPUDBG_COREDUMP_FILE" not in os.environ


def test_exit_status_without_faults_is_the_programs(tmp_path, capsys):
    prog = _script(tmp_path, "import sys\nsys.exit(3)\n")
    assert main(["check", prog]) == 3
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["========= Target application returned an error (exit status 3)",
                        "========= ERROR SUMMARY: 0 errors"]


@pytest.mark.parametrize("argv, message", [
    (["--coredump-file", "core_%q"], "--coredump-file: GPUDBG_COREDUMP_FILE pattern"),
    (["--json", "/no/such/dir/f.json"], "--json: directory /no/such/dir does not exist"),
])
def test_bad_options_are_usage_errors(tmp_path, capsys, argv, message):
    prog = _script(tmp_path, "print('ran')\n")
    assert main(["check", *argv, prog]) == 2
    out = capsys.readouterr()
    assert message in out.err and "ran" not in out.out


def test_missing_program(capsys):
    assert main(["check", "/no/such/program.py"]) == 2
    assert "gpudbg check: /no/such/program.py: no such file" in capsys.readouterr().err


def test_summary_pluralization():
    assert [summary_line(n) for n in (0, 1, 2)] == [
        "========= ERROR SUMMARY: 0 errors", "========= ERROR SUMMARY: 1 error",
        "========= ERROR SUMMARY: 2 errors"]


def test_finding_dict_for_hangs_and_reportless_errors():
    hang = FaultReport(CUDBGException.CUDBG_EXCEPTION_NONE, "all warps wait at bar.sync", "k", "k",
                       0x40, "bar.sync 0;", 12, "k.ptx", block=(1, 0, 0), thread=(0, 0, 0),
                       hang=HangKind.BARRIER_DEADLOCK, details={"waves": (1, 2)})
    d = finding_dict(DeviceFault(hang, "", FaultOrigin.RAISED, 0), "p.py")
    assert (d["finding"], d["kind"], d["hang"], d["title"]) == (
        "kernel_hang", "CUDBG_EXCEPTION_NONE", "barrier deadlock", "Barrier deadlock")
    assert d["block"] == [1, 0, 0] and d["details"] == {"waves": [1, 2]} and d["sm"] is None
    json.dumps(d)
    bare = finding_dict(DeviceFault(None, "mcErrorLaunchTimeout: hang", FaultOrigin.STICKY, 1), "p.py")
    assert bare == {"program": "p.py", "finding": "device_error", "origin": "sticky", "device": 1,
                    "tool": "memcheck", "severity": "error", "count": 1,
                    "message": "mcErrorLaunchTimeout: hang"}


def test_a_fault_the_program_reset_away_is_still_reported():
    """Regression: examples/hang.py catches its hang and resets the device,
    which destroys the faulted context; check used to report 0 errors."""
    env = dict(os.environ, GPUDBG_HANG_TIMEOUT="1")
    p = _gpudbg("check", "examples/hang.py", env=env)
    assert p.returncode == 1
    assert "mcErrorLaunchTimeout" in p.stdout
    assert "WAIT_VALUE" in p.stdout
    assert "(the context was destroyed since)" in p.stdout
    assert p.stdout.rstrip().endswith("========= ERROR SUMMARY: 1 error")
