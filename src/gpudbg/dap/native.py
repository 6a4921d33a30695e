"""Debugging a native (nvcc-built) executable through DAP: the adapter
becomes the program.

The one idea, the CLI's (gpudbg.cli.debugger.native_inferior): the
simulated GPU lives in the process that uses it, so the debugger must
live in the native program's process. At `launch` the adapter execs the
program with the drop-in CUDA libraries and this module's `child_start`
as their startup hook, passing on the connection's descriptors, the
bytes it had read ahead, the client's initialize arguments and the
launch request still to be answered. Inside the program (at its first
CUDA call: for nvcc programs a static constructor, before main) the hook
builds the same Server and Engine over a DapDebugger whose inferior is
the program itself (the CLI's NativeInferior/NativeControl), answers the
launch, sends `initialized`, and serves; the program's thread is held
until configurationDone starts it. The process's stdout is a pipe into
output events from then on; before the hook (and before the exec) it is
the adapter's stderr, never the protocol.

What follows from one process: the program runs once (no restart),
`terminate`/`disconnect` end the process, and a program that never calls
CUDA never starts the debugger (the client sees the adapter end).
"""
from __future__ import annotations

import base64
import json
import os
import sys
import traceback
from typing import Any

from .protocol import DapError, response

SESSION_ENV = "GPUDBG_DAP_NATIVE_SESSION"


def hand_over(server: Any, program: str, args: list[str], stop_on_entry: bool) -> None:
    """Exec the program with the session; returns only by raising DapError."""
    from gpudbg.cli import native
    from gpudbg.cli.debugger.native_inferior import SESSION_ENV as CLI_SESSION_ENV
    from gpudbg.cli.debugger.native_inferior import child_environment
    path = program if os.sep in program else os.path.join(".", program)
    if not os.access(path, os.X_OK):
        raise DapError(f"launch: {program} is not executable.", show=True)
    if server.fds is None:
        raise DapError("launch: this transport cannot be handed to a native program.", show=True)
    try:
        env = child_environment(program, args, False, [])
    except Exception as e:
        raise DapError(f"launch: cannot build the drop-in CUDA libraries: {e}", show=True) from None
    env.pop(CLI_SESSION_ENV, None)
    env[native.STARTUP_ENV] = f"{__name__}:child_start"
    in_fd, out_fd = server.fds
    pending = server.reader.stream.pending() if hasattr(server.reader.stream, "pending") else b""
    env[SESSION_ENV] = json.dumps({
        "program": program, "args": args, "stopOnEntry": stop_on_entry, "in": in_fd, "out": out_fd,
        "pending": base64.b64encode(pending).decode("ascii"), "initialize": server.client,
        "launch": {k: server.request.get(k) for k in ("seq", "command")}, "seq": server.seq.peek()})
    for fd in {in_fd, out_fd}:
        os.set_inheritable(fd, True)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os.dup2(2, 1)                 # the program's output before the hook: the adapter's log, not the protocol
    try:
        os.execve(path, [program, *args], env)
    except OSError as e:
        raise DapError(f"launch: cannot run {program}: {e.strerror}", show=True) from None


def child_start() -> None:
    """The startup hook (GPUDBG_NATIVE_STARTUP) inside the native program."""
    raw = os.environ.pop(SESSION_ENV, None)
    if not raw or _sessions:
        return
    try:
        config = json.loads(raw)
    except ValueError:
        print(f"gpudbg dap: {SESSION_ENV} is not JSON; the program runs without the debugger", file=sys.stderr)
        return
    control = _control(config)
    _sessions.append(control)
    try:
        control.begin()
    except BaseException:
        traceback.print_exc()
        control.finish(2)


_sessions: list[Any] = []


def _control(config: dict) -> Any:
    from gpudbg.cli.debugger.native_inferior import NativeControl

    from .engine import DapDebugger
    from .framing import Reader, Writer
    from .server import FdReader, Server

    class DapNativeControl(NativeControl):
        """NativeControl with the DAP server where the REPL was."""

        def __init__(self, config: dict):
            super().__init__({"program": config["program"], "args": config.get("args", [])})
            reader = Reader(FdReader(int(config["in"]), base64.b64decode(config.get("pending") or "")))
            writer = Writer(os.fdopen(int(config["out"]), "wb"))
            self.server = Server(reader, writer, fds=(int(config["in"]), int(config["out"])),
                                 first_seq=int(config.get("seq") or 1))
            self.server.client = dict(config.get("initialize") or {})
            self.server.engine.line_base = 0 if self.server.client.get("linesStartAt1") is False else 1
            self.server.engine.column_base = 0 if self.server.client.get("columnsStartAt1") is False else 1
            self.launch_request = dict(config.get("launch") or {})
            engine = self.server.engine
            dbg = DapDebugger(engine, self.program, self.args)
            dbg.make_inferior = self._make_inferior
            dbg.thread_name = self.dbg.thread_name
            self.dbg = dbg
            engine.dbg = dbg
            engine.stop_on_entry = bool(config.get("stopOnEntry"))
            engine.state = "configuring"

        def status(self) -> int:
            return 0

        def _repl(self) -> None:
            from .output import Capture
            server = self.server
            capture = Capture(server.output, redirect_fd1=True)
            status = 2
            try:
                server.writer.write(response(server.seq(), self.launch_request))
                server.initialized = True
                server.send_event("initialized")
                status = server.serve()
            except BaseException:
                traceback.print_exc(file=sys.__stderr__)
            finally:
                capture.restore()
            inf = self.inferior
            if inf is not None and inf.finished:
                self.repl_done.set()          # the program's exit() goes on
                return
            self.finish(status)

    return DapNativeControl(config)
