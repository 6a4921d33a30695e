"""The differential launch mode (GPUDBG_DIFFERENTIAL=1): every launch runs
twice, interpreted and then natively, from the same state, and any
difference stops the program with a DifferentialMismatch naming the
kernel and the first differing byte, register or report.

The one idea: launch_grid hands the whole launch here (one line at its
top); each run is an ordinary launch_grid call on this thread with the
engine forced (engine.force), so every mechanism (waves, children of
dynamic parallelism, faults, printf) runs as it always does. Between the
runs differential_state.py puts memory and the launch-visible GPU state
back. The native run always compiles (no auto tier); with
GPUDBG_DIFFERENTIAL=full a third run compares the FULL variant (the one a
debugger gets for a kernel with a breakpoint in it or built with -G) too, =debugger that variant alone. The last run's effects
and result are the launch's.

Launches that cannot be compared run once, as usual, and are counted by
reason (`stats`, and one JSON line each in GPUDBG_DIFFERENTIAL_LOG):
a debugger attached or an analysis tool observing (they would see every
event twice), a kernel reading %clock/%globaltimer (they advance with the
engine's cycle count), taking a parameter's address (cvta.param) or
launching grids (dynamic parallelism): both allocate per run, at another
address the second time, a random schedule or GPUDBG_THREADS > 1 (another
legal interleaving per run), a cooperative launch (its grid workspace is
reallocated at another address), a program the native engine does not
compile or over MAX_INSTRUCTIONS, another grid or command running at the
same time (its writes would be undone), a first run stopped by the hang timeout,
Ctrl-C or the instruction budget (where the budget stops a kernel depends
on the engine's step size), and a later run stopped by the hang timeout.
While a differential launch runs, other launches wait for it and its
GPU's front end starts no command (a copy, memset or value write between
the runs would read as a difference). A kernel may wait for another
stream's work (a flag a copy or another kernel sets): when a run has gone
on for HOLD_PATIENCE_S while a command that could start waits behind the
hold (the job watch asks, check_held), the run stops (HeldBack), the
launch's state is put back and it runs once, uncompared, counted as
skipped; the hold ends at that run's first watch check, when its grid is
resident again, so the work it waits for starts beside it as on a GPU
(let go before, that work could start, run alone and finish first).
Host code writing managed or pinned memory while a kernel runs is not
held back.
"""
from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections import Counter

from gpudbg.sim.faults import HangKind, KernelFault
from gpudbg.sim.native import engine
from gpudbg.sim.native.differential_state import (DifferentialMismatch, GpuImage, MemoryImage, ResourceImage,
                                                  RunRecord, first_difference, unstored_registers)

ENV_DIFFERENTIAL = "GPUDBG_DIFFERENTIAL"
ENV_LOG = "GPUDBG_DIFFERENTIAL_LOG"
MAX_INSTRUCTIONS = 20000      # larger programs take LLVM minutes to compile: not compared
HOLD_PATIENCE_S = 2.0         # a compared run this long with held-back work waiting gives way (HeldBack)
_ON = {"1": "plain", "on": "plain", "yes": "plain", "true": "plain", "plain": "plain", "full": "full",
       "debugger": "debugger"}
# the runs of each mode, compared with the first
RUNS = {"plain": ("interp", "plain"), "full": ("interp", "plain", "full"), "debugger": ("interp", "full")}
_OFF = {"", "0", "off", "no", "false"}

stats: Counter = Counter()    # "compared", "skipped: <reason>", "mismatch"
_tls = threading.local()
_cv = threading.Condition()
_running = 0                  # launches running now, outside any differential one
_exclusive = False            # a differential launch is running


# gpu.differential_hold while a held-back launch runs again, uncompared: the
# hold ends at that run's first watch check (check_held), or with the launch
GIVE_WAY = "until the held-back launch is resident"


class HeldBack(Exception):
    """A compared run went on while a command the hold keeps from
    starting waited: the kernel may be waiting for it."""


def check_held(X, started: float, timeout: float | None = None) -> None:
    """The job watch's check while the GPU is held (every CHECK_STEPS
    steps of a wave): raise HeldBack once the launch has run
    HOLD_PATIENCE_S (since `started`), or a third of its hang timeout
    `timeout` when that is shorter (so that the work it waits for runs
    before the watch stops it), and the front end has a command that could
    start now but for the hold."""
    gpu = X.gpu
    if gpu.differential_hold is GIVE_WAY:     # a held-back launch's own run: resident now
        _release(gpu)
        return
    elapsed = time.monotonic() - started
    patience = HOLD_PATIENCE_S if timeout is None else min(HOLD_PATIENCE_S, timeout / 3)
    if elapsed < patience:
        return
    with gpu.cv:
        waiting = gpu.frontend.held_back()
    if waiting:
        raise HeldBack(f"the kernel ran {elapsed:.1f} s while another stream's command waited behind the "
                       f"hold (it may wait for that work)")


def mode() -> str | None:
    """None (off), "plain", "full" or "debugger", from GPUDBG_DIFFERENTIAL."""
    raw = os.environ.get(ENV_DIFFERENTIAL, "").strip().lower()
    if raw in _OFF:
        return None
    if raw not in _ON:
        raise engine.EngineError(f"{ENV_DIFFERENTIAL}={raw!r} is not a mode (choose 0, 1, full or debugger)")
    return _ON[raw]


def wanted(settings=None) -> bool:
    """Whether launch_grid must hand this launch to `launch` (the mode is
    on, or misspelt, and this thread is not already inside a launch); the
    variable as the launch settings hold it (sim/launch_settings.py:
    parsed once per change of the environment; `settings`: the caller's
    current ones, None to read them)."""
    if getattr(_tls, "depth", 0):
        return False
    if settings is None:
        from gpudbg.sim import launch_settings       # (it imports this module)
        settings = launch_settings.current()
    return settings.differential if settings is not None else requested()


def requested() -> bool:
    """GPUDBG_DIFFERENTIAL is on, or set to something that is not a mode
    (the launch then refuses, naming the variable)."""
    return os.environ.get(ENV_DIFFERENTIAL, "").strip().lower() not in _OFF


# what makes a kernel's values differ from run to run whatever the engine:
# clocks advance with the engine's cycle count, a parameter's generic
# address (cvta.param) is a copy allocated per wave (sim/param_window.py),
# a device-side launch's parameter buffer is allocated per launch
# (sim/device_runtime.py), each at another address in the second run
_VARYING = {"the kernel reads %clock or %globaltimer":
            re.compile(r"%(clock|clock_hi|clock64|globaltimer|globaltimer_lo|globaltimer_hi)\b"),
            "the kernel takes a parameter's address (cvta.param: a copy allocated per run)":
            re.compile(r"^cvta\.param\b"),
            "the kernel launches grids (dynamic parallelism: parameter buffers allocated per run)":
            re.compile(r"(GetParameterBuffer|LaunchDevice)\w*\b")}


def _varying(program, kernel: str) -> str | None:
    """Why the kernel or a function it may call reads a value that
    differs between two runs; None if nothing does."""
    cache = getattr(program, "differential_varying", None)
    if cache is None:
        cache = program.differential_varying = {}
    if kernel not in cache:
        reach = program.reachable(kernel)
        texts = [c.inst.text for c in program.code if c.function in reach]
        cache[kernel] = next((why for why, pattern in _VARYING.items()
                              if any(pattern.search(t) for t in texts)), None)
    return cache[kernel]


def _skip_reason(gpu, function, cooperative: bool) -> str | None:
    from gpudbg.sim import debug_port, instrument, schedule
    from gpudbg.sim.native import parallel
    program = function.program
    if debug_port.port_for(gpu) is not None:
        return "a debugger is attached"
    if instrument.active() is not None:
        return "an analysis tool observes the launch"
    varying = _varying(program, function.name)
    if varying is not None:
        return varying
    if schedule.for_launch() is not None:
        return "a random schedule (GPUDBG_SCHEDULE)"
    if parallel.host_threads() > 1:
        return "GPUDBG_THREADS > 1"
    if cooperative:
        return "a cooperative launch"
    if len(program.code) > MAX_INSTRUCTIONS:
        return f"the program has over {MAX_INSTRUCTIONS} instructions"
    return None


def _log(entry: dict) -> None:
    path = os.environ.get(ENV_LOG)
    if not path:
        return
    line = json.dumps({"pid": os.getpid(), **entry}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())          # one write of a short line: whole under O_APPEND
    finally:
        os.close(fd)


def _count(function, status: str) -> None:
    stats[status] += 1
    _log({"kernel": function.name, "status": status})


def launch(launch_grid, gpu, function, grid, block, shared_bytes: int, params: bytes, grid_id: int,
           observer=None, cooperative: bool = False, depth: int = 0, parent=None, cluster=None):
    """launch_grid's launch (same arguments) under both engines, compared;
    or run once, counted as skipped, when it cannot be compared. Returns
    the last run's LaunchStats."""
    global _running, _exclusive
    args = (grid, block, shared_bytes, params, grid_id, observer, cooperative, depth, parent, cluster)
    try:
        mode()
    except engine.EngineError as e:
        from gpudbg.sim.debug_port import LaunchAborted
        raise LaunchAborted(f"the launch of {function.name} was refused: {e}") from None
    try:
        reason = _skip_reason(gpu, function, cooperative)
    except ValueError:          # a bad setting: the launch itself refuses it with its message
        reason = "a launch setting is refused"
    with _cv:
        while _exclusive:
            _cv.wait()
        if reason is None and _running:
            reason = "another grid runs at the same time"
        exclusive = reason is None
        if exclusive:
            _exclusive = True
        else:
            _running += 1
    held = False
    try:
        if reason is None:
            reason = _hold(gpu)
            held = reason is None
        if reason is None:
            reason = _compile(function)
        if reason is not None:
            _count(function, f"skipped: {reason}")
            return _inside(launch_grid, gpu, function, args)
        try:
            return _differential(launch_grid, gpu, function, args)
        except HeldBack as e:
            # its state is back as it was: run it once as an ordinary
            # launch, beside the front end's other work and other launches.
            # The hold stays until that run's first watch check (check_held):
            # its grid is resident again by then, so the work it waits for
            # starts beside it, as it did beside the compared run; released
            # here, that work could start, run alone and finish first
            with gpu.cv:
                gpu.differential_hold = GIVE_WAY
            with _cv:
                _exclusive = exclusive = False
                _running += 1
                _cv.notify_all()
            _count(function, f"skipped: {e}")
            return _inside(launch_grid, gpu, function, args)
    finally:
        if held:
            _release(gpu)
        with _cv:
            if exclusive:
                _exclusive = False
            else:
                _running -= 1
            _cv.notify_all()


def _hold(gpu) -> str | None:
    """Stop the GPU's front end from starting commands (copies, memsets,
    other streams' launches would change memory between the runs); a
    reason when one is already running beside this launch."""
    from gpudbg.sim.engines import current_job
    frontend = getattr(gpu, "frontend", None)
    if frontend is None or not hasattr(gpu, "differential_hold"):
        return None
    mine = current_job()
    with gpu.cv:
        gpu.differential_hold = True
        others = [ch for ch, job in frontend.executing.items() if job is not mine]
        if others:
            gpu.differential_hold = False
            gpu.cv.notify_all()
            return "another command runs at the same time"
    return None


def _release(gpu) -> None:
    with gpu.cv:
        gpu.differential_hold = False
        gpu.cv.notify_all()


def _compile(function) -> str | None:
    """Compile the program now (as GPUDBG_ENGINE=native would); a reason
    when no native code came of it."""
    for name in RUNS[mode()][1:]:      # before the runs: a compile inside one counts against its hang timeout
        with engine.force("native", full=name == "full"):
            if not engine.mode_for(function.program, 1 << 30, debugger=False):
                return "the native engine compiled none of the program"
    return None


def _inside(launch_grid, gpu, function, args):
    _tls.depth = getattr(_tls, "depth", 0) + 1
    try:
        return launch_grid(gpu, function, *args)
    finally:
        _tls.depth -= 1


def _run(launch_grid, gpu, function, args, record: RunRecord):
    """One run with its engine forced, recording waves, printf and the outcome."""
    with gpu._printf_lock:
        kept, gpu.printf_buffer = gpu.printf_buffer, []
    _tls.record = record
    stats_ = None
    try:
        with engine.force("interp" if record.engine == "interp" else "native", full=record.engine == "full"):
            stats_ = _inside(launch_grid, gpu, function, args)
        record.work = stats_.thread_instructions
    except KernelFault as e:
        record.fault = str(e)
        record.error = e
    except BaseException as e:
        record.error = e
    finally:
        _tls.record = None
        with gpu._printf_lock:
            record.printf, gpu.printf_buffer = gpu.printf_buffer, kept
    return stats_


def _timed_out(error: BaseException | None) -> bool:
    if error is None:
        return False
    if not isinstance(error, KernelFault):
        return True            # aborted (context failed, reset, Ctrl-C): nothing to compare
    # where the instruction budget stops a kernel depends on the engine's
    # step size (a loop region runs many iterations per step), so a budget
    # fault is as little comparable as a timeout
    return getattr(error.report, "hang", None) in (HangKind.KERNEL_TIMEOUT, HangKind.INTERRUPTED,
                                                   HangKind.INSTRUCTION_BUDGET)


def _why(error: BaseException) -> str:
    hang = getattr(getattr(error, "report", None), "hang", None)
    return hang.value if hang is not None else type(error).__name__


def _differential(launch_grid, gpu, function, args):
    program = function.program
    state = GpuImage(gpu, program)
    image = MemoryImage.take(gpu.memory)
    resources = ResourceImage(gpu)
    runs = RUNS[mode()]
    ref = None
    result = None
    for i, name in enumerate(runs):
        if i:
            image.restore(ref.memory)
            resources.restore()
            state.restore()
        rec = RunRecord(name, None if name != "plain" else frozenset(
            range(len(program.reg_dtypes))) - unstored_registers(program))
        result = _run(launch_grid, gpu, function, args, rec)
        rec.memory = image.changed(gpu.memory)
        if isinstance(rec.error, HeldBack):
            image.restore(rec.memory)
            resources.restore()
            state.restore()
            raise rec.error
        if ref is None:
            ref = rec
            if _timed_out(rec.error):
                _count(function, f"skipped: the first run stopped ({_why(rec.error)})")
                raise rec.error
            continue
        # a later run stopped by the budget when the first was not counted
        # other work: compared (the reports differ); a timeout is the clock's
        if _timed_out(rec.error) and getattr(getattr(rec.error, "report", None), "hang", None) \
                is not HangKind.INSTRUCTION_BUDGET:
            _count(function, f"skipped: the {name} run stopped ({_why(rec.error)})")
            raise rec.error
        found = first_difference(function.name, program, ref, rec, image)
        if found is not None:
            stats["mismatch"] += 1
            _log({"kernel": function.name, "status": "mismatch", "engine": name, "message": found})
            print(f"gpudbg: differential launch mismatch: {found}", file=sys.stderr, flush=True)
            raise DifferentialMismatch(found)
    _count(function, "compared")
    with gpu._printf_lock:
        gpu.printf_buffer.extend(rec.printf)
    if rec.error is not None:
        raise rec.error
    return result


def wave_end(X) -> None:
    """launch_grid's per-wave hook: record the wave's registers when a
    differential run is recording (a thread-local test otherwise)."""
    record = getattr(_tls, "record", None)
    if record is not None:
        record.wave_end(X)


__all__ = ["DifferentialMismatch", "ENV_DIFFERENTIAL", "launch", "mode", "stats", "wanted", "wave_end"]
