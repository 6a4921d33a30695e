"""Loop regions: whole loops that run natively, thread by thread, until
each thread leaves them.

A region is the pc range of a loop (from a backward branch's target to
the branch) whose every instruction has a native lowering that does not
write memory (no store, no atomic), plus plain branches (`bra` to a
label); no barrier, warp-level operation, call or exit. Running such a
loop to completion for one thread, then the next, gives every thread the
registers the interpreter's lockstep gives it, because nothing in the
loop can observe another thread: memory is only read, and it is not
written by anyone while the region runs. Threads leave at different pcs;
the executor's scheduler reconverges them afterwards as always. The loop
body of a tiled matrix multiply (shared-memory loads and fused
multiply-adds) is the typical region: it costs one native call per step
instead of one interpreted step per iteration.

Failures (a check) hand the region back to the interpreter exactly like
segments do: registers the region reads and also writes are committed
only after every selected thread finished. A thread past the call's
instruction cap leaves at the block it reached, as if it had branched out,
so one call's work is bounded (the watchdog, Ctrl-C and other grids get
their turn) and the next step resumes it there.

The work counted is each thread's instructions (the interpreter's sum);
cycles are the longest thread's path, which is what lockstep execution of
an undiverged loop gives.

Under an analysis tool (sim/instrument.py) a region records the event
classes its instructions would emit, plus Event.ORDER when a branch can
leave it backwards: the interpreter would run that thread's code below
the loop while others still iterate, so the events that code emits would
arrive in another order and grouping than after a native call.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpudbg.ptx import ir
from gpudbg.sim.instrument import Event, instruction_events


@dataclass
class RegionPlan:
    start: int
    end: int                         # pc after the region's last instruction
    leaders: list[int]               # pcs a thread may enter at (block starts in the range)
    scratch_regs: dict = field(default_factory=dict)
    nslots: int = 0
    can_fail: bool = True
    live_out: set | None = None      # registers read after leaving the region
    flushed: set = field(default_factory=set)   # registers written in the region and live after
    two_pass: bool = False           # has a second pass (commits): set by the emitter
    events: int = 0                  # instrument.Event bits it would emit to tools (see above)

    @property
    def name(self) -> str:
        return f"region_{self.start}_{self.end}"


# a load that orders with other threads' writes (volatile, acquire,
# relaxed): a loop around one waits for another thread, which cannot run
# while the region does, so it would spin to the call's cap
_SYNCHRONIZING_LOAD = re.compile(r"^ld(\.\w+)*\.(volatile|acquire|relaxed|mmio)\b")


def _plain_branch(c) -> int | None:
    """The target pc of a plain `bra LABEL` (guarded or not), else None."""
    if c.inst.opcode != "bra" or c.built.kind != "branch":
        return None
    t = c.built.info.get("target")
    return int(t) if t is not None else None


def find_regions(program, lowered: dict[int, tuple], live: list[int]) -> list[RegionPlan]:
    """Regions of the program. `lowered[pc]` = (effect, reads, writes) of
    the pcs with a native lowering; `live[pc]` = bitset live after pc."""
    code = program.code
    leader = program.leader
    candidates = []
    for c in code:
        t = _plain_branch(c)
        if t is not None and t <= c.pc and code[t].function == c.function:
            candidates.append((t, c.pc + 1))
    candidates.sort(key=lambda r: r[0] - r[1])      # largest first
    taken: list[tuple[int, int]] = []
    out = []
    for start, end in candidates:
        if any(s < end and start < e for s, e in taken):
            continue
        reads, writes, ok = set(), set(), True
        exits_live = 0
        events = Event(0)
        for pc in range(start, end):
            c = code[pc]
            target = _plain_branch(c)
            if leader[pc]:   # a thread past the cap pauses at a block start: what it reads from there is stored
                exits_live |= live[pc] | sum(1 << k for k in lowered.get(pc, (None, (), ()))[1])
            if target is not None:
                if c.inst.guard is not None:
                    k = program._reg_index.get((c.function, c.inst.guard.name))
                    if k is None:
                        ok = False
                        break
                    reads.add(k)
                    if leader[pc]:
                        exits_live |= 1 << k
                if not start <= target < end or c.inst.guard is not None:
                    exits_live |= live[pc]
                if target < start:
                    events |= Event.ORDER
                continue
            got = lowered.get(pc)
            if got is None or got[0] == "write" or c.built.run is None or _SYNCHRONIZING_LOAD.match(c.inst.text):
                ok = False
                break
            reads |= got[1]
            writes |= got[2]
            events |= instruction_events(c.built, c.inst.opcode)
        if not ok:
            continue
        exits_live |= live[end - 1]
        live_out = {k for k in range(exits_live.bit_length()) if exits_live >> k & 1}
        flushed = writes & live_out
        scratch = sorted(reads & flushed)
        taken.append((start, end))
        out.append(RegionPlan(start, end, [pc for pc in range(start, end) if leader[pc]],
                              {k: s for s, k in enumerate(scratch)}, len(scratch), True,
                              live_out, flushed, events=int(events)))
    return out


__all__ = ["RegionPlan", "find_regions", "ir"]
