"""The simulated GPU's engines: the threads that execute the long commands
(kernels, copies, memsets) beside the front end, so one channel's kernel
never holds up another channel's copy, semaphore or kernel.

The front end (sim/frontend.py) hands a channel's long head command to an
engine as a Job and goes on serving the other channels; that channel is not
picked again until the job retires, so stream order holds inside a channel
while channels overlap. Two engine classes bound how many jobs run at
once: COPY (the device model's async_engine_count copy engines: COPY,
MEMSET, COPY_2D, MEMSET_2D) and COMPUTE (grids in flight, up to
MAX_CONCURRENT_KERNELS, CUDA's concurrent-kernel limit; how the grids
share the SMs is sim/sm_pool.py's business). Python's GIL interleaves the
threads (numpy releases it and the interpreter switches every few ms), so
a kernel spinning on a flag lets a copy, a semaphore write or another
kernel set it.

The one idea (leader/followers): a GPU's threads are interchangeable. One
of them, the leader, runs the front end's scheduling loop; when it picks a
long command it promotes another thread (an idle one, or a new one) to
lead and executes the job itself. So a lone stream's launch runs on the
thread that picked it, with no hand-off on its path, exactly as when the
front end was one thread; the promotion happens beside the kernel. A thread
whose job is done waits to lead again (up to KEEP_IDLE wait; more exit).
When nothing else is queued on the GPU, the leader leaves the post vacant
instead (`vacate()`): nothing needs scheduling until a push rings a
doorbell (`fill()` promotes then) or the job ends (its thread leads again
at once). A lone stream of small launches thus runs on one device thread
with no wake-up of a second one per launch.

A job carries an abort reason, set by the front end when the job's context
is faulted or reset or the GPU shuts down; the executor's kernel watch and a
launch waiting for SM capacity look at it (`current_job()` names the job of
the calling thread). It does not model engine bandwidth or the overlap of
engines in the device clock (sim/timing.py adds every command's cycles).
"""
from __future__ import annotations

import enum
import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gpudbg.driver import commands as C

MAX_CONCURRENT_KERNELS = 128     # grids in flight per device (sm_90's limit)
KEEP_IDLE = 8                    # threads kept waiting to lead


class EngineKind(enum.Enum):
    COPY = "copy"
    COMPUTE = "compute"

    # Members are singletons compared by identity: hash them by identity
    # too (Enum's own __hash__ runs in Python, and the front end looks an
    # engine up by its kind several times per command).
    __hash__ = object.__hash__


ENGINE_OF: dict[C.Opcode, EngineKind] = {
    C.Opcode.COPY: EngineKind.COPY, C.Opcode.MEMSET: EngineKind.COPY,
    C.Opcode.COPY_2D: EngineKind.COPY, C.Opcode.MEMSET_2D: EngineKind.COPY,
    C.Opcode.LAUNCH: EngineKind.COMPUTE,
}


@dataclass(eq=False)
class Job:
    """One long command of one channel, executing on an engine."""

    channel: Any
    offset: int                 # ring word of the command (its channel's rptr)
    cmd: C.Command
    kind: EngineKind
    abort: str | None = None    # set by the front end: stop as soon as possible, saying why
    host_tid: int = 0           # the host thread that launched it (LAUNCH), for the debugger


_local = threading.local()


def current_job() -> Job | None:
    """The job the calling thread executes (None off the GPU's threads)."""
    return getattr(_local, "job", None)


class Engine:
    """How many jobs of one engine class run, and how many may (counted
    under the front end's lock)."""

    def __init__(self, kind: EngineKind, limit: Callable[[], int]):
        self.kind = kind
        self.limit = limit
        self.running = 0

    def free(self) -> bool:
        """Whether one more job can start now."""
        return self.running < self.limit()


class _Follower:
    __slots__ = ("wake", "promoted")

    def __init__(self) -> None:
        self.wake = threading.Event()
        self.promoted = False


class DeviceThreads:
    """The leader/followers threads of one GPU. `lead()` is the scheduling
    loop: it returns a Job it took (after calling `promote()`), or None
    when the GPU stops; `work(job)` executes and retires it. `cv` is the
    front end's lock, held by the callers of start/promote/stop."""

    def __init__(self, cv: threading.Condition, name: str, lead: Callable[[], Job | None],
                 work: Callable[[Job], None]):
        self.cv = cv
        self.name = name
        self.lead = lead
        self.work = work
        self.threads: set[threading.Thread] = set()
        self._idle: list[_Follower] = []
        self._stopping = False
        self._count = 0
        self.vacant = False     # nobody leads: the running job's thread or the next doorbell will

    def _spawn(self) -> None:
        self._count += 1
        t = threading.Thread(target=self._main, daemon=True, name=f"{self.name}-{self._count}")
        self.threads.add(t)
        t.start()

    def start(self) -> None:
        """The first leader (caller holds cv)."""
        self._stopping = False
        self.vacant = False
        self._spawn()

    def vacate(self) -> None:
        """The leader took a job while nothing else waits for scheduling: no
        thread leads until `fill()` or the job's end (caller holds cv)."""
        self.vacant = True

    def fill(self) -> None:
        """Something may need scheduling (a doorbell): promote a leader if
        the post is vacant (caller holds cv)."""
        if self.vacant:
            self.promote()

    def promote(self) -> None:
        """The leader took a job: another thread leads from now (caller holds cv)."""
        self.vacant = False
        if self._idle:
            f = self._idle.pop()
            f.promoted = True
            f.wake.set()
        else:
            self._spawn()

    def stop(self) -> list[threading.Thread]:
        """Idle threads exit now, busy ones after their job (caller holds cv)."""
        self._stopping = True
        idle, self._idle = self._idle, []
        for f in idle:
            f.wake.set()
        return list(self.threads)

    @property
    def alive(self) -> bool:
        return any(t.is_alive() for t in list(self.threads))

    def _main(self) -> None:
        me = threading.current_thread()
        # a GPU thread computes with numpy's floating-point warnings off
        # (kernels make inf and NaN as a matter of course), so a launch on
        # it needs no errstate of its own (executor.launch_grid)
        np.seterr(all="ignore")
        try:
            while True:
                job = self.lead()
                if job is None:
                    return
                _local.job = job
                try:
                    self.work(job)
                finally:
                    _local.job = None
                if not self._lead_again() and not self._wait_to_lead():
                    return
        finally:
            with self.cv:
                self.threads.discard(me)

    def _lead_again(self) -> bool:
        """After a job: take the vacant post (no hand-off to another thread)."""
        with self.cv:
            if not self.vacant or self._stopping:
                return False
            self.vacant = False
            return True

    def _wait_to_lead(self) -> bool:
        with self.cv:
            if self._stopping or len(self._idle) >= KEEP_IDLE:
                return False
            f = _Follower()
            self._idle.append(f)
        f.wake.wait()
        return f.promoted
