"""Cross-device stream waits: a stream of one GPU waiting for a fence of
another (mcStreamWaitEvent with an event of another device, as CUDA allows).

A GPU's front end reads only its own memory and sleeps on its own
condition, so a SEM_ACQUIRE on device 1 cannot name device 0's semaphore.
The one idea: the wait becomes a proxy, an 8-byte semaphore in the waiting
GPU's memory that the waiting channel SEM_ACQUIREs (value 1), plus a relay
entry (source semaphore, fence, proxy) watched by one relay thread per
source GPU. That thread sleeps on the source GPU's condition (the front end
notifies it after every command, fault and reset) and, once the fence has
retired (done, or discarded by a fault or a context teardown), writes 1
into the proxy under the waiting GPU's lock and wakes that GPU. The source
semaphore is pinned until then (driver/fence.py); the proxy is freed by the
waiting context when its acquire has retired, and a relay that fires after
that writes nothing. The thread ends when it has nothing to watch.

Not done: the hang watchdog sees a proxy wait as any semaphore wait of its
own GPU (it does not follow the chain onto the source device).
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpudbg.sim.memory.spaces import Allocation, AllocationKind

POLL_S = 1.0   # re-check interval: a stopped source GPU never notifies again


@dataclass(eq=False)
class _Entry:
    semaphore: Any          # TrackingSemaphore of the source GPU (pinned)
    value: int
    proxy: Allocation       # on the waiting GPU
    target: Any             # the waiting SimGPU


class _Relay:
    """The entries watched on one source GPU, and the thread watching them."""

    def __init__(self, gpu: Any):
        self.gpu = gpu
        self.entries: list[_Entry] = []
        self.thread: threading.Thread | None = None

    def add(self, entry: _Entry) -> None:
        with self.gpu.cv:
            self.entries.append(entry)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, daemon=True,
                                               name=f"gpudbg-gpu{self.gpu.ordinal}-relay")
                self.thread.start()
            self.gpu.cv.notify_all()

    def _due(self) -> list[_Entry]:
        return [e for e in self.entries if e.semaphore.reached(e.value) or e.proxy.freed]

    def _run(self) -> None:
        cv = self.gpu.cv
        while True:
            with cv:
                cv.wait_for(lambda: self._due() or not self.entries, POLL_S)
                due = self._due()
                if not due and not self.entries:
                    self.thread = None
                    return
                if not due and not self.gpu.frontend.running:
                    due = list(self.entries)      # the source GPU is gone: nothing will retire
                self.entries = [e for e in self.entries if e not in due]
            for e in due:
                _signal(e.proxy, e.target)
                e.semaphore.unpin()


def _signal(proxy: Allocation, gpu: Any) -> None:
    with gpu.cv:
        if not proxy.freed:
            proxy.data[:8].view(np.uint64)[0] = 1
        gpu.cv.notify_all()


_relays: "weakref.WeakKeyDictionary[Any, _Relay]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _relay_for(gpu: Any) -> _Relay:
    with _lock:
        r = _relays.get(gpu)
        if r is None:
            r = _relays[gpu] = _Relay(gpu)
        return r


def watch(semaphore: Any, value: int, target: Any) -> Allocation:
    """A proxy semaphore in `target`'s memory that becomes 1 once
    semaphore.reached(value) (a semaphore of another GPU)."""
    proxy = target.alloc_internal(8, AllocationKind.SEMAPHORE, "cross-device wait proxy")
    proxy.data[:8] = 0
    if not semaphore.pin():          # released: the fence retired long ago
        _signal(proxy, target)
        return proxy
    _relay_for(semaphore.channel.gpu).add(_Entry(semaphore, value, proxy, target))
    return proxy


def cancel(proxy: Allocation, target: Any) -> None:
    """The wait was refused after watch(): free the proxy; the relay drops
    its entry (unpinning the source) the next time it looks."""
    target.free_internal(proxy)
