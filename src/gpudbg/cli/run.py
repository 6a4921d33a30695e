"""`gpudbg run PROGRAM.py [args]`: run a host program, report kernel faults.

The program runs in this process with runpy, exactly as `python PROGRAM.py`
would run it (sys.argv, sys.path[0], __name__ == "__main__"), because the
simulated GPU lives in the process that uses it. What this adds is the end
of the story a real GPU tells badly: a fault that escaped as
KernelFaultError, or one left behind as a sticky context error (the program
caught it, or never synchronized), is printed as the simulator's precise
FaultReport and turns into exit status 1. It does not trace or sanitize
anything the simulator does not already check.
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from typing import Any

FAULT_EXIT = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--devcoredump", metavar="DIR",
                        help="write a GPU devcoredump into DIR when a kernel faults or hangs "
                             "(as GPUDBG_DEVCOREDUMP_DIR)")
    parser.add_argument("program", help="the Python host program to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")


def _exit_status(code: Any) -> int:
    """What the interpreter would exit with for SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _print_traceback(exc: BaseException) -> None:
    """The traceback without the frames of runpy and of this module."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in ("runpy", __name__):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)


def format_report(report: Any) -> str:
    """FaultReport.format(), plus the source line it points at when known."""
    from gpudbg.compiler import source_line

    text = report.format()
    if report.source_file and report.source_line:
        code = source_line(report.source_file, report.source_line)
        if code is not None:
            text += f"\n=========     {report.source_line:>5} | {code.rstrip()}"
    return text


def _print_report(report: Any, fallback: str) -> None:
    sys.stdout.flush()
    text = format_report(report) if report is not None else fallback
    print(text, file=sys.stderr)
    sys.stderr.flush()


def leftover_faults() -> list[Any]:
    """Fault reports of every device whose context holds a sticky fault,
    after waiting for its outstanding work (which may be what faults).

    Devices without a context are not touched: checking must not create one.
    """
    from gpudbg.driver.engine import get_engine
    from gpudbg.runtime import mc
    from gpudbg.runtime.errors import mcError_t

    engine = get_engine()
    if not engine.initialized:
        return []
    reports = []
    err, previous = mc.mcGetDevice()
    for dev in list(engine.devices):
        ctx = dev.primary
        if ctx is None or ctx.destroyed:
            continue
        mc.mcSetDevice(dev.ordinal)
        err_sync, = mc.mcDeviceSynchronize()   # also delivers pending device printf
        if err_sync != mcError_t.mcSuccess:
            report = mc.fault_report()
            reports.append(report if report is not None else
                           f"device {dev.ordinal}: {err_sync.name}: {mc.last_error_message()}")
    if err == 0:
        mc.mcSetDevice(previous)
    return reports


def run_program(program: str, args: list[str]) -> int:
    """Run `program` with `args`; the exit status gpudbg should return."""
    from gpudbg.api.errors import KernelFaultError

    if not os.path.isfile(program):
        print(f"gpudbg run: {program}: no such file", file=sys.stderr)
        return 2
    saved_argv, saved_path = sys.argv, sys.path[:]
    sys.argv = [program, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    status = 0
    reported: Any = None
    try:
        runpy.run_path(program, run_name="__main__")
    except SystemExit as e:
        status = _exit_status(e.code)
    except KernelFaultError as e:
        reported = e.report
        _print_report(e.report, str(e))
        status = FAULT_EXIT
    except KeyboardInterrupt as e:
        _print_traceback(e)
        status = 130
    except BaseException as e:  # the program's own error, shown as Python would
        _print_traceback(e)
        status = 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        sys.stdout.flush()
    for report in leftover_faults():
        if report is reported:
            continue
        _print_report(report if hasattr(report, "format") else None, f"gpudbg: {report}")
        status = FAULT_EXIT
    return status


def execute(args: argparse.Namespace) -> int:
    if args.devcoredump is not None:
        from gpudbg.dump.devcoredump.capture import DevcoredumpConfigError, enable
        try:
            enable(args.devcoredump)
        except DevcoredumpConfigError as e:
            print(f"gpudbg run: --devcoredump: {e}", file=sys.stderr)
            return 2
    return run_program(args.program, list(args.args))
