"""The watch over a running kernel: a time limit, cancellation, and a
report of where every warp is when either stops it.

The driver's watchdog (driver/watchdog.py) catches host waits on fences
that can never retire; a kernel that keeps running (a spin on a flag nobody
sets, two blocks waiting for each other) is progress as far as the front
end can tell. So the executor asks a KernelWatch, every CHECK_STEPS
scheduler steps and at each wave's start, whether the launch must stop: it
has run longer than GPUDBG_HANG_TIMEOUT seconds (the same variable and
parsing as the fence watchdog, default 60 s, 0/off disables), someone
cancelled it (`cancel`, what Ctrl-C in `gpudbg run`/`check` does), or it
ran past GPUDBG_INSTRUCTION_BUDGET thread-instructions (unlimited unless
set). A timeout or a cancellation ends the launch with a KernelFault whose
FaultReport is a hang (KERNEL_TIMEOUT: CUDA_ERROR_LAUNCH_TIMEOUT, or
INTERRUPTED) and says, per distinct pc, how many warps and threads are
there, of which blocks, the source line, and how many steps started there
(the executor counts one per step in a list as long as the code: how often
the warps have looped there). The front end's fault path latches it and
writes the devcoredump when dumping is on, as for any kernel fault.

The one idea: the cost per step is one list increment and one counter
decrement, so the default schedule runs as fast as before; the clock is
read once per CHECK_STEPS steps. What it does not do: watch a launch under
the debugger (time stopped at a breakpoint is not the kernel's; the
debugger handles Ctrl-C itself), or interrupt one long step (a step is one
basic block of the selected threads).
"""
from __future__ import annotations

import math
import os
import threading
import time

import numpy as np

from gpudbg.driver.watchdog import ENV_TIMEOUT, HangTimeoutError, hang_timeout
from gpudbg.sim.faults import CUDBGException, FaultReport, HangKind, KernelFault
from gpudbg.sim.cluster import CLUSTER_BARRIER
from gpudbg.sim.mbarrier import MBAR_WAIT
from gpudbg.sim.state import EXITED, PARKED
from gpudbg.sim.warp_barrier import WARP_SYNC

CHECK_STEPS = 64          # scheduler steps between two looks at the clock and the cancel flag
ENV_BUDGET = "GPUDBG_INSTRUCTION_BUDGET"
UNLIMITED = 1 << 62       # a budget no launch reaches
SHOWN_PCS = 16            # distinct pcs listed in a report; the rest are counted


class LaunchSettingError(ValueError):
    """An environment setting that makes a launch impossible to run."""


_cancel_reason: str | None = None
_cancel_lock = threading.Lock()


def cancel(reason: str) -> None:
    """Stop every running kernel at its next check (and refuse new ones)
    until clear(); `reason` goes into their reports ("Ctrl-C")."""
    global _cancel_reason
    with _cancel_lock:
        if _cancel_reason is None:
            _cancel_reason = reason


def clear() -> None:
    global _cancel_reason
    with _cancel_lock:
        _cancel_reason = None


def cancelled() -> str | None:
    return _cancel_reason


def budget_from_environment() -> int | None:
    """GPUDBG_INSTRUCTION_BUDGET as a positive integer; None when unset."""
    raw = os.environ.get(ENV_BUDGET, "").strip()
    if not raw:
        return None
    try:
        value = int(raw.replace("_", ""), 0)
    except ValueError:
        try:
            f = float(raw)
        except ValueError:
            f = math.nan
        if not (math.isfinite(f) and f == int(f)):
            raise LaunchSettingError(f"{ENV_BUDGET}={raw!r} is not a whole number of thread-instructions"
                                     ) from None
        value = int(f)
    if value <= 0:
        raise LaunchSettingError(f"{ENV_BUDGET}={raw!r} must be a positive number of thread-instructions "
                                 f"(unset it for no budget)")
    return value


def timeout_from_environment() -> float | None:
    """GPUDBG_HANG_TIMEOUT in seconds (None: off); LaunchSettingError when bad."""
    try:
        return hang_timeout()
    except HangTimeoutError as e:
        raise LaunchSettingError(str(e)) from None


def check_environment() -> None:
    """Raise LaunchSettingError (a ValueError) if a launch would refuse the
    environment's settings: for a CLI to say so before the program runs."""
    timeout_from_environment()
    budget_from_environment()


class KernelWatch:
    """One launch: when it started, its limits, the step counts per pc."""

    # what a launch starts with until start_wave (class defaults: one launch sets four attributes)
    check_steps = CHECK_STEPS
    visits: list[int] = []        # (never changed in place: start_wave makes each wave's own)
    wave_index = 0
    waves = 1

    def __init__(self, budget: int | None, timeout: float | None, check_steps: int = CHECK_STEPS):
        self.started = started = time.monotonic()
        self.timeout = timeout
        self.deadline = started + timeout if timeout is not None else math.inf
        self.budget = budget
        if check_steps != CHECK_STEPS:
            self.check_steps = check_steps

    @classmethod
    def for_launch(cls, budget: int | None) -> "KernelWatch":
        return cls(budget, timeout_from_environment())

    def start_wave(self, X, index: int, waves: int) -> list[int]:
        """A new wave: fresh step counters (returned, for the executor's
        loop), and a first check."""
        self.wave_index, self.waves = index, waves
        self.visits = [0] * (len(X.program.code) + 1)
        self.check(X)
        return self.visits

    def check(self, X) -> None:
        """Raise the KernelFault that stops the launch, if one must."""
        reason = _cancel_reason
        if reason is not None:
            raise self._fault(X, HangKind.INTERRUPTED, reason)
        now = time.monotonic()
        if now >= self.deadline:
            raise self._fault(X, HangKind.KERNEL_TIMEOUT, None, now)
        if X.thread_instructions > X.budget:
            fault = KernelFault(X.budget_report(int(X.step_pc)))
            fault.wave = X
            raise fault

    def _fault(self, X, kind: HangKind, reason: str | None, now: float | None = None) -> KernelFault:
        elapsed = (now or time.monotonic()) - self.started
        fault = KernelFault(where_report(X, kind, self._sentence(X, kind, reason, elapsed), self.visits))
        fault.wave = X   # for coredumps, taken before the next launch reuses X's arrays
        return fault

    def _sentence(self, X, kind: HangKind, reason: str | None, elapsed: float) -> str:
        live = X.sched < EXITED
        threads = int(np.count_nonzero(live))
        warps = int(np.count_nonzero(live.reshape(-1, 32).any(axis=1)))
        wave = f" (wave {self.wave_index + 1} of {self.waves})" if self.waves > 1 else ""
        pending = f"{threads} thread(s) in {warps} warp(s){wave} had not finished"
        if kind is HangKind.INTERRUPTED:
            return f"kernel {X.function.name} was interrupted ({reason}) after {elapsed:.1f} s; {pending}"
        return (f"kernel {X.function.name} ran for {elapsed:.1f} s, longer than {ENV_TIMEOUT}="
                f"{self.timeout:g} s; {pending} (set {ENV_TIMEOUT} to allow longer kernels, 0 or off "
                f"to disable)")


_SPECIAL_WAITS = {MBAR_WAIT: "waiting in mbarrier.try_wait", CLUSTER_BARRIER: "waiting in barrier.cluster.wait",
                  WARP_SYNC: "waiting in bar.warp.sync"}


def _waiting_at(bar: int) -> str:
    return _SPECIAL_WAITS.get(bar, f"waiting at barrier {bar}")


def _location(X, pc: int) -> str:
    prog = X.program
    c = prog.code[pc] if 0 <= pc < len(prog.code) else None
    inst = c.inst if c is not None else None
    li = inst.line_info if inst is not None else None
    if li is not None:
        src = prog.module.files.get(li.file_index)
        if src:
            text = f"{src}:{li.line}"
            outer = li.inlined_at
            while outer is not None:     # an inlined function (atomicAdd's header): name the call site too
                text += f" inlined at {prog.module.files.get(outer.file_index, '?')}:{outer.line}"
                outer = outer.inlined_at
            return text
    if inst is not None and inst.loc is not None:
        return f"{inst.loc.file}:{inst.loc.line}"
    return "unknown location"


def _blocks(X, slots: np.ndarray, limit: int = 4) -> str:
    blocks = np.unique(X.layout.block_of[slots])
    shown = [X.block_idx_of(int(slots[X.layout.block_of[slots] == b][0])) for b in blocks[:limit]]
    text = ", ".join(f"({b[0]},{b[1]},{b[2]})" for b in shown)
    more = f" and {len(blocks) - limit} more" if len(blocks) > limit else ""
    return f"block{'s' if len(blocks) > 1 else ''} {text}{more}"


def where_report(X, kind: HangKind, message: str, visits: list[int]) -> FaultReport:
    """A hang report of wave X naming, per distinct pc, the warps there."""
    sched = X.sched
    live = np.flatnonzero(sched < EXITED)
    parked = sched[live] == PARKED
    cur = np.where(parked, X.park_pc[live] - 1, sched[live])   # a parked thread: its barrier's pc
    key = cur * 2 + parked                     # threads at a barrier apart from runnable ones at its pc
    keys, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    groups = []
    for i, k in enumerate(keys.tolist()):
        pc, at_barrier = k >> 1, bool(k & 1)
        slots = live[inverse == i]
        seen = visits[pc] if 0 <= pc < len(visits) else 0
        groups.append((pc, at_barrier, slots, int(counts[i]), seen))
    groups.sort(key=lambda g: (g[1], -g[4], -g[3], g[0]))   # runnable, most looped first
    prog = X.program
    lines, rows = [], []
    for pc, at_barrier, slots, nthreads, seen in groups:
        nwarps = len(np.unique(slots // 32))
        where = _location(X, pc)
        what = (_waiting_at(int(X.bar_wait[slots[0]])) if at_barrier
                else f"looped there {seen} time(s)" if seen else "not yet run there")
        rows.append({"pc": prog.code_address(pc), "location": where, "warps": nwarps, "threads": nthreads,
                     "steps": seen, "at_barrier": at_barrier})
        if len(lines) < SHOWN_PCS:
            lines.append(f"pc 0x{prog.code_address(pc):x} at {where}: {nwarps} warp(s), {nthreads} thread(s) "
                         f"of {_blocks(X, slots)}, {what}")
    if len(groups) > SHOWN_PCS:
        lines.append(f"... and {len(groups) - SHOWN_PCS} more pcs")
    if groups:
        pc, _b, slots, _n, _s = groups[0]
        slot = int(slots[0])
    else:
        pc, slot = int(X.step_pc), None
    report = X._report(CUDBGException.CUDBG_EXCEPTION_NONE, message, pc, slot)
    report.hang = kind
    report.details["warps"] = lines
    report.details["where"] = rows
    return report
