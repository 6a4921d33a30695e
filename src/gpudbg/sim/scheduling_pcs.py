"""Each thread slot's scheduling pc, with what the step loop knows about
it without looking (WaveExecution mixes this in).

The one idea: converged code moves the whole wave from pc to pc (segment,
bar.sync, segment, ...), and every such move is a whole-wave write
(set_pc(None, pc), the wave's start, exit of all). After one, the next step
is the whole wave at that pc (`uniform_pc`), which the step loop takes
instead of a min and a max over the array, and the write itself waits
(`_pending_pc`) until something reads the array, since the next whole-wave
write usually overwrites it unread. On a 262,144-thread wave the two scans
and the fill were 21% of a tree reduction's time.

A padded block shape (48 threads in 64 slots) gets the same hint for its
real threads (`uniform_slots`); its padding slots sit at EXITED
throughout, so the step the hint hands out is the one the lowest-pc scan
would find. Every writer of `sched` keeps `uniform_pc` true: set_pc, and the
partial writers (barriers, calls and returns, warp syncs, mbarriers,
cluster barriers) that set it to None after writing; native loop regions
store exit pcs themselves and call native_writes_sched first.
What it deliberately does not do: track a pc per warp or per block, or
let any code read the array without writing a pending pc into it first
(only its address is taken without: sched_storage).
"""
from __future__ import annotations

import numpy as np


class SchedulingPcs:
    """Needs `_sched`, the wave's array of scheduling pcs, and
    `uniform_slots`, set by the wave."""

    # The slots uniform_pc speaks for: None, every slot; for a padded
    # block shape (48 threads in 64 slots) the real threads' slots, the
    # padding slots being EXITED from the start to the end. A step over
    # exactly this array keeps the hint (set_pc, exit of all).
    uniform_slots = None

    # The one pc every slot's scheduling pc holds, when a whole-wave write
    # (set_pc(None, pc), the start, exit of all) made it so; None once any
    # write touches only some slots. Every writer of `sched` keeps it true,
    # so the step loop picks the next whole-wave step without two scans of
    # the wave (a 262,144-thread reduction spent 15% of its time in them).
    uniform_pc: int | None = None
    # A whole-wave pc not yet written into the array: the write waits for
    # the array's next use (`sched`), since the steps of converged code
    # (segment, bar.sync, segment, ...) overwrite it unread, and filling
    # 262,144 slots cost each such step 40 us.
    _pending_pc: int | None = None

    @property
    def sched(self) -> np.ndarray:
        """Each slot's scheduling pc (an instruction index, PARKED or EXITED)."""
        p = self._pending_pc
        if p is not None:
            self._sched.fill(p)
            self._pending_pc = None
        return self._sched

    @property
    def sched_storage(self) -> np.ndarray:
        """The scheduling-pc array itself, a whole-wave pc possibly still
        pending: for code that only takes its address (native environment)."""
        return self._sched

    def native_writes_sched(self) -> None:
        """Compiled code is about to store some slots' pcs into the array
        directly (sim/native/regions.py): the array must be current, and
        the whole-wave pc is no longer known."""
        if self._pending_pc is not None:
            self.sched
        self.uniform_pc = None

    def set_pc(self, idx, target) -> None:
        if idx is None:
            if np.ndim(target):
                self._pending_pc = None
                self._sched[:] = target
                self.uniform_pc = None
            else:
                self.uniform_pc = self._pending_pc = int(target)
        else:
            self.sched[idx] = target
            # the real threads of a padded wave, all of them (the very array
            # the hint handed out): still one pc
            self.uniform_pc = int(target) if idx is self.uniform_slots and not np.ndim(target) else None
