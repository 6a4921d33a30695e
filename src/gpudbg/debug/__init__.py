"""The debugger: one debug API (Session) and the vendor-shaped facades over it.

Layout, bottom up:

- ``backend``: the narrow interface a device implements for the debugger
  (the simulator's is gpudbg.sim.debug_backend; a coredump's is
  gpudbg.dump.coredump.target) and the frozen views it answers with.
- ``session``: the policy-free, machine-oriented debug API (seed 000's
  model): events (``events``), breakpoints (``breakpoints``), execution
  control, source stepping (``source_steps``), state, variables
  (``variables``), batched device info (``device_info``), coredumps.
- ``dwarf``: source-level debug information of ``-G`` PTX (line table,
  variables, types, scopes and their locations at our code addresses).
- ``cudbg``: the CUDA debugger API of seed 000 (enums, structs, the
  ``CUDBGAPI_st`` function table) and its facade over Session.
- ``zet``: the Level Zero tools debug API of seed 001 over Session.

The facades translate; they hold no debugger state of their own beyond what
their API shape needs (handles, the last error message).
"""
from gpudbg.debug.backend import MemorySpace, StopReason
from gpudbg.debug.breakpoints import Breakpoint
from gpudbg.debug.events import Event, EventKind, LaunchNotify
from gpudbg.debug.session import DebugError, Session, VariableValue

__all__ = ["Breakpoint", "DebugError", "Event", "EventKind", "LaunchNotify", "MemorySpace",
           "Session", "StopReason", "VariableValue"]
