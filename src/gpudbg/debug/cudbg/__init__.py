"""The CUDBG facade (seed 000, cudadebugger.h for CUDBGAPI 13.0).

The data layer lives here as plain modules so that everything above it
(the facade, Session adapters, tests, coredump tooling) shares one
definition of each code and layout:

- ``enums``: every ``typedef enum`` of the header, exact names and values.
- ``errors``: ``cudbgGetErrorString``, human descriptions, and the
  ``getErrorStringEx`` buffer contract.
- ``layouts``: the packed structs as (field, struct format) tables driving
  one packer/unpacker; ``events`` and ``devinfo`` build on it for the event
  union and for the variable-length batched device-info buffer.
- ``api_table``: the latest (non-deprecated) ``CUDBGAPI_st`` entries with
  their parsed C signatures, the denominator of the facade's coverage.

Execution control is deliberately absent: that is Session's job.
"""

from gpudbg.debug.cudbg.errors import cudbgGetErrorString  # noqa: E402
from gpudbg.debug.cudbg.facade import (  # noqa: E402
    CUDBG_API_VERSION_MAJOR,
    CUDBG_API_VERSION_MINOR,
    CUDBG_API_VERSION_REVISION,
    CUDBGAPI,
    cudbgGetAPI,
    cudbgGetAPIVersion,
)
