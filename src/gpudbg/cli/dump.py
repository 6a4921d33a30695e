"""`gpudbg dump show FILE [--json] [--packets N]`: explain a GPU devcoredump.

Reads a drm/msm devcoredump (from a real Adreno or written by our
simulator) and prints the analyzer's summary: device, process, time, the
fault and the buffer it hit, each ring's fences and pointers, and the
commands around rptr. The parse is the whole validation: a damaged file is
reported as `FILE: line N: problem` with exit status 2, never a traceback.
It does not write dumps; the driver does that when work faults or hangs.
"""
from __future__ import annotations

import argparse
import json
import sys

BAD_INPUT = 2


def _count(text: str) -> int:
    n = int(text)
    if n < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return n


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="dump_command", metavar="ACTION", required=True)
    show = sub.add_parser("show", help="summarize a devcoredump file",
                          description="Summarize a drm/msm-format devcoredump file.")
    show.add_argument("file", help="the devcoredump (e.g. a copy of /sys/class/devcoredump/devcdN/data)")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.add_argument("--packets", type=_count, default=16, metavar="N",
                      help="commands to decode before rptr (default 16)")


def execute(args: argparse.Namespace) -> int:
    from gpudbg.dump.devcoredump import DevcoredumpError, parse_file
    from gpudbg.dump.devcoredump.analyzer import analyze, to_dict
    from gpudbg.dump.devcoredump.report import format_text

    try:
        dump = parse_file(args.file)
    except DevcoredumpError as exc:
        print(f"gpudbg dump: {args.file}: {exc}", file=sys.stderr)
        return BAD_INPUT
    except OSError as exc:
        print(f"gpudbg dump: {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return BAD_INPUT
    summary = analyze(dump, packets=args.packets)
    if args.json:
        json.dump(to_dict(summary), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_text(summary, title=args.file))
    return 0
