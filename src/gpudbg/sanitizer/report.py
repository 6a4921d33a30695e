"""The Reporter: findings printed as compute-sanitizer prints them, as
they are found, up to the print limit; every one counted.

Thread-safe: tools report from the GPU's front-end thread, API checks from
the program's threads. Device faults that the simulator itself raises
(memcheck's precise faults) are printed by the CLI and only counted here
(`count_fault`), so one ERROR SUMMARY covers both."""
from __future__ import annotations

import sys
import threading
from typing import Callable

from gpudbg.sanitizer.findings import Finding, Severity

PREFIX = "========="


def _default_write(text: str) -> None:
    sys.stderr.flush()
    print(text, flush=True)


class Reporter:
    def __init__(self, print_limit: int = 100, show_backtrace: bool = True,
                 write: Callable[[str], None] | None = None):
        self.print_limit = print_limit
        self.show_backtrace = show_backtrace
        self.write = write or _default_write
        self.findings: list[Finding] = []
        self.errors = 0
        self.warnings = 0
        self.printed = 0
        self.suppressed = 0
        self._lock = threading.RLock()
        self.launch_sites = None     # sites.LaunchSites, set by the session's first tool

    def block(self, finding: Finding) -> str:
        return "\n".join(f"{PREFIX} {line}" for line in finding.lines(self.show_backtrace))

    def add(self, finding: Finding) -> None:
        """Count and print a finding; a device finding without a host site
        gets its launch's."""
        if not finding.host_site and self.launch_sites is not None:
            finding.host_site = self.launch_sites.site_of(finding.site)
        with self._lock:
            self.findings.append(finding)
            if finding.severity is Severity.ERROR:
                self.errors += finding.errors
            else:
                self.warnings += 1
            self._show(self.block(finding))

    def count_fault(self, errors: int = 1) -> bool:
        """A device fault printed elsewhere, standing for `errors` errors
        (its faulting threads); False when over the print limit (the caller
        then does not print it)."""
        with self._lock:
            self.errors += errors
            if self.print_limit and self.printed >= self.print_limit:
                self.suppressed += 1
                return False
            self.printed += 1
            return True

    def _show(self, text: str) -> None:
        if self.print_limit and self.printed >= self.print_limit:
            self.suppressed += 1
            return
        if self.printed:
            text = PREFIX + "\n" + text
        self.printed += 1
        self.write(text)

    def separator_needed(self) -> bool:
        return self.printed > 0

    def summary_lines(self, extra_errors: int = 0) -> list[str]:
        """The closing lines; `extra_errors` were counted elsewhere (a
        native program's process)."""
        errors = self.errors + extra_errors
        lines = []
        if self.suppressed:
            lines.append(f"{PREFIX} Printing limit reached: {self.suppressed} more error"
                         f"{'' if self.suppressed == 1 else 's'} not shown (--print-limit "
                         f"{self.print_limit})")
        lines.append(f"{PREFIX} ERROR SUMMARY: {errors} error{'' if errors == 1 else 's'}")
        if self.warnings:
            lines.append(f"{PREFIX} WARNING SUMMARY: {self.warnings} warning"
                         f"{'' if self.warnings == 1 else 's'}")
        return lines
