"""sim/gpu_cv.py: the GPU's condition wakes its waiters as
threading.Condition does and still refuses a notify without the lock."""
import threading
import time

import pytest

from gpudbg.sim.gpu_cv import GpuCondition


def test_notify_all_wakes_every_waiter_and_needs_the_lock():
    cv = GpuCondition(threading.RLock())
    state = {"go": False, "woke": 0}

    def waiter() -> None:
        with cv:
            cv.wait_for(lambda: state["go"], timeout=60)
            state["woke"] += 1

    threads = [threading.Thread(target=waiter) for _ in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while True:                        # until all three wait (a state, not a sleep)
        with cv:
            if len(cv._waiters) == 3:
                break
        assert time.monotonic() < deadline, "the waiters never waited"
        time.sleep(0.001)
    with cv:
        state["go"] = True
        cv.notify_all()
    for t in threads:
        t.join(60)
    assert state["woke"] == 3
    with pytest.raises(RuntimeError):
        cv.notify_all()                # no waiters, no lock: refused as before
    with cv:
        cv.notify_all()                # no waiters: nothing to do
