"""`gpudbg debug PROGRAM [args]`: cuda-gdb for a Python host program or a
native (nvcc-built, `-cudart shared`) executable on the simulated GPU.

gdb's command line: `-ex CMD` (repeatable) runs commands first, `-x FILE`
runs a command file, `--batch` exits after them (killing a program still
stopped) instead of entering the `(cuda-gdb) ` prompt. The program is not
started until `run`, so breakpoints can be set before its kernels exist.
The whole debugger is in gpudbg.cli.debugger; this module only wires the
command line to it. A native executable is debugged from inside its own
process: gpudbg replaces itself with the program, whose embedded gpudbg
runs the debugger (gpudbg.cli.debugger.native_inferior).
"""
from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_session_arguments(parser)
    parser.add_argument("program", help="the Python host program or native executable to debug")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    """The gdb options `debug` and `core` share."""
    parser.add_argument("-ex", "--eval-command", dest="commands", action="append", default=[],
                        metavar="CMD", help="run debugger command CMD (may be repeated)")
    parser.add_argument("-x", "--command", dest="command_files", action="append", default=[],
                        metavar="FILE", help="run the debugger commands in FILE")
    parser.add_argument("--batch", action="store_true",
                        help="exit after the -ex/-x commands instead of prompting")


def command_lines(args: argparse.Namespace) -> list[str]:
    lines: list[str] = []
    for path in args.command_files:
        try:
            with open(path) as f:
                lines += [ln.rstrip("\n") for ln in f]
        except OSError as e:
            raise SystemExit(f"gpudbg: {path}: {e.strerror}")
    return lines + list(args.commands)


def drive(dbg, args: argparse.Namespace) -> int:
    """Run the -x/-ex commands, then the prompt (unless --batch); close."""
    from gpudbg.cli.debugger.debugger import run_lines
    from gpudbg.cli.debugger.repl import reader_for

    try:
        pending = command_lines(args)
    except SystemExit as e:
        print(e.code, file=sys.stderr)
        return 2
    status = 0
    try:
        for line in pending:
            if dbg.quit_requested:
                break
            dbg.execute(line)
        if not args.batch and not dbg.quit_requested:
            run_lines(dbg, reader_for(dbg.table.vocabulary()))
        status = 1 if args.batch and dbg.last_error else 0
    finally:
        dbg.close()
        sys.stdout.flush()
    return status


def execute(args: argparse.Namespace) -> int:
    import os

    from gpudbg.cli.debugger.debugger import Debugger

    if not os.path.isfile(args.program):
        print(f"gpudbg debug: {args.program}: No such file or directory.", file=sys.stderr)
        return 2
    from gpudbg.cli import native
    if native.is_native(args.program):
        from gpudbg.cli.debugger.native_inferior import exec_native
        try:
            lines = command_lines(args)
        except SystemExit as e:
            print(e.code, file=sys.stderr)
            return 2
        return exec_native(args, lines)
    dbg = Debugger(args.program, list(args.args))
    dbg.open()
    return drive(dbg, args)
