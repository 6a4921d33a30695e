"""Running kernels under one sanitizer tool, in this process, the way
`gpudbg check --tool T` does, with the findings collected in a list."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from gpudbg.driver.engine import reset_engine
from gpudbg.sanitizer.config import CheckConfig
from gpudbg.sanitizer.findings import ToolName
from gpudbg.sanitizer.report import Reporter
from gpudbg.sanitizer.session import SanitizerSession


@contextmanager
def checked(tool: str = "memcheck", **options) -> Iterator[Reporter]:
    """A fresh engine with `tool` installed; yields the Reporter (its
    `findings` list and printed `texts`). The session finishes (leak check)
    when the block ends."""
    reset_engine()
    texts: list[str] = []
    config = CheckConfig(tool=ToolName(tool), **options)
    reporter = Reporter(config.print_limit, config.show_backtrace, write=texts.append)
    reporter.texts = texts  # type: ignore[attr-defined]
    session = SanitizerSession(config, reporter).start()
    try:
        yield reporter
    finally:
        try:
            session.finish()
        finally:
            reset_engine()
