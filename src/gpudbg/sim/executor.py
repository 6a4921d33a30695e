"""The SIMT executor: runs a grid on the simulated GPU, one wave of resident
blocks at a time, every instruction applied to all threads that execute it
in one numpy operation.

The one idea: every resident thread is an element of flat arrays (see
state.py), and the scheduler always runs the basic block at the *lowest*
pending pc for all threads waiting there. Divergent threads therefore
reconverge at the first pc they share (the join after an if/else, the exit
of a loop), converged code runs as wide vector operations, and a thread at
a barrier is parked until its block arrives. When nothing is runnable and
parked threads cannot be released, the block is deadlocked and reported.

Blocks are placed on SMs and warp slots by the occupancy rules of the device
model, round-robin over SMs as hardware distributes them; a grid larger
than one wave runs in successive waves. What it deliberately does not do:
model timing, caches or memory ordering between threads of a wave (all
memory operations happen in one global order, which is one legal outcome).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from gpudbg.sim import debug_port, instrument, launch_limits
from gpudbg.sim.faults import KernelFault, LaneFault
from gpudbg.sim.spin import SpinBackoff
from gpudbg.sim.state import EXITED, PARKED
from gpudbg.sim.wave import LaunchResources, WaveExecution, build_waves, local_size_for

DEFAULT_BUDGET = 1 << 34


@dataclass
class LaunchStats:
    thread_instructions: int
    waves: int
    blocks_per_sm: int
    steps: int
    cycles: int


def instruction_budget(gpu) -> int:
    env = os.environ.get("GPUDBG_INSTRUCTION_BUDGET")
    if env:
        return int(env)
    b = getattr(gpu, "instruction_budget", None)
    if b:
        return int(b)
    return int(getattr(gpu.model, "instruction_budget", DEFAULT_BUDGET) or DEFAULT_BUDGET)


def launch_grid(gpu, function, grid, block, shared_bytes: int, params: bytes, grid_id: int,
                observer=None) -> LaunchStats:
    """Run a whole grid to completion, or raise KernelFault."""
    grid = tuple(int(g) for g in grid)
    block = tuple(int(b) for b in block)
    budget = instruction_budget(gpu)
    launch_limits.begin_launch(gpu)
    total = 0
    steps = 0
    cycles = 0
    plan = build_waves(gpu.model, function, grid, block, shared_bytes)
    res = LaunchResources.for_launch(gpu, plan, function, shared_bytes, local_size_for(gpu, function))
    port = debug_port.port_for(gpu)   # None unless a debugger is attached
    if port is not None:
        port.kernel_ready(function, grid, block, shared_bytes, params, grid_id)
    tap = instrument.active()          # None unless an analysis tool is installed
    launch = None
    if tap is not None:
        launch = instrument.Launch(gpu, function, grid, block, int(shared_bytes), grid_id)
        tap.launch_begin(launch)
    failure: BaseException | None = None
    try:
        with np.errstate(all="ignore"):
            for wave_blocks in plan.waves:
                X = WaveExecution(gpu, function, grid, block, shared_bytes, params, grid_id,
                                  wave_blocks, plan, budget - total, res)
                X.observer = observer
                X.tap = tap if tap is not None and tap.observes_execution else None
                if tap is not None:
                    tap.wave_begin(X)
                try:
                    if port is None:
                        run_wave(X)
                    else:
                        port.run_wave(X)
                    if tap is not None:
                        tap.wave_end(X)
                finally:
                    total += X.thread_instructions
                    steps += X.steps
                    cycles += X.cycles
                    gpu_clock_advance(gpu, X.cycles)
                    X.flush_printf()
    except BaseException as e:
        failure = e
        raise
    finally:
        if port is not None:
            port.kernel_finished()
        if tap is not None:
            tap.launch_end(launch, failure)
    return LaunchStats(total, len(plan.waves), plan.blocks_per_sm, steps, cycles)


def gpu_clock_advance(gpu, cycles: int) -> None:
    gpu.clock_cycles = getattr(gpu, "clock_cycles", 0) + int(cycles)


def execute_step(X: WaveExecution, code: list, leader, pc: int, idx) -> None:
    """Run the threads `idx` (None: the whole wave), all waiting at `pc`,
    through instructions until the next block leader or a control
    instruction; a lane fault becomes a KernelFault carrying the wave."""
    if X.tap is not None:
        execute_step_observed(X, code, leader, pc, idx)
        return
    X.step_pc = pc
    nsel = X.n if idx is None else len(idx)
    sel = idx
    executed = 0
    try:
        while True:
            c = code[pc]
            b = c.built
            executed += 1
            if b.run is not None:
                sel = idx if c.guard is None else c.guard(X, idx)
                if sel is None or len(sel):
                    b.run(X, sel)
                pc += 1
                if leader[pc]:
                    X.set_pc(idx, pc)
                    break
                continue
            if c.guard is None:
                sel = idx
                b.control(X, idx, pc)
            else:
                take, skip = X.split_guard(c, idx)
                if skip is None or len(skip):
                    X.set_pc(skip, pc + 1)
                sel = take
                if take is None or len(take):
                    b.control(X, take, pc)
            break
    except LaneFault as e:
        X.count_work(nsel, executed)
        fault = KernelFault(X.fault_report(e, pc, sel))
        fault.wave = X
        raise fault from None
    X.count_work(nsel, executed)


def execute_step_observed(X: WaveExecution, code: list, leader, pc: int, idx) -> None:
    """execute_step with the analysis tools' events (sim/instrument.py):
    the same loop, plus the memory, warp-sync and barrier events that the
    instructions' translations declare in Built.info."""
    tap = X.tap
    X.step_pc = pc
    nsel = X.n if idx is None else len(idx)
    sel = idx
    executed = 0
    try:
        while True:
            c = code[pc]
            b = c.built
            info = b.info
            executed += 1
            if b.run is not None:
                sel = idx if c.guard is None else c.guard(X, idx)
                if sel is None or len(sel):
                    if "sync_op" in info:
                        instrument.emit_warp_sync(tap, X, pc, info, sel)
                    probes = info.get("memory")
                    if probes:
                        probed = instrument.probe_memory(X, probes, sel)
                        b.run(X, sel)
                        instrument.emit_memory(tap, X, pc, probed)
                    else:
                        b.run(X, sel)
                pc += 1
                if leader[pc]:
                    X.set_pc(idx, pc)
                    break
                continue
            if c.guard is None:
                sel = idx
                if b.kind == "barrier":
                    instrument.emit_barrier_arrival(tap, X, pc, info, sel)
                b.control(X, idx, pc)
            else:
                take, skip = X.split_guard(c, idx)
                if skip is None or len(skip):
                    X.set_pc(skip, pc + 1)
                sel = take
                if take is None or len(take):
                    if b.kind == "barrier":
                        instrument.emit_barrier_arrival(tap, X, pc, info, take)
                    b.control(X, take, pc)
            break
    except LaneFault as e:
        X.count_work(nsel, executed)
        fault = KernelFault(X.fault_report(e, pc, sel))
        fault.wave = X
        raise fault from None
    X.count_work(nsel, executed)


def next_group(view: np.ndarray, spin: SpinBackoff, whole: bool = True):
    """The lowest-pending-pc rule: (pc, slots) of the next step over the
    scheduling pcs `view`; slots None is the whole wave (when `whole`
    allows it). A pc >= PARKED means nothing is runnable."""
    picked = spin.pick(view)
    if picked is not None:
        return picked
    m = int(view.min())
    if m >= PARKED:
        return m, None
    idx = None if whole and int(view.max()) == m else np.flatnonzero(view == m)
    spin.observe(m, idx)
    return m, idx


def run_wave(X: WaveExecution) -> None:
    code = X.program.code
    leader = X.program.leader
    spin = SpinBackoff(X)   # blocks spinning on other blocks must not starve them
    while True:
        m, idx = next_group(X.sched, spin)
        if m >= PARKED:
            if m >= EXITED:
                return
            if X.release_barriers(final=True):
                continue
            fault = KernelFault(X.deadlock_report())
            fault.wave = X  # for coredumps, taken before the next launch reuses X's arrays
            raise fault
        execute_step(X, code, leader, int(m), idx)
        if X.thread_instructions > X.budget:
            fault = KernelFault(X.budget_report(int(m)))
            fault.wave = X
            raise fault
