"""The simulator's side of the debugger interface: a DevicePort per GPU
that the executor consults while a debugger is attached.

The one idea: every grid in flight runs its waves on its own engine thread
(sim/engines.py), and stopping the GPU means blocking each of those threads
between two scheduler steps. A wave under the debugger is a WaveRun (its
held and reported lanes, its pending requests and fault); every control
request of the debugger (step a warp, run warps to a pc, hold threads) is
a closure that the thread of the wave owning the warp executes at its next
step boundary, running or stopped. State reads need no request: while the
device is stopped, every wave's arrays hold still. The grids of one GPU
occupy disjoint SMs and warp slots (sim/sm_pool.py), so (sm, warp, lane)
names one thread among all of them.

Stops are device-wide, as in cuda-gdb: when one wave stops (breakpoint,
fault, a suspend request such as Ctrl-C), the `stopped` flag every loop
reads at each step parks the other waves at their next step, and resume
lets them all go. A wave that reaches a breakpoint or faults while another
wave's stop is in place waits for the resume and then stops the device
itself, so every stop is reported once, by the wave it concerns (the
"stopper", whose grid the Session is told about first).

The debugged loop is the executor's lowest-pending-pc scheduler with three
additions: held threads are treated as parked (out of scheduling, as
spin.py backs spinning warps off); blocks split at breakpoint pcs (the
program's leader array with the breakpoints added), so the threads reaching
a breakpoint stop there with the rest of their warp's state exact; and a
fault stops the device before the launch fails. A thread at a breakpoint
pc that has been reported (or filtered out by a condition) steps past it
when resumed. With watchpoints set, memory instructions are steps of
their own too (sim/debug_watch.py), and a step that touched watched bytes
stops the device after it ran. Without a debugger attached none of this runs (`port_for`
answers None) and launches take the undisturbed fast loop.

It does not decide anything: which lanes a breakpoint stops (conditions,
disabled breakpoints) is asked of the listener, the Session. Grids that
were already running when the debugger attached are not seen.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gpudbg.sim.engines import current_job
from gpudbg.sim.faults import KernelFault
from gpudbg.sim.state import EXITED, PARKED

_attached: Any = None          # the SimBackend of the attached debugger, or None
STEP_LIMIT = 1 << 24           # instructions one stepping request may run (runaway guard)


class LaunchAborted(Exception):
    """The debugger killed the launch; the driver reports a launch failure."""


class PortError(Exception):
    """A control request that cannot be carried out (`code` in CUDBGResult
    terms: RUNNING, INVALID_WARP, ...)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def attach(backend: Any) -> None:
    global _attached
    if _attached is not None and _attached is not backend:
        raise PortError("ALREADY_ATTACHED", "a debugger is already attached to this process")
    _attached = backend


def detach(backend: Any) -> None:
    global _attached
    if _attached is backend:
        _attached = None


def attached() -> Any:
    return _attached


def port_for(gpu: Any) -> "DevicePort | None":
    b = _attached
    return None if b is None else b.port(gpu)


def notify(method: str, gpu: Any, *args: Any) -> None:
    """Upward event from the driver (module loads, contexts): to the
    listener of the attached debugger, if any."""
    port = port_for(gpu)
    if port is not None:
        port.notify(method, *args)


@dataclass
class _Request:
    fn: Callable[[Any], Any]
    done: bool = False
    result: Any = None
    error: BaseException | None = None


class WaveRun:
    """One wave running under the debugger on its engine thread. It is what
    the state views and stepping (debug_views, debug_stepping) take as
    their `port`: the wave's held/reported lanes and fault, the device's
    broken warps, breakpoints and generation."""

    def __init__(self, port: "DevicePort", X: Any):
        self.port = port
        self.X = X
        self.thread = threading.get_ident()
        self.job = current_job()
        self.grid_id = int(X.grid_id)
        self.held = np.zeros(X.n, dtype=bool)
        self.reported = np.zeros(X.n, dtype=bool)
        self.requests: list[_Request] = []
        self.fault: KernelFault | None = None          # the exception the device stopped at
        self.pending_fault: KernelFault | None = None
        self.fault_group: np.ndarray | None = None
        self._warps: set[tuple[int, int]] | None = None

    @property
    def dev(self) -> int:
        return self.port.dev

    @property
    def broken(self) -> set[tuple[int, int]]:
        return self.port.broken

    @property
    def generation(self) -> int:
        return self.port.generation

    @generation.setter
    def generation(self, value: int) -> None:
        self.port.generation = value

    def leaders(self, program: Any) -> tuple[np.ndarray, frozenset]:
        return self.port.leaders(program)

    def _warp_set(self) -> set[tuple[int, int]]:
        if self._warps is None:
            L = self.X.layout
            v = np.flatnonzero(L.valid)
            self._warps = set(zip(L.sm[v].tolist(), L.warp[v].tolist()))
        return self._warps

    def owns(self, sm: int, wp: int) -> bool:
        """Whether warp slot `wp` of SM `sm` holds a warp of this wave."""
        return (sm, wp) in self._warp_set()

    def on_sm(self, sm: int) -> bool:
        return any(k[0] == sm for k in self._warp_set())


class DevicePort:
    """Stop/resume state and the debugged scheduler of one GPU."""

    def __init__(self, backend: Any, gpu: Any, dev: int):
        self.backend = backend
        self.gpu = gpu
        self.dev = dev
        self.cv = threading.Condition()
        self.runs: dict[int, WaveRun] = {}          # thread ident -> the wave it runs
        self.launches: dict[int, dict] = {}         # grid id -> the launch, until it ends
        self.stopper: WaveRun | None = None         # the wave whose stop is in place
        self.stopped = False
        self.stop_reason: Any = None
        self.suspend_requested = False
        self.killed = False
        self.breakpoints: set[int] = set()
        self.watches: Any = None           # debug_watch.WatchSet while watchpoints are set
        self.step_watch_hit = False        # the last warp-step request stopped at a watchpoint
        self._bp_version = 0
        self._leaders: dict[int, tuple[int, np.ndarray, frozenset]] = {}
        self.broken: set[tuple[int, int]] = set()
        self.generation = 0                # bumps on every change of device state
        self.programs: list[Any] = []

    # ------------------------------------------------------------ which wave
    def focus(self) -> WaveRun | None:
        """The wave the debugger looks at first: the one whose stop is in
        place, else the oldest running one."""
        run = self.stopper
        if run is not None and self.runs.get(run.thread) is run:
            return run
        return next(iter(self.runs.values()), None)

    @property
    def wave(self) -> Any:
        run = self.focus()
        return run.X if run is not None else None

    @property
    def launch(self) -> dict | None:
        run = self.focus()
        if run is not None and run.grid_id in self.launches:
            return self.launches[run.grid_id]
        return next(iter(self.launches.values()), None)

    @property
    def fault(self) -> KernelFault | None:
        run = self.focus()
        return run.fault if run is not None else None

    def run_for(self, sm: int, wp: int) -> WaveRun | None:
        """The wave owning warp (sm, wp); with one wave, that wave."""
        runs = list(self.runs.values())
        if len(runs) <= 1:
            return runs[0] if runs else None
        return next((r for r in runs if r.owns(sm, wp)), None)

    def runs_on(self, sm: int | None) -> list[WaveRun]:
        runs = list(self.runs.values())
        if sm is None or len(runs) <= 1:
            return runs
        return [r for r in runs if r.on_sm(sm)]

    def pending_launch(self) -> bool:
        """A launch between KERNEL_READY and its first wave (or waiting for SMs)."""
        return not self.runs and any(not L["done"] for L in self.launches.values())

    # ------------------------------------------------------------ upward
    def notify(self, method: str, *args: Any) -> None:
        listener = self.backend.listener
        if listener is not None:
            try:
                getattr(listener, method)(self.dev, *args)
            except Exception as e:   # a listener bug must not break the program
                self.gpu.internal_errors.append(e)

    # ------------------------------------------------------------ launches
    def kernel_ready(self, function: Any, grid, block, shared_bytes: int, params: bytes, grid_id: int,
                     parent: Any = None, cluster: tuple[int, int, int] = (1, 1, 1)) -> None:
        """A grid is about to run; `parent` is the device launch
        (sim/device_runtime.ChildLaunch) that made it, if a kernel did."""
        job = current_job()
        host_tid = job.host_tid if job is not None else int(getattr(self.gpu, "launch_host_tid", 0))
        L = {"function": function, "grid": tuple(grid), "block": tuple(block), "shared": int(shared_bytes),
             "params": bytes(params), "grid_id": int(grid_id), "host_tid": int(host_tid), "done": False,
             "parent_grid_id": int(parent.parent_grid_id) if parent is not None else 0,
             "cluster": tuple(cluster)}
        with self.cv:
            self.launches[int(grid_id)] = L
            self.generation += 1
            self.cv.notify_all()
        self.notify("kernel_ready", self.backend.grid_view(self, L))

    def kernel_finished(self, grid_id: int | None = None) -> None:
        with self.cv:
            if grid_id is None:
                grid_id = next(iter(self.launches), None)
            L = self.launches.get(grid_id)
        if L is None:
            return
        L["done"] = True
        view = self.backend.grid_view(self, L)
        with self.cv:
            self.launches.pop(grid_id, None)
            self.generation += 1
            self.cv.notify_all()
        self.notify("kernel_finished", view)

    def leaders(self, program: Any) -> tuple[np.ndarray, frozenset]:
        """The program's block leaders plus the breakpoint pcs."""
        key = id(program)
        got = self._leaders.get(key)
        if got is not None and got[0] == self._bp_version:
            return got[1], got[2]
        pcs = frozenset(p for p in (program.pc_of_address(a) for a in self.breakpoints) if p is not None)
        leader = program.leader
        if pcs:
            leader = leader.copy()
            leader[list(pcs)] = True
        if self.watches is not None:
            leader = self.watches.split(program, leader)
        self._leaders[key] = (self._bp_version, leader, pcs)
        return leader, pcs

    def keeps_every_register(self, program: Any) -> bool:
        """Whether a launch of `program` starting now must keep every
        register exact at a stop (the native engine's FULL variant): when
        a breakpoint or a watched memory instruction is in it, or its PTX
        was compiled for debugging (`.target ..., debug`, nvcc -G). Else
        it runs the optimized code an undebugged launch runs, and a stop
        that comes anyway (a suspend, a breakpoint set while it runs, a
        fault) shows the registers not live at a lane's pc as optimized
        out, as cuda-gdb does for code built without -G."""
        if getattr(program.module, "debug", False):
            return True
        leader, _pcs = self.leaders(program)
        return leader is not program.leader

    def set_breakpoints(self, addresses: set[int]) -> None:
        with self.cv:
            self.breakpoints = set(addresses)
            self._bp_version += 1

    def set_watches(self, watches: Any) -> None:
        """A debug_watch.WatchSet, or None: no watchpoints (the plain leaders)."""
        with self.cv:
            self.watches = watches
            self._bp_version += 1

    # ------------------------------------------------------------ the debugged loop
    def run_wave(self, X: Any) -> None:
        from gpudbg.sim.debug_watch import watched_step
        from gpudbg.sim.executor import execute_step, next_group, whole_wave_at_known_pc
        from gpudbg.sim.spin import SpinBackoff
        code = X.program.code
        spin = SpinBackoff(X)
        run = WaveRun(self, X)
        job = run.job
        with self.cv:
            self.runs[run.thread] = run
            self.generation += 1
            self.cv.notify_all()
        # whether any lane is held or reported: what the debugger changes
        # only in _checkpoint (its requests) and in the stops below, so
        # they are looked at again only after those (each is a scan of the
        # wave: two per step were 3.6 ms of a 2^22 reduction's 33)
        holding = run.held.any()
        reporting = run.reported.any()
        try:
            while True:
                if self.stopped or self.suspend_requested or self.killed or run.requests or \
                        (job is not None and job.abort is not None):
                    self._checkpoint(run)
                    holding, reporting = run.held.any(), run.reported.any()
                held = run.held
                known = None if holding else whole_wave_at_known_pc(X, spin)
                if known is not None:
                    m, idx = known
                else:
                    sched = X.sched
                    view = np.where(held, PARKED, sched) if holding else sched
                    m, idx = next_group(view, spin, whole=view is sched)
                if m >= PARKED:
                    if m >= EXITED:
                        return
                    if X.release_barriers(final=True):
                        continue
                    if holding and (held & (X.sched < PARKED)).any():
                        self._stop(run, "THREADS_HELD", {})
                        holding, reporting = run.held.any(), run.reported.any()
                        continue
                    fault = KernelFault(X.deadlock_report())
                    fault.wave = X
                    raise fault
                leader, bp_pcs = self.leaders(X.program)
                if m in bp_pcs:
                    stopped = self._breakpoint(run, m, idx)
                    holding, reporting = run.held.any(), run.reported.any()
                    if stopped:
                        continue
                watches = self.watches
                if watches is not None and m in watches.pcs(X.program):
                    hits = watched_step(watches, run, code, leader, m, idx)
                    holding, reporting = run.held.any(), run.reported.any()
                else:
                    execute_step(X, code, leader, m, idx)
                    hits = None
                if reporting:
                    run.reported[idx if idx is not None else slice(None)] = False
                    reporting = run.reported.any()
                if hits:
                    self._watchpoint(run, hits)
                    holding, reporting = run.held.any(), run.reported.any()
                if X.thread_instructions > X.budget:
                    fault = KernelFault(X.budget_report(m))
                    fault.wave = X
                    raise fault
        except KernelFault as kf:
            if not self.killed and kf is not run.pending_fault:
                self._stop_at_fault(run, kf)
                self._serve_stopped(run, allow_kill=True)
            raise
        finally:
            with self.cv:
                self.runs.pop(run.thread, None)
                if self.stopper is run:
                    self.stopper = None
                    self.broken.clear()
                if not self.runs:
                    self.stopped = self.stopped and self.stop_reason == "SUSPENDED"
                self.generation += 1
                self.cv.notify_all()

    def _checkpoint(self, run: WaveRun) -> None:
        if self.killed:
            raise LaunchAborted("the launch was killed by the debugger")
        if run.job is not None and run.job.abort is not None:
            raise LaunchAborted(f"kernel {run.X.function.name} was stopped: {run.job.abort}")
        if self.suspend_requested and not self.stopped:
            with self.cv:
                take = self.suspend_requested and not self.stopped
                self.suspend_requested = False
            if take:
                self._stop(run, "SUSPENDED", {}, serve=False)
        self._serve_requests(run)
        if self.stopped:
            self._serve_stopped(run)
        if run.pending_fault is not None:
            raise run.pending_fault

    def _breakpoint(self, run: WaveRun, m: int, idx) -> bool:
        if self.stopped:
            return True          # another wave's stop is in place: report this one after the resume
        X = run.X
        slots = X.all_slots if idx is None else idx
        cand = slots[~run.reported[slots]]
        if not len(cand):
            return False
        address = X.program.code_address(m)
        from gpudbg.sim.debug_views import lane_coords
        listener = self.backend.listener
        if listener is None:
            return False
        mask = np.broadcast_to(np.asarray(listener.breakpoint_filter(self.dev, address, lane_coords(X, cand)),
                                          dtype=bool), (len(cand),))
        run.reported[cand] = True
        hit = cand[mask]
        if not len(hit):
            return False
        L = X.layout
        warps = sorted({(int(L.sm[s]), int(L.warp[s])) for s in hit})
        lanes = [(int(L.sm[s]), int(L.warp[s]), int(L.lane[s])) for s in hit]
        if not self._stop(run, "BREAKPOINT", {"address": address, "warps": warps, "lanes": lanes},
                          broken=warps):
            run.reported[cand] = False     # another wave stopped first: hit again after the resume
        return True

    def _watchpoint(self, run: WaveRun, hits: list, during_stop: bool = False) -> bool:
        """The instruction just run touched watched bytes: stop the lanes
        the listener keeps (conditions, value changes), with their warps;
        False when it keeps none. The access has happened, so when another
        wave's stop comes first this one waits for its resume and then
        stops. `during_stop`: a warp step of the stopped device (a request)
        triggered it; the stop is reported at once, as a fault there is."""
        listener = self.backend.listener
        if listener is None:
            return False
        keep = tuple(listener.watch_filter(self.dev, hits))
        if not keep:
            return False
        lanes = sorted({x for h in keep for x in h.lanes})
        warps = sorted({x[:2] for x in lanes})
        info = {"address": keep[0].pc, "warps": warps, "lanes": lanes, "watch_hits": keep}
        if during_stop:
            self.step_watch_hit = True
            self._stop(run, "WATCHPOINT", info, broken=warps, serve=False, force=True)
            return True
        while not self._stop(run, "WATCHPOINT", info, broken=warps):
            self._serve_stopped(run)
        return True

    def _stop_at_fault(self, run: WaveRun, kf: KernelFault, during_stop: bool = False) -> None:
        X = run.X
        r = kf.report
        warps = [(r.sm, r.warp)] if r.sm is not None else []
        with self.cv:
            run.fault = kf
            run.fault_group = np.flatnonzero(X.sched == X.step_pc) if r.hang is None else None
        info = {"report": r, "address": r.pc, "warps": warps,
                "lanes": [(r.sm, r.warp, r.lane)] if r.sm is not None else []}
        if r.address is not None and "Address" in r.title:
            self.notify("page_fault", r.address, r.message, info)
        while not self._stop(run, "EXCEPTION", info, broken=warps, serve=False, force=during_stop):
            self._serve_stopped(run, allow_kill=True)     # another wave's stop first
            if self.killed:
                return

    def _stop(self, run: WaveRun | None, reason: str, info: dict, broken=(), serve: bool = True,
              force: bool = False) -> bool:
        """Stop the device on behalf of `run`; False (nothing done) when
        another wave's stop is already in place, unless `force` (a stop
        of the wave serving a request during the stop)."""
        with self.cv:
            if self.stopped and not force and self.stopper is not run:
                return False
            self.stopped = True
            self.stop_reason = reason
            self.stopper = run
            self.broken = set(broken)
            self.generation += 1
            self.cv.notify_all()
        from gpudbg.debug.backend import StopReason
        self.notify("stopped", StopReason[reason], info)
        if serve and run is not None:
            self._serve_stopped(run)
        return True

    def _serve_stopped(self, run: WaveRun, allow_kill: bool = False) -> None:
        while True:
            with self.cv:
                while self.stopped and not run.requests and not self.killed:
                    self.cv.wait()
                if self.killed:
                    if allow_kill:
                        return
                    raise LaunchAborted("the launch was killed by the debugger")
                if not run.requests:
                    return
                req = run.requests.pop(0)
            self._run_request(run, req)

    def _serve_requests(self, run: WaveRun) -> None:
        while True:
            with self.cv:
                if not run.requests:
                    return
                req = run.requests.pop(0)
            self._run_request(run, req)

    def _run_request(self, run: WaveRun, req: _Request) -> None:
        try:
            req.result = req.fn(run)
        except KernelFault as kf:      # a fault while stepping: stop at it; the launch fails on resume
            run.pending_fault = kf
            self._stop_at_fault(run, kf, during_stop=True)
        except BaseException as e:
            req.error = e
        with self.cv:
            req.done = True
            self.generation += 1
            self.cv.notify_all()

    # ------------------------------------------------------------ requests (debugger threads)
    def request(self, fn: Callable[[Any], Any], need_stopped: bool = False, timeout: float = 600.0,
                run: WaveRun | None = None) -> Any:
        """Run fn(wave run) on the thread of `run` (default: the focused
        wave) at its next step boundary; fn(None) right here when no
        kernel is running."""
        with self.cv:
            if self.pending_launch():
                self.cv.wait_for(lambda: not self.pending_launch(), timeout)
            if run is None:
                run = self.focus()
            elif self.runs.get(run.thread) is not run:
                raise PortError("INVALID_WARP", f"the wave of grid {run.grid_id} has ended")
            if run is None:
                if need_stopped and not self.stopped:
                    raise PortError("RUNNING", f"device {self.dev} is running")
                return fn(None)
            if need_stopped and not self.stopped:
                raise PortError("RUNNING", f"device {self.dev} is running; suspend it first")
            if threading.get_ident() == run.thread:
                return fn(run)
            req = _Request(fn)
            run.requests.append(req)
            self.cv.notify_all()
            if not self.cv.wait_for(lambda: req.done, timeout):
                raise PortError("TIMEOUT", f"device {self.dev} did not answer within {timeout} s")
        if req.error is not None:
            raise req.error
        return req.result

    def suspend(self, timeout: float = 30.0) -> None:
        with self.cv:
            if self.stopped:
                return
            if self.pending_launch():
                # a launch between KERNEL_READY and its first wave: stop inside the wave
                self.cv.wait_for(lambda: not self.pending_launch(), timeout)
            if not self.runs:
                self.stopped = True
                self.stop_reason = "SUSPENDED"
                self.stopper = None
                self.generation += 1
            else:
                self.suspend_requested = True
                self.cv.notify_all()
                self.cv.wait_for(lambda: self.stopped or not self.runs or self.killed, timeout)
                if not self.runs and not self.stopped:   # the launches ended first
                    self.suspend_requested = False
                    self.stopped = True
                    self.stop_reason = "SUSPENDED"
                    self.stopper = None
                return
        from gpudbg.debug.backend import StopReason
        self.notify("stopped", StopReason.SUSPENDED, {})

    def resume(self) -> None:
        with self.cv:
            if not self.stopped:
                return
            self.stopped = False
            self.stop_reason = None
            self.broken.clear()
            for run in self.runs.values():
                if run.fault is not None and run.pending_fault is None:
                    run.pending_fault = run.fault
            self.generation += 1
            self.cv.notify_all()
        self.notify("resumed")

    def kill(self) -> None:
        with self.cv:
            self.killed = True
            self.stopped = False
            self.suspend_requested = False
            self.generation += 1
            self.cv.notify_all()
