"""What every zetDebug* entry point shares: the session handle, result
mapping, and ze_device_thread_t resolution against the live device.

The one idea: each entry point is a plain function whose body may raise
``ZetError(code, message)``; the ``zet_api`` decorator turns that (and any
Session/backend error, whose string ``code`` it translates) into the
``(ze_result_t, *outputs)`` tuple with None outputs, and records the message
as the calling thread's last error, so a failing call always says which
argument, thread or address was wrong. The handle owns the facade's only
state: the Session, the device, the translated-event queue, the threads
the tool has been told are stopped, and pending acknowledgements.

Nothing here talks to the simulator directly; it all goes through Session.
"""
from __future__ import annotations

import functools
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpudbg.debug.zet.enums import ze_result_t
from gpudbg.debug.zet.functions import function
from gpudbg.debug.zet.mapping import ALL, ThreadMapping, WarpSlot, ZetCoordinateError
from gpudbg.debug.zet.structs import ZetStructError, ze_device_thread_t

R = ze_result_t


class ZetError(Exception):
    """A zetDebug* call fails with ``code``; ``message`` says why."""

    def __init__(self, code: ze_result_t, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


# Session DebugError / backend BackendError codes (CUDBGResult-style strings).
_SESSION_CODES: dict[str, ze_result_t] = {
    "RUNNING": R.ZE_RESULT_ERROR_NOT_AVAILABLE,
    "RUNNING_DEVICE": R.ZE_RESULT_ERROR_NOT_AVAILABLE,
    "SUSPENDED": R.ZE_RESULT_ERROR_NOT_AVAILABLE,
    "INVALID_DEVICE": R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
    "INVALID_SM": R.ZE_RESULT_ERROR_NOT_AVAILABLE,
    "INVALID_WARP": R.ZE_RESULT_ERROR_NOT_AVAILABLE,
    "INVALID_LANE": R.ZE_RESULT_ERROR_NOT_AVAILABLE,
    "INVALID_COORDINATES": R.ZE_RESULT_ERROR_NOT_AVAILABLE,
    "INVALID_ADDRESS": R.ZE_RESULT_ERROR_NOT_AVAILABLE,
    "INVALID_MEMORY_ACCESS": R.ZE_RESULT_ERROR_NOT_AVAILABLE,
    "INVALID_MEMORY_SEGMENT": R.ZE_RESULT_ERROR_NOT_AVAILABLE,
    "MEMORY_MAPPING_FAILED": R.ZE_RESULT_ERROR_NOT_AVAILABLE,
    "INVALID_ARGS": R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
    "INVALID_ARGUMENT": R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
    "NOT_SUPPORTED": R.ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
    "UNINITIALIZED": R.ZE_RESULT_ERROR_UNINITIALIZED,
    "DEVICE_LOST": R.ZE_RESULT_ERROR_DEVICE_LOST,
    "INVALID_CONTEXT": R.ZE_RESULT_ERROR_NOT_AVAILABLE,     # no kernel running: no thread to access
    "INVALID_REGISTER": R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
    "ALREADY_ATTACHED": R.ZE_RESULT_ERROR_NOT_AVAILABLE,    # the spec: "a debugger is already attached"
}


def session_error(exc: Exception) -> ZetError | None:
    """The ZetError for a Session or backend error (anything carrying a string ``code``)."""
    code = getattr(exc, "code", None)
    if not isinstance(code, str):
        return None
    message = getattr(exc, "message", None) or str(exc)
    return ZetError(_SESSION_CODES.get(code, R.ZE_RESULT_ERROR_UNKNOWN), f"{message} (session: {code})")


_last = threading.local()


def last_error_message() -> str:
    """The message of the calling thread's last failed zetDebug* call ('' after a success)."""
    return getattr(_last, "message", "")


def zet_api(name: str) -> Callable[[Callable[..., tuple]], Callable[..., tuple]]:
    """Wrap ``impl`` (returning the outputs as a tuple) into the ``(ze_result_t, *outputs)`` shape."""
    n_out = len(function(name).outputs)

    def wrap(impl: Callable[..., tuple]) -> Callable[..., tuple]:
        @functools.wraps(impl)
        def api(*args: Any, **kwargs: Any) -> tuple:
            try:
                out = impl(*args, **kwargs)
            except ZetError as e:
                _last.message = e.message
                return (e.code, *([None] * n_out))
            except (ZetStructError, ZetCoordinateError) as e:
                _last.message = str(e)
                return (R.ZE_RESULT_ERROR_INVALID_ARGUMENT, *([None] * n_out))
            except Exception as e:  # a Session/backend error; anything else is a bug and propagates
                mapped = session_error(e)
                if mapped is None:
                    raise
                _last.message = mapped.message
                return (mapped.code, *([None] * n_out))
            _last.message = ""
            result = out[0] if out and isinstance(out[0], ze_result_t) else R.ZE_RESULT_SUCCESS
            rest = out[1:] if out and isinstance(out[0], ze_result_t) else out
            if len(rest) != n_out:
                raise AssertionError(f"{name} produced {len(rest)} outputs, its table says {n_out}")
            return (result, *rest)

        api.zet_function = function(name)
        return api

    return wrap


@dataclass(eq=False)
class zet_debug_session_handle_t:
    """A debug session on one device (the handle zetDebugAttach produces).

    ``session`` is the underlying gpudbg.debug.Session, exposed so a tool
    can mix zet calls with what zet cannot express (breakpoints by source
    line, stepping); ``owns_session`` says whether zetDebugDetach detaches it.
    """

    session: Any
    device: int
    pid: int
    mapping: ThreadMapping
    owns_session: bool = True
    attached: bool = True
    lock: threading.RLock = field(default_factory=threading.RLock)
    events: deque = field(default_factory=deque)            # translated zet events not yet read
    stopped: set[WarpSlot] = field(default_factory=set)     # threads the tool was told are stopped
    pending_ack: list = field(default_factory=list)         # (zet event, Session event) awaiting ack
    elf_images: dict[int, Any] = field(default_factory=dict)  # code_base -> ElfImage (facade_memory)
    elf_next: int = 0                                       # next free address in the ELF space
    contexts: set[int] = field(default_factory=set)         # live contexts seen (PROCESS_ENTRY/EXIT)

    def __repr__(self) -> str:
        state = "attached" if self.attached else "detached"
        return f"<zet_debug_session_handle_t device {self.device} pid {self.pid} {state}>"


def check_handle(hDebug: Any) -> zet_debug_session_handle_t:
    if hDebug is None:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "hDebug is null")
    if not isinstance(hDebug, zet_debug_session_handle_t):
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
                       f"hDebug must be a zet_debug_session_handle_t from zetDebugAttach, got {type(hDebug).__name__}")
    if not hDebug.attached:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_NULL_HANDLE, f"{hDebug!r} was released by zetDebugDetach")
    return hDebug


def check_thread(h: zet_debug_session_handle_t, thread: Any) -> ze_device_thread_t:
    if not isinstance(thread, ze_device_thread_t):
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
                       f"thread must be a ze_device_thread_t, got {type(thread).__name__}")
    try:
        h.mapping.validate(thread)
    except ZetCoordinateError as e:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT, f"{thread}: {e}") from None
    return thread


def single_stopped_thread(h: zet_debug_session_handle_t, thread: Any, what: str) -> WarpSlot:
    """The warp of one stopped zet thread: wildcards are INVALID_ARGUMENT, a running or
    non-resident thread NOT_AVAILABLE (the seed: "the thread is running or unavailable")."""
    check_thread(h, thread)
    if not thread.is_single:
        raise ZetError(R.ZE_RESULT_ERROR_INVALID_ARGUMENT,
                       f"{what} needs one thread, but {thread} uses the 'all' wildcard")
    slot = h.mapping.to_sim(thread)
    if slot not in h.stopped:
        raise ZetError(R.ZE_RESULT_ERROR_NOT_AVAILABLE,
                       f"{thread} (SM {slot.sm}, warp {slot.warp}) is running or unavailable: only threads "
                       "reported by a THREAD_STOPPED event can be accessed")
    return slot


def sim_targets(m: ThreadMapping, thread: ze_device_thread_t) -> list[tuple[int | None, int | None]]:
    """(sm, warp) arguments for Session.interrupt_threads/resume_threads covering ``thread``,
    with None for a level that is entirely 'all', so a wildcard costs as few calls as it can."""
    m.validate(thread)
    if thread.slice == ALL and thread.subslice == ALL:
        sms: list[int] | None = None
    elif thread.slice == ALL:
        sms = [s * m.sms_per_slice + thread.subslice for s in range(m.num_slices)
               if thread.subslice < m.subslices_in(s)]
    elif thread.subslice == ALL:
        sms = [thread.slice * m.sms_per_slice + k for k in range(m.subslices_in(thread.slice))]
    else:
        sms = [thread.slice * m.sms_per_slice + thread.subslice]
    if thread.eu == ALL and thread.thread == ALL:
        warps: list[int] | None = None
    else:
        eus = range(m.eus_per_subslice) if thread.eu == ALL else (thread.eu,)
        hws = range(m.threads_per_eu) if thread.thread == ALL else (thread.thread,)
        warps = sorted(t * m.eus_per_subslice + e for e in eus for t in hws)
    return [(sm, w) for sm in (sms if sms is not None else [None])
            for w in (warps if warps is not None else [None])]


def first_valid_lane(session: Any, dev: int, slot: WarpSlot) -> int:
    """The lowest valid lane of a warp: the channel whose generic window a DEFAULT access uses."""
    view = session.warp(dev, slot.sm, slot.warp)
    mask = int(view.valid_mask)
    if not mask:
        raise ZetError(R.ZE_RESULT_ERROR_NOT_AVAILABLE, f"warp {slot.warp} on SM {slot.sm} has no valid lanes")
    return (mask & -mask).bit_length() - 1
