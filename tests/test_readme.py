"""The README's first code block is what CI and new users run: setup, the
main job, the tests. The main job must do what the README says."""
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _first_block() -> list[str]:
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index("```")
    end = lines.index("```", start + 1)
    return lines[start + 1:end]


def test_readme_starts_with_setup_main_job_and_tests():
    setup, main_job, tests = _first_block()
    assert setup == "pip install -e '.[test]'"
    assert tests == "pytest -q"
    argv = shlex.split(main_job)
    assert argv[:2] == ["gpudbg", "check"] and (ROOT / argv[2]).is_file()


def test_the_main_job_reports_the_out_of_bounds_read():
    argv = shlex.split(_first_block()[1])
    r = subprocess.run([sys.executable, "-m", "gpudbg.cli.main", *argv[1:]], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "Lane Illegal Address in kernel forward_difference at oob.cu:5" in out
    assert "0 bytes past the end of the 4000-byte allocation" in out
    assert "by thread (103,0,0) in block (7,0,0) [sm 7, warp 3, lane 7]" in out
    assert "ERROR SUMMARY: 1 error" in out
