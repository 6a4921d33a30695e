"""The debugged program: a Python host program run on a thread of this
process with runpy, as `gpudbg run` runs it.

The one idea: the simulated GPU lives in the process that uses it, so the
"inferior" is a daemon thread executing the program while the debugger's
thread owns the prompt; the program's exit status is computed exactly as
the interpreter would (SystemExit codes, uncaught exceptions -> 1), and
every wait on the thread is bounded, so a program stuck in a launch that
the debugger killed can never hang the debugger on quit.

sys.argv and sys.path[0] are process-wide: they are set for the
program's run and restored when it ends. It does not isolate the
program's imports or globals from the debugger's.
"""
from __future__ import annotations

import os
import runpy
import sys
import threading
from dataclasses import dataclass

from gpudbg.cli.run import exit_status, print_traceback


class UnsupportedProgram(Exception):
    """A program the debugger cannot run as its inferior."""


@dataclass
class Exit:
    status: int
    killed: bool = False
    error: BaseException | None = None


class Inferior:
    """One run of PROGRAM with ARGS."""

    number = 1

    def __init__(self, program: str, args: list[str]):
        if not os.path.isfile(program):
            raise FileNotFoundError(f"{program}: No such file or directory.")
        from gpudbg.cli import native
        if native.is_native(program):
            raise UnsupportedProgram(f"{program} is a native executable: gpudbg debug runs Python host "
                                     f"programs (gpudbg run and gpudbg check also run native ones)")
        self.program = program
        self.args = list(args)
        self.pid = os.getpid()
        self.killed = False
        self.exit: Exit | None = None
        self._thread: threading.Thread | None = None
        self._done = threading.Event()

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    def start(self) -> None:
        from gpudbg.cli import native
        problem = native.preload_driver()    # numba-cuda and cuda-python reach our libcuda.so.1
        if problem is not None:
            print(f"gpudbg debug: {problem}", file=sys.stderr)
        self._thread = threading.Thread(target=self._main, name="gpudbg-inferior", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._done.is_set()

    @property
    def finished(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None) -> bool:
        return self._done.wait(timeout)

    def _main(self) -> None:
        saved_argv, saved_path = sys.argv, sys.path[:]
        sys.argv = [self.program, *self.args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(self.program)))
        status, error = 0, None
        try:
            runpy.run_path(self.program, run_name="__main__")
        except SystemExit as e:
            status = exit_status(e.code)
        except BaseException as e:  # the program's own error (or a kernel fault), shown as Python would
            if not self.killed:
                print_traceback(e, __name__)
            status, error = 1, e
        finally:
            sys.argv, sys.path[:] = saved_argv, saved_path
            try:
                sys.stdout.flush()
            except (OSError, ValueError):
                pass
            self.exit = Exit(status, self.killed, error)
            self._done.set()

    def exit_message(self) -> str:
        """gdb's line for the end of the program."""
        ex = self.exit
        if ex is None:
            return f"[Inferior {self.number} (process {self.pid}) is still running]"
        if ex.killed:
            return f"[Inferior {self.number} (process {self.pid}) killed]"
        if ex.status == 0:
            return f"[Inferior {self.number} (process {self.pid}) exited normally]"
        return f"[Inferior {self.number} (process {self.pid}) exited with code {ex.status:02o}]"

