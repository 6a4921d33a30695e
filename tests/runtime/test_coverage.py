"""The runtime's coverage of seed 002, as `python -m gpudbg.runtime.coverage`
reports it (the figure the issue asks a test to print)."""
from __future__ import annotations

import subprocess
import sys

from gpudbg.runtime import mc
from gpudbg.runtime.api._base import NOT_SUPPORTED
from gpudbg.runtime.coverage import coverage, report
from gpudbg.runtime.seed_functions import SECTIONS


def test_the_seed_table_has_182_functions_in_15_sections():
    assert len(SECTIONS) == 15
    assert sum(len(names) for _, names in SECTIONS.values()) == 182


def test_every_seed_function_exists_and_at_most_ten_are_not_supported():
    rows = coverage()
    missing = [n for r in rows for n in r.missing]
    assert missing == []
    assert len(NOT_SUPPORTED) <= 10
    for name, reason in NOT_SUPPORTED.items():
        assert reason
        assert "Not supported on the simulator" in getattr(mc, name).__doc__
    print("\n" + report())


def test_not_supported_functions_return_the_code_and_set_the_last_error():
    for name in NOT_SUPPORTED:
        mc.mcGetLastError()
        result = getattr(mc, name)()
        assert result[0] == mc.mcError_t.mcErrorNotSupported
        assert all(out is None for out in result[1:])
        assert mc.mcGetLastError() == (mc.mcError_t.mcErrorNotSupported,)


def test_the_report_runs_as_a_module():
    out = subprocess.run([sys.executable, "-m", "gpudbg.runtime.coverage"], capture_output=True,
                         text=True, check=True).stdout
    assert out.splitlines()[0].startswith("section")
    assert "182" in out.splitlines()[len(SECTIONS) + 1]
