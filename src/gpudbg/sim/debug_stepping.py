"""Warp stepping on a stopped wave: one PTX instruction of one warp at a
time, run on the device thread by a DevicePort request.

The one idea: a step is the executor's ordinary step restricted to the
warp's lanes at the warp's lowest pc (its active lanes), with every
instruction a block leader so exactly one instruction runs. The rest of the
wave does not move, except for the cuda-gdb barrier rule: when the step
parks the warp at a block barrier, the other threads of its block run
(breakpoints ignored) until the barrier releases the stepped warp; if they
cannot (they exited, or wait elsewhere) the warp stays at the barrier.

It does not step lanes individually (a warp's active lanes move together)
and does not report breakpoints passed while stepping, as singleStepWarp
does not. Watchpoints it does report (gdb stops a `next` at the write):
with watches set, a memory instruction runs through debug_watch, a hit
the Session keeps stops the device at once, as a fault does, and the
request ends there (`step_watch_hit` tells the source stepper).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gpudbg.debug.backend import BackendError
from gpudbg.sim.state import EXITED, PARKED

STEP_LIMIT = 1 << 22    # instructions one request may run before giving up (runaway guard)


def warp_slots(X: Any, sm: int, wp: int) -> np.ndarray:
    L = X.layout
    slots = np.flatnonzero((L.sm == sm) & (L.warp == wp) & L.valid)
    if not len(slots):
        if not (L.sm == sm).any():
            raise BackendError("INVALID_SM", f"SM {sm} has no resident warps")
        raise BackendError("INVALID_WARP", f"warp {wp} on SM {sm} is not valid")
    return slots


def _all_leaders(X: Any) -> np.ndarray:
    a = getattr(X, "_debug_all_leaders", None)
    if a is None:
        a = X._debug_all_leaders = np.ones(len(X.program.leader), dtype=bool)
    return a


def step_once(port: Any, X: Any, slots: np.ndarray) -> bool:
    """One instruction of the warp made of `slots`; False if it cannot move."""
    sched = X.sched[slots]
    held = port.held[slots] if port.held is not None else np.zeros(len(slots), bool)
    runnable = slots[(sched < PARKED) & ~held]
    if not len(runnable):
        if ((sched == PARKED) & ~held).any():
            return cross_barrier(port, X, slots)
        return False
    m = int(X.sched[runnable].min())
    idx = runnable[X.sched[runnable] == m]
    _execute(port, X, _all_leaders(X), m, idx)
    port.reported[idx] = False
    if (X.sched[idx] == PARKED).any():
        cross_barrier(port, X, slots)
    return True


def _execute(run: Any, X: Any, leader: np.ndarray, m: int, idx: np.ndarray) -> None:
    """One step of the threads `idx` at pc `m`, checked against the
    device's watchpoints when there are any."""
    from gpudbg.sim.executor import execute_step
    device = getattr(run, "port", None)
    watches = getattr(device, "watches", None)
    if watches is not None and m in watches.pcs(X.program):
        from gpudbg.sim.debug_watch import watched_step
        hits = watched_step(watches, run, X.program.code, leader, m, idx)
        if hits:
            device._watchpoint(run, hits, during_stop=True)
        return
    execute_step(X, X.program.code, leader, m, idx)


def _watch_hit(run: Any) -> bool:
    return bool(getattr(getattr(run, "port", None), "step_watch_hit", False))


def cross_barrier(port: Any, X: Any, slots: np.ndarray) -> bool:
    """Let the block of `slots` run until their parked threads are released."""
    block = int(X.layout.block_of[slots[0]])
    bslots = np.flatnonzero(X.layout.block_of == block)
    waiting = slots[X.sched[slots] == PARKED]
    leader, _ = port.leaders(X.program)
    budget = STEP_LIMIT
    while (X.sched[waiting] == PARKED).any():
        s = X.sched[bslots]
        runnable = bslots[(s < PARKED) & ~port.held[bslots]]
        if not len(runnable):
            if X.release_barriers():
                continue
            return False
        m = int(X.sched[runnable].min())
        idx = runnable[X.sched[runnable] == m]
        before = X.thread_instructions
        _execute(port, X, leader, m, idx)
        port.reported[idx] = False
        if _watch_hit(port):
            return not (X.sched[waiting] == PARKED).any()
        budget -= max(1, X.thread_instructions - before)
        if budget <= 0:
            raise BackendError("TIMEOUT", f"the rest of block {block} did not reach the barrier "
                                          f"within {STEP_LIMIT} instructions")
    return True


def _start_request(run: Any) -> None:
    device = getattr(run, "port", None)
    if device is not None:
        device.step_watch_hit = False


def step_warp(port: Any, X: Any, sm: int, wp: int, nsteps: int) -> int:
    if X is None:
        raise BackendError("INVALID_WARP", "no kernel is running")
    if port.fault is not None:
        raise BackendError("WARP_EXCEPTION", "the device is stopped at an exception; it cannot step")
    slots = warp_slots(X, sm, wp)
    moved = False
    _start_request(port)
    for _ in range(int(nsteps)):
        if not step_once(port, X, slots):
            break
        moved = True
        if _watch_hit(port):
            break
    return (1 << wp) if moved else 0


def warp_pc(X: Any, slots: np.ndarray) -> int | None:
    s = X.sched[slots]
    live = s[s < EXITED]
    if not len(live):
        return None
    pcs = np.where(live == PARKED, X.park_pc[slots][s < EXITED] - 1, live)
    return int(pcs.min())


def run_until_pc(port: Any, X: Any, sm: int, warp_mask: int, address: int) -> None:
    if X is None:
        raise BackendError("INVALID_WARP", "no kernel is running")
    target = X.program.pc_of_address(address)
    if target is None:
        raise BackendError("INVALID_ADDRESS", f"0x{address:x} is not an instruction of {X.function.name}'s module")
    _start_request(port)
    for wp in range(64):
        if not warp_mask >> wp & 1:
            continue
        slots = warp_slots(X, sm, wp)
        for _ in range(STEP_LIMIT):
            if warp_pc(X, slots) == target or not step_once(port, X, slots):
                break
            if port.fault is not None or _watch_hit(port):
                return


def run_until(port: Any, X: Any, sm: int, wp: int, targets: set[int], depth_max: int | None,
              depth_min: int) -> None:
    """gdb's until/advance for one warp, stepped in the wave (no round trip
    to the debugger per instruction): step until the warp's pc is one of
    `targets` (pc indices) at a call depth of at most `depth_max` (None:
    any), or its depth falls below `depth_min` (the frame it started in
    returned). Also ends when the warp exits or cannot move, or a fault or
    a watchpoint stops the device."""
    if X is None:
        raise BackendError("INVALID_WARP", "no kernel is running")
    slots = warp_slots(X, sm, wp)
    tracks_depth = len(X.depth) >= X.n
    _start_request(port)
    for _ in range(STEP_LIMIT):
        if not step_once(port, X, slots) or port.fault is not None or _watch_hit(port):
            return
        pc = warp_pc(X, slots)
        if pc is None:
            return
        depth = 0
        if tracks_depth:
            s = X.sched[slots]
            at = slots[np.where(s == PARKED, X.park_pc[slots] - 1, s) == pc]
            depth = int(X.depth[at[0]]) if len(at) else 0
        if depth < depth_min:
            return
        if pc in targets and (depth_max is None or depth <= depth_max):
            return
    raise BackendError("TIMEOUT", f"warp {wp} on SM {sm} did not get there within {STEP_LIMIT} instructions")
