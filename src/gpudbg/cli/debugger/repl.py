"""The `(cuda-gdb) ` prompt: prompt_toolkit on a terminal, plain lines
from a pipe.

The one idea: the REPL is only a source of lines for the debugger, so a
terminal gets prompt_toolkit (persistent history file, nested completion
over the command table's vocabulary, Ctrl-C cancels the line, Ctrl-D
quits) while a non-tty stdin is read line by line with the prompt echoed
as gdb does, and both feed the same `Debugger.execute`.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable

PROMPT = "(cuda-gdb) "


def history_path() -> Path:
    """$GPUDBG_HISTORY, else ~/.gpudbg_history."""
    env = os.environ.get("GPUDBG_HISTORY")
    return Path(env) if env else Path.home() / ".gpudbg_history"


def completer(vocabulary: dict):
    from prompt_toolkit.completion import NestedCompleter
    return NestedCompleter.from_nested_dict(vocabulary)


def pipe_reader(stream=None, echo: bool = True) -> Callable[[], str | None]:
    def read() -> str | None:
        src = stream if stream is not None else sys.stdin
        if echo:
            print(PROMPT, end="", flush=True)
        line = src.readline()
        if not line:
            if echo:
                print()
            return None
        return line.rstrip("\n")
    return read


def terminal_reader(vocabulary: dict) -> Callable[[], str | None]:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    try:
        path = history_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        history: Any = FileHistory(str(path))
    except OSError:
        history = InMemoryHistory()
    session: PromptSession = PromptSession(history=history, completer=completer(vocabulary),
                                           complete_while_typing=False)

    def read() -> str | None:
        while True:
            try:
                return session.prompt(PROMPT)
            except KeyboardInterrupt:
                print("Quit")
                continue
            except EOFError:
                print("quit")
                return None
    return read


def reader_for(vocabulary: dict) -> Callable[[], str | None]:
    """prompt_toolkit on a terminal, line reading otherwise."""
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    return terminal_reader(vocabulary) if interactive else pipe_reader()
