"""Device faults: the exception kinds of CUDBGException_t (seed 000) and the
precise report the simulator produces for each.

A fault is data, not control flow across layers: the executor raises
KernelFault carrying a FaultReport; the driver turns it into a sticky context
error; the debugger turns it into an exception event; dumps serialize it.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field


class CUDBGException(enum.IntEnum):
    """CUDBGException_t, values exactly as in seed 000."""

    CUDBG_EXCEPTION_UNKNOWN = 0xFFFFFFFF
    CUDBG_EXCEPTION_NONE = 0
    CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS = 1
    CUDBG_EXCEPTION_LANE_USER_STACK_OVERFLOW = 2
    CUDBG_EXCEPTION_DEVICE_HARDWARE_STACK_OVERFLOW = 3
    CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION = 4
    CUDBG_EXCEPTION_WARP_OUT_OF_RANGE_ADDRESS = 5
    CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS = 6
    CUDBG_EXCEPTION_WARP_INVALID_ADDRESS_SPACE = 7
    CUDBG_EXCEPTION_WARP_INVALID_PC = 8
    CUDBG_EXCEPTION_WARP_HARDWARE_STACK_OVERFLOW = 9
    CUDBG_EXCEPTION_DEVICE_ILLEGAL_ADDRESS = 10
    CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS = 11
    CUDBG_EXCEPTION_WARP_ASSERT = 12
    CUDBG_EXCEPTION_LANE_SYSCALL_ERROR = 13
    CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS = 14
    CUDBG_EXCEPTION_LANE_NONMIGRATABLE_ATOMSYS = 15
    CUDBG_EXCEPTION_LANE_INVALID_ATOMSYS = 16
    CUDBG_EXCEPTION_CLUSTER_OUT_OF_RANGE_ADDRESS = 17
    CUDBG_EXCEPTION_CLUSTER_BLOCK_NOT_PRESENT = 18
    CUDBG_EXCEPTION_WARP_STACK_CANARY = 19
    CUDBG_EXCEPTION_WARP_TMEM_ACCESS_CHECK = 20
    CUDBG_EXCEPTION_WARP_TMEM_LEAK = 21
    CUDBG_EXCEPTION_WARP_CALL_REQUIRES_NEWER_DRIVER = 22


# What cuda-gdb prints for each kind ("CUDA Exception: Warp Illegal Address").
EXCEPTION_TITLES = {
    CUDBGException.CUDBG_EXCEPTION_LANE_ILLEGAL_ADDRESS: "Lane Illegal Address",
    CUDBGException.CUDBG_EXCEPTION_LANE_USER_STACK_OVERFLOW: "Lane User Stack Overflow",
    CUDBGException.CUDBG_EXCEPTION_DEVICE_HARDWARE_STACK_OVERFLOW: "Device Hardware Stack Overflow",
    CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_INSTRUCTION: "Warp Illegal Instruction",
    CUDBGException.CUDBG_EXCEPTION_WARP_OUT_OF_RANGE_ADDRESS: "Warp Out-of-range Address",
    CUDBGException.CUDBG_EXCEPTION_WARP_MISALIGNED_ADDRESS: "Warp Misaligned Address",
    CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_ADDRESS_SPACE: "Warp Invalid Address Space",
    CUDBGException.CUDBG_EXCEPTION_WARP_INVALID_PC: "Warp Invalid PC",
    CUDBGException.CUDBG_EXCEPTION_WARP_HARDWARE_STACK_OVERFLOW: "Warp Hardware Stack Overflow",
    CUDBGException.CUDBG_EXCEPTION_DEVICE_ILLEGAL_ADDRESS: "Device Illegal Address",
    CUDBGException.CUDBG_EXCEPTION_LANE_MISALIGNED_ADDRESS: "Lane Misaligned Address",
    CUDBGException.CUDBG_EXCEPTION_WARP_ASSERT: "Warp Assert",
    CUDBGException.CUDBG_EXCEPTION_LANE_SYSCALL_ERROR: "Lane Syscall Error",
    CUDBGException.CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS: "Warp Illegal Address",
}


class HangKind(enum.Enum):
    """Ways a launch can fail to finish that are not CUDBG exceptions."""

    BARRIER_DEADLOCK = "barrier deadlock"
    INSTRUCTION_BUDGET = "instruction budget exceeded"
    KERNEL_TIMEOUT = "kernel timeout"          # ran longer than GPUDBG_HANG_TIMEOUT (sim/kernel_watch.py)
    INTERRUPTED = "kernel interrupted"         # cancelled while running (Ctrl-C)


@dataclass
class FaultReport:
    """Everything known about one device fault, precise to the lane.

    `kind` is a CUDBGException for exceptions; for hangs it is
    CUDBG_EXCEPTION_NONE and `hang` says which. `message` is the full
    human sentence ("16 bytes past the end of the 4096-byte allocation at
    0x..."), `address` the faulting address when there is one."""

    kind: CUDBGException
    message: str
    kernel: str
    function: str
    pc: int
    instruction: str
    ptx_line: int | None
    ptx_file: str | None
    source_file: str | None = None
    source_line: int | None = None
    block: tuple[int, int, int] | None = None
    thread: tuple[int, int, int] | None = None
    sm: int | None = None
    warp: int | None = None
    lane: int | None = None
    address: int | None = None
    access_size: int | None = None
    space: str | None = None
    hang: HangKind | None = None
    grid_id: int | None = None
    details: dict = field(default_factory=dict)
    # Every thread that faulted at this instruction in the same step (a
    # memory access faults for all its bad lanes at once): how many
    # (`faulting_count`; 0 for reports that are not lane faults, such as
    # hangs), the first FAULTING_LANES_KEPT of them as (block, thread) in
    # thread order (the reported thread first), and the lowest and highest
    # block among all of them (`faulting_blocks`).
    faulting_count: int = 0
    faulting_lanes: list[tuple[tuple[int, int, int], tuple[int, int, int]]] = field(default_factory=list)
    faulting_blocks: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None

    @property
    def title(self) -> str:
        if self.hang is not None:
            return self.hang.value.capitalize()
        return EXCEPTION_TITLES.get(self.kind, self.kind.name)

    def format(self) -> str:
        """A compute-sanitizer-like multi-line report."""
        where = f"{self.source_file}:{self.source_line}" if self.source_line else (
            f"{self.ptx_file}:{self.ptx_line}" if self.ptx_line else "unknown location")
        lines = [f"========= {self.title} in kernel {self.kernel} at {where}"]
        lines.append(f"=========     {self.message}")
        if self.block is not None:
            lines.append(
                f"=========     by thread ({self.thread[0]},{self.thread[1]},{self.thread[2]}) "
                f"in block ({self.block[0]},{self.block[1]},{self.block[2]})"
                f" [sm {self.sm}, warp {self.warp}, lane {self.lane}]")
        if self.faulting_count > 1:
            lines.append(f"=========     {self.faulting_summary()}")
        if self.address is not None:
            lines.append(f"=========     address 0x{self.address:x}"
                         + (f" ({self.access_size} bytes, {self.space})" if self.access_size else ""))
        lines.append(f"=========     at pc 0x{self.pc:x} in {self.function}: {self.instruction}")
        site = self.details.get("launch_site")
        if site:   # the user's Python line that launched the kernel (driver/host_site.py)
            lines.append(f"=========     launched from {site[-1]}")
        return "\n".join(lines)

    def faulting_summary(self, shown: int = 4) -> str:
        """'24 threads faulted at this instruction, in blocks (0,0,0)..(2,0,0);
        first: thread (8,0,0) in block (0,0,0), ...'."""
        n = self.faulting_count
        text = f"{n} thread{'' if n == 1 else 's'} faulted at this instruction"
        if self.faulting_blocks is not None:
            lo, hi = (_dim3(b) for b in self.faulting_blocks)
            text += f", in block {lo}" if lo == hi else f", in blocks {lo}..{hi}"
        if self.faulting_lanes:
            first = [f"thread {_dim3(t)} in block {_dim3(b)}" for b, t in self.faulting_lanes[:shown]]
            text += "; first: " + ", ".join(first) + (", ..." if n > len(first) else "")
        return text


FAULTING_LANES_KEPT = 1024     # (block, thread) pairs a FaultReport lists


def _dim3(v: tuple[int, int, int]) -> str:
    return f"({v[0]},{v[1]},{v[2]})"


class LaneFault(Exception):
    """A fault raised while executing one instruction, precise to the lane.

    `lane` indexes the selection of threads (or the address array) the
    raising code was given, -1 for host-side accesses; the executor maps it
    to the thread. `lanes`, when set, are every faulting lane of the
    instruction in the same index space, ascending (`lane` is the first);
    None means `lane` alone. Memory access faults are the AccessFault
    subclass."""

    def __init__(self, kind: CUDBGException, message: str, lane: int = 0,
                 address: int | None = None, size: int | None = None, space=None,
                 lanes=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.lane = lane
        self.address = address
        self.size = size
        self.space = space
        self.lanes = lanes


class KernelFault(Exception):
    """Raised out of a launch when a kernel faults or hangs."""

    def __init__(self, report: FaultReport):
        super().__init__(report.format())
        self.report = report
