"""Suite-wide test settings.

Property tests explore new random examples on every developer run, but CI
(CI=true, as .ci/run is invoked) derandomizes them so a submission's result
depends on its code only; a failure found locally is replayed from
hypothesis' example database and turned into a regression test.
"""
from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")


def pytest_terminal_summary(terminalreporter) -> None:
    """The cudbg facade's coverage figure (implemented / latest
    CUDBGAPI_st entries) at the end of every run that tested it."""
    ran = [r for reports in terminalreporter.stats.values() for r in reports
           if getattr(r, "nodeid", "").startswith("tests/debug/cudbg/test_facade_coverage.py")]
    if ran:
        from gpudbg.debug.cudbg import coverage
        terminalreporter.write_line(coverage.coverage().headline())
