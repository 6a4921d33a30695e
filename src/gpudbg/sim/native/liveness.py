"""Which registers may still be read after a pc: a backward dataflow over
the program's code, so a segment stores only the registers that someone
reads later (the rest stay in machine registers and vanish, as in any
compiler's output).

The one idea: over-approximate safely. A natively lowered instruction
reads exactly the registers its emission read (the emitter records every
register read), and only its exact, unconditional writes kill a register;
every other instruction counts as reading every register it names
(destinations included), so an instruction the analysis does not
understand can only make more registers live, never fewer. (Counting a
lowered instruction's destinations as reads too kept every register a
loop body writes live around the loop: the unrolled 16x16 tile of a
matrix multiply stored 32 dead loaded values per thread per tile.) Successors: the
next pc, the labels a branch names (every label of its function when it
names none, e.g. brx.idx), nothing after ret/exit; a call continues at the
next pc (callee registers are the callee's own, and parameters travel
through .param memory).

What it deliberately does not do: track liveness across kernels or
launches; registers are dead when a thread exits, so a debugger attached
later or a coredump taken after a native launch sees dead registers as
the last store left them. A debugger that stops a wave running the PLAIN
variant shows the registers not live at a lane's pc as optimized out
(live_before), as cuda-gdb does for optimized code.
"""
from __future__ import annotations

from gpudbg.ptx import ir


def _registers(operand, out: list) -> None:
    if isinstance(operand, ir.Register):
        out.append(operand)
    elif isinstance(operand, ir.Address):
        _registers(operand.base, out)
    elif isinstance(operand, ir.Vector):
        for e in operand.elements:
            _registers(e, out)
    elif isinstance(operand, ir.Negated):
        _registers(operand.operand, out)
    elif isinstance(operand, (tuple, list)):
        for e in operand:
            _registers(e, out)
    elif hasattr(operand, "__dataclass_fields__"):
        for name in operand.__dataclass_fields__:
            v = getattr(operand, name)
            if isinstance(v, (ir.Register, ir.Address, ir.Vector, ir.Negated, tuple, list)):
                _registers(v, out)


def _named(program, c) -> int:
    """Bitset of every register the instruction names."""
    regs: list = []
    _registers(list(c.inst.operands), regs)
    if c.inst.guard is not None:
        regs.append(c.inst.guard)
    fn = program.functions[c.function].ir
    bits = 0
    for r in regs:
        k = program._reg_index.get((fn.name, r.name))
        if k is not None:
            bits |= 1 << k
    return bits


def _successors(program, c, labels_of: dict) -> list[int]:
    kind = c.built.kind
    if kind in ("exit", "ret"):
        return [] if c.inst.guard is None else [c.pc + 1]
    if kind != "branch":
        return [c.pc + 1]
    info = c.built.info
    if "target" in info or "targets" in info:
        return [int(t) for t in info.get("targets", [info.get("target")]) if t is not None] + [c.pc + 1]
    targets = [program._labels.get((c.function, o.name)) for o in c.inst.operands
               if isinstance(o, ir.LabelRef)]
    targets = [t for t in targets if t is not None]
    if not targets:
        targets = labels_of.get(c.function, [])
    return targets + [c.pc + 1]


def live_after(program, kills: dict[int, int], uses: dict[int, int] | None = None,
               before: list[int] | None = None) -> list[int]:
    """live[pc]: bitset of registers that may be read after pc executes.
    `kills[pc]`: bitset of registers that pc certainly overwrites;
    `uses[pc]`: the exact bitset a lowered pc reads (others: every
    register it names). `before`, when given, receives the bitsets live
    before each pc (what a debugger stopped there may show, below)."""
    code = program.code
    n = len(code)
    labels_of: dict[str, list[int]] = {}
    for (fname, _), pc in program._labels.items():
        labels_of.setdefault(fname, []).append(pc)
    uses = uses or {}
    named = [uses[c.pc] if c.pc in uses else _named(program, c) for c in code]
    succ = [[s for s in _successors(program, c, labels_of) if s < n] for c in code]
    live_in = [0] * (n + 1)
    live_out = [0] * n
    changed = True
    while changed:
        changed = False
        for pc in range(n - 1, -1, -1):
            out = 0
            for s in succ[pc]:
                out |= live_in[s]
            live_out[pc] = out
            new_in = named[pc] | (out & ~kills.get(pc, 0))
            if new_in != live_in[pc]:
                live_in[pc] = new_in
                changed = True
    if before is not None:
        before[:] = live_in[:n]
    return live_out


def live_before(program) -> list[int]:
    """Per pc: the registers a thread about to run it may still read,
    by the same analysis that decides what compiled code stores
    (segments.plan_segments). In a wave that ran the PLAIN variant only
    these hold the values the interpreter would have given; the others
    may keep an older value (the debugger shows them as optimized out).
    Computed once per program."""
    got = getattr(program, "native_live_before", None)
    if got is None:
        from gpudbg.sim.native.segments import plan_segments
        got = []
        plan_segments(program, if_convert=True, live_before=got)
        program.native_live_before = got
    return got
