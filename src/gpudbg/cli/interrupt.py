"""Ctrl-C while a program runs under `gpudbg run` or `gpudbg check`.

Without this, Ctrl-C raised KeyboardInterrupt in the program, and gpudbg's
end-of-run check then synchronized with the kernel still spinning on the
GPU's device thread: only SIGKILL ended it. The one idea: a SIGINT first
cancels every running kernel (sim/kernel_watch.cancel: the executor stops
it within CHECK_STEPS steps with an INTERRUPTED hang report saying where
each warp was, so the launch fails and every wait on it returns), then the
program is interrupted as Python would; gpudbg prints the report and exits
130. A second SIGINT ends the process at once (os._exit(130)), whatever
blocks.

Two places use it:
- `Interrupts` around a Python program in gpudbg's own process (run_host):
  the handler cancels, then raises KeyboardInterrupt in the main thread.
- `install_in_child()` in a native program's process (cli/native.py
  child_start, where the drop-in libraries embed Python): the program's main
  thread is C code that may be anywhere, so Python's handler, which only
  runs when that thread next enters Python, is not relied upon. The
  handler's wakeup fd (signal.set_wakeup_fd: written by the C-level handler
  at once) is read by a watcher thread, which cancels the kernels. The
  program's waits then return the launch's error, and it ends as it ends
  on any error (typically exit(1)); at its exit gpudbg's report (the
  interrupted kernel, findings to the parent) runs as usual, and then an
  exit hook registered before the report's turns the exit status into 130.
  The parent forwards its own SIGINT to the child, and a Ctrl-C at a
  terminal reaches both, so SIGINTs within DUPLICATE_S of the first count
  as one. It takes SIGINT over only if the program left it at its default
  disposition: a program with its own handler keeps it.

It does not stop a host thread that never waits on the GPU, nor a wait on
a fence that cannot retire (the driver's fence watchdog or a second Ctrl-C
ends those).
"""
from __future__ import annotations

import atexit
import ctypes
import os
import signal
import sys
import threading
import time
from typing import Any

from gpudbg.sim import kernel_watch

EXIT_STATUS = 130                 # 128 + SIGINT, what a shell reports for Ctrl-C
REASON = "Ctrl-C"
DUPLICATE_S = 0.5                 # SIGINTs this close to the first are the same Ctrl-C


def _second() -> None:
    try:
        os.write(2, b"\ngpudbg: interrupted again; exiting now\n")
    finally:
        os._exit(EXIT_STATUS)


class Interrupts:
    """While entered (in the main thread): the first SIGINT cancels the
    running kernels and raises KeyboardInterrupt; a second exits at once.
    `interrupted` tells afterwards whether SIGINT came."""

    def __init__(self) -> None:
        self.interrupted = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> "Interrupts":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
            self._installed = True
        return self

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if self.interrupted:
            _second()
        self.interrupted = True
        kernel_watch.cancel(REASON)
        raise KeyboardInterrupt

    def __exit__(self, *exc: Any) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False
        kernel_watch.clear()

    def keep_until_done(self) -> None:
        """After the program, while gpudbg waits for its kernels and prints:
        a first SIGINT cancels the kernels without raising (the wait then
        ends with their report), a second exits."""
        if self._installed:
            signal.signal(signal.SIGINT, self._after_program)

    def _after_program(self, signum: int, frame: Any) -> None:
        if self.interrupted:
            _second()
        self.interrupted = True
        kernel_watch.cancel(REASON)
        os.write(2, b"\ngpudbg: interrupted (Ctrl-C) while waiting for the program's kernels; "
                    b"running kernels are stopped\n")


# ------------------------------------------------------------------ native programs' processes
def _sigint_is_default() -> bool:
    """Whether the process's real SIGINT disposition is SIG_DFL (Python's
    own table may not know: the embedding library restores the program's
    handlers after starting the interpreter)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        buf = ctypes.create_string_buffer(512)       # larger than any struct sigaction
        if libc.sigaction(signal.SIGINT, None, buf) != 0:
            return False
        handler = ctypes.c_void_p.from_buffer(buf).value   # sa_handler comes first on Linux
        return not handler                                   # SIG_DFL is 0
    except (OSError, AttributeError, ValueError):
        return False


class _ChildWatcher:
    def __init__(self, read_fd: int):
        self.read_fd = read_fd
        self.first: float | None = None

    def run(self) -> None:
        while True:
            try:
                data = os.read(self.read_fd, 64)
            except InterruptedError:
                continue
            except OSError:
                return
            if not data:
                return
            if signal.SIGINT in data:
                self.on_sigint()

    def on_sigint(self) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = now
            os.write(2, b"\ngpudbg: interrupted (Ctrl-C); running kernels are stopped\n")
            kernel_watch.cancel(REASON)
        elif now - self.first > DUPLICATE_S:
            _second()

    def at_exit(self) -> None:
        """Last of the exit hooks: an interrupted program exits 130."""
        if self.first is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(EXIT_STATUS)


def install_in_child() -> bool:
    """In a native program's process: take over SIGINT as described above
    (call it before registering the exit report). False (nothing changed)
    when the program handles or ignores SIGINT itself, or this is not the
    interpreter's main thread."""
    if threading.current_thread() is not threading.main_thread() or not _sigint_is_default():
        return False
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        signal.signal(signal.SIGINT, lambda s, f: None)   # the watcher does the work
        signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except (ValueError, OSError):
        os.close(r)
        os.close(w)
        return False
    watcher = _ChildWatcher(r)
    atexit.register(watcher.at_exit)     # before the exit report's hook: Python runs it after
    threading.Thread(target=watcher.run, name="gpudbg-sigint", daemon=True).start()
    return True
