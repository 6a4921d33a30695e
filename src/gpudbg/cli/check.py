"""`gpudbg check PROGRAM.py [args]`: a compute-sanitizer for the simulator.

The program runs exactly as under `gpudbg run` (the same run_host: runpy in
this process, escaped KernelFaultError plus the sticky fault left on every
device's context), so there is no second way of finding faults to keep in
step. What check adds is the verdict: every fault is printed as a
compute-sanitizer-style block, an `ERROR SUMMARY: N errors` line ends the
run, and the exit status is 1 when any device fault was found. The findings
can also be written as JSON, and an NVIDIA coredump can be taken at the
fault. The simulator already checks every access, so check has no
instrumentation of its own and finds nothing the simulator does not (no
race or initcheck tools); a host-side Python error is shown as such, not
counted as a device error.
"""
from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import os
import sys
import tempfile
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Iterator

PREFIX = "========="
BAD_USAGE = 2
COREDUMP_ENV = "GPUDBG_COREDUMP_ON_EXCEPTION"
COREDUMP_FILE_ENV = "GPUDBG_COREDUMP_FILE"


class FindingKind(enum.Enum):
    """What a finding is; the `finding` field of the JSON."""

    KERNEL_FAULT = "kernel_fault"   # a CUDBG exception, precise to the lane
    KERNEL_HANG = "kernel_hang"     # a barrier deadlock or an exhausted instruction budget
    DEVICE_ERROR = "device_error"   # a sticky context error with no FaultReport (e.g. a watchdog hang)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="FILE",
                        help="also write the findings as a JSON list to FILE (atomically)")
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


def finding_kind(fault: Any) -> FindingKind:
    if fault.report is None:
        return FindingKind.DEVICE_ERROR
    return FindingKind.KERNEL_HANG if fault.report.hang is not None else FindingKind.KERNEL_FAULT


def _plain(value: Any) -> Any:
    """A JSON-friendly copy: enums by name (CUDBG codes) or value (text
    enums), tuples as lists, numpy scalars as Python numbers."""
    if isinstance(value, enum.Enum):
        return value.value if isinstance(value.value, str) else value.name
    if isinstance(value, (str, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (int, float)):
        return value
    if hasattr(value, "item"):   # numpy scalar
        return _plain(value.item())
    return str(value)


def finding_dict(fault: Any, program: str) -> dict[str, Any]:
    """One finding: the program, the finding kind, where it came from, and
    every FaultReport field (the dataclass's own list, so new fields follow)."""
    out: dict[str, Any] = {"program": program, "finding": finding_kind(fault).value,
                           "origin": fault.origin.value, "device": fault.device}
    report = fault.report
    if report is None:
        out["message"] = fault.message
        return out
    for f in dataclasses.fields(report):
        out[f.name] = _plain(getattr(report, f.name))
    out["kind_code"] = int(report.kind)
    out["title"] = report.title
    return out


def write_json_atomically(path: str, payload: Any) -> None:
    """A temp file beside the target, then rename: readers never see half a file."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(payload, f, indent=2)
            f.write("\n")
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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
    if run.status not in (0, 1) or (run.status == 1 and not run.fault_count):
        return f"{PREFIX} Target application returned an error (exit status {run.status})"
    return None


def check_program(program: str, args: list[str], json_file: str | None = None) -> int:
    """Run and report; the exit status: 1 for device faults, else the program's."""
    from gpudbg.cli.run import run_host

    if not os.path.isfile(program):
        print(f"gpudbg check: {program}: no such file", file=sys.stderr)
        return BAD_USAGE
    _show(f"{PREFIX} GPUDBG CHECK")
    shown = 0

    def on_fault(fault: Any) -> None:
        nonlocal shown
        if shown:
            _show(PREFIX)
        _show(format_fault(fault))
        shown += 1

    run = run_host(program, args, on_fault, tool="check")
    line = _host_error_line(run)
    if line is not None:
        _show(line)
    _show(summary_line(run.fault_count))
    if json_file is not None:
        write_json_atomically(json_file, [finding_dict(f, program) for f in run.faults] + run.findings)
    return run.status


def _json_target_problem(path: str) -> str | None:
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        return f"{path} is a directory"
    if not directory.is_dir():
        return f"directory {directory} does not exist"
    if not os.access(directory, os.W_OK):
        return f"directory {directory} is not writable"
    return None


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
    if args.json is not None:
        problem = _json_target_problem(args.json)
        if problem is not None:
            print(f"gpudbg check: --json: {problem}", file=sys.stderr)
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
            return check_program(args.program, list(args.args), args.json)
    finally:
        if args.devcoredump is not None:
            from gpudbg.dump.devcoredump.capture import disable
            disable()
