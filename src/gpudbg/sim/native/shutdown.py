"""Native code and process exit.

A program may exit while a kernel still runs on the device thread (a
daemon thread). Interpreted code stops by itself at exit: the thread
cannot get the GIL back once Python finalizes. Native code runs without
the GIL, so it could still be executing while finalization and the C
runtime's exit tear down the memory it uses (the JIT's code, numpy
buffers): a crash at exit. The one idea: every native call passes a gate;
an atexit hook closes the gate and waits for the calls in flight (each is
short: segments are straight-line code and a region call's work is
capped), so after it nothing native runs and the interpreter, which
finalization freezes safely, takes over whatever is left.
"""
from __future__ import annotations

import atexit
import threading

_cv = threading.Condition(threading.Lock())
_in_flight = 0
_closed = False
DRAIN_TIMEOUT_S = 10.0


def enter() -> bool:
    """Start a native call; False once the process is exiting."""
    global _in_flight
    with _cv:
        if _closed:
            return False
        _in_flight += 1
        return True


def closed() -> bool:
    """Whether the process is exiting (no native compile or call)."""
    return _closed


def leave() -> None:
    global _in_flight
    with _cv:
        _in_flight -= 1
        if not _in_flight:
            _cv.notify_all()


def close() -> None:
    """No native call starts after this; wait for those in flight."""
    global _closed
    with _cv:
        _closed = True
        _cv.wait_for(lambda: _in_flight == 0, timeout=DRAIN_TIMEOUT_S)


atexit.register(close)
