"""Coverage of the latest CUDBGAPI_st entries by the facade: printed (``pytest -s``
shows it) and held to at least 80%; every entry is either implemented or has a
stated reason and result code."""
from __future__ import annotations

import subprocess
import sys

from gpudbg.debug.cudbg import coverage
from gpudbg.debug.cudbg.api_table import LATEST_ENTRIES
from gpudbg.debug.cudbg.facade import UNSUPPORTED


def test_coverage_is_at_least_80_percent():
    cov = coverage.coverage()
    print(cov.headline())
    assert cov.total == len(LATEST_ENTRIES) == 108
    assert len(cov.implemented) / cov.total >= 0.8
    assert set(cov.implemented) | set(cov.unsupported) == {e.name for e in LATEST_ENTRIES}
    assert set(cov.unsupported) == set(UNSUPPORTED)
    assert all(reason for _code, reason in UNSUPPORTED.values())


def test_coverage_module_prints_the_headline():
    out = subprocess.run([sys.executable, "-m", "gpudbg.debug.cudbg.coverage"], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    n = len(coverage.coverage().implemented)
    assert out.splitlines()[0] == (f"cudbg facade coverage: {n}/108 latest CUDBGAPI_st entries "
                                   f"implemented ({100 * n / 108:.0f}%)")
    for name in UNSUPPORTED:
        assert f"  {name}  " in out
