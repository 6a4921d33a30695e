"""The simulated GPU's register file: a documented table of 32-bit registers
at byte offsets, each read from the live GPU state.

Why it exists: a devcoredump's `registers:` section is what a hang triage
reads first on real hardware (RBBM_STATUS, CP_RB_*, the fault registers),
so our GPU has a register file with the same role: a status register with
one busy bit per unit, the current command's address, a fault block that
the GPU latches when a fault or hang happens, and one block per channel
ring (base, size, rptr, wptr, fences). The one idea: the table is data.
Every register is a row (name, byte offset, meaning, reader), so the
documentation, the dump writer and any decoder use the same definitions,
and `read_all(gpu)` is just "evaluate every row". 64-bit values are
_LO/_HI pairs. Offsets stay clear of the a6xx offsets the analyzer names
(0x840, 0x2000-0x24b8), so no register of ours is misread as Adreno's.

Layout (bytes): global block 0x0000-0x004c, fault block 0x0100-0x0138,
channel ring i at CHANNEL_BASE + i * CHANNEL_STRIDE (i = the ring's index
in the front end, the `id` of its devcoredump `ringbuffer` entry).
Revision: GPU_ID is the chip id core.major.minor.patch with core = compute
capability major, major = compute capability minor, minor =
MODEL_REVISION, patch 0 (9.0.0.0 for our H100-class model); the legacy
numeric id is 100*core + 10*major + minor (900), Adreno's rule (630 is
6.3.0.x). Reading registers has no side effects and never raises for a
missing piece of state (it reads 0). Writing registers is not modelled:
the driver programs the GPU through rings, not MMIO.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable

from gpudbg.driver import commands as C
from gpudbg.sim.faults import CUDBGException, FaultReport, HangKind

MODEL_REVISION = 0
CHANNEL_BASE = 0x10000
CHANNEL_STRIDE = 0x40
NO_RING = 0xFFFF_FFFF
U32 = 0xFFFF_FFFF


def chip_id_parts(gpu: Any) -> tuple[int, int, int, int]:
    """(core, major, minor, patch) of the device model's chip id."""
    major, minor = gpu.model.compute_capability
    return int(major), int(minor), MODEL_REVISION, 0


def chip_id(gpu: Any) -> int:
    c, M, m, p = chip_id_parts(gpu)
    return c << 24 | M << 16 | m << 8 | p


def gpu_id(gpu: Any) -> int:
    """The legacy numeric id (Adreno's revn rule)."""
    c, M, m, _p = chip_id_parts(gpu)
    return 100 * c + 10 * M + m


class RbbmStatus(enum.IntFlag):
    """RBBM_STATUS bits: which units of the simulated GPU are busy."""

    FE_BUSY = 1 << 0        # the front end is executing a command
    CE_BUSY = 1 << 1        # the copy engine is executing COPY/MEMSET/COPY_2D/MEMSET_2D
    SM_BUSY = 1 << 2        # the SMs are running a grid (LAUNCH executing)
    MMU_BUSY = 1 << 3       # a stream-ordered POOL_ALLOC/POOL_FREE is remapping memory
    CH_PENDING = 1 << 4     # some channel ring holds unexecuted commands (rptr != wptr)
    CH_BLOCKED = 1 << 5     # some channel's head waits on a semaphore or a value
    FAULT = 1 << 6          # a fault is latched in the fault block
    HANG = 1 << 7           # a hang is latched in the fault block
    GPU_BUSY = 1 << 31      # any unit busy or any work pending


STATUS_MEANINGS: dict[RbbmStatus, str] = {
    RbbmStatus.FE_BUSY: "front end executing a command",
    RbbmStatus.CE_BUSY: "copy engine busy (copy or memset)",
    RbbmStatus.SM_BUSY: "SMs running a grid",
    RbbmStatus.MMU_BUSY: "memory manager remapping (stream-ordered alloc/free)",
    RbbmStatus.CH_PENDING: "channel rings hold pending commands",
    RbbmStatus.CH_BLOCKED: "a channel waits on a semaphore or value",
    RbbmStatus.FAULT: "fault latched",
    RbbmStatus.HANG: "hang latched",
    RbbmStatus.GPU_BUSY: "GPU busy",
}

_CE_OPS = {C.Opcode.COPY, C.Opcode.MEMSET, C.Opcode.COPY_2D, C.Opcode.MEMSET_2D}
_MMU_OPS = {C.Opcode.POOL_ALLOC, C.Opcode.POOL_FREE}


def describe_status(value: int) -> list[str]:
    """The meanings of the bits set in an RBBM_STATUS value."""
    return [text for bit, text in STATUS_MEANINGS.items() if value & bit]


class FaultStatus(enum.IntFlag):
    """FAULT_STATUS bits: what the fault block holds."""

    FAULT = 1 << 0          # FAULT_KIND holds a CUDBGException
    HANG = 1 << 1           # HANG_KIND holds a HangCode
    ADDRESS_VALID = 1 << 2  # FAULT_ADDR is the faulting address
    LANE_VALID = 1 << 3     # FAULT_SM/WARP/LANE name the faulting thread
    PC_VALID = 1 << 4       # FAULT_PC is the faulting (or hung) instruction


class HangCode(enum.IntEnum):
    """HANG_KIND values."""

    NONE = 0
    BARRIER_DEADLOCK = 1    # executor: threads parked at a barrier nobody else reaches
    INSTRUCTION_BUDGET = 2  # executor: the grid ran past its instruction budget
    FENCE_TIMEOUT = 3       # driver watchdog: a fence never retired, every channel blocked
    KERNEL_TIMEOUT = 4      # executor: a kernel ran longer than GPUDBG_HANG_TIMEOUT
    INTERRUPTED = 5         # executor: a running kernel was cancelled (Ctrl-C)


HANG_CODES = {HangKind.BARRIER_DEADLOCK: HangCode.BARRIER_DEADLOCK,
              HangKind.INSTRUCTION_BUDGET: HangCode.INSTRUCTION_BUDGET,
              HangKind.KERNEL_TIMEOUT: HangCode.KERNEL_TIMEOUT, HangKind.INTERRUPTED: HangCode.INTERRUPTED}


@dataclass
class FaultLatch:
    """The fault block's contents, latched by the GPU when something fails
    (kept on the GPU as `fault_latch` until the next fault replaces it)."""

    kind: CUDBGException = CUDBGException.CUDBG_EXCEPTION_NONE
    hang: HangCode = HangCode.NONE
    ring: int = NO_RING             # index of the faulting/hung channel ring
    command_address: int = 0        # iova of the command that faulted or is blocked
    address: int | None = None
    pc: int | None = None
    grid_id: int = 0
    sm: int | None = None
    warp: int | None = None
    lane: int | None = None
    access_size: int = 0

    @classmethod
    def from_report(cls, report: FaultReport, ring: int, command_address: int) -> "FaultLatch":
        return cls(kind=report.kind if report.hang is None else CUDBGException.CUDBG_EXCEPTION_NONE,
                   hang=HANG_CODES.get(report.hang, HangCode.NONE),
                   ring=ring, command_address=command_address, address=report.address, pc=report.pc,
                   grid_id=report.grid_id or 0, sm=report.sm, warp=report.warp, lane=report.lane,
                   access_size=report.access_size or 0)

    @property
    def status(self) -> int:
        s = FaultStatus(0)
        if self.hang is not HangCode.NONE:
            s |= FaultStatus.HANG
        elif self.kind is not CUDBGException.CUDBG_EXCEPTION_NONE:
            s |= FaultStatus.FAULT
        if self.address is not None:
            s |= FaultStatus.ADDRESS_VALID
        if self.lane is not None:
            s |= FaultStatus.LANE_VALID
        if self.pc is not None:
            s |= FaultStatus.PC_VALID
        return int(s)


def latch(gpu: Any, value: FaultLatch) -> None:
    """Latch a fault into the GPU's fault block (caller holds gpu.cv)."""
    gpu.fault_latch = value


def latched(gpu: Any) -> FaultLatch | None:
    return getattr(gpu, "fault_latch", None)


# ---------------------------------------------------------------- live state
def head(channel: Any) -> tuple[int, C.Command] | None:
    """(offset, command) at a channel's rptr, None when empty or undecodable."""
    ring = channel.ring
    if ring.empty():
        return None
    try:
        return ring.get, ring.decode_at(ring.get)
    except C.CommandDecodeError:
        return None


def _waiting(gpu: Any, channel: Any) -> bool:
    h = head(channel)
    return h is not None and gpu.frontend.waiting(channel, h[1])


def _executing(gpu: Any) -> tuple[int, Any, int, C.Command] | None:
    """(ring index, channel, offset, command) the front end is executing."""
    busy = gpu.frontend.busy
    if busy is None or busy not in gpu.frontend.channels:
        return None
    h = head(busy)
    if h is None:
        return None
    return gpu.frontend.channels.index(busy), busy, h[0], h[1]


def rbbm_status(gpu: Any) -> int:
    s = RbbmStatus(0)
    for job in list(gpu.frontend.executing.values()):   # engines run several commands at once
        s |= RbbmStatus.FE_BUSY
        op = job.cmd.opcode
        if op is C.Opcode.LAUNCH:
            s |= RbbmStatus.SM_BUSY
        elif op in _CE_OPS:
            s |= RbbmStatus.CE_BUSY
        elif op in _MMU_OPS:
            s |= RbbmStatus.MMU_BUSY
    for ch in gpu.frontend.channels:
        if not ch.ring.empty():
            s |= RbbmStatus.CH_PENDING
            if _waiting(gpu, ch):
                s |= RbbmStatus.CH_BLOCKED
    fl = latched(gpu)
    if fl is not None:
        if fl.hang is not HangCode.NONE:
            s |= RbbmStatus.HANG
        elif fl.kind is not CUDBGException.CUDBG_EXCEPTION_NONE:
            s |= RbbmStatus.FAULT
    if s & (RbbmStatus.FE_BUSY | RbbmStatus.CH_PENDING):
        s |= RbbmStatus.GPU_BUSY
    return int(s)


class ChannelStatus(enum.IntFlag):
    """CHn_STATUS bits."""

    PENDING = 1 << 0        # rptr != wptr
    BLOCKED = 1 << 1        # the head command waits on a semaphore or value
    EXECUTING = 1 << 2      # the front end is executing this channel's head
    ERROR = 1 << 3          # the channel was stopped by a fault, hang or reset


def channel_status(gpu: Any, channel: Any) -> int:
    s = ChannelStatus(0)
    if not channel.ring.empty():
        s |= ChannelStatus.PENDING
        if _waiting(gpu, channel):
            s |= ChannelStatus.BLOCKED
    if gpu.frontend.is_executing(channel):
        s |= ChannelStatus.EXECUTING
    if channel.semaphore.error is not None:
        s |= ChannelStatus.ERROR
    return int(s)


# ---------------------------------------------------------------- the table
Reader = Callable[[Any], int]


@dataclass(frozen=True)
class RegisterDef:
    name: str
    offset: int         # bytes
    meaning: str
    read: Reader


def _lo(f: Callable[[Any], int | None]) -> Reader:
    return lambda g: (f(g) or 0) & U32


def _hi(f: Callable[[Any], int | None]) -> Reader:
    return lambda g: ((f(g) or 0) >> 32) & U32


def _budget(gpu: Any) -> int:
    from gpudbg.sim.executor import instruction_budget
    try:
        return instruction_budget(gpu)
    except ValueError:
        return 0


def _last_instr(gpu: Any) -> int:
    stats = getattr(gpu, "last_launch_stats", None)
    return int(getattr(stats, "thread_instructions", 0) or 0)


def _cmd_address(gpu: Any) -> int | None:
    ex = _executing(gpu)
    return None if ex is None else ex[1].ring.base + 4 * ex[2]


def _cmd_ring(gpu: Any) -> int:
    ex = _executing(gpu)
    return NO_RING if ex is None else ex[0]


def _cmd_header(gpu: Any) -> int:
    ex = _executing(gpu)
    return 0 if ex is None else C.encode(ex[3])[0]


def _f(attr: str, default: int = 0) -> Callable[[Any], int]:
    def read(gpu: Any) -> int:
        fl = latched(gpu)
        v = None if fl is None else getattr(fl, attr)
        return default if v is None else int(v)
    return read


def _two(name: str, offset: int, meaning: str, f: Callable[[Any], int | None]) -> list[RegisterDef]:
    return [RegisterDef(f"{name}_LO", offset, f"{meaning} (low 32 bits)", _lo(f)),
            RegisterDef(f"{name}_HI", offset + 4, f"{meaning} (high 32 bits)", _hi(f))]


GLOBAL_REGISTERS: list[RegisterDef] = [
    RegisterDef("GPU_ID", 0x0000, "chip id core.major.minor.patch, one byte each (see module doc)", chip_id),
    RegisterDef("GPU_ORDINAL", 0x0004, "device ordinal", lambda g: int(g.ordinal) & U32),
    RegisterDef("RBBM_STATUS", 0x0008, "unit busy bits (RbbmStatus)", rbbm_status),
    RegisterDef("SM_COUNT", 0x000C, "number of SMs", lambda g: int(g.model.sm_count)),
    *_two("CLOCK", 0x0010, "device clock in cycles (sim/timing.py)", lambda g: int(getattr(g, "clock_cycles", 0))),
    RegisterDef("CLOCK_RATE_KHZ", 0x0018, "device clock rate in kHz", lambda g: int(g.model.clock_rate_khz)),
    RegisterDef("CHANNEL_COUNT", 0x001C, "channel rings attached to the front end",
                lambda g: len(g.frontend.channels)),
    RegisterDef("CMDS_EXECUTED", 0x0020, "commands the front end has retired (low 32 bits)",
                lambda g: int(g.frontend.commands_executed) & U32),
    *_two("INSTR_BUDGET", 0x0024, "thread-instructions a launch may execute before it is a hang", _budget),
    *_two("LAST_LAUNCH_INSTR", 0x002C, "thread-instructions of the last launch that finished", _last_instr),
    *_two("CMD_ADDR", 0x0040, "iova of the command the front end is executing (0: idle)", _cmd_address),
    RegisterDef("CMD_RING", 0x0048, "ring index of that command (0xffffffff: idle)", _cmd_ring),
    RegisterDef("CMD_HEADER", 0x004C, "header word of that command (opcode << 24 | payload words)", _cmd_header),
    RegisterDef("FAULT_STATUS", 0x0100, "what the fault block holds (FaultStatus bits)",
                lambda g: latched(g).status if latched(g) is not None else 0),
    RegisterDef("FAULT_KIND", 0x0104, "CUDBGException of the latched fault (0: none)",
                lambda g: int(latched(g).kind) & U32 if latched(g) is not None else 0),
    RegisterDef("HANG_KIND", 0x0108, "HangCode of the latched hang (0: none)", _f("hang")),
    RegisterDef("FAULT_RING", 0x010C, "ring index of the faulting or hung channel", _f("ring", NO_RING)),
    *_two("FAULT_ADDR", 0x0110, "faulting address", _f("address")),
    *_two("FAULT_PC", 0x0118, "code address of the faulting (or hung) instruction", _f("pc")),
    *_two("FAULT_GRID", 0x0120, "grid id of the faulting launch", _f("grid_id")),
    RegisterDef("FAULT_SM", 0x0128, "SM of the faulting thread", _f("sm", U32)),
    RegisterDef("FAULT_WARP", 0x012C, "warp slot of the faulting thread", _f("warp", U32)),
    RegisterDef("FAULT_LANE", 0x0130, "lane of the faulting thread", _f("lane", U32)),
    RegisterDef("FAULT_ACCESS_SIZE", 0x0134, "bytes of the faulting access", _f("access_size")),
    *_two("FAULT_CMD_ADDR", 0x0138, "iova of the command that faulted or that the hung channel waits in",
          _f("command_address")),
]

# per channel ring: (suffix, offset in the block, meaning, reader(gpu, channel))
CHANNEL_REGISTERS: list[tuple[str, int, str, Callable[[Any, Any], int]]] = [
    ("RB_BASE_LO", 0x00, "ring iova (low 32 bits)", lambda g, c: c.ring.base & U32),
    ("RB_BASE_HI", 0x04, "ring iova (high 32 bits)", lambda g, c: c.ring.base >> 32 & U32),
    ("RB_SIZE", 0x08, "ring size in bytes", lambda g, c: 4 * c.ring.size),
    ("RB_RPTR", 0x0C, "read pointer (dwords), written by the front end", lambda g, c: c.ring.get),
    ("RB_WPTR", 0x10, "write pointer (dwords), written by the driver", lambda g, c: c.ring.put),
    ("FENCE_ISSUED", 0x14, "last fence the driver issued (low 32 bits)", lambda g, c: c.semaphore.issued & U32),
    ("FENCE_RETIRED", 0x18, "fence value the GPU last released (low 32 bits)",
     lambda g, c: c.semaphore.completed & U32),
    ("SEM_ADDR_LO", 0x1C, "tracking semaphore iova (low 32 bits)", lambda g, c: c.semaphore.address & U32),
    ("SEM_ADDR_HI", 0x20, "tracking semaphore iova (high 32 bits)", lambda g, c: c.semaphore.address >> 32 & U32),
    ("ID", 0x24, "the driver's channel id", lambda g, c: int(c.id) & U32),
    ("GROUP", 0x28, "channel group (the context id)", lambda g, c: int(c.group) & U32),
    ("STATUS", 0x2C, "ChannelStatus bits", channel_status),
    ("PRIORITY", 0x30, "stream priority (two's complement)", lambda g, c: int(getattr(c, "priority", 0)) & U32),
    ("ERROR", 0x34, "CUresult that stopped the channel (0: none)",
     lambda g, c: int(c.semaphore.error.status) & U32 if c.semaphore.error is not None else 0),
]


def _check_table() -> None:
    offsets = [r.offset for r in GLOBAL_REGISTERS]
    if len(set(offsets)) != len(offsets) or any(o % 4 or o >= CHANNEL_BASE for o in offsets):
        raise AssertionError("register table: offsets must be unique, dword aligned, below CHANNEL_BASE")
    block = [o for _, o, _, _ in CHANNEL_REGISTERS]
    if len(set(block)) != len(block) or any(o % 4 or o >= CHANNEL_STRIDE for o in block):
        raise AssertionError("channel register block: offsets must be unique, aligned, inside the stride")


_check_table()


def channel_offset(ring: int, suffix: str) -> int:
    """Byte offset of channel ring `ring`'s register `suffix` (e.g. "RB_RPTR")."""
    for name, off, _m, _r in CHANNEL_REGISTERS:
        if name == suffix:
            return CHANNEL_BASE + ring * CHANNEL_STRIDE + off
    raise KeyError(f"no channel register {suffix!r}; known: {[n for n, *_ in CHANNEL_REGISTERS]}")


def offset_of(name: str) -> int:
    """Byte offset of a register by name: a global one or CH<i>_<suffix>."""
    for r in GLOBAL_REGISTERS:
        if r.name == name:
            return r.offset
    if name.startswith("CH") and "_" in name:
        index, _, suffix = name[2:].partition("_")
        if index.isdigit():
            return channel_offset(int(index), suffix)
    raise KeyError(f"no register named {name!r}")


def name_of(offset: int) -> str | None:
    """The register at a byte offset, or None."""
    for r in GLOBAL_REGISTERS:
        if r.offset == offset:
            return r.name
    if offset >= CHANNEL_BASE:
        ring, rest = divmod(offset - CHANNEL_BASE, CHANNEL_STRIDE)
        for name, off, _m, _r in CHANNEL_REGISTERS:
            if off == rest:
                return f"CH{ring}_{name}"
    return None


def read_all(gpu: Any) -> list[tuple[str, int, int]]:
    """(name, byte offset, value) of every register, in offset order
    (caller holds gpu.cv so the values are one consistent snapshot)."""
    out = [(r.name, r.offset, int(r.read(gpu)) & U32) for r in GLOBAL_REGISTERS]
    for i, ch in enumerate(list(gpu.frontend.channels)):
        base = CHANNEL_BASE + i * CHANNEL_STRIDE
        out += [(f"CH{i}_{name}", base + off, int(read(gpu, ch)) & U32)
                for name, off, _m, read in CHANNEL_REGISTERS]
    return out


def read(gpu: Any, name: str) -> int:
    """One register's live value by name."""
    for n, _off, value in read_all(gpu):
        if n == name:
            return value
    raise KeyError(f"no register named {name!r} on this GPU "
                   f"({len(gpu.frontend.channels)} channel rings attached)")
