"""zetDebugAttach/Detach, the event stream (ReadEvent, AcknowledgeEvent) and
thread control (Interrupt, Resume) over a Session.

The one idea: Session events are translated lazily, when the tool reads,
into zero or more zet events on the handle's own queue. A device stop
becomes one THREAD_STOPPED per warp that stopped (the Session reports a
device; zet reports threads), and the handle remembers which threads the
tool has been told are stopped: exactly those can be read, written and
resumed. Resuming some of them while others stay stopped is done the way a
Session can express it: hold the others (interrupt_threads), release the
named ones (resume_threads), resume the device.

Kinds with no zet counterpart (kernel ready/finished, context push/pop,
attach complete, timeouts) are dropped; one that blocks its emitter is
acknowledged on the spot, so a dropped event can never hang the host.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

from gpudbg.debug.zet.enums import (
    zet_debug_detach_reason_t,
    zet_debug_event_flag_t,
    zet_debug_event_type_t,
    zet_debug_page_fault_reason_t,
)
from gpudbg.debug.zet.facade_core import (
    R,
    ZetError,
    check_handle,
    check_thread,
    sim_targets,
    zet_api,
    zet_debug_session_handle_t,
)
from gpudbg.debug.zet.facade_memory import module_info
from gpudbg.debug.zet.mapping import ThreadMapping, WarpSlot
from gpudbg.debug.zet.structs import (
    UINT64_MAX,
    ze_device_thread_t,
    zet_debug_config_t,
    zet_debug_event_info_detached_t,
    zet_debug_event_info_page_fault_t,
    zet_debug_event_info_t,
    zet_debug_event_info_thread_stopped_t,
    zet_debug_event_t,
)

T = zet_debug_event_type_t
NEED_ACK = zet_debug_event_flag_t.ZET_DEBUG_EVENT_FLAG_NEED_ACK
PAGE_SIZE = 4096
# PAGE_FAULT's "alignment mask": address & mask is the base of the faulting page.
PAGE_FAULT_MASK = UINT64_MAX & ~(PAGE_SIZE - 1)
# Longest single wait on the Session queue, so events the facade queues itself
# (THREAD_UNAVAILABLE from an interrupt on another thread) are seen promptly.
_POLL_SLICE_S = 0.05

_registry_lock = threading.Lock()
_attached: dict[int, zet_debug_session_handle_t] = {}


# ------------------------------------------------------------------ attach / detach

@zet_api("zetDebugAttach")
def zetDebugAttach(hDevice: int, config: zet_debug_config_t, *, session: Any = None) -> tuple:
    """Attach to device ordinal ``hDevice`` of the process ``config.pid``.

    Only the calling process can be debugged: the simulator runs inside it,
    and attaching by pid to another process is a later feature, so any
    other pid fails with ZE_RESULT_ERROR_UNSUPPORTED_FEATURE. A device that
    already has a zet debugger gives ZE_RESULT_ERROR_NOT_AVAILABLE, as the
    spec says for "a debugger is already attached". ``session`` (an
    extension) attaches over an existing Session, which the handle then
    does not own and zetDebugDetach leaves attached.

    Module loads are made blocking (Session.set_ack_required), so each
    MODULE_LOAD comes with ZET_DEBUG_EVENT_FLAG_NEED_ACK and the loading
    host thread waits until zetDebugAcknowledgeEvent: the window in which a
    tool sets breakpoints in the new code.
    """
    if hDevice is None:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "hDevice is null")
    if isinstance(hDevice, bool) or not isinstance(hDevice, int) or hDevice < 0:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
                       f"hDevice must be a device ordinal (int >= 0), got {hDevice!r}")
    if config is None:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_POINTER, "config is null")
    if not isinstance(config, zet_debug_config_t):
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
                       f"config must be a zet_debug_config_t, got {type(config).__name__}")
    if config.pid != os.getpid():
        raise ZetError(R.ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                       f"pid {config.pid} is not this process ({os.getpid()}): only the calling process "
                       "can be debugged; attaching by pid to another process is a later feature")
    from gpudbg.debug.events import EventKind

    with _registry_lock:
        if hDevice in _attached:
            raise ZetError(R.ZE_RESULT_ERROR_NOT_AVAILABLE,
                           f"a debugger is already attached to device {hDevice}: {_attached[hDevice]!r}")
        owns = session is None
        if owns:
            from gpudbg.debug.session import Session
            from gpudbg.driver.engine import get_engine

            get_engine().ensure_init()   # zeInit's part: the devices must be enumerated to be named
            session = Session.attach()
        try:
            devices = session.devices()
            if hDevice >= len(devices):
                raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
                               f"hDevice {hDevice} does not exist: the process has {len(devices)} device(s)")
            props = devices[hDevice]
            mapping = ThreadMapping(props.num_sms, props.num_warps, props.num_lanes)
            session.set_ack_required({EventKind.ELF_IMAGE_LOADED})
        except BaseException:
            if owns:
                session.detach()
            raise
        h = zet_debug_session_handle_t(session, hDevice, config.pid, mapping, owns_session=owns)
        _attached[hDevice] = h
    return (h,)


@zet_api("zetDebugDetach")
def zetDebugDetach(hDebug: zet_debug_session_handle_t) -> tuple:
    """Release the handle: acknowledge what is pending, let every thread run, detach."""
    h = check_handle(hDebug)
    with h.lock:
        h.attached = False
        pending, h.pending_ack = h.pending_ack, []
        h.stopped.clear()
        h.events.clear()
    with _registry_lock:
        if _attached.get(h.device) is h:
            del _attached[h.device]
    s = h.session
    for _, sev in pending:
        s.acknowledge(sev)
    if h.owns_session:
        s.detach()
    else:
        s.set_ack_required(set())
        try:
            s.resume(h.device)
        except Exception as e:   # a Session that cannot execute (a coredump) has nothing to resume
            if getattr(e, "code", None) != "NOT_SUPPORTED":
                raise
    return ()


# ------------------------------------------------------------------ events

@zet_api("zetDebugReadEvent")
def zetDebugReadEvent(hDebug: zet_debug_session_handle_t, timeout: int,
                      event: zet_debug_event_t | None = None) -> tuple:
    """The topmost event. ``timeout`` in ms: 0 polls, UINT64_MAX waits until an
    event arrives; ZE_RESULT_NOT_READY when none came in time. ``event`` (the
    C in,out buffer) is accepted for the signature's sake; the event is returned."""
    h = check_handle(hDebug)
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 0 <= timeout <= UINT64_MAX:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
                       f"timeout must be a uint64_t count of milliseconds, got {timeout!r}")
    if event is not None and not isinstance(event, zet_debug_event_t):
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
                       f"event must be a zet_debug_event_t or None, got {type(event).__name__}")
    deadline = None if timeout == UINT64_MAX else time.monotonic() + timeout / 1000.0
    while True:
        with h.lock:
            if h.events:
                return (h.events.popleft(),)
        if not h.attached:
            raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE, f"{h!r} was released while reading events")
        if deadline is None:
            wait = _POLL_SLICE_S
        else:
            wait = min(max(deadline - time.monotonic(), 0.0), _POLL_SLICE_S)
        sev = h.session.next_event(wait)
        if sev is not None:
            _translate(h, sev)
            continue
        if deadline is not None and time.monotonic() >= deadline:
            with h.lock:
                if h.events:
                    return (h.events.popleft(),)
            return (R.ZE_RESULT_NOT_READY, None)


@zet_api("zetDebugAcknowledgeEvent")
def zetDebugAcknowledgeEvent(hDebug: zet_debug_session_handle_t, event: zet_debug_event_t) -> tuple:
    """Release the host thread a NEED_ACK event holds (a module load)."""
    h = check_handle(hDebug)
    if event is None:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_POINTER, "event is null")
    if not isinstance(event, zet_debug_event_t):
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
                       f"event must be a zet_debug_event_t, got {type(event).__name__}")
    with h.lock:
        idx = next((i for i, (z, _) in enumerate(h.pending_ack) if z is event), None)
        if idx is None:
            idx = next((i for i, (z, _) in enumerate(h.pending_ack) if z == event), None)
        if idx is None:
            why = ("it does not carry ZET_DEBUG_EVENT_FLAG_NEED_ACK" if not event.needs_ack
                   else "it was already acknowledged or was not read from this session")
            raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT, f"cannot acknowledge {event.type.name}: {why}")
        _, sev = h.pending_ack.pop(idx)
    h.session.acknowledge(sev)
    return ()


def _make_event(type_: zet_debug_event_type_t, flags: int = 0, **info: Any) -> zet_debug_event_t:
    return zet_debug_event_t(type_, zet_debug_event_flag_t(flags), zet_debug_event_info_t(**info))


def thread_event(type_: zet_debug_event_type_t, thread: ze_device_thread_t) -> zet_debug_event_t:
    return _make_event(type_, thread=zet_debug_event_info_thread_stopped_t(thread))


def _translate(h: zet_debug_session_handle_t, sev: Any) -> None:
    """Queue the zet events one Session event stands for (often none)."""
    from gpudbg.debug.events import EventKind as K

    out: list[zet_debug_event_t] = []
    needs_ack = bool(getattr(sev, "needs_ack", False))
    kind = sev.kind
    if kind is K.DETACH_COMPLETE:
        out.append(_make_event(T.ZET_DEBUG_EVENT_TYPE_DETACHED, detached=zet_debug_event_info_detached_t(
            zet_debug_detach_reason_t.ZET_DEBUG_DETACH_REASON_INVALID)))
    elif sev.dev != h.device:
        pass
    elif kind in (K.ELF_IMAGE_LOADED, K.ELF_IMAGE_UNLOADED):
        info = module_info(h, sev.program, sev.module_name, build=kind is K.ELF_IMAGE_LOADED)
        type_ = (T.ZET_DEBUG_EVENT_TYPE_MODULE_LOAD if kind is K.ELF_IMAGE_LOADED
                 else T.ZET_DEBUG_EVENT_TYPE_MODULE_UNLOAD)
        zev = _make_event(type_, NEED_ACK if needs_ack else 0, module=info)
        if needs_ack:
            with h.lock:
                h.pending_ack.append((zev, sev))
            needs_ack = False  # the tool acknowledges it
        out.append(zev)
    elif kind is K.CTX_CREATE:
        with h.lock:
            first = not h.contexts
            h.contexts.add(sev.context_id)
        if first:
            out.append(_make_event(T.ZET_DEBUG_EVENT_TYPE_PROCESS_ENTRY))
    elif kind is K.CTX_DESTROY:
        with h.lock:
            h.contexts.discard(sev.context_id)
            last = not h.contexts
        if last:
            out.append(_make_event(T.ZET_DEBUG_EVENT_TYPE_PROCESS_EXIT))
    elif kind is K.PAGE_FAULT:
        reason = (zet_debug_page_fault_reason_t.ZET_DEBUG_PAGE_FAULT_REASON_PERMISSION_ERROR
                  if "read-only" in (sev.message or "").lower()
                  else zet_debug_page_fault_reason_t.ZET_DEBUG_PAGE_FAULT_REASON_MAPPING_ERROR)
        out.append(_make_event(T.ZET_DEBUG_EVENT_TYPE_PAGE_FAULT, page_fault=zet_debug_event_info_page_fault_t(
            int(sev.address or 0) & UINT64_MAX, PAGE_FAULT_MASK, reason)))
    elif kind is K.KERNEL_FINISHED:
        with h.lock:
            h.stopped.clear()     # its threads are gone; the slots belong to the next launch
    elif kind is K.STOPPED:
        for slot in _stopped_warps(h, sev):
            with h.lock:
                if slot in h.stopped:
                    continue
                h.stopped.add(slot)
            out.append(thread_event(T.ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED, h.mapping.to_zet(*slot)))
    if needs_ack:
        h.session.acknowledge(sev)
    with h.lock:
        h.events.extend(out)


def _stopped_warps(h: zet_debug_session_handle_t, sev: Any) -> list[WarpSlot]:
    """The warps a device stop stopped, in zet terms: the broken warps of a breakpoint or
    exception, the held warps of an interrupt; every resident warp of a suspend, or of a stop
    that names no warp (a hang), so the tool always has a thread to resume."""
    from gpudbg.debug.backend import StopReason

    if sev.warps:
        return sorted({WarpSlot(int(sm), int(wp)) for sm, wp in sev.warps})
    views = h.session.warps(h.device)
    if sev.reason is StopReason.THREADS_HELD:
        views = [v for v in views if any(lane.held for lane in v.lanes)]
    elif sev.reason in (StopReason.BREAKPOINT, StopReason.EXCEPTION):
        views = [v for v in views if v.broken] or views
    return sorted({WarpSlot(v.sm, v.wp) for v in views})


# ------------------------------------------------------------------ interrupt / resume

@zet_api("zetDebugInterrupt")
def zetDebugInterrupt(hDebug: zet_debug_session_handle_t, thread: ze_device_thread_t) -> tuple:
    """Stop the named threads (UINT32_MAX in a field: all of that level).

    The threads are held through Session.interrupt_threads (the other
    threads keep running); each warp reports THREAD_STOPPED once held, which
    the Session announces as soon as the hold takes effect. A request that
    names no resident thread succeeds and queues one THREAD_UNAVAILABLE for
    it; one whose threads are all stopped already is ZE_RESULT_NOT_READY.
    """
    h = check_handle(hDebug)
    check_thread(h, thread)
    s, dev, m = h.session, h.device, h.mapping
    _pump(h)
    if s.is_stopped(dev):
        resident = m.expand(thread, [(w.sm, w.wp) for w in s.warps(dev)])
        with h.lock:
            fresh = sorted(resident - h.stopped)
        if resident and not fresh:
            raise ZetError(R.ZE_RESULT_NOT_READY, f"every thread {thread} names is already stopped")
        for slot in fresh:
            s.interrupt_threads(dev, slot.sm, slot.warp)
        with h.lock:
            h.stopped.update(fresh)
            h.events.extend(thread_event(T.ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED, m.to_zet(*slot)) for slot in fresh)
            if not resident:
                h.events.append(thread_event(T.ZET_DEBUG_EVENT_TYPE_THREAD_UNAVAILABLE, thread))
        return ()
    if thread.is_single:
        with h.lock:
            if m.to_sim(thread) in h.stopped:
                raise ZetError(R.ZE_RESULT_NOT_READY, f"{thread} is already stopped")
    targets = sim_targets(m, thread)
    if len(targets) > 1:
        # Each call is a round trip to the device thread; only live threads can be held, so
        # asking for the resident warps the wildcard names holds exactly the same threads.
        targets = sorted(m.expand(thread, [(w.sm, w.wp) for w in s.warps(dev)]))
    held = sum(s.interrupt_threads(dev, sm, wp) for sm, wp in targets)
    if not held:
        with h.lock:
            if any(m.covers(thread, w.sm, w.warp) for w in h.stopped):
                raise ZetError(R.ZE_RESULT_NOT_READY, f"the threads {thread} names are already stopped")
            h.events.append(thread_event(T.ZET_DEBUG_EVENT_TYPE_THREAD_UNAVAILABLE, thread))
    return ()


def _pump(h: zet_debug_session_handle_t) -> None:
    """Translate what the Session has queued, so the stopped set is current."""
    while True:
        sev = h.session.next_event(0.0)
        if sev is None:
            return
        _translate(h, sev)


@zet_api("zetDebugResume")
def zetDebugResume(hDebug: zet_debug_session_handle_t, thread: ze_device_thread_t) -> tuple:
    """Let the named stopped threads continue; the other stopped threads stay stopped.
    ZE_RESULT_NOT_READY when none of the named threads is stopped.

    'all' is Session.resume (every hold released, the device continues).
    Otherwise the other reported threads are held first, then each named
    warp goes through Session.resume_threads, which on a device stopped as a
    whole holds everything else and lets the device go on."""
    h = check_handle(hDebug)
    check_thread(h, thread)
    s, dev, m = h.session, h.device, h.mapping
    _pump(h)
    with h.lock:
        named = {w for w in h.stopped if m.covers(thread, w.sm, w.warp)}
        if not named:
            raise ZetError(R.ZE_RESULT_NOT_READY, f"{thread} names no stopped thread: already running or unavailable")
        rest = h.stopped - named
        h.stopped -= named
    if thread.is_all:
        s.resume(dev)
        return ()
    for slot in sorted(rest):
        s.interrupt_threads(dev, slot.sm, slot.warp)
    for slot in sorted(named):
        s.resume_threads(dev, slot.sm, slot.warp)
    return ()
