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

Other schedules (sim/schedule.py: random interleaving of warps, by seed)
run in a second loop, chosen once per launch, so the default loop pays
nothing for them. Both loops let the launch's KernelWatch (sim/kernel_watch.py)
stop a kernel that runs too long, is cancelled, or exceeds an instruction
budget (none unless GPUDBG_INSTRUCTION_BUDGET sets one): it counts the steps
started at each pc and looks at the clock every CHECK_STEPS steps.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpudbg.sim import debug_port, instrument, launch_limits, schedule
from gpudbg.sim.debug_port import LaunchAborted
from gpudbg.sim.faults import KernelFault, LaneFault
from gpudbg.sim.kernel_watch import UNLIMITED, KernelWatch, LaunchSettingError, budget_from_environment
from gpudbg.sim.spin import SpinBackoff
from gpudbg.sim.state import EXITED, PARKED
from gpudbg.sim.wave import LaunchResources, WaveExecution, build_waves, local_size_for

DEFAULT_BUDGET = None   # no instruction budget: GPUDBG_HANG_TIMEOUT stops runaway kernels


@dataclass
class LaunchStats:
    thread_instructions: int
    waves: int
    blocks_per_sm: int
    steps: int
    cycles: int


def instruction_budget(gpu) -> int | None:
    """Thread-instructions a launch may run: GPUDBG_INSTRUCTION_BUDGET, else
    the GPU's or its model's setting; None: no budget. LaunchSettingError
    (a ValueError) for an environment value that is not a positive integer."""
    env = budget_from_environment()
    if env is not None:
        return env
    b = getattr(gpu, "instruction_budget", None) or getattr(gpu.model, "instruction_budget", DEFAULT_BUDGET)
    return int(b) if b else None


def launch_grid(gpu, function, grid, block, shared_bytes: int, params: bytes, grid_id: int,
                observer=None) -> LaunchStats:
    """Run a whole grid to completion, or raise KernelFault."""
    grid = tuple(int(g) for g in grid)
    block = tuple(int(b) for b in block)
    try:
        budget = instruction_budget(gpu)
        watch = KernelWatch.for_launch(budget)
        order = schedule.for_launch()
    except (LaunchSettingError, schedule.ScheduleError) as e:
        raise LaunchAborted(f"the launch of {function.name} was refused: {e}") from None
    if budget is None:
        budget = UNLIMITED
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
            for wave_index, wave_blocks in enumerate(plan.waves):
                X = WaveExecution(gpu, function, grid, block, shared_bytes, params, grid_id,
                                  wave_blocks, plan, budget - total, res)
                X.observer = observer
                X.tap = tap if tap is not None and tap.observes_execution else None
                if tap is not None:
                    tap.wave_begin(X)
                try:
                    if port is None:
                        visits = watch.start_wave(X, wave_index, len(plan.waves))
                        run_wave(X, watch, visits, order)
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
                    probes = info.get("memory") if tap.observes_memory else None
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


def _stuck(X: WaveExecution, m: int) -> bool:
    """Nothing is runnable (m >= PARKED): False when the wave has finished,
    True after releasing a barrier that completed; else the deadlock."""
    if m >= EXITED:
        return False
    if X.release_barriers(final=True):
        return True
    fault = KernelFault(X.deadlock_report())
    fault.wave = X  # for coredumps, taken before the next launch reuses X's arrays
    raise fault


def run_wave(X: WaveExecution, watch: KernelWatch | None = None, visits: list[int] | None = None,
             order=None) -> None:
    """The step loop: `order` (sim/schedule.py) picks each step's threads,
    None the lowest-pc rule; `watch` may stop it every CHECK_STEPS steps,
    `visits[pc]` counts the steps started at each pc."""
    code = X.program.code
    leader = X.program.leader
    if watch is None:
        watch = KernelWatch(None, None)
        visits = watch.start_wave(X, 0, 1)
    if order is None:
        spin = SpinBackoff(X)   # warps spinning on other warps must not starve them

        def pick(view):
            return next_group(view, spin)
    else:
        pick = order.next_group
    every = watch.check_steps
    countdown = every
    while True:
        m, idx = pick(X.sched)
        if m >= PARKED:
            if _stuck(X, m):
                continue
            return
        visits[m] += 1
        execute_step(X, code, leader, m, idx)
        countdown -= 1
        if not countdown:
            countdown = every
            watch.check(X)
