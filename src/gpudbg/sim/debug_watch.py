"""Watchpoints on device memory, checked by the debugged step loop
(sim/debug_port.py) at the instructions that access memory.

The one idea: with watches set, every instruction whose translation
declares its accesses (`Built.info["memory"]`, the data the
instrumentation interface reads, sim/instrument.py) is made a step of its
own (a block leader at it and after it, added to the port's leaders as
breakpoint pcs are), so the loop meets each access alone. For such a step
it asks the same probes the sanitizer's events use for the lanes'
addresses (generic ones split into global, shared and local) before the
instruction runs, compares them with the watched ranges, reads the
watched bytes a write could change, runs the instruction, and reads them
again: old and new values come from the memory itself, no shadow copy
can go stale. Without watches the port's leaders are the plain ones and
the loop pays one test of an empty set per step; launches without a
debugger never come here.

Grids run on engine threads of their own, so the instructions that touch
watched bytes run one at a time (a lock held from the old read to the new
one): a concurrent grid's write to the same bytes is never mistaken for
this one's. Shared and local watches name their block (and thread) by
blockIdx and threadIdx in one grid, resolved to the wave's segment once
per wave.
Warp single-steps (sim/debug_stepping.py) run memory instructions through
here too, so a `next` over a write stops at it. It does not see accesses
of instructions that declare none (parameter space, tensor-core and
bulk-copy instructions) nor host-side copies.
"""
from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from gpudbg.debug.backend import MemorySpace
from gpudbg.debug.watch import DeviceWatch, WatchHit
from gpudbg.sim import instrument
from gpudbg.sim.memory.spaces import AccessType, Space

_TOUCH = threading.Lock()    # held around a checked instruction that touches watched bytes
_SPACE = {MemorySpace.GLOBAL: Space.GLOBAL, MemorySpace.SHARED: Space.SHARED, MemorySpace.LOCAL: Space.LOCAL}


class WatchSet:
    """The enabled watches of one device, and per program the pcs of its
    memory instructions (where the loop must look)."""

    def __init__(self, watches: Sequence[DeviceWatch]):
        self.watches = tuple(watches)
        for w in self.watches:
            if w.space not in _SPACE:
                raise ValueError(f"watchpoint {w.id}: {w.space.value} memory cannot be watched")
        self._pcs: dict[int, tuple[Any, frozenset]] = {}

    def pcs(self, program: Any) -> frozenset:
        got = self._pcs.get(id(program))
        if got is not None and got[0] is program:
            return got[1]
        pcs = frozenset(pc for pc, c in enumerate(program.code) if _probes(c) is not None)
        self._pcs[id(program)] = (program, pcs)
        return pcs

    def split(self, program: Any, leader: np.ndarray) -> np.ndarray:
        """`leader` with every memory instruction a step of its own."""
        pcs = self.pcs(program)
        if not pcs:
            return leader
        out = leader.copy()
        at = np.fromiter(pcs, dtype=np.int64, count=len(pcs))
        out[at] = True
        after = at + 1
        out[after[after < len(out)]] = True
        return out


def touching(addrs: np.ndarray, size: int, start: int, end: int) -> np.ndarray:
    """Which accesses of `size` bytes at `addrs` (uint64) share a byte with
    [start, end): compared in uint64 without forming addrs + size, which
    would wrap for the wild addresses of a faulting lane."""
    a = np.asarray(addrs, dtype=np.uint64)
    return (a <= np.uint64(end - 1)) & (a >= np.uint64(max(0, start - size + 1)))


def _probes(c: Any):
    b = c.built
    if b is None or b.run is None:
        return None
    probes = b.info.get("memory")
    if not probes or all(mem.space == "param" for mem, _k, _s in probes):
        return None
    return probes


def _owners(run: Any, ws: WatchSet) -> dict[int, int | None]:
    """Per watch: -1 (global), the wave's block (shared) or slot (local)
    that is its owner, or None when the owner is not in this wave."""
    cache = getattr(run, "_watch_owners", None)
    if cache is not None and cache[0] is ws:
        return cache[1]
    X = run.X
    L = X.layout
    out: dict[int, int | None] = {}
    for w in ws.watches:
        if w.space is MemorySpace.GLOBAL:
            out[w.id] = -1
            continue
        out[w.id] = None
        if w.block_idx is None or (w.grid_id is not None and w.grid_id != int(X.grid_id)):
            continue
        pb = [np.asarray(L.ctaid.per_block(a)) if hasattr(L.ctaid, "per_block")
              else np.asarray(L.ctaid[a])[::L.slots_per_block] for a in range(3)]
        blocks = np.flatnonzero((pb[0] == w.block_idx[0]) & (pb[1] == w.block_idx[1]) & (pb[2] == w.block_idx[2]))
        if not len(blocks):
            continue
        b = int(blocks[0])
        if w.space is MemorySpace.SHARED:
            out[w.id] = b
            continue
        if w.thread_idx is None:
            continue
        t = w.thread_idx
        slots = np.flatnonzero((L.block_of == b) & L.valid & (L.tid[0] == t[0]) & (L.tid[1] == t[1])
                               & (L.tid[2] == t[2]))
        out[w.id] = int(slots[0]) if len(slots) else None
    run._watch_owners = (ws, out)
    return out


def _read(X: Any, w: DeviceWatch, owner: int) -> bytes:
    """The watched bytes now (b"" where they cannot be read: a freed
    allocation)."""
    try:
        if w.space is MemorySpace.GLOBAL:
            return bytes(X.gpu.memory.read(w.address, w.size))
        mem = X.smem if w.space is MemorySpace.SHARED else X.lmem
        return bytes(mem.read(owner, w.address, w.size))
    except Exception:
        return b""


def watched_step(ws: WatchSet, run: Any, code: list, leader: np.ndarray, pc: int, idx) -> list[WatchHit]:
    """Run the step of the threads `idx` at memory instruction `pc` (a
    step of its own) and return the watches it touched. A lane fault
    propagates as from execute_step, with no hit (the access failed)."""
    from gpudbg.sim.debug_views import lane_coords
    from gpudbg.sim.executor import execute_step
    X = run.X
    c = code[pc]
    sel = idx if c.guard is None else c.guard(X, idx)
    owners = _owners(run, ws)
    touched: dict[int, list] = {}     # watch id -> [(slots, addresses, reads?, writes?)]
    if sel is None or len(sel):
        for space, addrs, slots, kind, size in instrument.probe_memory(X, _probes(c), sel):
            reads = kind is not AccessType.WRITE
            writes = kind is not AccessType.READ
            for w in ws.watches:
                owner = owners.get(w.id)
                if owner is None or _SPACE[w.space] is not space:
                    continue
                if not (reads and w.kind.wants_read() or writes and w.kind.wants_write()):
                    continue
                hit = touching(addrs, size, w.address, w.end)
                if space is Space.SHARED:
                    hit &= X.layout.block_of[slots] == owner
                elif space is Space.LOCAL:
                    hit &= slots == owner
                if hit.any():
                    touched.setdefault(w.id, []).append((slots[hit], addrs[hit], reads, writes))
    if not touched:
        execute_step(X, code, leader, pc, idx)
        return []
    by_id = {w.id: w for w in ws.watches}
    with _TOUCH:      # another grid's access to the bytes must not fall between old and new
        old = {i: _read(X, by_id[i], owners[i]) for i in touched}
        execute_step(X, code, leader, pc, idx)
        new = {i: _read(X, by_id[i], owners[i]) for i in touched}
    address = X.program.code_address(pc)
    L = X.layout

    def lanes_of(s: np.ndarray) -> tuple:
        return tuple((int(L.sm[x]), int(L.warp[x]), int(L.lane[x])) for x in s)
    hits = []
    for i, parts in touched.items():
        slots = np.concatenate([p[0] for p in parts])
        uniq, first = np.unique(slots, return_index=True)
        accessed = np.concatenate([p[1] for p in parts])[first]
        readers = np.unique(np.concatenate([p[0] for p in parts if p[2]] or [np.zeros(0, np.int64)]))
        writers = np.unique(np.concatenate([p[0] for p in parts if p[3]] or [np.zeros(0, np.int64)]))
        hits.append(WatchHit(i, address, lanes_of(uniq), lanes_of(readers), lanes_of(writers),
                             old[i], new[i], lane_coords(X, uniq),
                             tuple(int(x) for x in accessed)))
    return hits
