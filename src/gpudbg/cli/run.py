"""`gpudbg run PROGRAM.py [args]`: run a host program, report kernel faults.

The program runs in this process with runpy, exactly as `python PROGRAM.py`
would run it (sys.argv, sys.path[0], __name__ == "__main__"), because the
simulated GPU lives in the process that uses it. What this adds is the end
of the story a real GPU tells badly: a fault that escaped as
KernelFaultError, or one left behind as a sticky context error (the program
caught it, or never synchronized), is printed as the simulator's precise
FaultReport and turns into exit status 1. It does not trace or sanitize
anything the simulator does not already check.

Kernels that never finish: run_host says at the start how long a kernel may
run (GPUDBG_HANG_TIMEOUT, sim/kernel_watch.py) and refuses settings that a
launch would refuse; Ctrl-C cancels the running kernels and ends the run
with their report and exit status 130, a second Ctrl-C at once
(cli/interrupt.py).
"""
from __future__ import annotations

import argparse
import enum
import os
import runpy
import signal
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from gpudbg.dump import dump_notes

FAULT_EXIT = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--devcoredump", metavar="DIR",
                        help="write a GPU devcoredump into DIR when a kernel faults or hangs "
                             "(as GPUDBG_DEVCOREDUMP_DIR)")
    parser.add_argument("program", help="the host program to run: a Python script (gpudbg's API, "
                                        "numba-cuda, cuda-python) or a native CUDA executable")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")


def exit_status(code: Any) -> int:
    """What the interpreter would exit with for SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def print_traceback(exc: BaseException, runner: str = __name__) -> None:
    """The traceback without the frames of runpy and of the module that
    ran the program (`runner`)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in ("runpy", runner):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)


def format_report(report: Any) -> str:
    """FaultReport.format(), plus the source line it points at when known."""
    from gpudbg.compiler import source_line

    lines = report.format().split("\n")
    if report.source_file and report.source_line:
        code = source_line(report.source_file, report.source_line)
        if code is not None:   # under the instruction, above where it was launched from
            at = next((i + 1 for i, ln in enumerate(lines) if ln.startswith("=========     at pc ")), len(lines))
            lines.insert(at, f"=========     {report.source_line:>5} | {code.rstrip()}")
    text = "\n".join(lines)
    warps = report.details.get("warps") if report.hang is not None else None
    if warps:   # a kernel stopped while running: where every warp was
        text += "\n=========     where the warps were:"
        text += "".join(f"\n=========       {line}" for line in warps)
    return text


def _print_report(report: Any, fallback: str) -> None:
    sys.stdout.flush()
    text = format_report(report) + dump_notes(report.details) if report is not None else fallback
    print(text, file=sys.stderr)
    sys.stderr.flush()


class FaultOrigin(enum.Enum):
    """How a device fault reached the end of the program."""

    RAISED = "raised"   # escaped the program as KernelFaultError
    STICKY = "sticky"   # left on a context: caught by the program, or never synchronized


@dataclass
class DeviceFault:
    """One context's fault: the FaultReport, or only the driver's error text
    when the front end had no lane to blame (a hang caught by the watchdog)."""

    report: Any
    message: str
    origin: FaultOrigin
    device: int | None


@dataclass
class HostRun:
    """What running a program produced. `status` is already the exit status
    gpudbg returns; `error` is the program's own uncaught exception (not
    SystemExit, not a kernel fault)."""

    status: int
    faults: list[DeviceFault] = field(default_factory=list)
    error: BaseException | None = None
    # a native program's findings (JSON rows), already printed by the program's process
    findings: list[dict[str, Any]] = field(default_factory=list)
    # Ctrl-C ended the run (status 130): running kernels were stopped and reported
    interrupted: bool = False

    @property
    def fault_count(self) -> int:
        return len(self.faults) + len(self.findings)


def _device_of(report: Any) -> int | None:
    """The ordinal of the device whose context holds `report`."""
    from gpudbg.driver.engine import get_engine

    engine = get_engine()
    if report is None or not engine.initialized:
        return None
    for dev in engine.devices:
        if dev.primary is not None and dev.primary.fault_report is report:
            return dev.ordinal
    return None


def sticky_faults(since: int = 0) -> list[DeviceFault]:
    """The fault of every device whose context holds a sticky error, after
    waiting for its outstanding work (which may be what faults), and the
    faults of contexts destroyed since entry `since` of the engine's fault
    log (a program that reset its device after a fault).

    Devices without a context are not touched: checking must not create one.
    """
    from gpudbg.driver.engine import get_engine
    from gpudbg.runtime import mc
    from gpudbg.runtime.errors import from_status, mcError_t

    engine = get_engine()
    if not engine.initialized:
        return []
    faults = []
    err, previous = mc.mcGetDevice()
    for dev in list(engine.devices):
        ctx = dev.primary
        if ctx is None or ctx.destroyed:
            continue
        mc.mcSetDevice(dev.ordinal)
        err_sync, = mc.mcDeviceSynchronize()   # also delivers pending device printf
        if err_sync != mcError_t.mcSuccess:
            faults.append(DeviceFault(mc.fault_report(), f"{err_sync.name}: {mc.last_error_message()}",
                                      FaultOrigin.STICKY, dev.ordinal))
    if err == 0:
        mc.mcSetDevice(previous)
    for ctx, error in list(engine.fault_log)[since:]:   # contexts destroyed after a fault
        if ctx.destroyed:
            faults.append(DeviceFault(ctx.fault_report, f"{from_status(error.status).name}: {error.message} "
                                      f"(the context was destroyed since)", FaultOrigin.STICKY,
                                      ctx.device.ordinal))
    return faults


def _fault_log_length() -> int:
    from gpudbg.driver.engine import get_engine
    return len(get_engine().fault_log)


def settings_problem() -> str | None:
    """What is wrong with the environment's kernel settings (hang timeout,
    instruction budget, schedule), in words; None when a launch accepts them."""
    from gpudbg.sim import kernel_watch, schedule

    try:
        kernel_watch.check_environment()
        schedule.from_environment()
    except ValueError as e:
        return str(e)
    return None


def announce_timeout() -> None:
    """The one line saying how long a kernel may run."""
    from gpudbg.driver.watchdog import ENV_TIMEOUT, hang_timeout

    limit = hang_timeout()
    if limit is None:
        print(f"gpudbg: kernels may run for any time ({ENV_TIMEOUT} is off)", file=sys.stderr)
    else:
        print(f"gpudbg: kernels that run longer than {limit:g} s are stopped ({ENV_TIMEOUT})", file=sys.stderr)
    sys.stderr.flush()


def _where_interrupted(exc: BaseException, program: str) -> str:
    """'prog.py:12 in main': the program's innermost frame when Ctrl-C came."""
    frames = traceback.extract_tb(exc.__traceback__)
    target = os.path.abspath(program)
    mine = [f for f in frames if os.path.abspath(f.filename) == target] or frames
    if not mine:
        return "the program"
    f = mine[-1]
    return f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}"


def run_host(program: str, args: list[str], on_fault: Callable[[DeviceFault], None],
             tool: str = "run") -> HostRun:
    """Run `program` with `args` in this process; call `on_fault` for each
    device fault as it is found (the escaped one first, then sticky ones)."""
    from gpudbg.cli import native

    if not os.path.isfile(program):
        print(f"gpudbg {tool}: {program}: no such file", file=sys.stderr)
        return HostRun(2)
    problem = settings_problem()
    if problem is not None:
        print(f"gpudbg {tool}: {problem}", file=sys.stderr)
        return HostRun(2)
    announce_timeout()
    if native.is_native(program):
        status, findings = native.run_native(program, args, tool)
        # a child ended by a signal (130: Ctrl-C) keeps that status
        return HostRun(FAULT_EXIT if findings and status < 128 else status, findings=findings,
                       interrupted=status == 128 + signal.SIGINT)
    return _run_python(program, args, on_fault, tool)


def _run_python(program: str, args: list[str], on_fault: Callable[[DeviceFault], None], tool: str) -> HostRun:
    from gpudbg.api.errors import KernelFaultError
    from gpudbg.cli import native
    from gpudbg.cli.interrupt import EXIT_STATUS, Interrupts

    problem = native.preload_driver()
    if problem is not None:
        print(f"gpudbg {tool}: {problem}", file=sys.stderr)
    log_start = _fault_log_length()
    saved_argv, saved_path = sys.argv, sys.path[:]
    sys.argv = [program, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    run = HostRun(0)
    with Interrupts() as interrupts:
        try:
            runpy.run_path(program, run_name="__main__")
        except SystemExit as e:
            run.status = exit_status(e.code)
        except KernelFaultError as e:
            fault = DeviceFault(e.report, str(e), FaultOrigin.RAISED, _device_of(e.report))
            run.faults.append(fault)
            on_fault(fault)
            run.status = FAULT_EXIT
        except KeyboardInterrupt as e:
            if not interrupts.interrupted:   # raised by the program itself: shown as Python would
                print_traceback(e)
            else:
                sys.stdout.flush()
                print(f"gpudbg {tool}: interrupted (Ctrl-C) at {_where_interrupted(e, program)}; "
                      f"running kernels are stopped", file=sys.stderr, flush=True)
            run.status = EXIT_STATUS
        except BaseException as e:  # the program's own error, shown as Python would
            print_traceback(e)
            run.error = e
            run.status = 1
        finally:
            sys.argv, sys.path[:] = saved_argv, saved_path
            sys.stdout.flush()
        interrupts.keep_until_done()
        raised = [f.report for f in run.faults if f.report is not None]
        for fault in sticky_faults(log_start):
            if any(fault.report is r for r in raised):
                continue
            run.faults.append(fault)
            on_fault(fault)
            run.status = FAULT_EXIT
        if interrupts.interrupted:
            run.status = EXIT_STATUS
            run.interrupted = True
    return run


def print_fault(fault: DeviceFault) -> None:
    if fault.report is None and fault.origin is FaultOrigin.STICKY:
        _print_report(None, f"gpudbg: device {fault.device}: {fault.message}")
    else:
        _print_report(fault.report, fault.message)


def run_program(program: str, args: list[str]) -> int:
    """Run `program` with `args`; the exit status gpudbg should return."""
    return run_host(program, args, print_fault).status


def execute(args: argparse.Namespace) -> int:
    if args.devcoredump is not None:
        from gpudbg.dump.devcoredump.capture import DevcoredumpConfigError, enable
        try:
            enable(args.devcoredump)
        except DevcoredumpConfigError as e:
            print(f"gpudbg run: --devcoredump: {e}", file=sys.stderr)
            return 2
    return run_program(args.program, list(args.args))
