"""Kernel numbers: cuda-gdb names launches `kernel 0, 1, ...`.

The one idea: the device identifies a launch by (device, grid id), the
user by a small number given in launch order, so the debugger keeps the
mapping, fed by KERNEL_READY events as launches happen; a grid first seen
some other way (a coredump, a launch before attaching) gets the next
number when first looked at. Finished launches are remembered for
`info cuda launch trace` and the kernels table until the next run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class KernelRecord:
    number: int
    dev: int
    grid_id: int
    grid: Any            # the latest GridView seen
    finished: bool = False


class KernelTable:
    def __init__(self) -> None:
        self._by_grid: dict[tuple[int, int], KernelRecord] = {}

    def clear(self) -> None:
        self._by_grid.clear()

    def note(self, grid: Any, finished: bool = False) -> KernelRecord:
        key = (grid.dev, grid.grid_id)
        rec = self._by_grid.get(key)
        if rec is None:
            rec = KernelRecord(len(self._by_grid), grid.dev, grid.grid_id, grid)
            self._by_grid[key] = rec
        else:
            rec.grid = grid
        rec.finished = rec.finished or finished
        return rec

    def number(self, dev: int, grid_id: int, session: Any = None) -> int:
        rec = self._by_grid.get((dev, grid_id))
        if rec is None and session is not None:
            try:
                rec = self.note(session.grid(dev, grid_id))
            except Exception:   # a grid the device no longer knows still gets a number
                rec = None
        if rec is None:
            rec = KernelRecord(len(self._by_grid), dev, grid_id, None)
            self._by_grid[(dev, grid_id)] = rec
        return rec.number

    def by_number(self, number: int) -> KernelRecord | None:
        return next((r for r in self._by_grid.values() if r.number == number), None)

    def records(self) -> list[KernelRecord]:
        return sorted(self._by_grid.values(), key=lambda r: r.number)
