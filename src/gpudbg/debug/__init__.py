"""The debugger: one debug API and the vendor-shaped facades over it.

Plan of the package, bottom up:

- ``cudbg``: the CUDA debugger API of seed 000 (cudadebugger.h, CUDBGAPI
  13.0). Its data layer comes first: enums with the header's exact values,
  result strings, the packed structs of events and of the batched
  device-info protocol, and the function table as data. The facade methods
  (``cudbgGetAPI`` and the ``CUDBGAPI_st`` entries returning
  ``(CUDBGResult, *outputs)``) sit on top of it and on Session.
- ``dwarf``: source-level debug information of ``-G`` PTX (line table,
  variables, types, scopes and their locations at our code addresses).
- ``Session`` (later): the one policy-free, machine-oriented debug API. It
  reaches the device only through a narrow backend interface that the
  simulator implements, so a real-GPU backend can slot in.
- ``zet``: the Level Zero tools debug API of seed 001 (``zetDebug*``) over
  the same Session.

The facades translate; they hold no debugger state of their own beyond what
their API shape needs (handles, the last error message).
"""
