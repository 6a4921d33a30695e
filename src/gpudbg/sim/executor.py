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
than one wave runs in successive waves. Grids of different streams run at
the same time on their own engine threads (sim/engines.py) and share the
SMs: each wave acquires its blocks' capacity from the GPU's SM pool
(sim/sm_pool.py), runs as many of its blocks as fit beside the other
resident grids (all of them when the grid is alone, the case that costs
nothing extra), and releases them; a grid that finds no room waits. What it deliberately does not do:
model timing, caches or memory ordering between threads of a wave (all
memory operations happen in one global order, which is one legal outcome).

Other schedules (sim/schedule.py: random interleaving of warps, by seed)
pick the steps of the same loop instead of the lowest-pc rule (one test
per step for the default). The loop lets the launch's KernelWatch (sim/kernel_watch.py)
stop a kernel that runs too long, is cancelled, or exceeds an instruction
budget (none unless GPUDBG_INSTRUCTION_BUDGET sets one): it counts the steps
started at each pc and looks at the clock every CHECK_STEPS steps.
"""
from __future__ import annotations

import dataclasses
import struct
import threading
import time
from dataclasses import dataclass

import numpy as np

from gpudbg.sim import cluster as _cluster
from gpudbg.sim import (debug_port, device_runtime, engines, instrument, kernel_watch, launch_limits,
                        launch_settings, launch_template, param_window, schedule, sm_pool, timing)
from gpudbg.sim.debug_port import LaunchAborted
from gpudbg.sim.faults import KernelFault, LaneFault
from gpudbg.sim.memory.spaces import AllocationKind, OutOfMemory
from gpudbg.sim.native import engine as native_engine
from gpudbg.sim import subwaves
from gpudbg.sim.native import differential as native_differential
from gpudbg.sim.native import parallel as native_parallel
from gpudbg.sim.kernel_watch import UNLIMITED, KernelWatch, LaunchSettingError, budget_from_environment
from gpudbg.sim.spin import SpinBackoff
from gpudbg.sim.state import EXITED, PARKED
from gpudbg.sim.launch_resources import LaunchResources, local_size_for
from gpudbg.sim.wave import WARP, WaveExecution, build_waves

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
    return _configured_budget(gpu)


def _configured_budget(gpu) -> int | None:
    b = getattr(gpu, "instruction_budget", None) or getattr(gpu.model, "instruction_budget", DEFAULT_BUDGET)
    return int(b) if b else None


def _launch_environment(gpu, job, env) -> tuple:
    """(budget, watch, schedule, host threads, coredumps on) of a launch, from the
    environment settings parsed once per change (`env`,
    sim/launch_settings.py); a bad value (env None) is refused by the
    parsers themselves, as it always was."""
    if env is None:
        budget = instruction_budget(gpu)
        watch = (_JobWatch if job is not None else KernelWatch).for_launch(budget)
        order = schedule.for_launch()
        native_engine.chosen()
        return budget, watch, order, native_parallel.host_threads(), launch_settings.coredumps_on()
    budget = env.budget if env.budget is not None else _configured_budget(gpu)
    watch = (_JobWatch if job is not None else KernelWatch)(budget, env.timeout)
    order = schedule.for_launch() if env.schedule or schedule.configured() else None   # None: lowest pc
    return budget, watch, order, env.threads, env.coredumps


def launch_grid(gpu, function, grid, block, shared_bytes: int, params: bytes, grid_id: int,
                observer=None, cooperative: bool = False, depth: int = 0,
                parent: device_runtime.ChildLaunch | None = None,
                cluster: tuple[int, int, int] | None = None) -> LaunchStats:
    """Run a whole grid to completion, or raise KernelFault. A cooperative
    grid runs with cooperative_groups' grid workspace, at the address CUDA's
    driver ABI gives it in %envreg1:%envreg2 (zero elsewhere, where
    grid.sync() traps), allocated for the run. The grids it launches from the
    device run after its last wave (sim/device_runtime.py); `depth` and
    `parent` say where a device-launched grid sits in that tree. `cluster`:
    the thread-block cluster shape (sim/cluster.py), None without."""
    settings = launch_settings.current()
    if (settings is None or settings.differential) and native_differential.wanted(settings):
        # GPUDBG_DIFFERENTIAL: run under both engines and compare
        return native_differential.launch(launch_grid, gpu, function, grid, block, shared_bytes, params, grid_id,
                                          observer, cooperative, depth, parent, cluster)
    job = engines.current_job()
    try:
        budget, watch, order, threads, coredumps = _launch_environment(gpu, job, settings)
    except (LaunchSettingError, schedule.ScheduleError, native_engine.EngineError,
            native_parallel.ThreadsError) as e:
        raise LaunchAborted(f"the launch of {function.name} was refused: {e}") from None
    watch.job = job
    if budget is None:
        budget = UNLIMITED
    launch_limits.begin_launch(gpu)
    total = 0
    steps = 0
    cycles = 0
    template = launch_template.for_launch(gpu, function, grid, block, shared_bytes, cluster)
    grid, block = template.grid, template.block    # plain ints
    plan = template.plan
    res = _checkout_resources(gpu, plan, function, shared_bytes, template)
    pool = sm_pool.pool_for(gpu)
    shape = template.shape
    port = debug_port.port_for(gpu)   # None unless a debugger is attached
    # a non-default schedule (whose seed must pick the same interleaving on
    # both engines) gets the variant whose steps are the interpreter's (no
    # loop regions; if bodies only where steps may fold, X.folds_steps); so
    # does a launch whose fault would be dumped (GPUDBG_COREDUMP_ON_EXCEPTION):
    # it stores every register and none past a fault. So does a debugged
    # launch whose registers must all be exact at a stop (debug_port.py,
    # DevicePort.keeps_every_register), decided after the debugger saw the
    # launch (a stop on launch arms breakpoints first)
    exact = order is not None or coredumps
    native = 0
    tap = instrument.active()          # None unless an analysis tool is installed
    launch = None
    failure: BaseException | None = None
    nwaves = template.nwaves
    children = device_runtime.DeviceLaunches(gpu, grid_id, depth)
    workspace = None
    csize = template.csize
    wave_index = 0
    # a wave the next launch of this template may restart: none that a
    # debugger, a tool or a cooperative workspace holds on to or changed
    reusable = port is None and tap is None and not cooperative
    quiet = None
    try:
        if cooperative:    # (inside: a launch refused for want of it hands the arrays back)
            workspace = grid_workspace(gpu, function)
        if port is not None:
            port.kernel_ready(function, grid, block, shared_bytes, params, grid_id, parent=parent,
                              cluster=plan.cluster)
        program = template.program()     # function.program (the template checked it is)
        native = native_engine.mode_for(program, plan.threads_per_block * plan.nblocks,
                                        debugger=exact or (port is not None and port.keeps_every_register(program)),
                                        settings=settings)
        if tap is not None:
            launch = instrument.Launch(gpu, function, grid, block, int(shared_bytes), grid_id)
            tap.launch_begin(launch)
        if job is None:     # the waves run with numpy's float warnings off (a GPU thread has them off for good)
            quiet = np.errstate(all="ignore")
            quiet.__enter__()
        for wave_blocks in template.waves:
            while len(wave_blocks):
                # the blocks that fit beside the other grids resident now (all, when alone)
                placement = pool.try_acquire(watch, shape, len(wave_blocks)) or pool.wait_acquire(
                    watch, shape, len(wave_blocks), lambda: _abort_waiting(watch, function, port))
                usable = placement.nblocks - placement.nblocks % csize   # whole clusters only
                if usable == 0:   # beside other grids: not room for one cluster yet
                    pool.release(placement)
                    _abort_waiting(watch, function, port)
                    time.sleep(sm_pool.WAIT_POLL_S)
                    continue
                try:
                    if usable < len(wave_blocks):
                        blocks, wave_blocks = wave_blocks[:usable], wave_blocks[usable:]
                        nwaves += 1
                    else:
                        blocks, wave_blocks = wave_blocks, wave_blocks[:0]
                    X = _wave_for(gpu, function, grid, block, shared_bytes, params, grid_id, blocks, plan,
                                  budget - total, res, template, reusable and placement.default)
                    if not placement.default:
                        place(X, placement)
                    X.observer = observer
                    X.device_launches = children
                    if workspace is not None:
                        X.envregs[1], X.envregs[2] = workspace.base >> 32, workspace.base & 0xFFFFFFFF
                    if tap is not None:
                        # under a tool, execute_step runs only the compiled code that emits
                        # nothing the tool consumes (instrument.Event, Tap.consumes)
                        X.tap = tap if tap.observes_execution else None
                    if native:   # (a wave starts with native_on False and no register table)
                        X.native_on = native
                        X.drops_dead_registers = native == native_engine.PLAIN   # (debug_views.py)
                        X.reg_ptrs = X.arrays.reg_ptrs()   # native code addresses registers through it
                    X.native_threads = threads
                    if order is not None:
                        X.folds_steps = False   # a random order draws every step (if_bodies.py)
                    if tap is not None:
                        tap.wave_begin(X)
                    try:
                        if port is None and native and threads > 1 and subwaves.applies(
                                X, threads, order, tap, workspace is not None, csize, placement.default):
                            subwaves.run(X, res, watch, wave_index, nwaves, threads, run_wave)
                        elif port is None:
                            visits = watch.start_wave(X, wave_index, nwaves)
                            run_wave(X, watch, visits, order)
                            if reusable and placement.default:
                                # it ended without a fault: the next launch of the shape may restart it
                                res.keep_wave(template, blocks, X)
                        else:
                            port.run_wave(X)
                        if tap is not None:
                            tap.wave_end(X)
                    finally:
                        if X.param_copy is not None:
                            param_window.release(X)
                        total += X.thread_instructions
                        steps += X.steps
                        cycles += X.cycles
                        timing.advance(gpu, X.cycles)   # its own lock, not gpu.cv: no wait for the host
                        if X.printf_out:
                            X.flush_printf()
                        native_differential.wave_end(X)   # registers at exit, when comparing
                finally:
                    pool.release(placement)
                wave_index += 1
        if quiet is not None:     # (not for the grids it launched: each launch quiets its own waves)
            on = quiet
            quiet = None
            on.__exit__(None, None, None)
        if children.queued or children.tail:     # the grids it launched from the device
            device_runtime.run_children(gpu, children, lambda child, d: launch_grid(
                gpu, child.function, child.grid, child.block, child.shared, child.params, gpu.next_grid_id(),
                observer, depth=d, parent=child))
    except BaseException as e:
        failure = e
        raise
    finally:
        if quiet is not None:
            quiet.__exit__(None, None, None)
        if children.buffers:
            children.release()
        if workspace is not None:
            gpu.free_internal(workspace)
        res.checked_out = False    # the arrays are free for the next grid (one store: no lock)
        if port is not None:
            port.kernel_finished(grid_id)
        if tap is not None and launch is not None:
            tap.launch_end(launch, failure)
    if not native:
        native_engine.account(program, total)
    return LaunchStats(total, wave_index, plan.blocks_per_sm, steps, cycles)


GRID_WORKSPACE_BYTES = 8     # cooperative_groups' grid_workspace {unsigned wsSize; unsigned barrier;}


def grid_workspace(gpu, function):
    """A cooperative grid's workspace: wsSize, then the barrier word that
    grid.sync() counts arrivals in, zero at the start of the launch."""
    try:
        ws = gpu.alloc_internal(GRID_WORKSPACE_BYTES, AllocationKind.GRID_WORKSPACE,
                                f"grid workspace of {function.name}")
    except OutOfMemory as e:
        raise LaunchAborted(f"the cooperative launch of {function.name} has no memory for its grid workspace: "
                            f"{e}") from None
    ws.data[:GRID_WORKSPACE_BYTES] = np.frombuffer(struct.pack("<II", GRID_WORKSPACE_BYTES, 0), np.uint8)
    return ws


class _JobWatch(KernelWatch):
    """The kernel watch of a launch running on an engine worker: it also
    stops the launch when the front end aborts its job (its context
    failed or was reset, the GPU shut down)."""

    job = None

    def check(self, X) -> None:
        reason = self.job.abort
        if reason is not None:
            raise LaunchAborted(f"kernel {X.function.name} was stopped: {reason}")
        if X.gpu.differential_hold:     # a compared launch (GPUDBG_DIFFERENTIAL) may wait for held-back work
            native_differential.check_held(X, self.started, self.timeout)
        KernelWatch.check(self, X)


def _abort_waiting(watch: KernelWatch, function, port) -> None:
    """While a grid waits for SM capacity: give up when its job was
    aborted, Ctrl-C cancelled the kernels, or the debugger killed it."""
    job = getattr(watch, "job", None)
    if job is not None and job.abort is not None:
        raise LaunchAborted(f"kernel {function.name} was stopped while waiting for SMs: {job.abort}")
    reason = kernel_watch.cancelled()
    if reason is not None:
        raise LaunchAborted(f"kernel {function.name} was interrupted ({reason}) while waiting for SMs")
    if port is not None and port.killed:
        raise LaunchAborted("the launch was killed by the debugger")


def place(X: WaveExecution, placement: sm_pool.Placement) -> None:
    """Give the wave the SMs and warp slots its blocks were placed on (the
    layout's default placement assumes the GPU is otherwise empty)."""
    L = X.layout
    spb = L.slots_per_block
    nb = len(X.wave_blocks)          # a cluster launch may use fewer blocks than were placed
    block_sm = placement.block_sm[:nb]
    sm = np.repeat(block_sm, spb)
    warp = np.repeat(placement.block_warps[:nb].reshape(-1), WARP)[:len(sm)]
    X.layout = dataclasses.replace(L, sm=sm, warp=warp, block_sm=block_sm)


_resources_lock = threading.Lock()


def _checkout_resources(gpu, plan, function, shared_bytes: int, template=None):
    """The launch's reusable arrays (wave.py LaunchResources), never the
    set another grid running concurrently is using; `template` (sim/
    launch_template.py) brings the sizes they are keyed by. The launch
    hands them back by clearing `checked_out`."""
    with _resources_lock:
        cached = getattr(gpu, "_launch_resources", None)
        if cached is not None:
            res = cached[1]
            if res.checked_out:
                gpu._launch_resources = None     # in use: this launch makes (and caches) its own
            elif template is not None and cached[0] is template.resources_key:
                # what LaunchResources.for_launch finds under the template's own key (its
                # program's id: the program the template checked is alive, and is that one)
                res.checked_out = True
                return res
        if template is None:
            res = LaunchResources.for_launch(gpu, plan, function, shared_bytes, local_size_for(gpu, function))
        else:
            res = LaunchResources.for_launch(gpu, plan, function, shared_bytes, template.local_size,
                                             template.segment_bytes, template.resources_key)
        res.checked_out = True
        return res


def _wave_for(gpu, function, grid, block, shared_bytes: int, params: bytes, grid_id: int, blocks, plan,
              budget: int, res, template, reusable: bool) -> WaveExecution:
    """The wave that runs `blocks`: the one a wave of as many blocks of
    this template left on `res` (the resources this launch holds alone),
    restarted, when it ran the same function to the end (the same blocks:
    a stream of small launches; others: the next wave of a long grid, or
    its first in the next launch); else a new one, remembered for that
    when `reusable` (no debugger, tool, placement beside other grids or
    cooperative workspace holds on to it or changed it). Then a grid's
    launches after its first build no wave."""
    kept = res.kept_waves.pop(len(blocks), None)
    if kept is not None:
        if reusable and kept[0] is template and kept[2].function is function:
            if kept[1] == blocks:
                return kept[2].restart(params, grid_id, budget)
            if len(kept[1]) == len(blocks):
                return kept[2].restart_at(blocks, params, grid_id, budget)
    X = WaveExecution(gpu, function, grid, block, shared_bytes, params, grid_id, blocks, plan, budget, res,
                      template)
    if reusable:
        X.keep_for_restart()
    return X


def execute_step(X: WaveExecution, code: list, leader, pc: int, idx) -> None:
    """Run the threads `idx` (None: the whole wave), all waiting at `pc`,
    through instructions until the next block leader or a control
    instruction; a lane fault becomes a KernelFault carrying the wave.
    With an analysis tool observing execution (X.tap, sim/instrument.py)
    it also emits the memory, warp-sync and barrier events that the
    instructions' translations declare in Built.info, and runs compiled
    code only where it would emit none the tool consumes; without one the
    only cost is a test per instruction."""
    tap = X.tap
    X.step_pc = pc
    nsel = X.n if idx is None else len(idx)
    sel = idx
    executed = 0
    native = X.native_on          # compiled segments (sim/native) may run this step's straight-line work
    interpret_at = -1             # a segment whose check failed: the interpreter redoes it and reports
    if native:
        # a debugger's leaders (breakpoints, watched memory instructions)
        # must start steps: native code may not run past them
        extra = leader is not X.program.leader
        full = native == native_engine.FULL     # the variant that keeps every register (debugger)
        consumed = 0 if tap is None else tap.consumes   # event classes compiled code must not skip
        region = code[pc].region_full if full else code[pc].region  # a loop run natively, to each thread's exit
        if region is not None and not region.events & consumed \
                and not (extra and region.crosses(leader, X.program.leader)) and region.enter(X, idx, pc):
            return
    try:
        while True:
            c = code[pc]
            seg = (c.native_full if full else c.native) if native else None
            if seg is not None and pc != interpret_at and not seg.events & consumed \
                    and not (extra and seg.crosses(leader, X.program.leader)) and seg.may_run(X, idx):
                if seg.run(X, idx):
                    executed += seg.length
                    if seg.bodies:     # the interpreter's steps of its if bodies (if_bodies.py)
                        seg.account_body(X, nsel)
                    pc = seg.end
                    if leader[pc]:
                        X.set_pc(idx, pc)
                        break
                    continue
                interpret_at = pc
            b = c.built
            executed += 1
            if b.run is not None:
                sel = idx if c.guard is None else c.guard(X, idx)
                if sel is None or len(sel):
                    if tap is None:
                        b.run(X, sel)
                    else:
                        _run_observed(tap, X, b, pc, sel)
                pc += 1
                if leader[pc]:
                    X.set_pc(idx, pc)
                    break
                continue
            if c.guard is None:
                sel = idx
            else:
                take, skip = X.split_guard(c, idx)
                if skip is None or len(skip):
                    X.set_pc(skip, pc + 1)
                sel = take
                if take is not None and not len(take):
                    break
            if tap is not None and b.kind == "barrier":
                instrument.emit_barrier_arrival(tap, X, pc, b.info, sel)
            elif tap is not None and "sync_op" in b.info:    # bar.warp.sync (sim/warp_barrier.py)
                instrument.emit_warp_sync(tap, X, pc, b.info, sel)
            b.control(X, sel, pc)
            break
    except LaneFault as e:
        X.count_work(nsel, executed)
        fault = KernelFault(X.fault_report(e, pc, sel))
        fault.wave = X
        raise fault from None
    X.count_work(nsel, executed)


def _run_observed(tap, X: WaveExecution, b, pc: int, sel) -> None:
    """One straight-line instruction with its events: warp-sync before,
    memory after success (addresses read before it runs)."""
    info = b.info
    if "sync_op" in info:
        instrument.emit_warp_sync(tap, X, pc, info, sel)
    probes = info.get("memory") if tap.observes_memory else None
    if probes:
        probed = instrument.probe_memory(X, probes, sel)
        b.run(X, sel)
        instrument.emit_memory(tap, X, pc, probed)
    else:
        b.run(X, sel)


# ndarray.min/max go through numpy's Python-level _methods wrappers: the
# ufunc reductions themselves, for the two or three per step of a tiny wave
_lowest, _highest = np.minimum.reduce, np.maximum.reduce


def next_group(view: np.ndarray, spin: SpinBackoff, whole: bool = True):
    """The lowest-pending-pc rule: (pc, slots) of the next step over the
    scheduling pcs `view`; slots None is the whole wave (when `whole`
    allows it). A pc >= PARKED means nothing is runnable."""
    picked = spin.pick(view)
    if picked is not None:
        return picked
    m = int(_lowest(view))
    if m >= PARKED:
        return m, None
    idx = None if whole and int(_highest(view)) == m else np.flatnonzero(view == m)
    spin.observe(m, idx)
    return m, idx


def whole_wave_at_known_pc(X: WaveExecution, spin: SpinBackoff):
    """next_group's answer without scanning the wave, when the last write
    to the scheduling pcs put the whole wave at one pc (X.uniform_pc);
    None when that is not known (or warps are backed off). `spin` None:
    the caller has made no backoff yet; the answer is then given only for
    the whole wave (whose step would reset a new backoff anyway), else None:
    the caller makes one and asks again."""
    m = X.uniform_pc
    if m is None or spin is not None and spin.mask is not None:
        return None
    idx = X.uniform_slots      # None: every slot; a padded wave's real threads (as the scan would find them)
    if idx is None:
        if spin is not None:
            spin.count = 0     # (spin.observe of the whole wave)
        return m, None
    if m >= PARKED:
        return m, None
    if spin is None:
        return None
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
    # warps spinning on other warps must not starve them: the lowest-pc rule's
    # backoff, made at the first step that is not the whole wave at a known pc
    # (until then it would only have been reset to its initial state)
    spin = None
    every = watch.check_steps
    countdown = every
    while True:
        if order is None:
            picked = whole_wave_at_known_pc(X, spin)
            if picked is None:
                if spin is None:
                    spin = SpinBackoff(X)
                    picked = whole_wave_at_known_pc(X, spin)
                if picked is None:
                    picked = next_group(X.sched, spin)
            m, idx = picked
        else:
            m, idx = order.next_group(X.sched)
        if m >= PARKED:
            if m < EXITED and _stuck(X, m):     # (m >= EXITED: the wave has finished)
                continue
            return
        visits[m] += 1
        execute_step(X, code, leader, m, idx)
        countdown -= 1
        if not countdown:
            countdown = every
            watch.check(X)
