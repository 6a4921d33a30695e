"""Session events as CUDBGEvent records, and the thread that moves them.

The Session has one queue of its own Event objects; CUDBG has two queues
(synchronous events, which the application waits on until
acknowledgeSyncEvents, and asynchronous ones, which need no
acknowledgement) of packed CUDBGEvent unions, plus a callback that tells
the client "there is something to read". The one idea: a daemon thread
blocks on ``Session.next_event`` and hands every event to the facade,
which converts it here, queues it and calls the client's callback; the
client thread never touches the Session's queue, so the callback fires
even while the client is blocked elsewhere.

A stop of the device (breakpoint, exception, suspension) becomes
CUDBG_EVENT_ALL_DEVICES_SUSPENDED, the 13.0 way of reporting it
(CUDBG_DEBUGGER_CAPABILITY_SUSPEND_EVENTS), with the device in the broken
or faulted mask. PAGE_FAULT has no CUDBG event of its own (the exception
is read with readLaneException / readErrorPC), so it converts to nothing.
Kernel events carry the launching host thread's native id as ``tid``;
context events carry 0, which the header allows ("Zero if not available").
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpudbg.debug.cudbg.enums import (
    CUDBGEventKind,
    CUDBGEventQueueType,
    CUDBGKernelOrigin,
    CUDBGKernelType,
    CUDBGResult,
)
from gpudbg.debug.cudbg.events import (
    AllDevicesSuspended,
    ContextCreate,
    ContextDestroy,
    ContextPop,
    ContextPush,
    CUDBGEvent,
    ElfImageLoaded,
    ElfImageUnloaded,
    InternalError,
    KernelFinished,
    KernelReady,
)
from gpudbg.debug.cudbg.layouts import CuDim3

K = CUDBGEventKind
SYNC = CUDBGEventQueueType.CUDBG_EVENT_QUEUE_TYPE_SYNC
ASYNC = CUDBGEventQueueType.CUDBG_EVENT_QUEUE_TYPE_ASYNC
POLL_SECONDS = 0.05

# Session kinds (by name) that go to the asynchronous queue; all others are synchronous.
ASYNC_KINDS = frozenset({"ATTACH_COMPLETE", "DETACH_COMPLETE", "TIMEOUT", "INTERNAL_ERROR"})
_CONTEXT_CASES = {"CTX_CREATE": (K.CUDBG_EVENT_CTX_CREATE, ContextCreate),
                  "CTX_DESTROY": (K.CUDBG_EVENT_CTX_DESTROY, ContextDestroy),
                  "CTX_PUSH": (K.CUDBG_EVENT_CTX_PUSH, ContextPush),
                  "CTX_POP": (K.CUDBG_EVENT_CTX_POP, ContextPop)}
_PAYLOADLESS = {"ATTACH_COMPLETE": K.CUDBG_EVENT_ATTACH_COMPLETE,
                "DETACH_COMPLETE": K.CUDBG_EVENT_DETACH_COMPLETE,
                "TIMEOUT": K.CUDBG_EVENT_TIMEOUT}


@dataclass(frozen=True)
class CUDBGEventCallbackData:
    """What the new-event callback receives (the header's struct)."""

    userData: Any
    tid: int


def queue_of(event: Any) -> CUDBGEventQueueType:
    return ASYNC if event.kind.name in ASYNC_KINDS else SYNC


def to_cudbg(event: Any, image_size: Callable[[int, Any], int]) -> CUDBGEvent | None:
    """The CUDBGEvent for a Session Event, or None for kinds CUDBG has no event for.
    ``image_size(dev, program)`` gives the ELF image size of a loaded module."""
    kind, dev = event.kind.name, event.dev
    ctx = event.context_id or 0
    if kind in ("ELF_IMAGE_LOADED", "ELF_IMAGE_UNLOADED"):
        handle = event.program.code_base
        size = image_size(dev, event.program)
        if kind == "ELF_IMAGE_LOADED":
            return CUDBGEvent(K.CUDBG_EVENT_ELF_IMAGE_LOADED, ElfImageLoaded(dev, ctx, handle, size, handle, 0))
        return CUDBGEvent(K.CUDBG_EVENT_ELF_IMAGE_UNLOADED, ElfImageUnloaded(dev, ctx, handle, size, handle))
    if kind in ("KERNEL_READY", "KERNEL_FINISHED"):
        g = event.grid
        if kind == "KERNEL_READY":
            return CUDBGEvent(K.CUDBG_EVENT_KERNEL_READY, KernelReady(
                dev, g.host_tid, g.grid_id, g.context_id, g.module_id, g.entry_address, g.entry_address,
                CuDim3(*g.grid_dim), CuDim3(*g.block_dim), CUDBGKernelType.CUDBG_KNL_TYPE_APPLICATION,
                0, CUDBGKernelOrigin.CUDBG_KNL_ORIGIN_CPU))
        return CUDBGEvent(K.CUDBG_EVENT_KERNEL_FINISHED, KernelFinished(
            dev, g.host_tid, g.context_id, g.module_id, g.entry_address, g.entry_address, g.grid_id))
    if kind in _CONTEXT_CASES:
        ckind, case = _CONTEXT_CASES[kind]
        return CUDBGEvent(ckind, case(dev, 0, ctx))
    if kind == "STOPPED":
        reason = event.reason.name if event.reason is not None else ""
        broken = 1 << dev if reason == "BREAKPOINT" or (reason == "EXCEPTION" and event.warps) else 0
        faulted = 1 << dev if reason == "EXCEPTION" else 0
        return CUDBGEvent(K.CUDBG_EVENT_ALL_DEVICES_SUSPENDED, AllDevicesSuspended(broken, faulted))
    if kind in _PAYLOADLESS:
        return CUDBGEvent(_PAYLOADLESS[kind])
    if kind == "INTERNAL_ERROR":
        return CUDBGEvent(K.CUDBG_EVENT_INTERNAL_ERROR, InternalError(CUDBGResult.CUDBG_ERROR_INTERNAL))
    return None


class EventPump:
    """A daemon thread handing each Session event to ``deliver`` until stopped."""

    def __init__(self, session: Any, deliver: Callable[[Any], None]) -> None:
        self._session = session
        self._deliver = deliver
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cudbg-event-pump", daemon=True)

    @property
    def ident(self) -> int | None:
        return self._thread.ident

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            event = self._session.next_event(timeout=POLL_SECONDS)
            if event is not None:
                self._deliver(event)
