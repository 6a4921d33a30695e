"""One simulated GPU: its memory, its front end with the device threads
(a scheduler and the engines that run kernels and copies beside it:
sim/frontend.py, sim/engines.py), the pool of SM capacity that concurrent
grids share (sim/sm_pool.py, made on the first launch), the table of
loaded code, and the device-side printf FIFO.

SimGPU is the hardware boundary the driver programs: it allocates memory,
attaches channels, and reads results; it never interprets API semantics.
The executor (the SMs) is injectable so the ring/fence/stream machinery can
be tested without running PTX; by default it is
`gpudbg.sim.executor.launch_grid`, imported on the first launch.
"""
from __future__ import annotations

import itertools
import sys
import threading
from typing import Any, Callable

from gpudbg.sim import host_malloc
from gpudbg.sim.device_model import DeviceModel
from gpudbg.sim.frontend import Frontend
from gpudbg.sim.gpu_cv import GpuCondition
from gpudbg.sim.memory.allocations import GlobalMemory
from gpudbg.sim.memory.spaces import Allocation, AllocationKind

Executor = Callable[..., Any]
DEVICE_VA_SIZE = 1 << 39   # 512 GiB of VA per device: 16 devices fit the host-reserved arena below the shared window


def _default_executor(*args: Any, **kwargs: Any) -> Any:
    from gpudbg.sim.executor import launch_grid
    return launch_grid(*args, **kwargs)


class SimGPU:
    def __init__(self, model: DeviceModel | None = None, ordinal: int = 0,
                 executor: Executor | None = None, memory: GlobalMemory | None = None):
        host_malloc.tune()      # the interpreter's big temporaries stay in the heap (host_malloc.py)
        self.model = model or DeviceModel()
        self.ordinal = ordinal
        # Each device gets its own VA window so one pointer names one byte
        # process-wide (UVA).
        self.memory = memory or GlobalMemory(
            capacity=self.model.global_memory, base=GlobalMemory.GLOBAL_BASE + ordinal * DEVICE_VA_SIZE,
            va_size=DEVICE_VA_SIZE)
        self.executor: Executor = executor or _default_executor
        self.cv = GpuCondition(threading.RLock())
        self.functions: dict[int, Any] = {}     # code address -> KernelFunction
        self.fault_listeners: list[Callable[[int, Any], None]] = []
        self.peers: dict[int, "SimGPU"] = {}     # devices this one's copy engine reaches (set by the driver)
        self.internal_errors: list[BaseException] = []
        self.notifications: list[tuple[int, int]] = []
        self.last_launch_stats: Any = None
        self.printf_buffer: list[str] = []
        self.printf_sink = self.printf_buffer   # the executor appends here
        self._printf_lock = threading.Lock()
        self._grid_ids = itertools.count(1)
        self.differential_hold = False   # the front end starts no command (sim/native/differential.py)
        self.frontend = Frontend(self)

    # ------------------------------------------------------------ memory
    def alloc_internal(self, size: int, kind: AllocationKind, label: str = "",
                       align: int = 256) -> Allocation:
        """Driver-owned memory (rings, semaphores, launch descriptors, staging)."""
        with self.cv:
            return self.memory.alloc(size, kind, align=align, label=label)

    def free_internal(self, allocation: Allocation) -> None:
        with self.cv:
            if not allocation.freed:
                self.memory.free(allocation.base, allocation.kind)

    # ------------------------------------------------------------ code
    def register_function(self, function: Any) -> None:
        self.functions[function.code_address] = function

    def unregister_function(self, function: Any) -> None:
        self.functions.pop(function.code_address, None)

    def next_grid_id(self) -> int:
        return next(self._grid_ids)    # one C call: atomic under the GIL, no lock to contend for

    # ------------------------------------------------------------ printf
    def flush_printf(self, stream: Any = None) -> int:
        """Write buffered device printf output to the host's stdout (looked up
        now, so redirection works); returns the number of records."""
        with self._printf_lock:
            n = len(self.printf_buffer)
            if n == 0:
                return 0
            records = self.printf_buffer[:n]
            del self.printf_buffer[:n]
        out = stream or sys.stdout
        out.write("".join(records))
        out.flush()
        return n

    # ------------------------------------------------------------ lifecycle
    def shutdown(self) -> None:
        """Stop the front end: running kernels are aborted, every device
        thread is joined."""
        self.frontend.stop()

    def __repr__(self) -> str:
        return f"SimGPU({self.ordinal}, {self.model.name!r})"
