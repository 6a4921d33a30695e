"""The GPU's condition variable: threading.Condition, whose notify_all
returns at once when nobody waits.

Every pointer update and semaphore write of the front end and the channels
is followed by notify_all (so host waiters wake exactly when something
changed), several times per launch; threading.Condition's notify walks
its waiter deque in Python even when it is empty, which in a stream of
launches it nearly always is (the host queues, the device runs). The one
idea: look at the waiters first. What it deliberately does not change: a
call without the lock held still raises RuntimeError, and a notify with
waiters is the standard one.

A `sibling` is a second condition on the same lock, for a waiter that only
one kind of event can release (a host waiting for ring room): the GPU's
notify_all after every command does not wake it, its releaser notifies it
by name, and its predicate is still read under the one lock.
"""
from __future__ import annotations

import threading


class GpuCondition(threading.Condition):
    def notify_all(self) -> None:
        if self._waiters:
            self.notify(len(self._waiters))
        elif not self._is_owned():
            raise RuntimeError("cannot notify on un-acquired lock")

    notifyAll = notify_all

    def sibling(self) -> "GpuCondition":
        """A condition sharing this one's lock (not its waiters)."""
        return GpuCondition(self._lock)
