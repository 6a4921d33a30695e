"""`gpudbg debug ./prog`: the debugger inside a native (nvcc-built) program.

The one idea: the simulated GPU lives in the process that uses it, so the
debugger must live in the native program's process. `gpudbg debug` replaces
itself with the program (os.execve: the program owns the terminal, its pid
is the debugged process), with the drop-in libraries first on the loader
path and this module's `child_start` as the startup hook the libraries run
at the program's first CUDA call (for nvcc programs: the fatbinary
registration in a static constructor, before main). `child_start` builds
the Debugger with a NativeInferior, runs the REPL (`gpudbg.cli.debug.drive`)
on a Python thread and holds the program's thread until the REPL's `run`.
Breakpoints set before `run` are pending until the runtime loads the
module (lazily, at first use). glibc's `on_exit` (which, unlike atexit,
receives the status) tells the debugger the program ended, so it prints
gdb's `[Inferior 1 (process N) exited ...]`, and holds the exit until the
REPL is done (batch commands run, or `quit`).

What follows from one process: the program cannot be restarted (a second
`run` is an error), `run ARGS` cannot change its arguments, and `kill` or
`quit` while it runs end the process (os._exit: 137 for `kill`, the
debugger's status for `quit` and the end of --batch). When the program
exits by itself the process exits with the program's status. Ctrl-C is
caught (a no-op Python handler plus the signal wakeup fd, read by a watcher
thread) and suspends the devices while the program runs. A program that
never calls CUDA never starts the debugger; a program killed by a signal
takes the debugger with it.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import sys
import threading
import traceback
from typing import Any

from .inferior import Exit, Inferior, UnsupportedProgram

SESSION_ENV = "GPUDBG_DEBUG_SESSION"
KILLED_STATUS = 128 + signal.SIGKILL      # what a shell reports for a killed process


# ------------------------------------------------------------------ gpudbg side
def child_environment(program: str, args: list[str], batch: bool, commands: list[str],
                      base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the native program runs the debugger with."""
    from gpudbg.cli import native
    env = dict(os.environ if base is None else base)
    libs = str(native.library_dir())
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (libs, env.get("LD_LIBRARY_PATH", "")) if p)
    env[native.STARTUP_ENV] = f"{__name__}:child_start"
    env[SESSION_ENV] = json.dumps({"program": program, "args": list(args), "batch": bool(batch),
                                   "commands": list(commands)})
    return env


def exec_native(args: argparse.Namespace, commands: list[str]) -> int:
    """Replace this process with the native program under the debugger;
    returns (2) only when that cannot be done."""
    try:
        env = child_environment(args.program, list(args.args), args.batch, commands)
    except Exception as e:
        print(f"gpudbg debug: cannot build the drop-in CUDA libraries: {e}", file=sys.stderr)
        return 2
    path = args.program if os.sep in args.program else os.path.join(".", args.program)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(path, [args.program, *args.args], env)
    except OSError as e:
        print(f"gpudbg debug: cannot run {args.program}: {e.strerror}", file=sys.stderr)
    return 2


# ------------------------------------------------------------------ program side
class NativeInferior:
    """The program this process is, as the Debugger sees an inferior."""

    number = 1
    exit_message = Inferior.exit_message

    def __init__(self, control: "NativeControl"):
        self._control = control
        self.program = control.program
        self.args = list(control.args)
        self.pid = os.getpid()
        self.killed = False
        self.exit: Exit | None = None
        self._done = threading.Event()
        self._started = False

    @property
    def thread(self) -> threading.Thread | None:
        return self._control.program_thread

    def start(self) -> None:
        self._started = True
        self._control.go.set()

    @property
    def running(self) -> bool:
        return self._started and not self._done.is_set()

    @property
    def finished(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None) -> bool:
        return self._done.wait(timeout)

    def exited(self, status: int) -> None:
        """The program called exit(status)."""
        self.exit = Exit(status & 0xFF)
        self._done.set()

    def end_process(self, quiet: bool) -> None:
        """`kill` (or quit/the end of --batch while the program runs): this
        process is the program, so it ends; never returns."""
        self.killed = True
        if quiet:
            self._control.finish(self._control.status())
        print(f"[Inferior {self.number} (process {self.pid}) killed]")
        self._control.finish(KILLED_STATUS)


class NativeControl:
    """One debugging session inside the program: the Debugger, its REPL
    thread, the program's thread held until `run`, and the exit hook."""

    def __init__(self, config: dict[str, Any]):
        from gpudbg.cli.debugger.debugger import Debugger
        self.program = str(config.get("program", "?"))
        self.args = [str(a) for a in config.get("args", [])]
        self.options = argparse.Namespace(batch=bool(config.get("batch")), command_files=[],
                                          commands=[str(c) for c in config.get("commands", [])])
        self.go = threading.Event()          # `run` lets the program go on
        self.repl_done = threading.Event()   # the REPL has finished; the program may exit
        self.program_thread = threading.current_thread()
        self.inferior: NativeInferior | None = None
        self.dbg = Debugger(self.program, self.args)
        self.dbg.make_inferior = self._make_inferior
        self.dbg.thread_name = os.path.basename(self.program)[:15]    # the process's comm, as gdb shows it
        self._exit_hook: Any = None

    def _make_inferior(self, program: str, args: list[str]) -> NativeInferior:
        if self.inferior is not None:
            raise UnsupportedProgram(f"{self.program} cannot be restarted: a native program runs in the "
                                     f"debugger's own process (process {os.getpid()}); start gpudbg debug again.")
        if list(args) != self.args:
            raise UnsupportedProgram(f"The arguments of a native program are fixed when gpudbg debug starts "
                                     f"it: {' '.join(self.args) or '(none)'}; start gpudbg debug again to "
                                     f"change them.")
        self.inferior = NativeInferior(self)
        return self.inferior

    def status(self) -> int:
        """gdb --batch's status: 1 when the last command failed."""
        return 1 if self.options.batch and self.dbg.last_error else 0

    def finish(self, status: int) -> None:
        """End the process now (the program did not exit by itself)."""
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)

    # ------------------------------------------------------------ pieces
    def begin(self) -> None:
        """On the program's thread: start the debugger, hold until `run`."""
        self.dbg.open()
        self._catch_interrupts()
        self._hook_exit()
        threading.Thread(target=self._repl, name="gpudbg-debugger", daemon=True).start()
        self.go.wait()

    def _repl(self) -> None:
        from gpudbg.cli.debug import drive
        status = 2
        try:
            status = drive(self.dbg, self.options)
        except BaseException:   # the debugger itself failed: say so, never hang the program
            traceback.print_exc()
        inf = self.inferior
        if inf is not None and inf.finished:
            self.repl_done.set()          # the program's exit() goes on
            return
        self.finish(status)

    def _hook_exit(self) -> None:
        libc = ctypes.CDLL(None)
        handler_type = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p)
        self._exit_hook = handler_type(self._on_exit)      # kept alive: the interpreter never ends
        if libc.on_exit(self._exit_hook, None) != 0:
            print("gpudbg debug: cannot register the exit hook; the program's end will not be reported",
                  file=sys.stderr)

    def _on_exit(self, status: int, _arg: Any) -> None:
        inf = self.inferior
        if inf is None:              # exit() before `run` (another thread): nothing to report
            self.inferior = inf = NativeInferior(self)
            inf._started = True
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        inf.exited(status)
        self.repl_done.wait()

    def _catch_interrupts(self) -> None:
        """Ctrl-C must not kill the program silently: Python's C handler
        writes the signal to a pipe, a watcher asks the debugger to stop
        the devices (the Python-level handler does nothing: it would raise
        in the program's thread)."""
        try:
            r, w = os.pipe()
            os.set_blocking(w, False)
            signal.signal(signal.SIGINT, lambda signum, frame: None)
            signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except (ValueError, OSError) as e:   # not the interpreter's main thread
            print(f"gpudbg debug: Ctrl-C cannot be caught ({e}); it ends the program", file=sys.stderr)
            return
        threading.Thread(target=self._watch, args=(r,), name="gpudbg-sigint", daemon=True).start()

    def _watch(self, fd: int) -> None:
        while True:
            data = os.read(fd, 64)
            if not data:
                return
            if signal.SIGINT in data and not self.dbg.interrupt():
                print("Quit", flush=True)


_control: list[NativeControl] = []


def child_start() -> None:
    """The startup hook (GPUDBG_NATIVE_STARTUP) inside the native program."""
    raw = os.environ.pop(SESSION_ENV, None)
    if not raw or _control:
        return
    try:
        config = json.loads(raw)
    except ValueError:
        print(f"gpudbg debug: {SESSION_ENV} is not JSON; the program runs without the debugger",
              file=sys.stderr)
        return
    control = NativeControl(config)
    _control.append(control)
    try:
        control.begin()
    except BaseException:
        traceback.print_exc()
        control.finish(2)
