"""The narrow interface between the debugger and a device: what a backend
(the simulator today, a real GPU or a GPU coredump tomorrow) must provide,
and the plain values it answers with.

The one idea: the Session never touches executor state. A backend answers
questions in the coordinates of the CUDA debugger API (device, SM, warp
slot, lane; grid id, blockIdx, threadIdx) with frozen views, reads and
writes registers by PTX name and memory by space, and, if it can execute,
takes a small set of control requests (stop, resume, step one warp, run
warps to a pc, hold threads). Everything with policy in it (breakpoint
resolution, conditions, source lines, event queues and acknowledgement,
the batched device-info protocol) lives above, in the Session. A backend
calls its listener (the Session) from whatever thread it runs on: module
loads from the host thread, stops from the device thread, which stays
blocked in the backend until the Session resumes it.

A backend that cannot execute (a coredump) sets `can_execute` False and
raises BackendError from the control methods.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import numpy as np

from gpudbg.sim.faults import CUDBGException


class MemorySpace(enum.Enum):
    """Memory spaces the debugger reads and writes (DESIGN.md)."""

    GLOBAL = "global"
    SHARED = "shared"
    LOCAL = "local"
    PARAM = "param"
    CONST = "const"
    GENERIC = "generic"
    CODE = "code"


class StopReason(enum.Enum):
    """Why a device stopped (the Session's STOPPED event carries it)."""

    BREAKPOINT = "breakpoint"
    EXCEPTION = "exception"
    SUSPENDED = "suspended"       # suspend request, or a launch while suspended
    THREADS_HELD = "threads held"  # every runnable thread is held (interrupted)
    WATCHPOINT = "watchpoint"     # lanes touched watched device memory (debug/watch.py)


class GridStatus(enum.IntEnum):
    """CUDBGGridStatus values of seed 000."""

    CUDBG_GRID_STATUS_INVALID = 0
    CUDBG_GRID_STATUS_PENDING = 1
    CUDBG_GRID_STATUS_ACTIVE = 2
    CUDBG_GRID_STATUS_SLEEPING = 3
    CUDBG_GRID_STATUS_TERMINATED = 4
    CUDBG_GRID_STATUS_UNDETERMINED = 5


class BackendError(Exception):
    """A request the backend cannot carry out; `code` names the reason in
    CUDBGResult terms (the facades map it), the message says which
    coordinate, address or register was wrong."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code      # e.g. "INVALID_LANE", "MEMORY_MAPPING_FAILED", "RUNNING"
        self.message = message


@dataclass(frozen=True)
class DeviceProperties:
    dev: int
    name: str
    type_name: str            # what getDeviceType answers
    sm_type: str              # "sm_90"
    sm_major: int
    sm_minor: int
    num_sms: int
    num_warps: int            # warp slots per SM
    num_lanes: int
    num_registers: int        # R registers per lane (cuda-gdb view)
    num_predicates: int
    pci_bus_id: int = 0
    pci_dev_id: int = 0
    instruction_size: int = 16
    global_memory_size: int = 0


@dataclass(frozen=True)
class GridView:
    dev: int
    grid_id: int
    kernel: str               # the kernel's PTX name
    entry_address: int        # code address of the kernel's first instruction
    module_id: int            # code base of its module
    context_id: int
    grid_dim: tuple[int, int, int]
    block_dim: tuple[int, int, int]
    shared_bytes: int
    status: GridStatus
    params: bytes = b""
    cluster_dim: tuple[int, int, int] = (1, 1, 1)
    host_tid: int = 0          # native id of the host thread that launched it (0: unknown)
    parent_grid_id: int = 0    # the grid that launched it from the device (0: the host did)


class LaneView(NamedTuple):
    """One lane (a tuple: a wave holds hundreds of thousands of them)."""

    ln: int
    thread_idx: tuple[int, int, int]
    pc: int                    # virtual pc (code address) of this lane
    active: bool               # executes with the warp at the warp's pc
    function: str              # PTX function the lane is in
    exception: CUDBGException = CUDBGException.CUDBG_EXCEPTION_NONE
    call_depth: int = 0
    return_addresses: tuple[int, ...] = ()   # innermost first
    at_barrier: bool = False
    held: bool = False
    frame_base: int = 0        # offset in the lane's local memory of its current frame


@dataclass(frozen=True)
class WarpView:
    dev: int
    sm: int
    wp: int
    grid_id: int
    block_idx: tuple[int, int, int]
    valid_mask: int
    active_mask: int
    broken: bool               # stopped at a breakpoint or an exception
    pc: int                    # virtual pc of the active lanes
    function: str
    lanes: tuple[LaneView, ...] = field(default_factory=tuple)   # valid lanes, by ln
    error_pc: int | None = None
    cluster_idx: tuple[int, int, int] = (0, 0, 0)
    at_barrier: bool = False

    def lane(self, ln: int) -> LaneView:
        for lv in self.lanes:
            if lv.ln == ln:
                return lv
        raise BackendError("INVALID_LANE", f"lane {ln} of warp {self.wp} on SM {self.sm} is not valid")


class RegionKind(enum.Enum):
    """What a user-visible allocation is (debuggers list and classify them)."""

    DEVICE = "device"
    HOST_PINNED = "host pinned"          # page-locked host memory, mapped for the device
    HOST_REGISTERED = "host registered"
    MANAGED = "managed"
    MODULE_GLOBAL = "module global"
    MODULE_CONST = "module constant"
    DEVICE_HEAP = "device heap"


@dataclass(frozen=True)
class MemoryRegion:
    base: int
    size: int
    kind: RegionKind
    host_address: int | None = None      # where the host sees it (host memory only)


@dataclass(frozen=True)
class RegisterValue:
    name: str                  # PTX spelling, "%r1"
    dtype: str                 # numpy dtype name: "uint32", "float32", "bool"
    value: Any                 # numpy scalar
    # False: optimized code may have dropped its value at this pc (the
    # register is dead there); `value` is what the register file holds,
    # possibly older (cuda-gdb's <optimized out>, value_extrapolation)
    available: bool = True


@dataclass(frozen=True)
class LaneCoords:
    """The candidate lanes of a breakpoint hit, as parallel arrays, so a
    condition on coordinates is one vector expression."""

    sm: np.ndarray
    wp: np.ndarray
    ln: np.ndarray
    block_idx: tuple[np.ndarray, np.ndarray, np.ndarray]
    thread_idx: tuple[np.ndarray, np.ndarray, np.ndarray]

    def __len__(self) -> int:
        return len(self.ln)


class BackendListener(Protocol):
    """What a backend tells the Session (called on the backend's threads)."""

    def module_loaded(self, dev: int, program: Any, name: str) -> None: ...
    def module_unloaded(self, dev: int, program: Any, name: str) -> None: ...
    def context_event(self, dev: int, kind: str, context_id: int) -> None: ...
    def kernel_ready(self, dev: int, grid: GridView) -> None: ...
    def kernel_finished(self, dev: int, grid: GridView) -> None: ...
    def breakpoint_filter(self, dev: int, address: int, lanes: LaneCoords) -> np.ndarray: ...
    def watch_filter(self, dev: int, hits: list) -> list: ...     # debug.watch.WatchHit: the ones that stop
    def stopped(self, dev: int, reason: StopReason, info: dict) -> None: ...
    def resumed(self, dev: int) -> None: ...
    def page_fault(self, dev: int, address: int, reason: str, info: dict) -> None: ...
    def internal_error(self, dev: int, message: str) -> None: ...
    def timeout(self, dev: int, message: str) -> None: ...


class DebugBackend(Protocol):
    """The device side. Every coordinate is checked; a bad one raises
    BackendError naming it."""

    can_execute: bool

    def set_listener(self, listener: BackendListener | None) -> None: ...
    def device_count(self) -> int: ...
    def device(self, dev: int) -> DeviceProperties: ...
    def grids(self, dev: int) -> list[GridView]: ...
    def warps(self, dev: int) -> list[WarpView]: ...
    def warp(self, dev: int, sm: int, wp: int) -> WarpView | None: ...   # one warp, cheaply
    def programs(self, dev: int) -> list[Any]: ...
    def program_of_address(self, dev: int, address: int) -> Any | None: ...
    def allocations(self, dev: int) -> list[MemoryRegion]: ...
    def registers(self, dev: int, sm: int, wp: int, ln: int) -> list[RegisterValue]: ...
    def write_register(self, dev: int, sm: int, wp: int, ln: int, name: str, value: Any) -> None: ...
    def read_memory(self, dev: int, space: MemorySpace, address: int, size: int,
                    sm: int | None = None, wp: int | None = None, ln: int | None = None) -> bytes: ...
    def write_memory(self, dev: int, space: MemorySpace, address: int, data: bytes,
                     sm: int | None = None, wp: int | None = None, ln: int | None = None) -> None: ...
    # execution control (live backends)
    def is_stopped(self, dev: int) -> bool: ...
    def suspend(self, dev: int) -> None: ...
    def resume(self, dev: int) -> None: ...
    def set_breakpoints(self, dev: int, addresses: set[int]) -> None: ...
    def set_watchpoints(self, dev: int, watches: tuple) -> None: ...   # debug.watch.DeviceWatch (optional)
    def single_step_warp(self, dev: int, sm: int, wp: int, nsteps: int) -> int: ...
    def resume_warps_until_pc(self, dev: int, sm: int, warp_mask: int, address: int) -> None: ...
    def hold_threads(self, dev: int, sm: int | None, wp: int | None, ln: int | None, held: bool) -> int: ...
    def kill(self) -> None: ...
