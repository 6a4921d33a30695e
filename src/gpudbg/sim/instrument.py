"""The instrumentation interface: what analysis tools (sanitizers, tracers)
see of execution, as events, in the spirit of gpuocelot's trace generators.

Tools subclass `Tool` and override the events they need; `install` makes
them active for the whole process (every simulated GPU, every launch, every
allocation). The simulator emits events from these places only, never from
an instruction's own code:

- the executor's step loop (sim/executor.py), for instructions whose
  translation declares, as data in `Built.info`, the memory they touch
  (`"memory"`: (space object, AccessType, bytes per lane) triples), the
  warp-synchronous mask they take (`"sync_op"`, `"sync_mask"`), or a
  barrier (`kind == "barrier"`): memory events come *after* the access
  succeeded (a faulting lane never reaches a tool), with addresses read
  *before* it (an instruction may overwrite its own address register);
- the wave's barrier mechanism (sim/wave.py), when a barrier completes;
- the asynchronous-copy unit (sim/async_copy.py, sim/mbarrier.py), when an
  async copy's destination is really written (attributed to the issuing
  thread and instruction) and when an mbarrier phase completes (a
  barrier_complete with id MBARRIER_EDGE);
- the global memory registry (sim/memory/allocations.py), for allocations,
  frees and host-side writes and copies (copy engine, memsets, mc* copies).

When no tool is installed `active()` is None and the executor runs its
plain loop: the cost is one attribute test per step and per allocation.
Generic accesses are split per lane into global, shared and local events
(a cluster's accesses to other blocks' shared memory are not reported),
so tools see every access in its real space. Parameter-space accesses are
not reported (they cannot race, be uninitialized or be freed).

Which events flow is data: `Event` names the classes of device events, a
tool consumes the classes whose methods it overrides (`Tap.consumes`), and
`instruction_events` says what the step loop would emit for one translated
instruction. Compiled native code (sim/native) runs under a tool exactly
where it would emit nothing the tool consumes, so no report can change.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from gpudbg.sim.cluster import RANK_SHIFT
from gpudbg.sim.memory import allocations
from gpudbg.sim.memory.spaces import AccessType, Space
from gpudbg.sim.memory.windows import LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE

__all__ = ["MemoryAccess", "BarrierArrival", "WarpSync", "Launch", "Tool", "install",
           "uninstall", "active", "installed", "Event", "instruction_events"]


class Event(enum.IntFlag):
    """Classes of device events. ORDER is not an event: it marks code that
    would change the order or grouping in which other instructions' events
    arrive (a native loop region that lets a thread leave backwards), which
    every tool that consumes any device event can tell."""

    MEMORY = 1
    BARRIER_ARRIVAL = 2
    BARRIER_COMPLETE = 4
    WARP_SYNC = 8
    ORDER = 16


# the Tool methods through which each class arrives
EVENT_METHODS: dict[Event, tuple[str, ...]] = {
    Event.MEMORY: ("memory",),
    Event.BARRIER_ARRIVAL: ("barrier_arrival",),
    Event.BARRIER_COMPLETE: ("barrier_complete",),
    Event.WARP_SYNC: ("warp_sync",),
}
# opcodes whose own run emits events besides what Built.info declares:
# mbarrier phases and async-copy landings (sim/mbarrier.py, sim/async_copy.py),
# cluster barriers (sim/ops/cluster_ops.py), the copies a thread's exit lands
_SELF_EMITTING: dict[str, Event] = {
    "mbarrier": Event.MEMORY | Event.BARRIER_COMPLETE,
    "cp": Event.MEMORY | Event.BARRIER_COMPLETE,
    "barrier": Event.BARRIER_ARRIVAL | Event.BARRIER_COMPLETE,
    "bar": Event.BARRIER_ARRIVAL | Event.BARRIER_COMPLETE,
    "exit": Event.MEMORY | Event.BARRIER_COMPLETE,
}


@dataclass(frozen=True)
class Launch:
    """One kernel launch as tools see it."""

    gpu: Any
    function: Any            # sim.program function record (name, program, params, ...)
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    grid_id: int

    @property
    def kernel(self) -> str:
        return self.function.name


@dataclass(frozen=True)
class MemoryAccess:
    """One instruction's accesses in one state space.

    `addresses` are global virtual addresses for Space.GLOBAL, offsets in
    the executing block's shared segment for Space.SHARED and in the
    thread's own local segment for Space.LOCAL; `slots` are the wave slots
    (threads) that made them, one per address."""

    pc: int
    slots: np.ndarray          # int64 wave slots
    space: Space
    addresses: np.ndarray      # uint64
    size: int                  # bytes per lane
    kind: AccessType


@dataclass(frozen=True)
class BarrierArrival:
    """Threads reaching a CTA barrier instruction (bar/barrier), before the
    barrier mechanism counts them. `counts` is None when the instruction
    names no thread count (the whole block)."""

    pc: int
    slots: np.ndarray
    barrier_ids: np.ndarray    # per slot
    counts: np.ndarray | None  # per slot
    mode: str                  # sync, arrive, red


@dataclass(frozen=True)
class WarpSync:
    """Threads executing a warp-synchronous instruction (shfl.sync,
    vote.sync, match.sync, redux.sync, bar.warp.sync) with its member
    mask per thread (all ones when the instruction takes none)."""

    pc: int
    slots: np.ndarray
    op: str
    masks: np.ndarray          # uint32 per slot


class Tool:
    """Base class of analysis tools: every event is a no-op here.

    Device events receive the WaveExecution `X` (layout, registers, pcs of
    every thread, the GPU); host events the GlobalMemory they happen in."""

    name = "tool"

    # launches and waves
    def launch_enqueued(self, gpu: Any, grid_id: int, kernel: str) -> None:
        """On the host thread that launches, when the launch is submitted
        (where a tool can capture the host call site)."""

    def launch_begin(self, launch: Launch) -> None: ...
    def wave_begin(self, X: Any) -> None: ...
    def wave_end(self, X: Any) -> None: ...
    def launch_end(self, launch: Launch, fault: BaseException | None) -> None: ...

    # device execution
    def memory(self, X: Any, access: MemoryAccess) -> None: ...
    def barrier_arrival(self, X: Any, arrival: BarrierArrival) -> None: ...
    def barrier_complete(self, X: Any, blocks: np.ndarray, barrier: int) -> None:
        """Barrier `barrier` completed in the wave's blocks `blocks` (local
        block numbers): every access of their threads before it happens
        before every access after it."""

    def warp_sync(self, X: Any, sync: WarpSync) -> None: ...

    # the memory manager (host side)
    def allocated(self, memory: Any, allocation: Any) -> None: ...
    def freed(self, memory: Any, allocation: Any) -> None: ...
    def host_write(self, memory: Any, address: int, nbytes: int) -> None: ...
    def host_copy(self, memory: Any, dst: int, src: int, nbytes: int) -> None: ...


class Tap(Tool):
    """The fan-out the simulator calls: each event to every installed tool,
    in installation order."""

    def __init__(self, tools: Sequence[Tool]):
        self.tools = tuple(tools)
        # whether any tool looks at execution itself: if none does (host-side
        # checks only), kernels run the plain step loop at full speed
        consumes = Event(0)
        for ev, names in EVENT_METHODS.items():
            if any(getattr(type(t), n) is not getattr(Tool, n) for t in tools for n in names):
                consumes |= ev
        if consumes:
            consumes |= Event.ORDER
        # the Event bits the tools consume, a plain int for the step loop's test
        self.consumes = int(consumes)
        self.observes_execution = bool(consumes)
        # whether any tool wants memory events: if none does (synccheck),
        # the executor does not probe the addresses of memory instructions
        self.observes_memory = bool(consumes & Event.MEMORY)


def _fan_out(name: str):
    def call(self: Tap, *args: Any) -> None:
        for t in self.tools:
            getattr(t, name)(*args)
    call.__name__ = name
    return call


for _name in ("launch_enqueued", "launch_begin", "wave_begin", "wave_end", "launch_end", "memory", "barrier_arrival",
              "barrier_complete", "warp_sync", "allocated", "freed", "host_write", "host_copy"):
    setattr(Tap, _name, _fan_out(_name))

_active: Tap | None = None


def install(tool: Tool) -> None:
    """Make `tool` see every event of this process from now on."""
    global _active
    tools = (_active.tools if _active is not None else ()) + (tool,)
    _active = Tap(tools)
    allocations.set_observer(_active)


def uninstall(tool: Tool | None = None) -> None:
    """Remove one tool (None: all)."""
    global _active
    if _active is None:
        return
    tools = () if tool is None else tuple(t for t in _active.tools if t is not tool)
    _active = Tap(tools) if tools else None
    allocations.set_observer(_active)


def active() -> Tap | None:
    return _active


def installed() -> tuple[Tool, ...]:
    return _active.tools if _active is not None else ()


def instruction_events(built: Any, opcode: str = "") -> Event:
    """The event classes the step loop emits for one translated instruction
    (`built`: sim.ops.base.Built) under a tool consuming everything:
    memory events for the accesses Built.info declares (parameter space
    excepted), a warp sync for a "sync_op", barrier events for a barrier,
    and what `opcode`'s own run emits (_SELF_EMITTING)."""
    info = built.info
    ev = _SELF_EMITTING.get(opcode, Event(0))
    if any(mem.space != "param" for mem, _kind, _size in info.get("memory", ())):
        ev |= Event.MEMORY
    if "sync_op" in info:
        ev |= Event.WARP_SYNC
    if built.kind == "barrier":
        ev |= Event.BARRIER_ARRIVAL | Event.BARRIER_COMPLETE
    return ev


# ---------------------------------------------------------------- emission helpers

def _split_generic(addrs: np.ndarray, slots: np.ndarray):
    """Generic addresses per space: [(space, addresses, slots)]."""
    window = (addrs >= np.uint64(SHARED_WINDOW_BASE)) & (addrs < np.uint64(SHARED_WINDOW_BASE + WINDOW_SIZE))
    # another block's shared memory (a cluster's distributed shared memory) is not reported
    sh = window & ((addrs - np.uint64(SHARED_WINDOW_BASE)) < np.uint64(1 << RANK_SHIFT))
    lo = (addrs >= np.uint64(LOCAL_WINDOW_BASE)) & (addrs < np.uint64(LOCAL_WINDOW_BASE + WINDOW_SIZE))
    out = []
    if sh.any():
        out.append((Space.SHARED, addrs[sh] - np.uint64(SHARED_WINDOW_BASE), slots[sh]))
    if lo.any():
        out.append((Space.LOCAL, addrs[lo] - np.uint64(LOCAL_WINDOW_BASE), slots[lo]))
    gl = ~(window | lo)
    if gl.all():
        out.append((Space.GLOBAL, addrs, slots))
    elif gl.any():
        out.append((Space.GLOBAL, addrs[gl], slots[gl]))
    return out


_SPACES = {"global": Space.GLOBAL, "const": Space.CONST, "shared": Space.SHARED, "local": Space.LOCAL}


def probe_memory(X: Any, probes: Sequence[tuple[Any, AccessType, int]], sel: Any) -> list:
    """Before an instruction runs: its accesses as (space, addresses,
    slots, kind, size) for the threads `sel` (None: the whole wave)."""
    slots = X.all_slots if sel is None else sel
    out = []
    for mem, kind, size in probes:
        sp = mem.space
        if sp == "param":
            continue
        addrs = mem.addresses(X, sel)
        if sp == "generic":
            for space, a, s in _split_generic(addrs, slots):
                out.append((space, a, s, kind, size))
        elif sp == "shared::cluster":     # the block's own shared memory; other blocks' is not reported
            own = np.broadcast_to(addrs, slots.shape) < np.uint64(1 << RANK_SHIFT)
            out.append((Space.SHARED, np.broadcast_to(addrs, slots.shape)[own], slots[own], kind, size))
        else:
            out.append((_SPACES[sp], addrs, slots, kind, size))
    return out


def emit_memory(tap: Tap, X: Any, pc: int, probed: list) -> None:
    """After the instruction succeeded."""
    for space, addrs, slots, kind, size in probed:
        tap.memory(X, MemoryAccess(pc, slots, space, addrs, size, kind))


def emit_warp_sync(tap: Tap, X: Any, pc: int, info: dict, sel: Any) -> None:
    slots = X.all_slots if sel is None else sel
    reader = info.get("sync_mask")
    n = len(slots)
    if reader is None:
        masks = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
    else:
        masks = np.broadcast_to(np.asarray(reader(X, sel)).astype(np.uint32), (n,))
    tap.warp_sync(X, WarpSync(pc, slots, info["sync_op"], masks))


def emit_barrier_arrival(tap: Tap, X: Any, pc: int, info: dict, sel: Any) -> None:
    slots = X.all_slots if sel is None else sel
    n = len(slots)
    ids = np.broadcast_to(np.asarray(info["bar_id"](X, sel)).astype(np.int64), (n,))
    count = info.get("bar_count")
    counts = None if count is None else np.broadcast_to(np.asarray(count(X, sel)).astype(np.int64), (n,))
    tap.barrier_arrival(X, BarrierArrival(pc, slots, ids, counts, info.get("mode", "sync")))
