"""The one timing rule of the benchmarks: the best of several runs (the
least disturbed by other work on a shared machine), with optional untimed
setup before each run."""
from __future__ import annotations

import time
from typing import Callable


def best_of(fn: Callable[[], object], repeat: int = 3, setup: Callable[[], object] | None = None) -> float:
    best = float("inf")
    for _ in range(repeat):
        if setup is not None:
            setup()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best
