"""`gpudbg ptx-census`: which PTX opcodes and forms the simulator's loader
accepts (derived from the op registry, sim/census.py), and with FILEs,
which of their instructions it rejects and why.

Exit status: 0 when every instruction of every FILE is accepted (or no
FILE was given), 1 when some are rejected or a FILE does not parse, 2 for
a FILE that cannot be read.
"""
from __future__ import annotations

import argparse
import json
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", metavar="FILE.ptx",
                   help="PTX files to check instruction by instruction (without: list what is accepted)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def execute(args: argparse.Namespace) -> int:
    from gpudbg.sim import census
    if not args.files:
        entries = census.accepted()
        if args.json:
            print(json.dumps({"ignorable_modifiers": census.ignorable(),
                              "opcodes": [e.as_dict() for e in entries]}, indent=1))
        else:
            print(census.format_accepted(entries))
        return 0
    results = []
    for path in args.files:
        try:
            results.append(census.check_file(path))
        except OSError as e:
            print(f"gpudbg ptx-census: cannot read {path}: {e.strerror or e}", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=1))
    else:
        print("\n".join(census.format_file(r) for r in results))
    return 0 if all(r.error is None and not r.rejected for r in results) else 1
