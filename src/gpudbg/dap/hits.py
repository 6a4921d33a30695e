"""DAP `hitCondition`s, counted per thread: `5` (or `==5`) stops the
fifth thread to reach the breakpoint, `>=100` every thread from the
hundredth on, `%32` every thirty-second.

The one idea: on a GPU a "hit" is one thread reaching the location (a
warp brings up to 32 at once, a grid a million), so the count is of
threads, in the order the device presents them, and the test runs on a
whole array of hit numbers at once: the breakpoint filter gets the
candidate lanes of a warp and answers with one numpy comparison, never a
Python loop over threads.
"""
from __future__ import annotations

import operator
import re
import threading
from typing import Callable

import numpy as np

_FORM = re.compile(r"\s*(==|>=|<=|>|<|%|=)?\s*(\d+)\s*$")
_OPS: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "==": operator.eq, "=": operator.eq, ">=": operator.ge, "<=": operator.le,
    ">": operator.gt, "<": operator.lt, "%": lambda a, n: a % n == 0,
}


class HitConditionError(ValueError):
    pass


def parse(text: str) -> Callable[[np.ndarray], np.ndarray]:
    """A predicate over an array of 1-based hit numbers."""
    m = _FORM.match(text or "")
    if m is None:
        raise HitConditionError(f"hit condition {text!r} is not N, ==N, >N, >=N, <N, <=N or %N")
    op, n = m.group(1) or "==", int(m.group(2))
    if op == "%" and n == 0:
        raise HitConditionError(f"hit condition {text!r}: %0 divides by zero")
    fn = _OPS[op]
    return lambda counts: np.asarray(fn(counts, n), dtype=bool)


class HitCounter:
    """The running thread count of one breakpoint (safe across device
    threads: each call claims a block of consecutive numbers)."""

    def __init__(self, text: str):
        self.test = parse(text)
        self.text = text
        self.count = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> np.ndarray:
        """Which of the next `n` arriving threads satisfy the condition."""
        with self._lock:
            first = self.count + 1
            self.count += n
        return self.test(np.arange(first, first + n, dtype=np.int64))
