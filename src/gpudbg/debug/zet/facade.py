"""The zet facade: the 12 ``zetDebug*`` functions of seed 001 over a Session.

Every function returns ``(ze_result_t, *outputs)``: the out-parameters of
the C signature (functions.FUNCTIONS) become outputs, None on failure, and
``last_error_message()`` says what was wrong. Handles: ``hDevice`` is a
device ordinal (as in mc*), ``hDebug`` the zet_debug_session_handle_t that
zetDebugAttach returns. The facade keeps only what the API shape needs
(events translated but not yet read, threads reported stopped, pending
acknowledgements, module ELF images); everything else is Session's.

Threads. A ze_device_thread_t names one EU hardware thread; on the
simulator that is one warp slot, and its SIMD channels are the warp's
lanes (mapping.py):

    slice    = GPC    = sm // 18      (18 SMs per slice; the 8th of 132 SMs has 6)
    subslice = SM     = sm % 18
    eu       = SMSP   = warp % 4      (the warp's scheduler sub-partition)
    thread   = slot   = warp // 4     (16 per EU with 64 warp slots per SM)

UINT32_MAX in a field means all of that level. zetDebugInterrupt and
zetDebugResume turn a (possibly wildcarded) thread into Session
interrupt_threads / resume_threads calls, one per SM and warp named, or a
single call with None for a level that is entirely 'all'; resuming the whole
device ends with Session.resume. Register and memory calls need one thread
(no wildcard) that a THREAD_STOPPED event has reported, otherwise
ZE_RESULT_ERROR_INVALID_ARGUMENT (wildcard, no such thread) or
ZE_RESULT_ERROR_NOT_AVAILABLE (running or not resident).

Events (zetDebugReadEvent, timeout in ms: 0 polls and answers
ZE_RESULT_NOT_READY when nothing is queued, UINT64_MAX waits for ever):
module loads/unloads → MODULE_LOAD (NEED_ACK: the loading host thread is
held until zetDebugAcknowledgeEvent) / MODULE_UNLOAD with the module's ELF
image range and code address; first context created / last destroyed →
PROCESS_ENTRY / PROCESS_EXIT; a device stop → THREAD_STOPPED per stopped
warp; an interrupt naming no resident thread → THREAD_UNAVAILABLE; an
illegal address → PAGE_FAULT; the Session detaching → DETACHED.

Memory spaces (facade_memory): DEFAULT, SLM, ELF, BARRIER. Register sets
(facade_regs): GRF, FLAG, CE, PC.
"""
from __future__ import annotations

from gpudbg.debug.zet.facade_core import ZetError, last_error_message, zet_debug_session_handle_t
from gpudbg.debug.zet.facade_events import (
    PAGE_FAULT_MASK,
    zetDebugAcknowledgeEvent,
    zetDebugAttach,
    zetDebugDetach,
    zetDebugInterrupt,
    zetDebugReadEvent,
    zetDebugResume,
)
from gpudbg.debug.zet.facade_memory import (
    BARRIER_FLAG_AT_BARRIER,
    BARRIER_FLAG_THIS_THREAD,
    BARRIER_HEADER,
    BARRIER_VERSION,
    BARRIER_WARP,
    ELF_SPACE_BASE,
    decode_barrier_state,
    zetDebugReadMemory,
    zetDebugWriteMemory,
)
from gpudbg.debug.zet.facade_regs import (
    zet_debug_regset_type_gpudbg_t,
    zetDebugGetRegisterSetProperties,
    zetDebugGetThreadRegisterSetProperties,
    zetDebugReadRegisters,
    zetDebugWriteRegisters,
)

# The seed's functions, in its order (the same order as functions.FUNCTIONS).
API = {
    "zetDebugAttach": zetDebugAttach,
    "zetDebugDetach": zetDebugDetach,
    "zetDebugReadEvent": zetDebugReadEvent,
    "zetDebugAcknowledgeEvent": zetDebugAcknowledgeEvent,
    "zetDebugInterrupt": zetDebugInterrupt,
    "zetDebugResume": zetDebugResume,
    "zetDebugReadMemory": zetDebugReadMemory,
    "zetDebugWriteMemory": zetDebugWriteMemory,
    "zetDebugGetRegisterSetProperties": zetDebugGetRegisterSetProperties,
    "zetDebugReadRegisters": zetDebugReadRegisters,
    "zetDebugWriteRegisters": zetDebugWriteRegisters,
    "zetDebugGetThreadRegisterSetProperties": zetDebugGetThreadRegisterSetProperties,
}

__all__ = [*API, "API", "ZetError", "last_error_message", "zet_debug_session_handle_t",
           "zet_debug_regset_type_gpudbg_t", "decode_barrier_state", "PAGE_FAULT_MASK", "ELF_SPACE_BASE",
           "BARRIER_VERSION", "BARRIER_HEADER", "BARRIER_WARP", "BARRIER_FLAG_AT_BARRIER",
           "BARRIER_FLAG_THIS_THREAD"]
