"""Watchpoints in the Session: the data API a debugger front end (the CLI's
watch/rwatch/awatch, a DAP server's dataBreakpoints) sets them with, and
the policy that decides which device hits stop.

The one idea: a watchpoint is a byte range the device checks itself
(sim/debug_watch.py), so the Session only keeps the user's requests,
hands the enabled ones down as DeviceWatch values on every change, and
filters the hits the device reports (the listener's `watch_filter`, on
the device thread, as `breakpoint_filter` for breakpoints): disabled
watchpoints, gdb's rule that `watch` ignores a write leaving the value
unchanged (`changes_only`), and per-lane conditions. Numbers come from
the breakpoint table's counter, so breakpoints and watchpoints share one
numbering, as in gdb.

Shared and local watchpoints are bound to what the focused lane sees when
they are set: its block's shared memory, or its own local memory, in its
grid; they are deleted when that grid ends (the memory is gone). Global
ones stay until deleted. It does not re-evaluate expressions (gdb's
software watchpoints): a watchpoint is an address range, as `watch -l`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpudbg.debug.backend import BackendError, MemorySpace
from gpudbg.debug.breakpoints import Condition
from gpudbg.debug.watch import DeviceWatch, WatchHit, WatchKind

WATCHABLE = (MemorySpace.GLOBAL, MemorySpace.SHARED, MemorySpace.LOCAL)
MAX_WATCH_BYTES = 1 << 16


@dataclass
class Watchpoint:
    id: int
    kind: WatchKind
    space: MemorySpace
    address: int
    size: int
    dev: int = 0
    grid_id: int | None = None
    block_idx: tuple[int, int, int] | None = None
    thread_idx: tuple[int, int, int] | None = None
    condition: Condition | None = None
    changes_only: bool = False
    enabled: bool = True
    hits: int = 0
    expression: str | None = None      # what the user watched, for listings
    condition_text: str | None = None

    def device_watch(self) -> DeviceWatch:
        return DeviceWatch(self.id, self.space, self.address, self.size, self.kind, self.grid_id,
                           self.block_idx, self.thread_idx)

    def describe(self) -> str:
        if self.expression:
            return self.expression
        where = f"{self.space.value} 0x{self.address:x}"
        if self.thread_idx is not None:
            return f"{where} of thread {self.thread_idx} in block {self.block_idx}"
        if self.block_idx is not None:
            return f"{where} of block {self.block_idx}"
        return where


def _window(address: int) -> tuple[MemorySpace, int]:
    """A generic address as (space, address in it)."""
    from gpudbg.sim.memory.windows import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE
    if SHARED_WINDOW_BASE <= address < SHARED_WINDOW_BASE + WINDOW_SIZE:
        return MemorySpace.SHARED, address - SHARED_WINDOW_BASE
    if LOCAL_WINDOW_BASE <= address < LOCAL_WINDOW_BASE + WINDOW_SIZE:
        return MemorySpace.LOCAL, address - LOCAL_WINDOW_BASE
    return MemorySpace.GLOBAL, address


class WatchpointsMixin:
    """The Session's watchpoint methods (Session inherits them)."""

    def _watch_table(self) -> dict[int, Watchpoint]:
        table = self.__dict__.get("_watches")
        if table is None:
            table = self.__dict__["_watches"] = {}
        return table

    def watch(self, address: int, size: int, kind: WatchKind = WatchKind.WRITE,
              space: MemorySpace = MemorySpace.GLOBAL, dev: int = 0,
              lane: tuple[int, int, int] | None = None, condition: Condition | None = None,
              changes_only: bool = False, expression: str | None = None) -> Watchpoint:
        """Watch `size` bytes at `address` of `space` for `kind` accesses.
        Shared and local addresses (or generic ones in their windows) are
        those of `lane` (sm, wp, ln): its block's shared memory, its own
        local memory. The bytes must be readable now."""
        from gpudbg.debug.session import DebugError
        self._executing()
        kind, space = WatchKind(kind), MemorySpace(space)
        address, size = int(address), int(size)
        if not 1 <= size <= MAX_WATCH_BYTES:
            raise DebugError("INVALID_ARGS", f"a watchpoint covers 1 to {MAX_WATCH_BYTES} bytes, not {size}")
        if address < 0:
            raise DebugError("INVALID_ARGS", f"bad address {address}")
        if space is MemorySpace.GENERIC:
            space, address = _window(address)
        if space not in WATCHABLE:
            raise DebugError("INVALID_ARGS", f"{space.value} memory cannot be watched "
                                             f"(only global, shared and local memory)")
        wp = Watchpoint(0, kind, space, address, size, int(dev), condition=condition,
                        changes_only=bool(changes_only), expression=expression)
        sm = w = ln = None
        if space is not MemorySpace.GLOBAL:
            if lane is None:
                raise DebugError("INVALID_ARGS", f"a {space.value} watchpoint needs the lane whose "
                                                 f"{'block' if space is MemorySpace.SHARED else 'thread'} it watches")
            sm, w, ln = (int(x) for x in lane)
            warp = self.warp(dev, sm, w)
            wp.grid_id, wp.block_idx = warp.grid_id, tuple(warp.block_idx)
            if space is MemorySpace.LOCAL:
                wp.thread_idx = tuple(self.lane(dev, sm, w, ln).thread_idx)
        try:
            self.backend.read_memory(wp.dev, space, address, size, sm, w, ln)
        except BackendError as e:
            raise DebugError(e.code, f"Cannot watch {space.value} memory at 0x{address:x} "
                                     f"({size} bytes): {e.message}") from None
        if not hasattr(self.backend, "set_watchpoints"):
            raise DebugError("NOT_SUPPORTED", "this backend cannot watch memory")
        with self._lock:
            wp.id = self.table.next_id()
            self._watch_table()[wp.id] = wp
        self._push_watchpoints()
        return wp

    def watchpoints(self) -> list[Watchpoint]:
        t = self._watch_table()
        return [t[k] for k in sorted(t)]

    def watchpoint(self, wp: Watchpoint | int) -> Watchpoint:
        from gpudbg.debug.session import DebugError
        key = wp.id if isinstance(wp, Watchpoint) else int(wp)
        got = self._watch_table().get(key)
        if got is None:
            raise DebugError("INVALID_ARGS", f"No watchpoint number {key}.")
        return got

    def delete_watchpoint(self, wp: Watchpoint | int) -> None:
        w = self.watchpoint(wp)
        with self._lock:
            self._watch_table().pop(w.id, None)
        self._push_watchpoints()

    def enable_watchpoint(self, wp: Watchpoint | int, enabled: bool = True) -> None:
        self.watchpoint(wp).enabled = bool(enabled)
        self._push_watchpoints()

    def _push_watchpoints(self) -> None:
        set_watches = getattr(self.backend, "set_watchpoints", None)
        if set_watches is None or not self.backend.can_execute:
            return
        with self._lock:
            live = [w for w in self._watch_table().values() if w.enabled]
        for dev in range(self.backend.device_count()):
            set_watches(dev, tuple(w.device_watch() for w in live if w.dev == dev))

    # ------------------------------------------------------------ listener side
    def watch_filter(self, dev: int, hits: list[WatchHit]) -> list[WatchHit]:
        """Which of the device's hits stop it (device thread)."""
        keep = []
        table = self._watch_table()
        for h in hits:
            w = table.get(h.watch)
            if w is None or not w.enabled:
                continue
            if w.changes_only and w.kind is WatchKind.WRITE and not h.changed:
                continue
            if w.condition is not None and h.coords is not None:
                try:
                    mask = np.broadcast_to(np.asarray(w.condition(h.coords), dtype=bool), (len(h.lanes),))
                except Exception:
                    mask = np.ones(len(h.lanes), dtype=bool)    # gdb stops where a condition fails
                if not mask.any():
                    continue
                if not mask.all():
                    h = h.only(mask)
            w.hits += 1
            keep.append(h)
        return keep

    def _watch_grid_ended(self, dev: int, grid_id: int) -> list[Watchpoint]:
        """Delete the shared and local watchpoints of a grid that ended."""
        with self._lock:
            t = self._watch_table()
            gone = [w for w in t.values() if w.dev == dev and w.grid_id == grid_id]
            for w in gone:
                t.pop(w.id, None)
        if gone:
            self._push_watchpoints()
            self.__dict__.setdefault("ended_watchpoints", []).extend(gone)
        return gone
