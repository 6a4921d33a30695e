"""If bodies a native segment runs itself: `@p bra L` over a short
straight-line body that ends at L.

In the interpreter such a branch is three steps: the branch splits the
threads, those that fall through run the body, and all reconverge at L.
On a wave of a million threads each step is several passes of numpy over
the wave (the guard split, the next group's search, setting pcs), which
cost more than the body: a tree reduction's `if (t < k) s[t] += s[t+k];`
or a bounds check `if (i < n) y[i] = ...`. Run inside the segment, the
body becomes its instructions guarded by not-p, and the segment goes on
across L, so one native call covers what was three steps.

The one idea: this changes nothing a thread can observe, provided the
body is what the interpreter's body step would run and nothing else runs
between the branch and L. So the body must be straight-line lowered code
without its own guards and without writing p, with at most one write
(a store or atomic) and that last, so its two-pass write happens after
every thread's reads as in the body step; nothing may branch into the
body or to L; and the executor runs the segment only for a whole-wave
step (engine.NativeSegment.may_run): other threads waiting between the
branch and L would run first in the interpreter, threads waiting at L
would share its step, and the warp scheduler's spin detection counts the
partial steps the segment would fold (a spinning warp would back off one
iteration later: found by GPUDBG_DIFFERENTIAL on the watchdog's
flag-waiting kernel). The segment counts the threads that ran the body and
the executor adds the work, step and cycles of the interpreter's separate
steps, so counts and clocks stay identical.

Both variants convert: the debugger's (FULL) stores every register the
body writes (a thread that skipped it stores the value it had), and a
breakpoint or watched access inside the segment makes it a leader, which
keeps the whole segment interpreted as for any other (engine.py crosses).

A segment holds up to PER_SEGMENT bodies one after the other (a kernel's
`if (i < n) v = a[i]; if (i + T < n) v += a[i + T];`): without them a
segment ended at the second branch and stored every register live there
for the next segment to load again. It returns each body's count of
threads in its own bit field (TAKEN_BITS).

What it deliberately does not do: nest, or take an `else`.
"""
from __future__ import annotations

from collections import Counter

MAX_BODY = 48        # instructions: a longer body is a real block of its own
PER_SEGMENT = 2      # bodies one segment holds: two counts of up to 2^31 threads fit its i64 return
TAKEN_BITS = 31      # the width of each body's count in a segment's return


class IfBodies:
    """Which guarded branches of a program a segment may convert."""

    def __init__(self, program, probe):
        self.program = program
        self.probe = probe
        self.targeted = Counter()
        self.indirect = False         # a branch without known targets: convert nothing
        for c in program.code:
            if c.built.kind != "branch":
                continue
            info = c.built.info
            targets = info.get("targets", [info.get("target")])
            if not targets or any(t is None for t in targets):
                self.indirect = True
            for t in targets:
                if t is not None:
                    self.targeted[int(t)] += 1

    def target(self, pc: int) -> tuple[int, int] | None:
        """(L, guard register) when `pc` is a convertible `@p bra L`."""
        if self.indirect:
            return None
        code = self.program.code
        c = code[pc]
        if c.inst.opcode != "bra" or c.built.kind != "branch" or c.inst.guard is None:
            return None
        t = c.built.info.get("target")
        if t is None:
            return None
        t = int(t)
        if not pc + 1 < t <= pc + 1 + MAX_BODY or t >= len(code):
            return None
        if self.targeted[t] != 1 or self.targeted[pc + 1] != 0:
            return None
        guard = self.program._reg_index.get((c.function, c.inst.guard.name))
        if guard is None:
            return None
        leader = self.program.leader
        for q in range(pc + 1, t):
            b = code[q]
            if b.function != c.function or b.built.run is None or b.inst.guard is not None:
                return None
            if q > pc + 1 and leader[q]:
                return None
            found = self.probe(b)
            if found is None:
                return None
            low, _, writes = found
            if guard in writes or (low.effect == "write" and q != t - 1):
                return None
        return t, guard
