"""The adapter's debugger: the CLI's Debugger, driven by DAP requests
from one thread and running the program from another.

The one idea: the cuda-gdb CLI already knows how to run a program under
the Session, wait for stops, pick the focus, step a warp and read a
lane; the adapter reuses that Debugger whole (its execution commands,
focus rules, evaluator contexts) and adds only what DAP needs around it.
Blocking work (start, continue, step, finish) runs as jobs on one
execution thread, so the request reader stays free to answer `pause`
and `threads` while the program runs; when a job ends the engine looks
at what the Debugger recorded (the STOPPED event it dispatched, the
inferior's exit) and tells the client with one `stopped`/`exited` event.
The Debugger's cuda-gdb messages reach the client as `console` output.

State requests run only while stopped; the per-stop handles (frames,
variable references) are dropped at every resume, as DAP requires.
A native executable is debugged from inside its own process, as the CLI
does it: the adapter hands its connection over (gpudbg.dap.native).
"""
from __future__ import annotations

import os
import queue
import threading
from typing import Any, Callable

from gpudbg.cli.debugger.debugger import Debugger

from .output import mark_adapter_thread
from .protocol import FILTER_KINDS, DapError, StopReason

Send = Callable[[str, dict], None]

NOT_STOPPED = "The program is running: pause it first (or it has not been started)."
CORE_NOT_RUN = "This is a GPU coredump: it cannot execute (post-mortem session)."


def _debug_errors() -> tuple:
    from gpudbg.cli.debugger.commands import CommandError
    from gpudbg.cli.debugger.evaluate import ExpressionError
    from gpudbg.debug.backend import BackendError
    from gpudbg.debug.session import DebugError
    return (CommandError, DebugError, BackendError, ExpressionError)


def error_text(e: BaseException) -> str:
    return getattr(e, "message", None) or str(e)


class DapDebugger(Debugger):
    """The CLI Debugger, telling the engine about stops and module loads."""

    def __init__(self, engine: "Engine", program: str | None = None, args: list[str] | None = None,
                 backend: Any = None):
        super().__init__(program, args, backend)
        self.engine = engine
        self.last_stop: Any = None

    def wait(self) -> None:
        """A step whose warp ran off its kernel lets everything run on
        (cuda-gdb's rule): the adapter says so with `continued`."""
        if self.engine.stepping:
            self.engine.send("continued", {"threadId": 1, "allThreadsContinued": True})
        super().wait()

    def _wait(self) -> None:
        # A pause that came before this wait began (the request reader
        # answered it while the job was starting) is not lost: the wait
        # sets _waiting before looking, pause() sets the flag before
        # interrupting, so one of the two always sees the other.
        if self.engine.pause_requested:
            self._interrupt.set()
        super()._wait()

    def dispatch(self, ev: Any, report: bool = True) -> bool:
        from gpudbg.debug.backend import StopReason as DeviceStop
        from gpudbg.debug.events import EventKind
        if ev.kind is EventKind.STOPPED and report:
            if ev.reason is DeviceStop.EXCEPTION and not self.engine.stops_on(self, ev):
                print(f"CUDA exception {ev.exception.name if ev.exception else ''} not stopped at: "
                      f"its exception filter is off.")
                self.session.acknowledge(ev)
                self.session.resume(ev.dev)
                return False
            self.last_stop = ev
        stopped = super().dispatch(ev, report)
        if ev.kind in (EventKind.ELF_IMAGE_LOADED, EventKind.ELF_IMAGE_UNLOADED):
            self.engine.modules_changed()
        return stopped


class Engine:
    """One debug session: launch/configure, execution jobs, stop reports."""

    def __init__(self, send: Send):
        self.send = send
        self.dbg: DapDebugger | None = None
        self.core = False
        self.state = "idle"            # idle, configuring, running, stopped, exited
        self.stop_on_entry = False
        self.exception_filters: set[str] = set(FILTER_KINDS)
        self.pause_requested = False
        self.lane_choice: dict[tuple[int, int, int], int] = {}
        self.on_resume: list[Callable[[], None]] = []
        self.on_modules: list[Callable[[], None]] = []
        self._jobs: "queue.Queue[Callable[[], None] | None]" = queue.Queue()
        self._worker: threading.Thread | None = None
        self.last_stop_body: dict | None = None
        self.stepping = False
        self.data_bps: Any = None
        self.line_base = 1             # the client's linesStartAt1 / columnsStartAt1 (DAP default: 1)
        self.column_base = 1
        self.terminating = False       # terminate paused the program only to kill it: no stopped event

    # ------------------------------------------------------------ launch
    def launch_program(self, program: str, args: list[str], cwd: str | None, env: dict | None,
                       stop_on_entry: bool) -> bool:
        """Prepare a Python program's session; True (nothing prepared) for
        a native executable, which the server hands over to."""
        from gpudbg.cli import native
        if cwd:
            if not os.path.isdir(cwd):
                raise DapError(f"launch: cwd {cwd!r} is not a directory.", show=True)
            os.chdir(cwd)
        if not program:
            raise DapError("launch: 'program' (a Python host program) or 'coreFile' is required.", show=True)
        if not os.path.isfile(program):
            raise DapError(f"launch: program {program!r}: No such file.", show=True)
        for k, v in (env or {}).items():
            if v is None:
                os.environ.pop(str(k), None)
            else:
                os.environ[str(k)] = str(v)
        if native.is_native(program):
            return True
        self.dbg = DapDebugger(self, program, [str(a) for a in args])
        self.dbg.open()
        self.stop_on_entry = bool(stop_on_entry)
        self.state = "configuring"
        return False

    def launch_core(self, path: str) -> None:
        from gpudbg.cli.core import _focus_on_fault, _register_embedded_sources
        from gpudbg.dump.coredump.target import open_core
        from gpudbg.reader_error import ReaderError
        try:
            backend = open_core(path)
        except OSError as e:
            raise DapError(f"coreFile {path}: {e.strerror or e}", show=True) from None
        except ReaderError as e:
            where = f" (byte offset 0x{e.offset:x})" if e.offset is not None else ""
            raise DapError(f"coreFile {path}: {e}{where}", show=True) from None
        self.dbg = DapDebugger(self, backend=backend)
        self.dbg.open()
        self.core = True
        print(f"Opening GPU coredump: {path}")
        for note in getattr(backend, "notes", []):
            print(f"warning: {note}")
        _register_embedded_sources(backend)
        _focus_on_fault(self.dbg)
        self.state = "configuring"

    def configuration_done(self) -> None:
        dbg = self.need_dbg()
        if self.core:
            self.state = "stopped"
            kind = self.focus_exception()
            body = {"reason": StopReason.EXCEPTION.value if kind else StopReason.ENTRY.value,
                    "allThreadsStopped": True,
                    "description": "Post-mortem: " + (self.exception_title(kind) if kind else "GPU coredump")}
            if kind:
                body["text"] = self.exception_title(kind)
            self._stopped(body)
            return
        if self.stop_on_entry:
            dbg.session.break_on_launch = True
        self.send("thread", {"reason": "started", "threadId": 1})
        self.submit(dbg.start, step=False)

    def line_out(self, line: int | None) -> int | None:
        """A source line (1-based, as DWARF has it) in the client's numbering."""
        return None if line is None else line - 1 + self.line_base

    def line_in(self, line: int) -> int:
        return line + 1 - self.line_base

    def need_dbg(self) -> DapDebugger:
        if self.dbg is None:
            raise DapError("No program: send 'launch' first.")
        return self.dbg

    # ------------------------------------------------------------ jobs
    def submit(self, action: Callable[[], None], step: bool) -> None:
        if self._worker is None:
            self._worker = threading.Thread(target=self._work, name="gpudbg-dap-exec", daemon=True)
            self._worker.start()
        self.resuming()
        self._jobs.put(lambda: self._execute(action, step))

    def resuming(self) -> None:
        """Per-stop handles die here."""
        self.state = "running"
        self.pause_requested = False
        for fn in self.on_resume:
            fn()

    def _work(self) -> None:
        mark_adapter_thread()
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job()

    def _execute(self, action: Callable[[], None], step: bool) -> None:
        dbg = self.need_dbg()
        dbg.last_stop = None
        dbg.api_stopped = None
        self.stepping = step
        try:
            action()
        except _debug_errors() as e:
            print(error_text(e))
        except Exception as e:   # a gpudbg bug must not kill the execution thread silently
            print(f"internal error while running: {type(e).__name__}: {e}")
        finally:
            self.stepping = False
        self.report(step)

    def report(self, step: bool) -> None:
        """The one event that says how the last job ended."""
        dbg = self.need_dbg()
        inf = dbg.inferior
        if inf is not None and inf.finished and dbg.last_stop is None:
            self.state = "exited"
            status = inf.exit.status if inf.exit is not None else 0
            self.send("thread", {"reason": "exited", "threadId": 1})
            self.send("exited", {"exitCode": int(status)})
            self.send("terminated", {})
            return
        if dbg.api_stopped is not None:
            self.state = "stopped"
            self._stopped({"reason": StopReason.EXCEPTION.value, "description": dbg.api_stopped.describe(),
                           "text": dbg.api_stopped.function, "allThreadsStopped": True})
            return
        if self.terminating:
            self.state = "stopped"
            return
        ev = dbg.last_stop
        if ev is None:
            self.state = "stopped"
            self._stopped({"reason": (StopReason.STEP if step else StopReason.PAUSE).value,
                           "allThreadsStopped": True})
            return
        self.state = "stopped"
        self._stopped(self._stop_body(ev))

    def _stop_body(self, ev: Any) -> dict:
        from gpudbg.debug.backend import StopReason as DeviceStop
        dbg = self.need_dbg()
        body: dict[str, Any] = {"allThreadsStopped": True}
        if ev.reason is DeviceStop.BREAKPOINT:
            user = [i for i in ev.breakpoints if i in dbg.user_breakpoints]
            if not user:                  # break_on_launch's temporary breakpoint: stopOnEntry
                dbg.session.break_on_launch = False
                body.update(reason=StopReason.ENTRY.value, description="Stopped at the kernel's entry")
            else:
                kinds = {getattr(dbg.user_breakpoints[i], "kind", "") for i in user}
                reason = StopReason.FUNCTION_BREAKPOINT if kinds == {"kernel"} else StopReason.BREAKPOINT
                body.update(reason=reason.value, hitBreakpointIds=user)
        elif ev.reason.value == "watchpoint" and self.data_bps is not None:
            ids, text = self.data_bps.stop_text(ev)
            body.update(reason=StopReason.DATA_BREAKPOINT.value, hitBreakpointIds=ids, description=text,
                        text=text)
        elif ev.reason is DeviceStop.EXCEPTION:
            kind = self.focus_exception() or ev.exception
            title = self.exception_title(kind)
            body.update(reason=StopReason.EXCEPTION.value, description=f"CUDA Exception: {title}", text=title)
        else:
            body.update(reason=StopReason.PAUSE.value,
                        description="Paused" if self.pause_requested else "Every runnable thread is held")
        return body

    def _stopped(self, body: dict) -> None:
        from .threads import HOST_THREAD_ID, focus_thread_id
        tid = focus_thread_id(self)          # no lane resident (paused before a launch ran): the host
        body["threadId"] = tid if tid is not None else HOST_THREAD_ID
        self.last_stop_body = body
        self.send("stopped", body)

    # ------------------------------------------------------------ helpers
    def stops_on(self, dbg: DapDebugger, ev: Any) -> bool:
        """Whether the exception's filter is on (an exception of unknown
        kind always stops)."""
        kind = ev.exception
        return kind is None or kind.name not in FILTER_KINDS or kind.name in self.exception_filters

    def focus_exception(self) -> Any:
        from gpudbg.sim.faults import CUDBGException
        dbg = self.need_dbg()
        f = dbg.focus
        if f is None:
            return None
        try:
            kind = dbg.session.warp(f.dev, f.sm, f.wp).lane(f.ln).exception
        except _debug_errors() + (KeyError, ValueError, IndexError):
            return None
        return None if kind in (None, CUDBGException.CUDBG_EXCEPTION_NONE) else kind

    @staticmethod
    def exception_title(kind: Any) -> str:
        from gpudbg.sim.faults import EXCEPTION_TITLES
        return EXCEPTION_TITLES.get(kind, getattr(kind, "name", "Unknown Exception"))

    def modules_changed(self) -> None:
        for fn in self.on_modules:
            fn()

    def require_stopped(self) -> DapDebugger:
        dbg = self.need_dbg()
        if self.state != "stopped":
            raise DapError(NOT_STOPPED)
        return dbg

    def require_executing(self) -> DapDebugger:
        if self.core:
            raise DapError(CORE_NOT_RUN)
        return self.require_stopped()

    def pause(self) -> None:
        dbg = self.need_dbg()
        if self.core or self.state != "running":
            return
        self.pause_requested = True
        dbg.interrupt()                  # the wait suspends the devices at its next poll

    def shutdown(self) -> None:
        """Kill a program still running, release the Session."""
        dbg = self.dbg
        if dbg is not None:
            try:
                dbg.close()
            except Exception as e:
                print(f"while closing the session: {type(e).__name__}: {e}")
        self._jobs.put(None)
