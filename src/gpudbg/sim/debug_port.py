"""The simulator's side of the debugger interface: a DevicePort per GPU
that the executor consults while a debugger is attached.

The one idea: the device thread is the only thread that ever runs the
executor, so stopping the GPU means blocking the device thread between two
scheduler steps, and every control request of the debugger (step a warp,
run warps to a pc, hold threads) is a closure the device thread executes
at its next step boundary, running or stopped. State reads need no
request: while the device thread is blocked, the wave's arrays hold still.

The debugged loop is the executor's lowest-pending-pc scheduler with three
additions: held threads are treated as parked (out of scheduling, as
spin.py backs spinning warps off); blocks split at breakpoint pcs (the program's
leader array with the breakpoints added), so the threads reaching a
breakpoint stop there with the rest of their warp's state exact; and a
fault stops the device before the launch fails. A thread at a breakpoint
pc that has been reported (or filtered out by a condition) steps past it
when resumed. Without a debugger attached none of this runs (`port_for`
answers None) and launches take the undisturbed fast loop.

It does not decide anything: which lanes a breakpoint stops (conditions,
disabled breakpoints) is asked of the listener, the Session.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

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


class DevicePort:
    """Stop/resume state and the debugged scheduler of one GPU."""

    def __init__(self, backend: Any, gpu: Any, dev: int):
        self.backend = backend
        self.gpu = gpu
        self.dev = dev
        self.cv = threading.Condition()
        self.wave: Any = None              # WaveExecution being run, or None
        self.launch: dict | None = None    # what the current launch is
        self.stopped = False
        self.stop_reason: Any = None
        self.suspend_requested = False
        self.killed = False
        self.requests: list[_Request] = []
        self.breakpoints: set[int] = set()
        self._bp_version = 0
        self._leaders: dict[int, tuple[int, np.ndarray, frozenset]] = {}
        self.held: np.ndarray | None = None
        self.reported: np.ndarray | None = None
        self.broken: set[tuple[int, int]] = set()
        self.fault: KernelFault | None = None      # the exception the device stopped at
        self.pending_fault: KernelFault | None = None
        self.generation = 0                # bumps on every change of device state
        self.programs: list[Any] = []

    # ------------------------------------------------------------ upward
    def notify(self, method: str, *args: Any) -> None:
        listener = self.backend.listener
        if listener is not None:
            try:
                getattr(listener, method)(self.dev, *args)
            except Exception as e:   # a listener bug must not break the program
                self.gpu.internal_errors.append(e)

    # ------------------------------------------------------------ launches
    def kernel_ready(self, function: Any, grid, block, shared_bytes: int, params: bytes, grid_id: int) -> None:
        self.launch = {"function": function, "grid": tuple(grid), "block": tuple(block),
                       "shared": int(shared_bytes), "params": bytes(params), "grid_id": int(grid_id),
                       "host_tid": int(getattr(self.gpu, "launch_host_tid", 0)), "done": False}
        self.notify("kernel_ready", self.backend.grid_view(self))

    def kernel_finished(self) -> None:
        if self.launch is None:
            return
        self.launch["done"] = True
        view = self.backend.grid_view(self)
        with self.cv:
            self.launch = None
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
        self._leaders[key] = (self._bp_version, leader, pcs)
        return leader, pcs

    def set_breakpoints(self, addresses: set[int]) -> None:
        with self.cv:
            self.breakpoints = set(addresses)
            self._bp_version += 1

    # ------------------------------------------------------------ the debugged loop
    def run_wave(self, X: Any) -> None:
        from gpudbg.sim.executor import execute_step, next_group
        from gpudbg.sim.spin import SpinBackoff
        code = X.program.code
        spin = SpinBackoff(X)
        with self.cv:
            self.wave = X
            self.held = np.zeros(X.n, dtype=bool)
            self.reported = np.zeros(X.n, dtype=bool)
            self.generation += 1
            self.cv.notify_all()
        try:
            while True:
                if self.stopped or self.suspend_requested or self.killed or self.requests:
                    self._checkpoint(X)
                sched = X.sched
                held = self.held
                view = np.where(held, PARKED, sched) if held.any() else sched
                m, idx = next_group(view, spin, whole=view is sched)
                if m >= PARKED:
                    if m >= EXITED:
                        return
                    if X.release_barriers(final=True):
                        continue
                    if (held & (sched < PARKED)).any():
                        self._stop(X, "THREADS_HELD", {})
                        continue
                    fault = KernelFault(X.deadlock_report())
                    fault.wave = X
                    raise fault
                leader, bp_pcs = self.leaders(X.program)
                if m in bp_pcs and self._breakpoint(X, m, idx):
                    continue
                execute_step(X, code, leader, m, idx)
                if self.reported.any():
                    self.reported[idx if idx is not None else slice(None)] = False
                if X.thread_instructions > X.budget:
                    fault = KernelFault(X.budget_report(m))
                    fault.wave = X
                    raise fault
        except KernelFault as kf:
            if not self.killed and kf is not self.pending_fault:
                self._stop_at_fault(X, kf)
                self._serve_stopped(X, allow_kill=True)
            raise
        finally:
            with self.cv:
                self.wave = None
                self.held = None
                self.reported = None
                self.broken.clear()
                self.fault = None
                self.pending_fault = None
                self.stopped = self.stopped and self.stop_reason == "SUSPENDED"
                self.generation += 1
                self.cv.notify_all()

    def _checkpoint(self, X: Any) -> None:
        if self.killed:
            raise LaunchAborted("the launch was killed by the debugger")
        if self.suspend_requested and not self.stopped:
            self.suspend_requested = False
            self._stop(X, "SUSPENDED", {}, serve=False)
        self._serve_requests(X)
        if self.stopped:
            self._serve_stopped(X)
        if self.pending_fault is not None:
            raise self.pending_fault

    def _breakpoint(self, X: Any, m: int, idx) -> bool:
        slots = X.all_slots if idx is None else idx
        cand = slots[~self.reported[slots]]
        if not len(cand):
            return False
        self.reported[cand] = True
        address = X.program.code_address(m)
        from gpudbg.sim.debug_views import lane_coords
        listener = self.backend.listener
        if listener is None:
            return False
        mask = np.broadcast_to(np.asarray(listener.breakpoint_filter(self.dev, address, lane_coords(X, cand)),
                                          dtype=bool), (len(cand),))
        hit = cand[mask]
        if not len(hit):
            return False
        L = X.layout
        warps = sorted({(int(L.sm[s]), int(L.warp[s])) for s in hit})
        lanes = [(int(L.sm[s]), int(L.warp[s]), int(L.lane[s])) for s in hit]
        self._stop(X, "BREAKPOINT", {"address": address, "warps": warps, "lanes": lanes}, broken=warps)
        return True

    def _stop_at_fault(self, X: Any, kf: KernelFault) -> None:
        r = kf.report
        warps = [(r.sm, r.warp)] if r.sm is not None else []
        with self.cv:
            self.fault = kf
            self.fault_group = np.flatnonzero(X.sched == X.step_pc) if r.hang is None else None
        info = {"report": r, "address": r.pc, "warps": warps,
                "lanes": [(r.sm, r.warp, r.lane)] if r.sm is not None else []}
        if r.address is not None and "Address" in r.title:
            self.notify("page_fault", r.address, r.message, info)
        self._stop(X, "EXCEPTION", info, broken=warps, serve=False)

    def _stop(self, X: Any, reason: str, info: dict, broken=(), serve: bool = True) -> None:
        with self.cv:
            self.stopped = True
            self.stop_reason = reason
            self.broken = set(broken)
            self.generation += 1
            self.cv.notify_all()
        from gpudbg.debug.backend import StopReason
        self.notify("stopped", StopReason[reason], info)
        if serve and X is not None:
            self._serve_stopped(X)

    def _serve_stopped(self, X: Any, allow_kill: bool = False) -> None:
        while True:
            with self.cv:
                while self.stopped and not self.requests and not self.killed:
                    self.cv.wait()
                if self.killed:
                    if allow_kill:
                        return
                    raise LaunchAborted("the launch was killed by the debugger")
                if not self.requests:
                    return
                req = self.requests.pop(0)
            self._run_request(X, req)

    def _serve_requests(self, X: Any) -> None:
        while True:
            with self.cv:
                if not self.requests:
                    return
                req = self.requests.pop(0)
            self._run_request(X, req)

    def _run_request(self, X: Any, req: _Request) -> None:
        try:
            req.result = req.fn(X)
        except KernelFault as kf:      # a fault while stepping: stop at it; the launch fails on resume
            self.pending_fault = kf
            self._stop_at_fault(X, kf)
        except BaseException as e:
            req.error = e
        with self.cv:
            req.done = True
            self.generation += 1
            self.cv.notify_all()

    # ------------------------------------------------------------ requests (debugger threads)
    def request(self, fn: Callable[[Any], Any], need_stopped: bool = False, timeout: float = 600.0) -> Any:
        """Run fn(wave) on the device thread at its next step boundary
        (fn(None) right here when no kernel is running)."""
        with self.cv:
            if self.wave is None and self.launch is not None and not self.launch["done"]:
                self.cv.wait_for(lambda: self.wave is not None or self.launch is None, timeout)
            if self.wave is None:
                if need_stopped and not self.stopped:
                    raise PortError("RUNNING", f"device {self.dev} is running")
                return fn(None)
            if need_stopped and not self.stopped:
                raise PortError("RUNNING", f"device {self.dev} is running; suspend it first")
            if threading.current_thread() is getattr(self.gpu.frontend, "_thread", None):
                return fn(self.wave)
            req = _Request(fn)
            self.requests.append(req)
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
            if self.wave is None and self.launch is not None and not self.launch["done"]:
                # a launch between KERNEL_READY and its first wave: stop inside the wave
                self.cv.wait_for(lambda: self.wave is not None or self.launch is None, timeout)
            if self.wave is None:
                self.stopped = True
                self.stop_reason = "SUSPENDED"
                self.generation += 1
            else:
                self.suspend_requested = True
                self.cv.notify_all()
                self.cv.wait_for(lambda: self.stopped or self.wave is None or self.killed, timeout)
                if self.wave is None and not self.stopped:   # the launch ended first
                    self.suspend_requested = False
                    self.stopped = True
                    self.stop_reason = "SUSPENDED"
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
            if self.fault is not None and self.pending_fault is None:
                self.pending_fault = self.fault
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
