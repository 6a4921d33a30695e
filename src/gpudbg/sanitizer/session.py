"""A check run's tools: installed at start, asked at the end for what
only the end knows (leaks), removed.

`start` is called by `gpudbg check` before the program runs (and by a
native program's process, from GPUDBG_CHECK_CONFIG); which tools a config
installs is the table TOOL_CLASSES, plus the host-side checks every tool
keeps (launch sites, API errors, double and invalid frees); the leak check
is memcheck's, as in compute-sanitizer."""
from __future__ import annotations

import importlib
from typing import Any

from gpudbg.sanitizer.config import CheckConfig
from gpudbg.sanitizer.findings import ToolName
from gpudbg.sanitizer.report import Reporter
from gpudbg.sim import instrument

# tool -> "module:Class" of the device tools it installs
TOOL_CLASSES: dict[ToolName, tuple[str, ...]] = {
    ToolName.MEMCHECK: ("gpudbg.sanitizer.memcheck:MemcheckTool",),
    ToolName.RACECHECK: ("gpudbg.sanitizer.racecheck:RacecheckTool",),
    ToolName.INITCHECK: ("gpudbg.sanitizer.initcheck:InitcheckTool",),
    ToolName.SYNCCHECK: ("gpudbg.sanitizer.synccheck:SynccheckTool",),
}
# installed whatever the tool (they watch API calls, frees and allocations)
HOST_CHECKS = ("gpudbg.sanitizer.sites:LaunchSites", "gpudbg.sanitizer.host_checks:HostChecks")


def _load(spec: str) -> Any:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


class SanitizerSession:
    def __init__(self, config: CheckConfig, reporter: Reporter):
        self.config = config
        self.reporter = reporter
        self.tools: list[Any] = []

    def start(self) -> "SanitizerSession":
        from gpudbg.sim import schedule
        for spec in HOST_CHECKS + TOOL_CLASSES[self.config.tool]:
            tool = _load(spec)(self.config, self.reporter)
            self.tools.append(tool)
            instrument.install(tool)
        if self.config.schedule is not None:
            schedule.configure(self.config.schedule.value, self.config.seed)
        return self

    def finish(self) -> None:
        """End of the program: leaks and other end-of-run findings, then
        every tool removed."""
        from gpudbg.sim import schedule
        try:
            for tool in self.tools:
                end = getattr(tool, "finish", None)
                if end is not None:
                    end()
        finally:
            for tool in self.tools:
                instrument.uninstall(tool)
            self.tools = []
            schedule.reset()


def start(config: CheckConfig, reporter: Reporter | None = None) -> SanitizerSession:
    reporter = reporter or Reporter(config.print_limit, config.show_backtrace)
    return SanitizerSession(config, reporter).start()
