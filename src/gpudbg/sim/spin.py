"""Forward progress for warps that spin on each other (grid-wide barriers
of cooperative launches, flags set by another block or another warp of
the same block).

The executor runs the lowest pending pc first. That is what reconverges a
warp's divergent threads, but between warps it can starve: a warp spinning
in a loop at low pcs (a flag another warp sets later, a non-inlined
grid-sync function) is always the lowest, so the warps it waits for,
waiting at higher pcs, never run. The one idea: order between *different
warps* is free (hardware schedules warps independently), so when the
lowest group has run SPIN_STEPS steps in a row without the other threads,
while other warps have runnable threads, its warps are backed off: the
lowest-pc rule is applied to the other warps only. Backing off rotates: if
the warps that run instead also spin for SPIN_STEPS steps, they join the
backed-off ones, until nothing else can run; then every warp resumes. So a
chain of waits (block 0 sets a flag and waits for block 1's answer, which
then waits for block 0 again) completes, and no waiting warp starves.
Within a warp the schedule stays exactly lowest-pc-first, so reconvergence,
barriers and warp-synchronous code behave as before; a wave whose warps
are converged never triggers it.

It does not make lanes of one warp that spin on each other progress
(a lane waiting for another lane of its own warp at a higher pc): hardware
before Volta hangs there too, and lowest-pc reconvergence relies on it.
"""
from __future__ import annotations

import numpy as np

from gpudbg.sim.state import PARKED

SPIN_STEPS = 256      # consecutive partial steps (some threads left behind) before looking
WARP = 32


class SpinBackoff:
    def __init__(self, X) -> None:
        self.X = X
        self.count = 0
        self.mask: np.ndarray | None = None   # per slot: True for threads of backed-off warps

    def _warps_of(self, idx: np.ndarray) -> np.ndarray:
        """Per slot: True for the slots of the warps that `idx` touches."""
        warps = np.zeros(self.X.n // WARP, dtype=bool)
        warps[idx // WARP] = True
        return np.repeat(warps, WARP)

    def pick(self, sched: np.ndarray):
        """(pc, slots) of the next step while warps are backed off; None
        to use the normal rule."""
        if self.mask is None:
            return None
        view = np.where(self.mask, np.int64(PARKED), sched)
        m = int(view.min())
        if m >= PARKED:            # nothing else can run: let the spinners go on
            self.mask = None
            self.count = 0
            return None
        idx = np.flatnonzero(view == m)
        self.count += 1
        if self.count >= SPIN_STEPS:   # these spin as well: back them off too, in turn
            self.count = 0
            self.mask |= self._warps_of(idx)
        return m, idx

    def observe(self, m: int, idx) -> None:
        """After the normal rule chose pc m for slots idx (None: all). Only
        a long run of steps that each leave some threads behind is looked
        at; then, if other warps than the chosen group's have runnable
        threads, the group's warps are backed off."""
        if idx is None:
            self.count = 0
            return
        self.count += 1
        if self.count < SPIN_STEPS:
            return
        self.count = 0
        mask = self._warps_of(idx)
        if (self.X.sched[~mask] < PARKED).any():
            self.mask = mask
