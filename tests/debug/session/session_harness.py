"""Fixtures for driving the Session the way a debugger does: the host
program runs in a background thread, the test thread is the debugger."""
from __future__ import annotations

import threading

import pytest

from gpudbg.debug.events import EventKind
from gpudbg.debug.session import Session
from gpudbg.driver.engine import reset_engine

WAIT = 30.0


class Host:
    """The debugged program: a function run in a daemon thread."""

    def __init__(self, fn):
        self.result = None
        self.error = None
        self.thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self.thread.start()

    def _run(self, fn):
        try:
            self.result = fn()
        except BaseException as e:  # the test asserts on it
            self.error = e

    def join(self, timeout: float = WAIT):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the host program did not finish"
        return self.result


@pytest.fixture
def session():
    reset_engine()
    s = Session.attach()
    try:
        yield s
    finally:
        s.detach()
        reset_engine()


def stop(session, timeout: float = WAIT):
    ev = session.wait_for({EventKind.STOPPED}, timeout=timeout)
    assert ev is not None, "the device did not stop"
    return ev
