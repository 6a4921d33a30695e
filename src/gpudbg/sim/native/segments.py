"""Where native segments start and end in a program's code.

A segment is a run of consecutive instructions, all with a native lowering
(sim/native/emit.py), inside one basic block: it never crosses a block
leader, a control instruction (branch, call, return, exit, barrier) or an
instruction that stays interpreted. Two more cuts keep thread-by-thread
execution indistinguishable from the interpreter's instruction order: a
store or atomic ends its segment (so no load of a segment can follow a
write of another thread), and a segment that can fail (it has a memory
access, whose check may send the selection back to the interpreter) lists
the registers it reads on entry and also writes: those go through scratch
and are committed only when the whole selection succeeded, so the
interpreter's re-run starts from the entry values. A segment stores only
the registers read after it (liveness.py); its other values live and die
in machine registers. Each plan also records the analysis-tool event
classes its instructions would emit (sim/instrument.py Event), so that
under a tool the executor runs it natively only when the tool consumes
none of them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from gpudbg.sim.instrument import instruction_events
from gpudbg.sim.native.liveness import live_after


@dataclass
class SegmentPlan:
    start: int = 0                  # first pc
    end: int = 0                    # pc after the last instruction
    scratch_regs: dict = field(default_factory=dict)   # register -> scratch row
    nslots: int = 0                 # scratch rows in use (registers + recorded values)
    can_fail: bool = False
    live_out: set | None = None     # registers read after the segment (None: assume all)
    two_pass: bool = False          # has a second pass (writes or commits): set by the emitter
    events: int = 0                 # instrument.Event bits its instructions would emit to tools
    if_branches: tuple = ()         # ((pc of `@p bra L`, L), ...) of its if bodies (if_bodies.py)
    last_write: dict | None = None  # register -> last pc of it writing it (None: unknown; window_checks.py)
    precheck: bool = False          # has a checks-only twin run first (engine.py, the FULL variant)
    prescan: int | None = None      # pc of its lone if branch whose guard a first loop evaluates (emit.py)

    @classmethod
    def empty(cls) -> "SegmentPlan":
        return cls()

    @property
    def name(self) -> str:
        return f"seg_{self.start}_{self.end}"


PRESCAN_PREFIX = 8    # instructions before the branch a prescan computes twice (prescan_branch)


def prescan_branch(pcs: list[int], ifs: list[tuple[int, int]], lowered: dict, code) -> int | None:
    """The pc of the segment's if branch when the emitter may first find,
    in a loop of its own, which threads run the body, and then skip groups
    of eight threads that do not (emit.py): the segment's one if body ends
    it, so a thread that skips the body does nothing else in the segment,
    and what comes before the branch is at most PRESCAN_PREFIX unguarded
    instructions without memory access that read no register they write,
    so computing them twice, once in the prescan and again for the threads
    that run the body, stores the same values (a tree reduction's `if (t <
    k)`, where most threads of the later levels skip the body)."""
    if len(ifs) != 1 or ifs[0][1] != pcs[-1] + 1:
        return None
    branch = ifs[0][0]
    prefix = [pc for pc in pcs if pc < branch]
    if len(prefix) > PRESCAN_PREFIX:
        return None
    reads: set[int] = set()
    writes: set[int] = set()
    for pc in prefix:
        found = lowered.get(pc)
        if found is None or found[0] != "none" or code[pc].inst.guard is not None:
            return None
        reads |= found[1]
        writes |= found[2]
    return None if reads & writes else branch


def plan_segments(program, min_length: int = 1, if_convert: bool = False, live_before: list | None = None
                  ) -> tuple[list[SegmentPlan], dict, list[int]]:
    """Every segment of the program's code, in pc order; with what the
    regions need: {pc: (effect, reads, writes)} of every lowered
    instruction and the liveness bitsets (live after each pc). With
    `if_convert`, a segment may hold up to if_bodies.PER_SEGMENT if
    bodies. `live_before` receives the bitsets live before each pc
    (liveness.live_before)."""
    from gpudbg.sim.native.if_bodies import PER_SEGMENT, IfBodies
    from gpudbg.sim.native.probe import Prober
    probe = Prober(program)
    ifs = IfBodies(program, probe) if if_convert else None
    crossing: set[int] = set()      # leaders the open segment continues across (its if body's)
    last_write: dict[int, int] = {}
    cur_ifs: list[tuple[int, int]] = []
    code = program.code
    leader = program.leader
    out: list[SegmentPlan] = []
    cur: list[int] = []
    live_in: set[int] = set()
    written: set[int] = set()
    can_fail = False
    events = 0

    def close():
        nonlocal cur, live_in, written, can_fail, events, cur_ifs
        if len(cur) >= min_length:
            scratch = sorted(live_in & written) if can_fail else []
            out.append(SegmentPlan(cur[0], cur[-1] + 1, {k: s for s, k in enumerate(scratch)},
                                   len(scratch), can_fail, events=events, if_branches=tuple(cur_ifs),
                                   last_write=dict(last_write),
                                   prescan=None if scratch else prescan_branch(cur, cur_ifs, lowered, code)))
        cur, live_in, written, can_fail, events, cur_ifs = [], set(), set(), False, 0, []
        crossing.clear()
        last_write.clear()

    kills: dict[int, int] = {}
    uses: dict[int, int] = {}
    lowered: dict[int, tuple] = {}
    for pc, c in enumerate(code):
        if leader[pc] and cur and pc not in crossing:
            close()
        convert = ifs.target(pc) if ifs is not None else None
        if convert is not None:
            target, guard = convert
            if len(cur_ifs) >= PER_SEGMENT:
                close()
            cur.append(pc)
            cur_ifs.append((pc, target))
            crossing.update((pc + 1, target))
            live_in |= {guard} - written
            continue
        if c.built.run is None:
            close()
            continue
        found = probe(c)
        if found is None:
            close()
            continue
        low, reads, writes = found
        lowered[pc] = (low.effect, reads, writes)
        uses[pc] = sum(1 << k for k in reads)
        if c.inst.guard is None:
            kills[pc] = sum(1 << k for k in writes)
        cur.append(pc)
        events |= int(instruction_events(c.built, c.inst.opcode))
        live_in |= reads - written
        written |= writes
        for k in writes:
            last_write[k] = pc
        can_fail = can_fail or low.effect != "none"
        if low.effect == "write":
            close()
    close()
    live = live_after(program, kills, uses, live_before)
    for plan in out:
        bits = live[plan.end - 1]
        plan.live_out = {k for k in range(bits.bit_length()) if bits >> k & 1}
    return out, lowered, live
