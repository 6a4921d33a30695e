"""The debugger proper: one Session, one inferior, one focus, and the
run / stop / resume story told in cuda-gdb's words.

The one idea: the debugger's thread never runs device code. It starts the
program on the inferior thread, then waits on the Session's event queue
(bounded polls, so a program that ends or a failing mc* call parked by
`api_failures stop` is noticed too) until something stops: a breakpoint,
an exception, an interrupt, the API hook, or the program's exit; each
stop is reported with cuda-gdb's messages and sets the focus. Commands
that inspect state run only while stopped; execution commands resume the
device and wait again. A debugger over a non-executing backend (a
coredump) has no inferior, and execution commands say so.

Command families live in their own modules (breakpoints, execution,
inspection, info); this module holds the state they share.
"""
from __future__ import annotations

import queue
import sys
import threading
from typing import Any, Callable

from .apihook import ApiFailure, ApiFailureMode, ApiInterceptor
from .commands import Command, CommandError, CommandTable
from .cuda_settings import kernel_event, program_ended, program_starting
from .context import ConvenienceStore, LaneContext
from .focus import NO_FOCUS, Focus, LaneSite, make_focus, sites
from .frames import describe_frame, frames, safe, source_line_text
from .kernels import KernelTable

POLL = 0.05            # seconds between checks while the program runs
KILL_WAIT = 5.0        # how long quit/kill waits for the program thread
THREAD_NAME = "python"
NOT_RUNNING = "The program is not being run."


def _errors() -> tuple:
    from gpudbg.debug.session import DebugError
    from gpudbg.debug.backend import BackendError
    errs: list = [CommandError, DebugError, BackendError]
    try:
        from .evaluate import ExpressionError
        errs.append(ExpressionError)
    except ImportError:
        pass
    return tuple(errs)


class Debugger:
    """State shared by all commands. `backend` given: debug that backend
    (a coredump); else attach to this process's simulated GPUs."""

    def __init__(self, program: str | None = None, args: list[str] | None = None, backend: Any = None):
        self.program = program
        self.args = list(args or [])
        self._backend = backend
        self.session: Any = None
        self.store = ConvenienceStore()
        self.kernels = KernelTable()
        self.focus: Focus | None = None
        self.frame_level = 0               # the selected frame of the focus (up/down/frame)
        self.stops = 0                     # stops reported so far (display runs after each new one)
        self.inferior: Any = None
        self.thread_name = THREAD_NAME     # gdb names the host thread after the process (comm)
        self.make_inferior: Callable[[str, list[str]], Any] | None = None   # default: Inferior
        self._interrupt = threading.Event()
        self._waiting = False
        self.break_on_launch = False
        self.api_mode = ApiFailureMode.IGNORE
        self._api_queue: "queue.Queue[ApiFailure]" = queue.Queue()
        self._api_release = threading.Event()
        self.api_stopped: ApiFailure | None = None
        self.interceptor = ApiInterceptor(self._on_api_failure, self._on_inferior_thread)
        self.user_breakpoints: dict[int, Any] = {}   # id -> Breakpoint, as set by break/tbreak
        self.conditions: dict[int, str] = {}
        self.breakpoint_labels: dict[int, str] = {}  # id -> "dprintf" (listings say what a breakpoint is)
        self.dprintfs: dict[int, str] = {}           # id -> its `"format",args` (printf.py)
        self.condition_device = 0
        self.condition_errors: list[str] = []
        self._page_fault: Any = None
        self.list_next: tuple[str, int] | None = None
        self.last_command = ""
        self.table = CommandTable()
        self.quit_requested = False
        self.last_error = False
        from . import breakpoints, display, execution, frame_commands, info, inspection, printf, rbreak, until
        for module in (execution, breakpoints, inspection, info, frame_commands, display, printf, until, rbreak):
            module.register(self)
        self.table.add(Command("help", self._help, "show the commands, or one command's help",
                               aliases=("h",)))

    # ------------------------------------------------------------ lifetime
    @property
    def can_execute(self) -> bool:
        return self._backend is None or bool(getattr(self._backend, "can_execute", False))

    def open(self) -> None:
        from gpudbg.debug.events import LaunchNotify
        from gpudbg.debug.session import Session
        if self._backend is None:
            self.session = Session.attach()
            self.session.set_launch_notify(LaunchNotify.EVENT)
        else:
            self.session = Session(self._backend)

    def close(self) -> None:
        """Kill a program still running, detach, remove the API hook."""
        try:
            if self.inferior is not None and self.inferior.running:
                self.kill_inferior(quiet=True)
        finally:
            self.interceptor.uninstall()
            if self.session is not None and self._backend is None:
                safe(self.session.detach)

    # ------------------------------------------------------------ commands
    def add(self, command: Command) -> None:
        self.table.add(command)

    def execute(self, line: str) -> bool:
        """Run one command line; errors are printed as gdb prints them.
        An empty line repeats a repeatable last command."""
        text = line.strip()
        if not text or text.startswith("#"):
            if text or not self.last_command:
                return True
            text = self.last_command
        stops = self.stops
        try:
            command, rest = self.table.split(text)
            self.last_command = text if command.repeatable else ""
            command.handler(rest)
            if self.stops != stops and self.focus is not None:
                self.show_displays()
        except _errors() as e:
            sys.stdout.flush()
            print(getattr(e, "message", None) or str(e), file=sys.stderr)
            sys.stderr.flush()
            self.last_error = True
            return False
        self.last_error = False
        return True

    def _help(self, rest: str) -> None:
        print(self.table.help_text(rest.strip()))

    # ------------------------------------------------------------ focus
    def kernel_of(self, dev: int, grid_id: int) -> int:
        return self.kernels.number(dev, grid_id, self.session)

    def grid_of_kernel(self, number: int) -> tuple[int, int] | None:
        rec = self.kernels.by_number(number)
        return None if rec is None else (rec.dev, rec.grid_id)

    def devices(self) -> list[int]:
        return [d.dev for d in self.session.devices()]

    def all_sites(self) -> list[LaneSite]:
        return sites(self.session, [d for d in self.devices() if self.state_readable(d)])

    def state_readable(self, dev: int) -> bool:
        if not self.can_execute:
            return True
        return bool(safe(self.session.is_stopped, dev, default=False))

    def need_focus(self) -> Focus:
        if self.focus is None or not self.state_readable(self.focus.dev):
            raise CommandError(NO_FOCUS)
        return self.focus

    def context(self, focus: Focus | None = None) -> LaneContext:
        """The evaluator's view of the focus, in its selected frame (of
        another lane: frame 0)."""
        f = focus or self.need_focus()
        frame = self.frame_level if f is self.focus else 0
        return LaneContext(self.session, f.dev, f.sm, f.wp, f.ln, self.store, frame=frame)

    def show_displays(self) -> None:
        """The `display` expressions, after a stop (display.py)."""
        from .display import show_all
        show_all(self)

    def set_focus(self, site: LaneSite, announce: bool = True) -> None:
        new = make_focus(site, self.kernel_of)
        changed = self.focus is None or (new.dev, new.sm, new.wp, new.ln, new.grid) != \
            (self.focus.dev, self.focus.sm, self.focus.wp, self.focus.ln, self.focus.grid)
        self.focus = new
        self.frame_level = 0
        if announce and changed:
            print(new.switching())

    def refresh_focus(self) -> None:
        """Re-derive the logical side (the lane may have moved or exited)."""
        f = self.focus
        if f is None:
            return
        for s in self.all_sites():
            if (s.dev, s.sm, s.wp, s.ln) == (f.dev, f.sm, f.wp, f.ln):
                self.focus = make_focus(s, self.kernel_of)
                return
        self.focus = None

    def print_location(self, full: bool = True, with_address: bool = False) -> None:
        """The frame line (when `full`) and the source line of the focus."""
        f = self.need_focus()
        warp = self.session.warp(f.dev, f.sm, f.wp)
        lane = warp.lane(f.ln)
        top = frames(self.session, f.dev, lane)[0]
        grid = safe(self.session.grid, f.dev, warp.grid_id)
        if full:
            print(describe_frame(self.session, f.dev, self.context(f), grid, top, with_address))
        text = source_line_text(top.file, top.line)
        if text:
            print(text)
        if top.file is not None:
            self.list_next = (top.file, max(1, top.line - 5))

    # ------------------------------------------------------------ running
    def require_process(self) -> None:
        if not self.can_execute or self.inferior is None or not self.inferior.running:
            raise CommandError(NOT_RUNNING)

    def start(self) -> None:
        from .inferior import Inferior, UnsupportedProgram
        if not self.can_execute:
            raise CommandError("The program is not being run: this is a GPU coredump, which cannot execute.")
        if self.inferior is not None and self.inferior.running:
            raise CommandError("The program being debugged has been started already.")
        if not self.program:
            raise CommandError('No executable file specified.\nUse the "file" or "exec-file" command.')
        try:
            inferior = (self.make_inferior or Inferior)(self.program, self.args)
        except (FileNotFoundError, UnsupportedProgram) as e:
            raise CommandError(str(e)) from None
        if self.inferior is not None:      # a second run: a fresh process, as gdb starts one
            self.session.new_process()
        self.inferior = inferior
        self.kernels.clear()
        self.focus = None
        if self.api_mode is not ApiFailureMode.HIDE:
            self.interceptor.install()
        program_starting(self)
        self.inferior.start()
        self.wait()

    def resume(self) -> None:
        """Let everything run again (device and a parked host thread)."""
        self.require_process()
        if self.api_stopped is not None:
            self.api_stopped = None
            self._api_release.set()
        else:
            for dev in self.devices():
                if safe(self.session.is_stopped, dev, default=False):
                    self.session.resume(dev)
        self.wait()

    def interrupt(self) -> bool:
        """Ctrl-C seen by another thread (a native program's signal
        watcher): `wait` suspends the devices at its next poll, as for a
        KeyboardInterrupt. False when no wait is in progress."""
        if not self._waiting:
            return False
        self._interrupt.set()
        return True

    def wait(self) -> None:
        """Block until the next stop or the program's end, and report it."""
        self._interrupt.clear()
        self.frame_level = 0
        self._waiting = True
        try:
            self._wait()
        finally:
            self._waiting = False

    def _wait(self) -> None:
        s = self.session
        while True:
            try:
                if self._interrupt.is_set():
                    self._interrupt.clear()
                    raise KeyboardInterrupt
                ev = s.next_event(timeout=POLL)
            except KeyboardInterrupt:
                for dev in self.devices():
                    safe(s.suspend, dev)
                continue
            if ev is not None:
                if self.dispatch(ev):
                    return
                continue
            if not self._api_queue.empty():
                self._report_api_stop(self._api_queue.get())
                return
            if self.inferior is not None and self.inferior.finished:
                self._drain()
                self.focus = None
                self.interceptor.uninstall()
                program_ended(self)
                print(self.inferior.exit_message())
                return

    def _drain(self) -> None:
        while True:
            ev = self.session.next_event(timeout=0.0)
            if ev is None:
                return
            self.dispatch(ev, report=False)

    def dispatch(self, ev: Any, report: bool = True) -> bool:
        """Handle one event; True when it stopped the program."""
        from gpudbg.debug.events import EventKind
        s = self.session
        try:
            if ev.kind is EventKind.KERNEL_READY and ev.grid is not None:
                self.kernels.note(ev.grid)
                kernel_event(self, ev.grid, finished=False)
            elif ev.kind is EventKind.KERNEL_FINISHED and ev.grid is not None:
                self.kernels.note(ev.grid, finished=True)
                from .watchpoints import grid_ended
                grid_ended(self, ev)
                kernel_event(self, ev.grid, finished=True)
            elif ev.kind is EventKind.PAGE_FAULT:
                self._page_fault = ev
            elif ev.kind is EventKind.INTERNAL_ERROR:
                print(f"warning: internal error in the device: {ev.message}", file=sys.stderr)
            elif ev.kind is EventKind.STOPPED:
                if not report:
                    safe(s.resume, ev.dev)
                    return False
                from .printf import dprintf_only
                if dprintf_only(self, ev):     # printed; a dprintf does not stop the program
                    safe(s.resume, ev.dev)
                    return False
                from .stops import report_stop
                report_stop(self, ev)
                return True
        finally:
            s.acknowledge(ev)
        return False

    # ------------------------------------------------------------ API failures
    def _on_inferior_thread(self) -> bool:
        inf = self.inferior
        return inf is not None and threading.current_thread() is inf.thread and not inf.killed

    def _on_api_failure(self, failure: ApiFailure) -> None:
        """Called on the program's thread by the mc* interposer."""
        if self.api_mode is ApiFailureMode.HIDE:
            return
        if self.api_mode is ApiFailureMode.IGNORE:
            print(f"warning: {failure.describe()}", file=sys.stderr)
            return
        self._api_release.clear()
        self._api_queue.put(failure)
        while not self._api_release.wait(POLL):
            if self.inferior is None or self.inferior.killed:
                return

    def _report_api_stop(self, failure: ApiFailure) -> None:
        self.api_stopped = failure
        print(failure.describe())
        print(f'\nThread 1 "{self.thread_name}" stopped: a host API call failed '
              f"(set cuda api_failures stop).")

    # ------------------------------------------------------------ kill
    def kill_inferior(self, quiet: bool = False) -> None:
        inf = self.inferior
        if inf is None or not inf.running:
            raise CommandError(NOT_RUNNING)
        end_process = getattr(inf, "end_process", None)
        if end_process is not None:      # a native program is this very process: it ends here
            end_process(quiet)
        inf.killed = True
        self._api_release.set()
        self.api_stopped = None
        s = self.session
        safe(s.kill)
        deadline_polls = int(KILL_WAIT / POLL)
        for _ in range(deadline_polls):
            for dev in self.devices():
                if safe(s.is_stopped, dev, default=False):
                    safe(s.resume, dev)
            ev = s.next_event(timeout=0.0)
            while ev is not None:
                s.acknowledge(ev)
                ev = s.next_event(timeout=0.0)
            if inf.wait(POLL):
                break
        self.focus = None
        self.interceptor.uninstall()
        program_ended(self, leaks=False)
        if not quiet:
            print(inf.exit_message() if inf.finished else
                  f"[Inferior {inf.number} (process {inf.pid}) killed; its thread did not end "
                  f"within {KILL_WAIT:.0f} s]")


def run_lines(debugger: Debugger, lines: Callable[[], str | None]) -> None:
    """Feed command lines until they run out or `quit`."""
    while not debugger.quit_requested:
        line = lines()
        if line is None:
            return
        debugger.execute(line)
