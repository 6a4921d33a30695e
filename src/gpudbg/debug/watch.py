"""Device-memory watchpoints as the backend sees them: the watched ranges
the Session hands down and the hits the device reports back.

The one idea: a watch is a byte range in one state space plus, for the
per-block and per-thread spaces, the logical owner whose copy is meant
(shared memory of one block, local memory of one thread of one grid),
named by blockIdx/threadIdx so it survives the warp slots a wave happens
to use. A hit is one watch touched by one instruction: the lanes that
read and the lanes that wrote it, and the watched bytes before and after
the instruction, so "Old value"/"New value" need no shadow copy.

Policy (gdb's `watch` ignoring writes that leave the value unchanged,
conditions, enable/disable, numbering) is the Session's, not here.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace

import numpy as np

from gpudbg.debug.backend import LaneCoords, MemorySpace


class WatchKind(enum.Enum):
    """Which accesses trigger a watch (gdb's watch, rwatch, awatch)."""

    WRITE = "write"
    READ = "read"
    ACCESS = "access"

    def wants_read(self) -> bool:
        return self is not WatchKind.WRITE

    def wants_write(self) -> bool:
        return self is not WatchKind.READ


@dataclass(frozen=True)
class DeviceWatch:
    """One enabled watch as the device checks it. `space` is GLOBAL,
    SHARED (offset in the block's shared segment; `grid_id` and
    `block_idx` name the block) or LOCAL (offset in the thread's local
    segment; `thread_idx` too)."""

    id: int
    space: MemorySpace
    address: int
    size: int
    kind: WatchKind
    grid_id: int | None = None
    block_idx: tuple[int, int, int] | None = None
    thread_idx: tuple[int, int, int] | None = None

    @property
    def end(self) -> int:
        return self.address + self.size


@dataclass(frozen=True)
class WatchHit:
    """Watch `watch` touched by the instruction at code address `pc`.
    `lanes` (sm, wp, ln) are every lane that touched it, `readers` and
    `writers` split them by access (an atomic is both); `coords` are the
    lanes' coordinates for conditions; `old`/`new` the watched bytes
    before and after the instruction."""

    watch: int
    pc: int
    lanes: tuple[tuple[int, int, int], ...]
    readers: tuple[tuple[int, int, int], ...]
    writers: tuple[tuple[int, int, int], ...]
    old: bytes
    new: bytes
    coords: LaneCoords | None = field(default=None, compare=False)
    addresses: tuple[int, ...] = ()     # per lane of `lanes`: its (first) address, in the watch's space

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def only(self, keep: np.ndarray) -> "WatchHit":
        """The hit restricted to the lanes where `keep` (per lane of
        `lanes`) holds: what a condition leaves of it."""
        keep = np.asarray(keep, dtype=bool)
        lanes = tuple(x for x, k in zip(self.lanes, keep) if k)
        addresses = tuple(x for x, k in zip(self.addresses, keep) if k)
        kept = set(lanes)
        c = self.coords
        if c is not None:
            c = LaneCoords(c.sm[keep], c.wp[keep], c.ln[keep], tuple(a[keep] for a in c.block_idx),
                           tuple(a[keep] for a in c.thread_idx))
        return replace(self, lanes=lanes, addresses=addresses, readers=tuple(x for x in self.readers if x in kept),
                       writers=tuple(x for x in self.writers if x in kept), coords=c)
