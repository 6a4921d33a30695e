"""`gpudbg check PROGRAM [args]`: compute-sanitizer for the simulator.

The program runs exactly as under `gpudbg run` (the same run_host: runpy in
this process, or a native executable in a child with the drop-in
libraries), so there is one way of finding device faults: the simulator's
own precise checks, which are memcheck's core. What check adds:
- the tools of compute-sanitizer's interface (--tool memcheck|racecheck|
  initcheck|synccheck) and its host-side checks (API errors, double and
  invalid frees, --leak-check), as a sanitizer session (gpudbg.sanitizer)
  installed for the run, or in the native program's process through
  GPUDBG_CHECK_CONFIG;
- the verdict: every fault and finding printed as a compute-sanitizer
  block up to --print-limit, an `ERROR SUMMARY: N errors` line, exit
  status 1 (or --error-exitcode) when any error was found;
- the findings as JSON or XML (check_output.py), a coredump at the fault.
A host-side Python error is shown as such, not counted as a device error.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from gpudbg.cli.check_output import (  # noqa: F401  (finding_dict etc. are this module's API too)
    CHECK_JSON_SCHEMA, FindingKind, errors_in, faulting_threads, finding_dict, finding_kind,
    target_problem, write_json_atomically, write_xml_atomically,
)
from gpudbg.sanitizer.config import DEFAULT_PRINT_LIMIT, ApiErrors, CheckConfig, Schedule
from gpudbg.sanitizer.findings import ToolName

PREFIX = "========="
BAD_USAGE = 2
COREDUMP_ENV = "GPUDBG_COREDUMP_ON_EXCEPTION"
COREDUMP_FILE_ENV = "GPUDBG_COREDUMP_FILE"
_YES_NO = {"yes": True, "no": False}


def _non_negative(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} must not be negative")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tool", choices=[t.value for t in ToolName], default=ToolName.MEMCHECK.value,
                        help="memcheck (default: faults, use after free, API errors), racecheck "
                             "(shared-memory hazards and cross-block global races), initcheck "
                             "(reads of uninitialized memory), synccheck (barrier and warp-sync misuse)")
    parser.add_argument("--leak-check", choices=["full", "no"], default="no",
                        help="report device memory never freed, with its allocation site (memcheck)")
    parser.add_argument("--report-api-errors", choices=[a.value for a in ApiErrors],
                        default=ApiErrors.EXPLICIT.value, help="report failing API calls (default explicit)")
    parser.add_argument("--print-limit", type=_non_negative, default=DEFAULT_PRINT_LIMIT, metavar="N",
                        help=f"print at most N errors (default {DEFAULT_PRINT_LIMIT}; 0: no limit); "
                             "all are counted")
    parser.add_argument("--error-exitcode", type=_non_negative, default=None, metavar="N",
                        help="exit with N when any error was found (default 1)")
    parser.add_argument("--show-backtrace", choices=["yes", "no", "host", "device"], default="yes",
                        help="print the host call site of each finding (yes/host) or not")
    parser.add_argument("--track-unused-memory", action="store_true",
                        help="initcheck: warn about allocated bytes never written")
    parser.add_argument("--racecheck-global", choices=["yes", "no"], default="yes",
                        help="racecheck: also races between blocks in global memory (default yes)")
    parser.add_argument("--schedule", choices=[s.value for s in Schedule], default=None,
                        help="thread schedule: lowest-pc (deterministic, the default unless "
                             "GPUDBG_SCHEDULE says otherwise) or random (warps interleaved at random "
                             "each step, reproducible with --seed)")
    parser.add_argument("--seed", type=_non_negative, default=0, metavar="N",
                        help="seed of --schedule random")
    parser.add_argument("--json", metavar="FILE",
                        help="also write the findings as a JSON list to FILE (atomically)")
    parser.add_argument("--xml", metavar="FILE", help="also write the findings as XML to FILE (atomically)")
    parser.add_argument("--coredump", action="store_true",
                        help="write an NVIDIA GPU coredump (.nvcudmp) when a kernel faults "
                             f"(as {COREDUMP_ENV}=1)")
    parser.add_argument("--coredump-file", metavar="PATTERN",
                        help=f"coredump file name, %%p pid, %%t time, %%h host (as {COREDUMP_FILE_ENV}); "
                             "implies --coredump")
    parser.add_argument("--devcoredump", metavar="DIR",
                        help="write a GPU devcoredump into DIR when a kernel faults or hangs "
                             "(as GPUDBG_DEVCOREDUMP_DIR)")
    parser.add_argument("program", help="the host program to check: a Python script (gpudbg's API, "
                                        "numba-cuda, cuda-python) or a native CUDA executable")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")


def config_from(args: argparse.Namespace) -> CheckConfig:
    return CheckConfig(tool=ToolName(args.tool), leak_check=args.leak_check == "full",
                       report_api_errors=ApiErrors(args.report_api_errors), print_limit=args.print_limit,
                       error_exitcode=args.error_exitcode,
                       show_backtrace=args.show_backtrace in ("yes", "host"),
                       schedule=Schedule(args.schedule) if args.schedule else None, seed=args.seed,
                       track_unused_memory=args.track_unused_memory,
                       racecheck_global=_YES_NO[args.racecheck_global])


def format_fault(fault: Any) -> str:
    """The compute-sanitizer-style block for one fault, dump paths included."""
    from gpudbg.cli.run import format_report

    if fault.report is None:
        return (f"{PREFIX} Device error on device {fault.device}\n"
                f"{PREFIX}     {fault.message}")
    text = format_report(fault.report)
    details = fault.report.details
    for key, label in (("coredump", "coredump written to"), ("coredump_error", "coredump failed:"),
                       ("devcoredump", "devcoredump written to"),
                       ("devcoredump_error", "devcoredump failed:")):
        if details.get(key):
            text += f"\n{PREFIX}     {label} {details[key]}"
    return text


def summary_line(errors: int) -> str:
    return f"{PREFIX} ERROR SUMMARY: {errors} error{'' if errors == 1 else 's'}"


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Set variables for the run only: the program runs in this process."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _show(text: str) -> None:
    sys.stderr.flush()
    print(text, flush=True)


def _host_error_line(run: Any) -> str | None:
    if run.error is not None:
        what = type(run.error).__name__ + (f": {run.error}" if str(run.error) else "")
        if run.fault_count:
            return f"{PREFIX} Target application raised {what} (after the device fault above)"
        return f"{PREFIX} Target application raised {what}: a host (Python) error, not a device fault"
    if run.status not in (0, 1, 130) or (run.status == 1 and not run.fault_count):
        return f"{PREFIX} Target application returned an error (exit status {run.status})"
    return None


def check_program(program: str, args: list[str], json_file: str | None = None,
                  config: CheckConfig | None = None, xml_file: str | None = None) -> int:
    """Run under the configured tool and report; the exit status: the
    program's, or 1 (--error-exitcode) when any error was found."""
    from gpudbg.cli import native
    from gpudbg.cli.run import run_host
    from gpudbg.sanitizer.report import Reporter
    from gpudbg.sanitizer.session import SanitizerSession

    config = config or CheckConfig()
    if not os.path.isfile(program):
        print(f"gpudbg check: {program}: no such file", file=sys.stderr)
        return BAD_USAGE
    tool = "" if config.tool is ToolName.MEMCHECK else f" ({config.tool.value})"
    _show(f"{PREFIX} GPUDBG CHECK{tool}")
    reporter = Reporter(config.print_limit, config.show_backtrace, write=_show)

    def on_fault(fault: Any) -> None:
        if reporter.count_fault(faulting_threads(fault.report)):
            _show((PREFIX + "\n" if reporter.printed > 1 else "") + format_fault(fault))

    session = None
    if not native.is_native(program):
        session = SanitizerSession(config, reporter).start()
    try:
        with _environment({native.CHECK_CONFIG_ENV: config.to_json()}):
            run = run_host(program, args, on_fault, tool="check")
    finally:
        if session is not None:
            gc.collect()            # the program's objects that free device memory when collected
            session.finish()
    line = _host_error_line(run)
    if line is not None:
        _show(line)
    native_errors = sum(errors_in(row) for row in run.findings)
    total = reporter.errors + native_errors
    rows = [finding_dict(f, program) for f in run.faults] + run.findings + \
        [f.as_dict() for f in reporter.findings]
    if config.tool is ToolName.RACECHECK:
        races = [r for r in rows if r.get("tool") == "racecheck"]
        shown = len(races)
        bad = sum(1 for r in races if r.get("severity") == "error")
        _show(f"{PREFIX} RACECHECK SUMMARY: {shown} hazard{'' if shown == 1 else 's'} displayed "
              f"({bad} error{'' if bad == 1 else 's'}, {shown - bad} warning{'' if shown - bad == 1 else 's'})")
    for text in reporter.summary_lines(native_errors):
        _show(text)
    if json_file is not None:
        write_json_atomically(json_file, rows)
    if xml_file is not None:
        write_xml_atomically(xml_file, rows, program)
    if run.interrupted:
        return run.status          # 130: Ctrl-C, after the report of where the kernels were
    if total:
        return config.error_exitcode if config.error_exitcode is not None else 1
    return run.status


def execute(args: argparse.Namespace) -> int:
    env: dict[str, str] = {}
    if args.coredump or args.coredump_file is not None:
        env[COREDUMP_ENV] = "1"
    if args.coredump_file is not None:
        from gpudbg.dump.coredump import expand_pattern
        try:
            expand_pattern(args.coredump_file)
        except ValueError as e:
            print(f"gpudbg check: --coredump-file: {e}", file=sys.stderr)
            return BAD_USAGE
        env[COREDUMP_FILE_ENV] = args.coredump_file
    for option, path in (("--json", args.json), ("--xml", args.xml)):
        problem = target_problem(path) if path is not None else None
        if problem is not None:
            print(f"gpudbg check: {option}: {problem}", file=sys.stderr)
            return BAD_USAGE
    if args.devcoredump is not None:
        from gpudbg.dump.devcoredump.capture import DevcoredumpConfigError, enable
        try:
            enable(args.devcoredump)
        except DevcoredumpConfigError as e:
            print(f"gpudbg check: --devcoredump: {e}", file=sys.stderr)
            return BAD_USAGE
    try:
        with _environment(env):
            return check_program(args.program, list(args.args), args.json, config_from(args), args.xml)
    finally:
        if args.devcoredump is not None:
            from gpudbg.dump.devcoredump.capture import disable
            disable()
