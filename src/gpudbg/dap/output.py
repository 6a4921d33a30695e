"""Everything the debugged program and the debugger print becomes DAP
`output` events; nothing reaches the protocol stream unframed.

The one idea: the program runs in the adapter's own process (the
simulated GPU lives there), so its prints, its device printf and the
debugger's cuda-gdb messages all go through `sys.stdout`/`sys.stderr`.
Those are replaced by writers that route by thread: text written on an
adapter thread (the request reader, the execution thread) is the
debugger speaking (category `console`), anything else is the program's
(`stdout`/`stderr`). In stdio mode file descriptor 1 is also moved to a
pipe read by a thread, so C code or a child process writing to fd 1
cannot corrupt the protocol; the protocol keeps a private duplicate of
the original fd 1.
"""
from __future__ import annotations

import io
import os
import sys
import threading
from typing import Callable

Emit = Callable[[str, str], None]          # (category, text)

_adapter = threading.local()


def mark_adapter_thread() -> None:
    """Text this thread prints is the debugger's, not the program's."""
    _adapter.is_adapter = True


def on_adapter_thread() -> bool:
    return bool(getattr(_adapter, "is_adapter", False))


class _RoutedBytes(io.RawIOBase):
    """`sys.stdout.buffer`: bytes written are decoded into the same events."""

    def __init__(self, text: "RoutedWriter"):
        self._text = text

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        self._text.write(bytes(data).decode("utf-8", errors="replace"))
        return len(data)


class RoutedWriter(io.TextIOBase):
    """A text stream whose every write is one output event. `fileno` is
    the descriptor it stands for (1 or 2), for code that asks."""

    def __init__(self, emit: Emit, category: str, fd: int):
        self._emit = emit
        self._category = category
        self._fd = fd
        self.buffer = _RoutedBytes(self)

    def fileno(self) -> int:
        return self._fd

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if text:
            self._emit("console" if on_adapter_thread() else self._category, text)
        return len(text)

    def flush(self) -> None:
        pass


class Capture:
    """Installs the routed writers (and, for stdio, the fd-1 pipe);
    `restore` puts everything back."""

    def __init__(self, emit: Emit, redirect_fd1: bool):
        self.emit = emit
        self._saved = (sys.stdout, sys.stderr)
        self._fd1_saved: int | None = None
        self._pipe_thread: threading.Thread | None = None
        sys.stdout = RoutedWriter(emit, "stdout", 1)
        sys.stderr = RoutedWriter(emit, "stderr", 2)
        if redirect_fd1:
            self._fd1_saved = os.dup(1)
            r, w = os.pipe()
            os.dup2(w, 1)
            os.close(w)
            self._pipe_thread = threading.Thread(target=self._pump, args=(r,), name="gpudbg-dap-fd1",
                                                 daemon=True)
            self._pipe_thread.start()

    def _pump(self, fd: int) -> None:
        with os.fdopen(fd, "rb", buffering=0) as f:
            while True:
                chunk = f.read(65536)
                if not chunk:
                    return
                self.emit("stdout", chunk.decode("utf-8", errors="replace"))

    def restore(self) -> None:
        sys.stdout, sys.stderr = self._saved
        if self._fd1_saved is not None:
            os.dup2(self._fd1_saved, 1)      # closes the pipe's write end: the pump ends
            os.close(self._fd1_saved)
            self._fd1_saved = None
