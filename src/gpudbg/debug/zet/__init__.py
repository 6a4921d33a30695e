"""The Level Zero tools debug facade (seed 001, ``zetDebug*`` of Level Zero 1.18).

The data layer lives here as plain modules so the facade, Session adapters
and tests share one definition of each code, struct and signature:

- ``enums``: the seed's enums with Level Zero's values, plus ``ze_result_t``
  and the few borrowed enums the debug structs use.
- ``structs``: the debug structs and ``ze_device_thread_t`` as validating
  dataclasses with the spec's field names.
- ``functions``: the 12 ``zetDebug*`` signatures with parameter directions,
  from which the facade's ``(ze_result_t, *outputs)`` shape follows.
- ``mapping``: ze_device_thread_t (slice, subslice, eu, thread) onto the
  simulator's (sm, warp slot, lane), wildcards included.

Execution control is deliberately absent: that is Session's job.
"""

# The facade itself (``zetDebug*`` over a Session), resolved on first use so
# importing the data layer does not pull in the debugger.
_FACADE_MODULE = "gpudbg.debug.zet.facade"
_FACADE_NAMES = frozenset({
    "zetDebugAttach", "zetDebugDetach", "zetDebugReadEvent", "zetDebugAcknowledgeEvent", "zetDebugInterrupt",
    "zetDebugResume", "zetDebugReadMemory", "zetDebugWriteMemory", "zetDebugGetRegisterSetProperties",
    "zetDebugReadRegisters", "zetDebugWriteRegisters", "zetDebugGetThreadRegisterSetProperties", "API",
    "ZetError", "last_error_message", "zet_debug_session_handle_t", "zet_debug_regset_type_gpudbg_t",
    "decode_barrier_state", "PAGE_FAULT_MASK", "ELF_SPACE_BASE",
})


def __getattr__(name: str):
    if name in _FACADE_NAMES:
        import importlib
        value = getattr(importlib.import_module(_FACADE_MODULE), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
