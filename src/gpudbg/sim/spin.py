"""Forward progress for blocks that spin on each other (grid-wide barriers
of cooperative launches, flags set by another block).

The executor runs the lowest pending pc first. That is what reconverges a
block's divergent threads, but across blocks it can starve: a block
spinning in a loop at low pcs (say inside a non-inlined grid-sync function)
is always the lowest, so the blocks it waits for, waiting at higher pcs,
never run. The one idea: order between *different blocks* is free (hardware
runs them concurrently), so when the lowest group has run SPIN_STEPS steps
in a row without the other threads, while other blocks have runnable threads, its blocks are
backed off: the lowest-pc rule is applied to the other blocks only, until
none of them can run, then the backed-off blocks resume. Within a block
the schedule stays exactly lowest-pc-first, so reconvergence, barriers and
warp-synchronous code behave as before; a wave with one block, or whose
blocks are converged, never triggers it.
"""
from __future__ import annotations

import numpy as np

from gpudbg.sim.state import PARKED

SPIN_STEPS = 256      # consecutive partial steps (some threads left behind) before looking


class SpinBackoff:
    def __init__(self, X) -> None:
        self.X = X
        self.count = 0
        self.mask: np.ndarray | None = None   # per slot: True for threads of backed-off blocks

    def pick(self, sched: np.ndarray):
        """(pc, slots) of the next step while blocks are backed off; None
        to use the normal rule."""
        if self.mask is None:
            return None
        view = np.where(self.mask, np.int64(PARKED), sched)
        m = int(view.min())
        if m >= PARKED:            # nothing else can run: let the spinners go on
            self.mask = None
            self.count = 0
            return None
        return m, np.flatnonzero(view == m)

    def observe(self, m: int, idx) -> None:
        """After the normal rule chose pc m for slots idx (None: all). Only
        a long run of steps that each leave some threads behind is looked
        at; then, if the chosen group's blocks are not all the blocks with
        runnable threads, those blocks are backed off."""
        if idx is None:
            self.count = 0
            return
        self.count += 1
        if self.count < SPIN_STEPS:
            return
        self.count = 0
        block_of = self.X.layout.block_of
        spinning = np.zeros(len(self.X.block_live), dtype=bool)
        spinning[block_of[idx]] = True
        mask = spinning[block_of]
        if (self.X.sched[~mask] < PARKED).any():
            self.mask = mask
