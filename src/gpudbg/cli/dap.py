"""`gpudbg dap`: the Debug Adapter Protocol server editors start.

Stdio by default (what VS Code runs: `gpudbg dap`); `--port N` listens
on 127.0.0.1 for one connection instead, guarded by a token: `--token`,
else $GPUDBG_DAP_TOKEN, else a random one printed on stderr; the client
passes it as `token` in its initialize, launch or attach arguments.
The adapter itself is gpudbg.dap; this module only parses the options.
"""
from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=None, metavar="N",
                        help="serve one session over TCP on 127.0.0.1:N (0: any free port) instead of stdio")
    parser.add_argument("--token", default=None,
                        help="the token a TCP client must send (default: $GPUDBG_DAP_TOKEN, else a random one, "
                             "printed on stderr)")


def execute(args: argparse.Namespace) -> int:
    import os
    import secrets

    from gpudbg.dap.protocol import TOKEN_ENV
    from gpudbg.dap.server import serve_stdio, serve_tcp

    if args.port is None:
        if args.token is not None:
            print("gpudbg dap: --token is for --port (a stdio session belongs to the editor that started it).",
                  file=sys.stderr)
            return 2
        return serve_stdio()
    if not 0 <= args.port <= 65535:
        print(f"gpudbg dap: --port {args.port} is not a TCP port (0-65535).", file=sys.stderr)
        return 2
    token = args.token or os.environ.get(TOKEN_ENV) or secrets.token_hex(16)
    if not token.strip():
        print("gpudbg dap: the token must not be empty.", file=sys.stderr)
        return 2

    def announce(line: str) -> None:
        print(line, file=sys.stderr, flush=True)
    try:
        return serve_tcp(args.port, token, announce)
    except OSError as e:
        print(f"gpudbg dap: cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}", file=sys.stderr)
        return 2
