"""The `gpudbg` command: one argparse parser, one module per subcommand.

main() only dispatches. Each subcommand module exposes `add_arguments(parser)`
and `execute(args) -> int` and is listed in SUBCOMMANDS, so adding `debug`,
`check`, `core` or `dump` is one entry plus one module. Subcommand modules import the
simulator and driver only inside execute(), keeping `gpudbg --help` fast.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

# name -> (module under gpudbg.cli, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "run": ("gpudbg.cli.run", "run a Python host program on the simulated GPU; report kernel faults"),
    "check": ("gpudbg.cli.check", "run a host program and report every kernel fault, "
                                  "compute-sanitizer style; exit 1 on any"),
    "dump": ("gpudbg.cli.dump", "read GPU devcoredumps (drm/msm format): `dump show FILE`"),
    "debug": ("gpudbg.cli.debug", "debug a host program's kernels, cuda-gdb style: "
                                  "`debug [--batch] [-ex CMD]... PROGRAM [args]`"),
    "core": ("gpudbg.cli.core", "open a GPU coredump in the debugger: `core FILE`"),
    "dap": ("gpudbg.cli.dap", "serve the Debug Adapter Protocol (VS Code): `dap` on stdio, "
                              "`dap --port N` on 127.0.0.1 with a token"),
    "ptx-census": ("gpudbg.cli.ptx_census", "list the PTX opcodes and forms the loader accepts, or "
                                            "which instructions of FILE.ptx it rejects and why"),
}


def build_parser() -> argparse.ArgumentParser:
    from gpudbg import __version__

    parser = argparse.ArgumentParser(
        prog="gpudbg", description="Run, debug and sanitize GPU programs on a simulated GPU.")
    parser.add_argument("--version", action="version", version=f"gpudbg {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        importlib.import_module(module_name).add_arguments(p)
        p.set_defaults(_module=module_name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    return importlib.import_module(args._module).execute(args)


if __name__ == "__main__":
    sys.exit(main())
