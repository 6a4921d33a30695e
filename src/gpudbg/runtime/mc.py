"""The mc* runtime API (seed 002) in cuda-python's calling convention.

Every function returns a tuple `(err, *outputs)` (just `(err,)` without
outputs; outputs are None on failure) where err is an mcError_t. The layer
is thin on purpose (seed 003 §2.1): resolve the calling thread's context,
check its sticky error, validate arguments (one layer driven by the
parameters' annotated kinds, runtime/api/_args.py), make one driver call. The only
state kept here is the per-host-thread last error (and its message, for
`last_error_message()`); everything else lives in driver objects.
Nothing raises out of an mc* call: a wrong argument, a failure and even
a gpudbg bug come back as an error code with a message (api/_base.py).

The functions live in `gpudbg.runtime.api`, one module per section of the
seed; this module is their single public namespace.
"""
from __future__ import annotations

from gpudbg.runtime.api.allocation import *  # noqa: F401,F403
from gpudbg.runtime.api.arrays import *  # noqa: F401,F403
from gpudbg.runtime.api.copies import *  # noqa: F401,F403
from gpudbg.runtime.api.device import *  # noqa: F401,F403
from gpudbg.runtime.api.events import *  # noqa: F401,F403
from gpudbg.runtime.api.execution import *  # noqa: F401,F403
from gpudbg.runtime.api.extensions import *  # noqa: F401,F403
from gpudbg.runtime.api.last_error import *  # noqa: F401,F403
from gpudbg.runtime.api.memsets import *  # noqa: F401,F403
from gpudbg.runtime.api.modules import *  # noqa: F401,F403
from gpudbg.runtime.api.occupancy import *  # noqa: F401,F403
from gpudbg.runtime.exec_types import *  # noqa: F401,F403  (limits, flags, func attributes, launch params)
from gpudbg.runtime.api.streams import *  # noqa: F401,F403
from gpudbg.runtime.api.textures import *  # noqa: F401,F403
from gpudbg.runtime.texture_types import *  # noqa: F401,F403  (channel/resource/texture descs)
from gpudbg.runtime.api.stream_memory import *  # noqa: F401,F403
from gpudbg.runtime.api.graphs import *  # noqa: F401,F403  (gpudbg extensions: capture's graphs)
from gpudbg.runtime.stream_types import *  # noqa: F401,F403  (capture, stream attributes, memory op flags)
from gpudbg.runtime.api.vmm import *  # noqa: F401,F403
from gpudbg.runtime.api.pools import *  # noqa: F401,F403
from gpudbg.runtime.errors import mcError_t  # noqa: F401
from gpudbg.runtime.memory_types import *  # noqa: F401,F403  (pitched/3D structs, memory flags)
from gpudbg.runtime.jit_types import mcJitCacheMode, mcJitFallback, mcJitInputType, mcJitOption  # noqa: F401
from gpudbg.runtime.types import mcFunction_attribute  # noqa: F401
from gpudbg.runtime.types import (  # noqa: F401  (the API's vocabulary, as in cuda-python)
    mcComputeMode, mcDeviceAttribute_t, mcDeviceProp, mcEventFlags, mcHostAllocFlags, mcLaunchParam,
    mcMallocHostFlags, mcMemAttachFlags, mcMemcpyKind, mcStreamFlags, mcStreamLegacy, mcStreamPerThread,
)

EXTENSIONS = ("host_view", "last_error_message", "fault_report", "last_launch_stats")
__all__ = sorted(n for n in dir() if n.startswith("mc")) + list(EXTENSIONS)
