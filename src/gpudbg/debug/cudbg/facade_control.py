"""Lifecycle, execution control, breakpoints, events and batched device info
entries of the cudbg facade.

The one idea: each entry is a thin translation onto one Session call, and
the only things kept here are what the C API's shape forces: the Session
handle, breakpoints by (address -> Session Breakpoint, devices), the two
CUDBG event queues with the Session events behind them (so that
acknowledgeSyncEvents can release exactly the events the client has read)
and the client's callback. Stopping, stepping and breakpoint hits are the
Session's; the device-info buffer (FULL and UPDATE) is the Session's too,
the facade only enforces the buffer contract.

Breakpoints in the Session are not per device; setBreakpoint on one device
arms the address wherever that code runs (with one simulated device, the
usual case, there is no difference).
"""
from __future__ import annotations

import collections
import threading
from typing import Any

from gpudbg.debug.cudbg.enums import (
    CUDBGCapabilityFlags,
    CUDBGDeviceInfoQueryType_t,
    CUDBGEventKind,
    CUDBGEventQueueType,
    CUDBGKernelLaunchNotifyMode,
    CUDBGResult,
    CUDBGSingleStepFlags,
)
from gpudbg.debug.cudbg.events import CUDBGEvent, InternalError
from gpudbg.debug.cudbg.facade_events import (
    ASYNC,
    SYNC,
    CUDBGEventCallbackData,
    EventPump,
    queue_of,
    to_cudbg,
)
from gpudbg.debug.cudbg.facade_state import CudbgError, Helpers

R = CUDBGResult
SUSPEND_WAIT_SECONDS = 10.0
CAPABILITIES = CUDBGCapabilityFlags.CUDBG_DEBUGGER_CAPABILITY_SUSPEND_EVENTS


class ControlEntries(Helpers):
    # ------------------------------------------------------------- facade state
    def _init_state(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[CUDBGEventQueueType, collections.deque] = {SYNC: collections.deque(),
                                                                      ASYNC: collections.deque()}
        self._delivered: list[Any] = []          # Session events read from the sync queue, not yet acked
        self._callback: Any = None
        self._user_data: Any = None
        self._pump: EventPump | None = None
        self._tls = threading.local()
        self._breakpoints: dict[int, tuple[Any, set[int]]] = {}
        self._modules: dict[tuple[int, int], Any] = {}
        self._image_cache: dict[tuple[int, int, bool], bytes] = {}

    def _in_callback(self) -> bool:
        return getattr(self._tls, "in_callback", False)

    def _image_size(self, dev: int, program: Any) -> int:
        try:
            return len(self._image(dev, program, True))
        except Exception:  # noqa: BLE001  (a module without code: the event still tells of it)
            return 0

    def _deliver(self, event: Any) -> None:
        """Pump thread: convert, queue, call the client's callback."""
        try:
            kind = event.kind.name
            if kind == "ELF_IMAGE_LOADED":
                self._modules[(event.dev, event.program.code_base)] = event.program
            record = to_cudbg(event, self._image_size)
            if kind == "ELF_IMAGE_UNLOADED":
                handle = event.program.code_base
                self._modules.pop((event.dev, handle), None)
                for relocated in (True, False):
                    self._image_cache.pop((event.dev, handle, relocated), None)
        except Exception as e:  # noqa: BLE001  (the pump must survive; the client hears of it)
            record = CUDBGEvent(CUDBGEventKind.CUDBG_EVENT_INTERNAL_ERROR, InternalError(R.CUDBG_ERROR_INTERNAL))
            self._last_error.record("event pump", R.CUDBG_ERROR_INTERNAL, f"{type(e).__name__}: {e}")
        if record is None:
            self.session.acknowledge(event)
            return
        with self._lock:
            self._queues[queue_of(event)].append((record, event))
            callback, user_data = self._callback, self._user_data
        if callback is not None:
            self._tls.in_callback = True
            try:
                callback(CUDBGEventCallbackData(user_data, 0))
            finally:
                self._tls.in_callback = False

    def _release_events(self) -> None:
        with self._lock:
            pending = self._delivered + [ev for q in self._queues.values() for _, ev in q]
            self._delivered = []
            for q in self._queues.values():
                q.clear()
        for ev in pending:
            self.session.acknowledge(ev)

    # ------------------------------------------------------------- initialization
    def initialize(self) -> tuple:
        """Attaches the Session (unless one was given) and starts delivering its events."""
        if self._session is not None:
            return ()
        session = self._attach()
        self._session = session
        self._pump = EventPump(session, self._deliver)
        self._pump.start()
        return ()

    def finalize(self) -> tuple:
        """Stops event delivery, releases unacknowledged events, removes the facade's
        breakpoints and detaches a Session the facade attached itself."""
        session = self._session
        if self._pump is not None:
            self._pump.stop()
            self._pump = None
        self._release_events()
        for bp, _devs in list(self._breakpoints.values()):
            session.delete_breakpoint(bp)
        self._breakpoints.clear()
        self._modules.clear()
        self._image_cache.clear()
        self._session = None
        if self._owns_session:
            self._owns_session = False
            session.detach()
        return ()

    def initializeAttachStub(self) -> tuple:
        """Nothing to do: the debugger runs in the application's process, no stub is needed."""
        return ()

    def clearAttachState(self) -> tuple:
        """Drops the events not yet read, releasing any application thread waiting on them."""
        self._release_events()
        return ()

    def requestCleanupOnDetach(self, appResumeFlag) -> tuple:
        """Always granted: Session.detach (finalize) resumes the application and removes breakpoints."""
        return ()

    def getSupportedDebuggerCapabilities(self) -> tuple:
        """Stops are reported as CUDBG_EVENT_ALL_DEVICES_SUSPENDED events."""
        return (CAPABILITIES,)

    def getErrorStringEx(self, bufSz) -> tuple:
        result, buf, size = self._last_error.getErrorStringEx(bufSz)
        if result != R.CUDBG_SUCCESS:
            raise CudbgError(result, f"the message needs {size} bytes, bufSz is {bufSz}", outputs=(None, size))
        return (buf, size)

    # ------------------------------------------------------------- events
    def setNotifyNewEventCallback(self, callback, userData) -> tuple:
        """``callback(CUDBGEventCallbackData)`` runs on the event thread after each queued
        event; calling the API from inside it is CUDBG_ERROR_RECURSIVE_API_CALL."""
        with self._lock:
            self._callback, self._user_data = callback, userData
        return ()

    def getNextEvent(self, type) -> tuple:
        with self._lock:
            queue = self._queues[type]
            if not queue:
                raise CudbgError(R.CUDBG_ERROR_NO_EVENT_AVAILABLE, f"the {type.name} queue is empty")
            record, event = queue.popleft()
            if type is SYNC:
                self._delivered.append(event)
        if type is ASYNC:
            self.session.acknowledge(event)
        return (record,)

    def acknowledgeSyncEvents(self) -> tuple:
        """Releases the application threads waiting on the sync events read so far."""
        with self._lock:
            events, self._delivered = self._delivered, []
        for event in events:
            self.session.acknowledge(event)
        return ()

    def setKernelLaunchNotificationMode(self, mode) -> tuple:
        from gpudbg.debug.events import LaunchNotify
        notify = LaunchNotify.DEFER if mode is CUDBGKernelLaunchNotifyMode.CUDBG_KNL_LAUNCH_NOTIFY_DEFER \
            else LaunchNotify.EVENT
        self.session.set_launch_notify(notify)
        return ()

    # ------------------------------------------------------------- execution control
    def suspendDevice(self, dev) -> tuple:
        """Returns once the device has stopped (its STOPPED event is then queued)."""
        self._props(dev)
        self.session.suspend(dev)
        if not self.session.wait_stopped(dev, timeout=SUSPEND_WAIT_SECONDS):
            raise CudbgError(R.CUDBG_ERROR_COMMUNICATION_FAILURE,
                             f"device {dev} did not stop within {SUSPEND_WAIT_SECONDS} s")
        return ()

    def resumeDevice(self, dev) -> tuple:
        self._props(dev)
        self.session.resume(dev)
        return ()

    def singleStepWarp(self, dev, sm, wp, laneHint, nsteps, flags) -> tuple:
        """``laneHint`` is only a hint and is not needed: the warp's active lanes step together."""
        try:
            step_flags = CUDBGSingleStepFlags(flags)
        except ValueError:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, f"flags=0x{flags:x} are not CUDBGSingleStepFlags") from None
        warp = self._warp(dev, sm, wp)
        no_step_over = CUDBGSingleStepFlags.CUDBG_SINGLE_STEP_FLAGS_NO_STEP_OVER_WARP_BARRIERS
        if step_flags & no_step_over and warp.at_barrier:
            raise CudbgError(R.CUDBG_ERROR_WARP_RESUME_NOT_POSSIBLE,
                             "the warp waits at a barrier and stepping over it was not allowed")
        if nsteps == 0:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, "nsteps must be at least 1")
        return (int(self.session.single_step_warp(dev, sm, wp, nsteps)),)

    def resumeWarpsUntilPC(self, devId, sm, warpMask, virtPC) -> tuple:
        valid = sum(1 << w.wp for w in self._sm_warps(devId, sm))
        if warpMask == 0 or warpMask & ~valid:
            raise CudbgError(R.CUDBG_ERROR_INVALID_WARP_MASK,
                             f"mask 0x{warpMask:x} is empty or names warps outside the valid 0x{valid:x}")
        self.session.resume_warps_until_pc(devId, sm, warpMask, virtPC)
        return ()

    # ------------------------------------------------------------- breakpoints
    def setBreakpoint(self, dev, addr) -> tuple:
        """``addr`` must be an instruction of a loaded module (see getAdjustedCodeAddress)."""
        self._props(dev)
        program = self.session.program_at(dev, addr)
        if program is None or program.pc_of_address(addr) is None:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ADDRESS, f"0x{addr:x} is not an instruction on device {dev}")
        with self._lock:
            held = self._breakpoints.get(addr)
        if held is None:
            bp = self.session.break_at_address(addr)
            with self._lock:
                self._breakpoints[addr] = (bp, {dev})
        else:
            held[1].add(dev)
        return ()

    def unsetBreakpoint(self, dev, addr) -> tuple:
        self._props(dev)
        with self._lock:
            held = self._breakpoints.get(addr)
            if held is None or dev not in held[1]:
                raise CudbgError(R.CUDBG_ERROR_INVALID_ADDRESS, f"no breakpoint at 0x{addr:x} on device {dev}")
            held[1].discard(dev)
            if held[1]:
                return ()
            del self._breakpoints[addr]
        self.session.delete_breakpoint(held[0])
        return ()

    # ------------------------------------------------------------- batched device info
    def getDeviceInfoSizes(self, dev) -> tuple:
        self._props(dev)
        return (self.session.device_info_sizes(dev),)

    def getDeviceInfo(self, dev, type, length) -> tuple:
        """``length`` must be at least requiredBufferSize of getDeviceInfoSizes (checked
        before the query, so a refused UPDATE does not lose the changes it would report)."""
        self._props(dev)
        if type is CUDBGDeviceInfoQueryType_t.CUDBG_RESPONSE_TYPE_UNKNOWN:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, "query type must be FULL or UPDATE")
        need = self.session.device_info_sizes(dev).requiredBufferSize
        if length < need:
            raise CudbgError(R.CUDBG_ERROR_BUFFER_TOO_SMALL, f"length {length} < requiredBufferSize {need}")
        data = self.session.device_info(dev, type)
        return (bytes(data), len(data))

    # ------------------------------------------------------------- coredumps
    def generateCoredump(self, filename, flags) -> tuple:
        if not filename:
            raise CudbgError(R.CUDBG_ERROR_INVALID_ARGS, "filename is empty")
        self.session.generate_coredump(filename, int(flags))
        return ()


__all__ = ["ControlEntries", "CUDBGEventCallbackData"]
