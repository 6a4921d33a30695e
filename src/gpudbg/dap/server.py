"""The adapter's request loop: read a request, answer it, repeat, with
events coming from the execution thread in between.

The one idea: REQUESTS maps each DAP command to one handler method, and
that table is the adapter's whole surface (the tests walk it): handlers
return a response body or raise DapError, and the loop turns either into
the one response the request gets, so no request goes unanswered and no
handler error kills the session. State requests answer from the reader
thread while the program is stopped; execution requests answer at once
and hand the work to the engine's execution thread.

Over TCP the first request that can do anything (launch, attach, or any
other after initialize) must carry the session token (`token` in the
initialize, launch or attach arguments); a connection that does not
present it is refused and closed. One connection is one session; the
server exits when it ends (the simulated GPU lives in this process).
A native executable's launch hands the transport's descriptors over to
the program's own process (gpudbg.dap.native), where this same Server
goes on.
"""
from __future__ import annotations

import hmac
import os
import sys
import threading
from typing import Any, Callable

from . import breakpoints, data_breakpoints, memory, stack, threads, variables
from .framing import FramingError, Reader, Writer
from .output import mark_adapter_thread
from .protocol import CAPABILITIES, DapError, Sequencer, event, int_arg, response


class Unauthorized(DapError):
    """A TCP request without the session's token: answered, then the
    connection is closed."""


class Server:
    def __init__(self, reader: Reader, writer: Writer, token: str | None = None,
                 fds: tuple[int, int] | None = None, first_seq: int = 1):
        from .engine import Engine
        self.reader, self.writer = reader, writer
        self.fds = fds                  # the transport's descriptors (a native handoff passes them on)
        self.request: dict = {}         # the request being handled
        self.token = token
        self.authenticated = token is None
        self.seq = Sequencer(first_seq)
        self.engine = Engine(self.send_event)
        self.frames = stack.Handles()
        self.refs = stack.Handles()
        self.sources = stack.Sources()
        self.bps = breakpoints.Breakpoints(self.engine, self.send_event, self.output)
        self.data_bps = data_breakpoints.DataBreakpoints(self.engine, self.bps)
        self.engine.data_bps = self.data_bps
        self.engine.on_resume.append(self._invalidate)
        self.initialized = False
        self.done = threading.Event()
        self.client: dict[str, Any] = {}

    # ------------------------------------------------------------ messages
    def send_event(self, name: str, body: dict | None = None) -> None:
        self.writer.write(event(self.seq(), name, body))

    def output(self, category: str, text: str) -> None:
        self.writer.write(event(self.seq(), "output", {"category": category, "output": text}))

    def _invalidate(self) -> None:
        self.frames.clear()
        self.refs.clear()

    # ------------------------------------------------------------ loop
    def serve(self) -> int:
        mark_adapter_thread()
        status = 0
        try:
            while not self.done.is_set():
                try:
                    msg = self.reader.read()
                except FramingError as e:
                    print(f"gpudbg dap: {e}", file=sys.__stderr__)
                    status = 2
                    break
                if msg is None:
                    break
                self.handle(msg)
        finally:
            self.engine.shutdown()
        return status

    def handle(self, msg: dict) -> None:
        if msg.get("type") != "request" or not isinstance(msg.get("command"), str):
            self.output("console", f"gpudbg dap: ignored a message that is not a request: {str(msg)[:200]}\n")
            return
        command = msg["command"]
        self.request = msg
        args = msg.get("arguments")
        args = {} if args is None else args
        after: list[Callable[[], None]] = []
        try:
            if not isinstance(args, dict):
                raise DapError(f"{command}: 'arguments' must be an object.")
            self._check_token(command, args)
            handler = REQUESTS.get(command)
            if handler is None:
                raise DapError(f"gpudbg does not support the '{command}' request.")
            body = handler(self, args, after)
            self.writer.write(response(self.seq(), msg, body))
        except DapError as e:
            self.writer.write(response(self.seq(), msg, error=e.message, show=e.show))
            if isinstance(e, Unauthorized):
                self.done.set()
        except Exception as e:  # an adapter bug answers the request instead of killing the session
            from .engine import _debug_errors, error_text
            if isinstance(e, _debug_errors()):
                self.writer.write(response(self.seq(), msg, error=error_text(e)))
            else:
                self.writer.write(response(self.seq(), msg, error=f"internal error in '{command}': "
                                                                  f"{type(e).__name__}: {e}"))
        for fn in after:
            fn()

    def _check_token(self, command: str, args: dict) -> None:
        if self.authenticated:
            return
        given = args.get("token")
        if isinstance(given, str) and hmac.compare_digest(given.encode(), (self.token or "").encode()):
            self.authenticated = True
            return
        if command == "initialize" and given is None:
            return                          # the token may come with launch/attach
        raise Unauthorized("gpudbg dap: this TCP session needs its token: pass \"token\" in the initialize, "
                       "launch or attach arguments." if given is None else "gpudbg dap: wrong token.",
                       show=True)

    # ------------------------------------------------------------ lifecycle
    def initialize(self, args: dict, after: list) -> dict:
        self.client = dict(args)
        self.engine.line_base = 0 if args.get("linesStartAt1") is False else 1
        self.engine.column_base = 0 if args.get("columnsStartAt1") is False else 1
        return dict(CAPABILITIES)

    def _initialized(self, after: list) -> None:
        if not self.initialized:
            self.initialized = True
            after.append(lambda: self.send_event("initialized"))

    def launch(self, args: dict, after: list) -> None:
        if self.engine.dbg is not None:
            raise DapError("A session is already launched (one per adapter process).")
        core = args.get("coreFile")
        if core:
            self.engine.launch_core(str(core))
        else:
            program = args.get("program")
            a = args.get("args") or []
            if not isinstance(a, list):
                raise DapError("launch: 'args' must be a list of strings.", show=True)
            env = args.get("env") or {}
            if not isinstance(env, dict):
                raise DapError("launch: 'env' must be an object.", show=True)
            native = self.engine.launch_program(str(program or ""), [str(x) for x in a], args.get("cwd"), env,
                                                bool(args.get("stopOnEntry")))
            if native:
                from .native import hand_over
                hand_over(self, str(program), [str(x) for x in a], bool(args.get("stopOnEntry")))   # never returns
        self._initialized(after)

    def attach(self, args: dict, after: list) -> None:
        if not args.get("coreFile"):
            raise DapError("attach: the simulated GPU lives in the debugged program's own process, so there "
                           "is no running process to attach to; attach takes 'coreFile' (a GPU coredump), "
                           "or use 'launch'.", show=True)
        return self.launch(args, after)

    def configuration_done(self, args: dict, after: list) -> None:
        self.engine.need_dbg()
        after.append(self.engine.configuration_done)

    def disconnect(self, args: dict, after: list) -> None:
        if self.engine.state not in ("exited",):
            self.engine.state = "exited"
            after.append(lambda: self.send_event("terminated"))
        after.append(self.engine.shutdown)    # a native program's process ends here: answer first
        after.append(self.done.set)

    def terminate(self, args: dict, after: list) -> None:
        dbg = self.engine.need_dbg()
        if self.engine.core:
            self.engine.state = "exited"
            after.append(lambda: self.send_event("terminated"))
            return
        if dbg.inferior is not None and dbg.inferior.running:
            def kill():
                if hasattr(dbg.inferior, "end_process"):    # a native program: this process ends in the kill
                    from gpudbg.cli.debugger.native_inferior import KILLED_STATUS
                    self.engine.state = "exited"
                    self.send_event("exited", {"exitCode": KILLED_STATUS})
                    self.send_event("terminated")
                    dbg.kill_inferior(quiet=True)        # never returns
                    return
                dbg.kill_inferior(quiet=True)
                status = dbg.inferior.exit.status if dbg.inferior.exit is not None else 137
                self.engine.state = "exited"
                self.send_event("exited", {"exitCode": int(status)})
                self.send_event("terminated")
            if self.engine.state == "running":
                self.engine.terminating = True
                self.engine.pause()
            after.append(kill)
        else:
            after.append(lambda: self.send_event("terminated"))

    # ------------------------------------------------------------ breakpoints
    def set_breakpoints(self, args: dict, after: list) -> dict:
        return self.bps.set_source(args)

    def set_function_breakpoints(self, args: dict, after: list) -> dict:
        return self.bps.set_functions(args)

    def set_exception_breakpoints(self, args: dict, after: list) -> dict:
        return self.bps.set_exceptions(args)

    def data_breakpoint_info(self, args: dict, after: list) -> dict:
        return self.data_bps.info(self.refs, self.frames, args)

    def set_data_breakpoints(self, args: dict, after: list) -> dict:
        return self.data_bps.set(args)

    # ------------------------------------------------------------ execution
    def _run(self, action: Callable[[], None], step: bool, after: list) -> dict:
        self.engine.submit(action, step)
        return {"allThreadsContinued": True}

    def continue_(self, args: dict, after: list) -> dict:
        dbg = self.engine.require_executing()
        return self._run(dbg.resume, False, after)

    def _step(self, args: dict, after: list, kind: str) -> None:
        from gpudbg.cli.debugger.focus import LaneSite
        dbg = self.engine.require_executing()
        warp = threads.warp_of(self.engine, int_arg(args, "threadId"))
        ln = threads.chosen_lane(self.engine, warp)
        lane = warp.lane(ln)
        dbg.set_focus(LaneSite(warp.dev, warp.sm, warp.wp, ln, warp.grid_id, tuple(warp.block_idx),
                               tuple(lane.thread_idx)), announce=False)
        instruction = args.get("granularity") == "instruction"
        if kind == "out":
            _, _, _, stack_ = stack.lane_frames(self.engine, (warp.dev, warp.sm, warp.wp, ln))
            if len(stack_) < 2:
                raise DapError("stepOut: the warp is in its kernel's outermost frame; use continue.")
            command = "finish"
        elif instruction:
            command = "nexti" if kind == "over" else "stepi"
        else:
            command = "next" if kind == "over" else "step"
        handler = dbg.table.get(command).handler        # the CLI's own command, as a user types it
        action = lambda: handler("")
        self._run(action, True, after)

    def next(self, args: dict, after: list) -> None:
        self._step(args, after, "over")

    def step_in(self, args: dict, after: list) -> None:
        self._step(args, after, "in")

    def step_out(self, args: dict, after: list) -> None:
        self._step(args, after, "out")

    def pause(self, args: dict, after: list) -> None:
        self.engine.need_dbg()
        if self.engine.core:
            raise DapError("pause: a GPU coredump does not run.")
        self.engine.pause()

    # ------------------------------------------------------------ state
    def threads_(self, args: dict, after: list) -> dict:
        return {"threads": threads.threads(self.engine)}

    def stack_trace(self, args: dict, after: list) -> dict:
        return stack.stack_trace(self.engine, self.frames, self.sources, args)

    def scopes(self, args: dict, after: list) -> dict:
        self.engine.require_stopped()
        key = stack.frame_of(self.engine, self.frames, args.get("frameId"))
        return {"scopes": variables.scopes(key, self.refs)}

    def variables_(self, args: dict, after: list) -> dict:
        self.engine.require_stopped()
        return {"variables": variables.variables(self.engine, self.refs, args)}

    def set_variable(self, args: dict, after: list) -> dict:
        self.engine.require_stopped()
        return variables.set_variable(self.engine, self.refs, args)

    def evaluate(self, args: dict, after: list) -> dict:
        frame = args.get("frameId")
        key = stack.frame_of(self.engine, self.frames, frame) if frame is not None else None
        return variables.evaluate_request(self.engine, self.refs, key, args)

    def exception_info(self, args: dict, after: list) -> dict:
        self.engine.require_stopped()
        kind = self.engine.focus_exception()
        if kind is None:
            raise DapError("exceptionInfo: the focused lane raised no CUDA exception.")
        body = self.engine.last_stop_body or {}
        report = getattr(getattr(self.engine.dbg, "last_stop", None), "message", "") or body.get("description", "")
        return {"exceptionId": kind.name, "description": self.engine.exception_title(kind), "breakMode": "always",
                "details": {"message": report, "typeName": kind.name}}

    def source(self, args: dict, after: list) -> dict:
        return self.sources.content(args)

    def read_memory(self, args: dict, after: list) -> dict:
        return memory.read_memory(self.engine, args)

    def write_memory(self, args: dict, after: list) -> dict:
        return memory.write_memory(self.engine, args)

    def disassemble(self, args: dict, after: list) -> dict:
        return memory.disassemble(self.engine, self.sources, args)

    def cuda_focus(self, args: dict, after: list) -> dict:
        self._invalidate()
        body = threads.focus_request(self.engine, args)
        if self.client.get("supportsInvalidatedEvent"):    # the editor re-reads its thread and stack views
            after.append(lambda: self.send_event("invalidated", {"areas": ["threads", "stacks", "variables"]}))
        return body

    def cuda_threads(self, args: dict, after: list) -> dict:
        return threads.tree_request(self.engine, args)


REQUESTS: dict[str, Callable[[Server, dict, list], Any]] = {
    "initialize": Server.initialize,
    "launch": Server.launch,
    "attach": Server.attach,
    "configurationDone": Server.configuration_done,
    "disconnect": Server.disconnect,
    "terminate": Server.terminate,
    "setBreakpoints": Server.set_breakpoints,
    "setFunctionBreakpoints": Server.set_function_breakpoints,
    "setExceptionBreakpoints": Server.set_exception_breakpoints,
    "dataBreakpointInfo": Server.data_breakpoint_info,
    "setDataBreakpoints": Server.set_data_breakpoints,
    "continue": Server.continue_,
    "next": Server.next,
    "stepIn": Server.step_in,
    "stepOut": Server.step_out,
    "pause": Server.pause,
    "threads": Server.threads_,
    "stackTrace": Server.stack_trace,
    "scopes": Server.scopes,
    "variables": Server.variables_,
    "setVariable": Server.set_variable,
    "evaluate": Server.evaluate,
    "exceptionInfo": Server.exception_info,
    "source": Server.source,
    "readMemory": Server.read_memory,
    "writeMemory": Server.write_memory,
    "disassemble": Server.disassemble,
    "cuda/focus": Server.cuda_focus,
    "cuda/threads": Server.cuda_threads,
}


# ------------------------------------------------------------------ transports
def serve_stdio() -> int:
    """DAP on this process's stdin/stdout. The protocol keeps private
    duplicates of fds 0 and 1; the program gets /dev/null as stdin and
    its output (fd 1 included) comes back as output events."""
    import os
    from .output import Capture
    in_fd, out_fd = os.dup(0), os.dup(1)
    proto_out = os.fdopen(out_fd, "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(os.devnull)
    server = Server(Reader(FdReader(in_fd)), Writer(proto_out), fds=(in_fd, out_fd))
    capture = Capture(server.output, redirect_fd1=True)
    try:
        return server.serve()
    finally:
        capture.restore()


class FdReader:
    """readline/read on a descriptor with a buffer of its own, so what was
    read ahead (requests not yet handled) is known: a native program's
    handoff passes it on (gpudbg.dap.native)."""

    def __init__(self, fd: int, pending: bytes = b""):
        self.fd = fd
        self.buf = bytearray(pending)

    def _fill(self) -> bool:
        chunk = os.read(self.fd, 65536)
        self.buf += chunk
        return bool(chunk)

    def readline(self, limit: int = -1) -> bytes:
        while True:
            i = self.buf.find(b"\n")
            if i >= 0 or (limit >= 0 and len(self.buf) >= limit):
                n = i + 1 if i >= 0 else limit
                if limit >= 0:
                    n = min(n, limit)
                out = bytes(self.buf[:n])
                del self.buf[:n]
                return out
            if not self._fill():
                out = bytes(self.buf)
                self.buf.clear()
                return out

    def read(self, n: int) -> bytes:
        while len(self.buf) < n and self._fill():
            pass
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def pending(self) -> bytes:
        return bytes(self.buf)


def serve_tcp(port: int, token: str, announce: Callable[[str], None]) -> int:
    """One session on 127.0.0.1:port, for the client that has the token."""
    import socket
    from .output import Capture
    with socket.create_server(("127.0.0.1", port)) as listener:
        announce(f"gpudbg dap: listening on 127.0.0.1:{listener.getsockname()[1]} (token {token})")
        conn, _ = listener.accept()
    with conn:
        wfile = conn.makefile("wb")
        server = Server(Reader(FdReader(conn.fileno())), Writer(wfile), token=token,
                        fds=(conn.fileno(), conn.fileno()))
        capture = Capture(server.output, redirect_fd1=False)
        try:
            return server.serve()
        finally:
            capture.restore()
