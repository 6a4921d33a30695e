"""gpudbg extensions beside the seed's functions, for tools: the fault
report behind a sticky error and the last launch's statistics.
"""
from __future__ import annotations

from typing import Any

from gpudbg.driver.engine import get_engine


def fault_report() -> Any:
    """The FaultReport of the current context's sticky error, or None
    (gpudbg extension, for the CLI)."""
    eng = get_engine()
    st = eng.threads
    if st.stack:
        return st.stack[-1].fault_report
    dev = eng.current_device()
    return dev.primary.fault_report if dev.primary is not None else None


def last_launch_stats() -> Any:
    """The simulator's statistics for the current device's most recent
    kernel launch (thread-instructions, waves, blocks per SM), or None
    (gpudbg extension, for benchmarks and tools)."""
    return get_engine().current_device().gpu.last_launch_stats


__all__ = ['fault_report', 'last_launch_stats']
